import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeProperties, encodeProperties, propertiesByteLength, writeProperties } from '../../../src/common/message/properties.js';

test('encodeProperties writes name\\x01value\\x02 in insertion order', () => {
  const m = new Map([['KEYS', 'k1 k2'], ['TAGS', 'TAG1']]);
  assert.equal(encodeProperties(m), 'KEYS\x01k1 k2\x02TAGS\x01TAG1\x02');
  assert.equal(encodeProperties(new Map()), '');
});

test('decodeProperties round-trips', () => {
  const m = new Map([['KEYS', 'a b'], ['UNIQ_KEY', 'ABC'], ['TAGS', 'x']]);
  assert.deepEqual(decodeProperties(encodeProperties(m)), m);
});

test('decodeProperties accepts a missing trailing separator', () => {
  assert.deepEqual(decodeProperties('A\x01b\x02C\x01d'), new Map([['A', 'b'], ['C', 'd']]));
});

test('decodeProperties skips malformed pieces', () => {
  const text = [
    'ok\x01v', // accepted
    'ab', // too short, no separator
    '\x01xy', // separator at index 0 (empty key)
    'k\x01', // separator is the last char (empty value)
    'kv', // no separator
    'K\x01\x01', // first separator at 1 < len-1: key K, value \x01
    '', // empty piece
  ].join('\x02');
  assert.deepEqual(decodeProperties(text), new Map([['ok', 'v'], ['K', '\x01']]));
});

test('decodeProperties: the value is everything after the first \\x01', () => {
  assert.deepEqual(decodeProperties('a\x01b\x01c\x02'), new Map([['a', 'b\x01c']]));
});

test('decodeProperties: shortest accepted piece is 3 chars, later duplicates win', () => {
  assert.deepEqual(decodeProperties('a\x01b\x02a\x01c\x02'), new Map([['a', 'c']]));
  assert.deepEqual(decodeProperties('\x02\x02\x02'), new Map());
  assert.deepEqual(decodeProperties(''), new Map());
});

test('decodeProperties: keys and short values that share a cache slot (same length, first and last char) are never mixed up', () => {
  // 'AxB' and 'AyB' (and the values 'v1z' / 'v2z') hash to the same recent-text slot
  for (let round = 0; round < 3; round++) {
    const a = decodeProperties('AxB\x01v1z\x02AyB\x01v2z\x02');
    assert.deepEqual([...a], [['AxB', 'v1z'], ['AyB', 'v2z']]);
    const b = decodeProperties('AyB\x01v2z\x02AxB\x01v1z\x02TAGS\x01TagA\x02UNIQ_KEY\x017F0000010000276B0000000000000400\x02');
    assert.deepEqual([...b], [['AyB', 'v2z'], ['AxB', 'v1z'], ['TAGS', 'TagA'], ['UNIQ_KEY', '7F0000010000276B0000000000000400']]);
  }
  // a value that is a prefix of a cached one, and one the cached one is a prefix of
  assert.equal(decodeProperties('K\x01abc\x02').get('K'), 'abc');
  assert.equal(decodeProperties('K\x01abcc\x02').get('K'), 'abcc');
  assert.equal(decodeProperties('K\x01ac\x02').get('K'), 'ac');
  // non-ASCII keys and values
  assert.deepEqual([...decodeProperties('ké\x01vé\x02kè\x01vè\x02')], [['ké', 'vé'], ['kè', 'vè']]);
});

test('writeProperties writes the bytes of encodeProperties (ASCII, multi-byte, lone surrogate, skipped and non-string values) and propertiesByteLength counts them', () => {
  const maps: Map<string, string>[] = [
    new Map(),
    new Map([['UNIQ_KEY', '0A1B2C3D4E5F60718293A4B5C6D7E8F9'], ['WAIT', 'true'], ['TAGS', 'TagA']]),
    new Map([['KEYS', 'schlüssel 鍵 🔑'], ['TAGS', 'ä'], ['Ü', 'x']]),
    new Map([['LONE', 'a\ud800b'], ['END', '\udfff']]),
    new Map<string, string>([['A', undefined as unknown as string], ['B', 'b'], ['C', null as unknown as string], ['N', 42 as unknown as string]]),
  ];
  for (const m of maps) {
    const expected = Buffer.from(encodeProperties(m), 'utf8');
    assert.equal(propertiesByteLength(m), expected.length);
    const buf = Buffer.alloc(3 * expected.length + 6, 0xee);
    const n = writeProperties(buf, 3, m);
    assert.equal(n, expected.length);
    assert.deepEqual(buf.subarray(3, 3 + n), expected);
    assert.equal(buf[2], 0xee);
    assert.equal(buf[3 + n], 0xee);
    // too small for the worst case (3 bytes per UTF-16 unit) of an entry: -1
    if (m.size > 1) assert.equal(writeProperties(Buffer.alloc(expected.length), 0, m), -1);
  }
});
