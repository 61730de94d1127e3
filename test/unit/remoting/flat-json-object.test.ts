/**
 * parseFlatStringObject (flat-json-object.ts): whenever it returns an object, that object is what
 * JSON.parse gives for the same bytes (same own keys in the same order, same values, a plain
 * prototype); every form outside its subset is declined (null), never mis-read; the Java
 * client's extFields are taken.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { parseFlatStringObject } from '../../../src/remoting/protocol/flat-json-object.js';
import { mulberry32 } from '../../support/prng.js';

/** parseFlatStringObject of `text` placed inside a larger buffer. */
function parse(text: string): Record<string, string> | null {
  const buf = Buffer.from(`ab${text}cd`, 'utf8');
  return parseFlatStringObject(buf, 2, buf.length - 2);
}

function assertSameAsJsonParse(text: string, label = text): void {
  const got = parse(text);
  assert.ok(got !== null, `taken: ${label}`);
  const want = JSON.parse(text) as Record<string, string>;
  assert.deepStrictEqual(got, want, label);
  assert.deepEqual(Object.keys(got), Object.keys(want), `key order: ${label}`);
  assert.equal(Object.getPrototypeOf(got), Object.prototype);
}

const JAVA_SEND_EXT = '{"a":"PID_bench","b":"BenchTopic","c":"TBW102","d":"4","e":"3","f":"0","g":"1764640000000","h":"0","i":"UNIQ_KEY\\u00017F0000016C3A1B2C3D4E5F60718293A4\\u0002WAIT\\u0001true\\u0002KEYS\\u0001order-1 user-1\\u0002TAGS\\u0001TagA","j":"0","k":"false","m":"false","n":"broker-a"}';

test('taken, and equal to JSON.parse: the Java send header, empty object and strings, every escape, duplicate and integer-like keys', () => {
  assertSameAsJsonParse(JAVA_SEND_EXT);
  assertSameAsJsonParse('{}');
  assertSameAsJsonParse('{"":""}');
  assertSameAsJsonParse('{"consumerGroup":"G","topic":"T","queueId":"0","queueOffset":"12345678901234"}');
  assertSameAsJsonParse('{"e":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f\\u007F\\u0080\\u00ff\\u00FF\\u00e9"}', 'escapes');
  assertSameAsJsonParse('{"a":"1","b":"2","a":"3"}', 'a later duplicate replaces the value in its place');
  assertSameAsJsonParse('{"b":"x","2":"y","1":"z","a":"w"}', 'integer-like keys first, ascending');
  assertSameAsJsonParse('{"k":"a},\\"x\\":\\"y"}', 'structure look-alike inside a value');
  assertSameAsJsonParse(`{"long":"${'x'.repeat(5000)}","esc":"${'\\u0001'.repeat(3000)}"}`, 'long values, longer than the scratch buffer');
});

test('declined (null), never mis-read: other JSON values, whitespace, UTF-8, wide escapes, __proto__, broken text', () => {
  const declined = [
    '{"a":1}', '{"a":true}', '{"a":null}', '{"a":{"b":"c"}}', '{"a":["b"]}', '{"a":"1","b":2}',
    '{ "a":"1"}', '{"a" :"1"}', '{"a":"1" }', '{"a":"1",}', '{,"a":"1"}', '{"a""1"}', '{"a":"1""b":"2"}',
    '{"a":"é"}', '{"é":"a"}', '{"a":"\\u0100"}', '{"a":"\\ud800"}', '{"a":"\\u00g0"}', '{"a":"\\u00"}', '{"a":"\\x41"}', '{"a":"\\', '{"a":"\\u00',
    '{"a":"\u0001"}', '{"a":"\u001f"}', '{"__proto__":"x"}', '{"a":"1","__proto__":"x"}',
    '{"a":"1"', '"a":"1"}', '{"a":"1"}}', '{"a":"1}', "{'a':'1'}", '{a:"1"}', '[]', '{', '}', '',
  ];
  for (const text of declined) assert.equal(parse(text), null, JSON.stringify(text));
});

test('random flat objects of strings: taken when in the subset, always equal to JSON.parse; the cache never hands out a wrong string', () => {
  const rnd = mulberry32(91);
  const alphabet = ['a', 'b', 'Z', '0', '9', '_', '-', ' ', '"', '\\', '/', '\u0001', '\u0002', '\n', '\u00e9', '\u4e2d', '\u007f', '{', '}', ':', ','];
  const str = (max: number): string => Array.from({ length: Math.floor(rnd() * max) }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join('');
  let taken = 0;
  for (let i = 0; i < 3000; i++) {
    const o: Record<string, string> = {};
    for (let k = Math.floor(rnd() * 8); k > 0; k--) o[str(6)] = str(i % 3 === 0 ? 40 : 12);
    const text = JSON.stringify(o);
    const got = parse(text);
    const inSubset = !/[^\u0000-\u00ff]/.test(text.replace(/\\u[0-9a-fA-F]{4}/g, '')) && !/[\u0080-\u00ff]/.test(text) && !Object.hasOwn(o, '__proto__');
    if (got === null) {
      assert.ok(!inSubset, `declined although in the subset: ${text}`);
      continue;
    }
    taken++;
    assert.deepStrictEqual(got, JSON.parse(text), text);
    assert.deepEqual(Object.keys(got), Object.keys(JSON.parse(text) as object), text);
  }
  assert.ok(taken > 500, `taken ${taken} times`);
  // many distinct short values through the cache (collisions included): each read right
  for (let i = 0; i < 20_000; i++) {
    const v = (i * 7919).toString(36);
    assert.equal(parse(`{"k":"${v}"}`)!.k, v);
  }
});

test('byte mutations of the Java send extFields (fast-check): whenever taken, JSON.parse accepts the text and gives the same object', () => {
  const pieces = ['"', '\\', ',', ':', '{', '}', ' ', 'a', '0', '\\u0001', '\\u01', '\\n', 'é', '\u0000', 'null', '1', '__proto__', '"x":"y",'];
  let taken = 0;
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(JAVA_SEND_EXT.length), fc.nat(2), fc.constantFrom(...pieces)), { maxLength: 4 }), (mutations) => {
      let s = JAVA_SEND_EXT;
      for (const [pos, kind, piece] of mutations) {
        const p = pos % (s.length + 1);
        s = kind === 0 ? s.slice(0, p) + piece + s.slice(p) : kind === 1 ? s.slice(0, p) + s.slice(p + 1) : s.slice(0, p) + piece + s.slice(p + 1);
      }
      const got = parse(s);
      if (got === null) return;
      taken++;
      const want = JSON.parse(s) as Record<string, string>;
      assert.deepStrictEqual(got, want, s);
      assert.deepEqual(Object.keys(got), Object.keys(want), s);
    }),
    { numRuns: 20000, seed: 13 },
  );
  assert.ok(taken > 1000, `taken ${taken} times`);
});

test('a key sequence seen again is built from one object literal: still the same keys, order and values as JSON.parse, also past the cap on such shapes', () => {
  const texts = [JAVA_SEND_EXT, '{"a":"1","b":"2","a":"3"}', '{"b":"x","2":"y","1":"z","a":"w"}', '{"\\u0001k\\"ey":"v","constructor":"c","toString":"t"}'];
  for (let round = 0; round < 4; round++) {
    for (const t of texts) assertSameAsJsonParse(t.replaceAll('"1"', `"${round}"`), `${t} (round ${round})`);
  }
  for (let s = 0; s < 100; s++) {
    for (let round = 0; round < 3; round++) assertSameAsJsonParse(`{"s${s}":"${round}","x":"${s}"}`, `shape ${s} round ${round}`);
  }
  const a = parse('{"p":"1"}')!;
  const b = parse('{"p":"1"}')!;
  assert.notEqual(a, b, 'a new object per call');
  a.p = 'changed';
  assert.equal(b.p, '1');
});

test('with code generation from strings disallowed (node --disallow-code-generation-from-strings) repeated shapes are still read, key by key', () => {
  const url = new URL('../../../src/remoting/protocol/flat-json-object.ts', import.meta.url).href;
  const script = `import(${JSON.stringify(url)}).then(({ parseFlatStringObject }) => {
    const b = Buffer.from('{"a":"1","b":"x\\\\u0001y","a":"2"}');
    const out = [];
    for (let i = 0; i < 4; i++) out.push(JSON.stringify(parseFlatStringObject(b, 0, b.length)));
    console.log(out.join('|'));
  });`;
  const r = spawnSync(process.execPath, ['--disallow-code-generation-from-strings', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  const want = JSON.stringify({ a: '2', b: 'x\u0001y' });
  assert.equal(r.stdout.trim(), [want, want, want, want].join('|'));
});
