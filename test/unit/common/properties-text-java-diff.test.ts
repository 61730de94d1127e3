/**
 * Differential test of parsePropertiesText / formatPropertyLine against the real
 * java.util.Properties.load of the installed JDK (one JVM run for all cases, via the single-file
 * source launcher): a few thousand fast-check generated texts over an alphabet of the characters
 * Properties.load treats specially (separators, whitespace, line ends, backslash, comment marks,
 * \u escapes). Skipped when `java` is not on the PATH.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { formatPropertyLine, parsePropertiesText, PropertiesSyntaxError } from '../../../src/common/config/properties-text.js';

const ORACLE = fileURLToPath(new URL('./java/PropertiesLoadOracle.java', import.meta.url));
const hasJava = spawnSync('java', ['-version']).status === 0;

const ALPHABET = ['a', 'b', 'k', '=', ':', ' ', '\t', '\f', '\\', '\\', '\n', '\r', '#', '!', 'u', '0', 'A', 'f', 'é'];
const text = fc.string({ unit: fc.constantFrom(...ALPHABET), maxLength: 24 });
const anyString = fc.string({ unit: fc.oneof(fc.constantFrom(...ALPHABET), fc.constantFrom('\u0000', '\u007f', '\u4e2d', '\uffff')), maxLength: 12 });

type Outcome = 'ERR' | Array<[string, string]>;

function tsLoad(input: string): Outcome {
  try {
    return [...parsePropertiesText(input)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  } catch (e) {
    if (e instanceof PropertiesSyntaxError) return 'ERR';
    throw e;
  }
}

/** Java's Properties.load of each input ('R' = Reader of the text, 'S' = InputStream of its ASCII bytes). */
function javaLoad(inputs: Array<['R' | 'S', string]>): Outcome[] {
  const dir = mkdtempSync(join(tmpdir(), 'tsmq-props-'));
  try {
    const inFile = join(dir, 'in.txt');
    const outFile = join(dir, 'out.txt');
    writeFileSync(inFile, inputs.map(([m, s]) => `${m} ${Buffer.from(s, m === 'R' ? 'utf8' : 'latin1').toString('base64')}\n`).join(''));
    execFileSync('java', [ORACLE, inFile, outFile], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 60_000 });
    const b64 = (s: string): string => Buffer.from(s, 'base64').toString('utf8');
    return readFileSync(outFile, 'ascii').split('\n').slice(0, inputs.length).map((line) => {
      if (line === 'ERR') return 'ERR';
      return line.split(' ').slice(1).map((kv) => kv.split(',').map(b64) as [string, string]);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('Properties text vs the JDK Properties.load (generated inputs)', { skip: hasJava ? false : 'java not found' }, () => {
  it('parsePropertiesText reads edge cases and 5000 generated texts (2000 with a fresh seed each run) as Java does, and formatPropertyLine round-trips 1000 pairs through Java', () => {
    const edges = ['\\', '\\\n', '\\\r', '\\\r\n', '\\\n\n', '\\\n#c\nk=v', '  \\\n  !c\nk=v', '\\\n\\\n', 'a=\\\r\n', 'a\\\n\\\nb'];
    const texts = [...edges, ...fc.sample(text, { numRuns: 3000, seed: 20261202 }), ...fc.sample(text, { numRuns: 2000 })];
    const pairs = fc.sample(fc.tuple(anyString, anyString), { numRuns: 1000, seed: 7 });
    const java = javaLoad([...texts.map((t) => ['R', t] as ['R', string]), ...pairs.map(([k, v]) => ['S', formatPropertyLine(k, v)] as ['S', string])]);
    const mismatches: string[] = [];
    texts.forEach((t, i) => {
      const ours = tsLoad(t);
      if (JSON.stringify(ours) !== JSON.stringify(java[i])) mismatches.push(`${JSON.stringify(t)}: java ${JSON.stringify(java[i])} tsmq ${JSON.stringify(ours)}`);
    });
    pairs.forEach(([k, v], j) => {
      const got = java[texts.length + j];
      const line = formatPropertyLine(k, v);
      if (JSON.stringify(got) !== JSON.stringify([[k, v]])) mismatches.push(`round trip ${JSON.stringify([k, v])} as ${JSON.stringify(line)}: java ${JSON.stringify(got)}`);
      if (JSON.stringify(tsLoad(line)) !== JSON.stringify([[k, v]])) mismatches.push(`round trip ${JSON.stringify([k, v])} as ${JSON.stringify(line)}: tsmq ${JSON.stringify(tsLoad(line))}`);
    });
    assert.deepEqual(mismatches.slice(0, 10), [], `${mismatches.length} mismatches`);
  });
});
