import { test } from 'node:test';
import assert from 'node:assert/strict';
import { javaStringHashCode, tagsCode } from '../../../src/common/message/java-hash.js';

test('Java String.hashCode vectors', () => {
  assert.equal(javaStringHashCode(''), 0);
  assert.equal(javaStringHashCode('abc'), 96354);
  assert.equal(javaStringHashCode('TAG1'), 2567159);
  assert.equal(javaStringHashCode('TagA'), 2598919);
  assert.equal(javaStringHashCode('TagA'), 0x27a807);
});

test('tags "Aa" and "BB" both hash to 2112', () => {
  assert.equal(tagsCode('Aa'), 2112);
  assert.equal(tagsCode('BB'), 2112);
});

test('hash wraps around to negative int32 like Java', () => {
  // "polygenelubricants".hashCode() == Integer.MIN_VALUE in Java.
  assert.equal(javaStringHashCode('polygenelubricants'), -2147483648);
  // Long strings keep wrapping: compare with an exact BigInt computation reduced to int32.
  const s = 'the quick brown fox jumps over the lazy dog 0123456789';
  let h = 0n;
  for (let i = 0; i < s.length; i++) h = (h * 31n + BigInt(s.charCodeAt(i))) & 0xffffffffn;
  assert.equal(javaStringHashCode(s), Number(BigInt.asIntN(32, h)));
});

test('hash is over UTF-16 code units', () => {
  assert.equal(javaStringHashCode('é'), 0xe9);
  // U+1F600 is the surrogate pair D83D DE00: 31*0xD83D + 0xDE00.
  assert.equal(javaStringHashCode('\u{1F600}'), 31 * 0xd83d + 0xde00);
});

test('tagsCode: empty/null/undefined give 0, negative hashes stay negative (sign extension)', () => {
  assert.equal(tagsCode(''), 0);
  assert.equal(tagsCode(null), 0);
  assert.equal(tagsCode(undefined), 0);
  assert.equal(tagsCode('TagA'), 2598919);
  assert.equal(tagsCode('polygenelubricants'), -2147483648);
});
