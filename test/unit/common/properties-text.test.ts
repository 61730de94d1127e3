/**
 * parsePropertiesText against java.util.Properties.load. The expected values are Java's own
 * output, pinned: each input was loaded once with JDK 17 `Properties.load(new StringReader(..))`
 * by a throw-away program (key/value pairs sorted by key) and its output copied here as
 * literals. The round-trip table was loaded by JDK 17 `Properties.load(InputStream)` (ISO-8859-1,
 * as Apache's BrokerStartup reads broker.conf and MixAll.string2Properties reads bodies) and
 * gave back every original key/value.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatPropertyLine, parsePropertiesText, PropertiesSyntaxError, readPropertiesEntries } from '../../../src/common/config/properties-text.js';

const JAVA_LOAD: Array<[string, string, Array<[string, string]>]> = [
  ['separators =, :, space, tab, form feed', 'a=1\nb = 2\nc:3\nd 4\ne\t5\nf\f6', [['a', '1'], ['b', '2'], ['c', '3'], ['d', '4'], ['e', '5'], ['f', '6']]],
  ['# and ! comments, blank lines, trailing whitespace of a value kept', '  # comment\n! bang\n\n   \nkey=value  \n', [['key', 'value  ']]],
  ['continuation drops the continued line\'s leading whitespace', 'a=one \\\n    two\\\n\tthree\nb=x', [['a', 'one twothree'], ['b', 'x']]],
  ['an even run of backslashes does not continue', 'a=x\\\\\nb=y', [['a', 'x\\'], ['b', 'y']]],
  ['escapes \\t \\n \\r \\f \\\\ \\uXXXX and any other \\c', 'a=\\t\\n\\r\\f\\\\\\u0041\\u00e9z\\q', [['a', '\t\n\r\f\\A\u00e9zq']]],
  ['escaped =, : and space in a key', 'k\\=ey\\:x\\ y=v', [['k=ey:x y', 'v']]],
  ['only the first separator is one; a line with only a key', 'a==b\nc=:d\ne :=f\ng', [['a', '=b'], ['c', ':d'], ['e', '=f'], ['g', '']]],
  ['\\r\\n and lone \\r end lines', 'a=1\r\nb=2\rc=3', [['a', '1'], ['b', '2'], ['c', '3']]],
  ['a trailing backslash at the end of the text is dropped', 'a=1\\', [['a', '1']]],
  ['a continued line starting with # is not a comment', 'a=b\\\n#notcomment\nc=d', [['a', 'b#notcomment'], ['c', 'd']]],
  ['a blank line ends a continuation', 'a=b\\\n\nc=d', [['a', 'b'], ['c', 'd']]],
  ['a backslash at the end of a comment does not continue it', '# comment \\\nx=1', [['x', '1']]],
  ['a later duplicate wins', 'dup=1\ndup=2', [['dup', '2']]],
  ['whitespace around the key and separator', '  a  =  b  ', [['a', 'b  ']]],
  ['= and : inside a value', 'a=b=c:d', [['a', 'b=c:d']]],
  ['continuation into the end of the text', 'a=\\\n', [['a', '']]],
  ['an escaped leading space of a value', 'key=\\ leading', [['key', ' leading']]],
  ['non-ASCII text (decoded, as a Reader)', 'a=h\u00e9llo', [['a', 'h\u00e9llo']]],
];

describe('parsePropertiesText = java.util.Properties.load (pinned JDK 17 outputs)', () => {
  for (const [name, input, expected] of JAVA_LOAD) {
    it(name, () => assert.deepEqual([...parsePropertiesText(input)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)), expected));
  }

  it('a malformed \\uXXXX is refused (Java: IllegalArgumentException "Malformed \\uxxxx encoding.")', () => {
    assert.throws(() => parsePropertiesText('a=\\u12'), (e: unknown) => e instanceof PropertiesSyntaxError && /line 1: Malformed \\uxxxx encoding\./.test((e as Error).message));
  });

  it('entries report the natural lines they span', () => {
    assert.deepEqual(
      readPropertiesEntries('# c\na=1\\\n  2\n\nb=3').map((e) => [e.key, e.value, e.firstLine, e.lastLine]),
      [['a', '12', 1, 2], ['b', '3', 4, 4]],
    );
  });
});

describe('formatPropertyLine', () => {
  // [key, value, the line tsmq writes]; JDK 17 Properties.load(InputStream) of each line gave back [key, value].
  const ROUND_TRIP: Array<[string, string, string]> = [
    ['k', ' lead', 'k=\\ lead'],
    ['k', 'C:\\data', 'k=C:\\\\data'],
    ['k', 'x\nbrokerPermission=2', 'k=x\\nbrokerPermission=2'],
    ['k', 'tab\there\r\f', 'k=tab\\there\\r\\f'],
    ['k', '\u00fcn\u00ef \u4e2d', 'k=\\u00FCn\\u00EF \\u4E2D'],
    ['k', 'trail  ', 'k=trail  '],
    ['k =:#!x', 'v', 'k\\ \\=\\:\\#\\!x=v'],
    ['namesrvAddr', '127.0.0.1:9876;127.0.0.2:9876', 'namesrvAddr=127.0.0.1:9876;127.0.0.2:9876'],
    ['k', '', 'k='],
  ];
  for (const [key, value, line] of ROUND_TRIP) {
    it(`${JSON.stringify(key)} = ${JSON.stringify(value)} is written as ${JSON.stringify(line)} and reads back`, () => {
      assert.equal(formatPropertyLine(key, value), line);
      assert.deepEqual([...parsePropertiesText(`${line}\n`)], [[key, value]]);
    });
  }
});

describe('readPropertiesFile (broker.conf / -c)', () => {
  it('reads a file with Java semantics, expands ${user.home}, and names the file and line of a malformed escape', async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir, homedir } = await import('node:os');
    const { readPropertiesFile } = await import('../../../src/common/config/properties-file.js');
    const dir = mkdtempSync(join(tmpdir(), 'tsmq-props-'));
    try {
      const f = join(dir, 'broker.conf');
      writeFileSync(f, '# broker\r\nbrokerName : broker-a\r\nnamesrvAddr=127.0.0.1:9876;\\\r\n    127.0.0.2:9876\r\nstorePathRootDir=${user.home}/store\r\nlistenPort 10911\r\n');
      assert.deepEqual(readPropertiesFile(f), { brokerName: 'broker-a', namesrvAddr: '127.0.0.1:9876;127.0.0.2:9876', storePathRootDir: `${homedir()}/store`, listenPort: '10911' });
      writeFileSync(f, 'a=1\nb=\\uZZZZ\n');
      assert.throws(() => readPropertiesFile(f), (e: unknown) => e instanceof PropertiesSyntaxError && (e as Error).message === `${f}: line 2: Malformed \\uxxxx encoding.`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
