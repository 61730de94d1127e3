import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bodyCrc, crc32 } from '../../../src/common/bytes/crc32.js';

test('crc32("body") masked = 1537739698 (Appendix B)', () => {
  assert.equal(bodyCrc(Buffer.from('body')), 1537739698);
});

test('crc32 of the FooBar body is 0x09021560, stored 151131488', () => {
  const b = Buffer.from('Once, there was a chance for me!');
  assert.equal(crc32(b), 0x09021560);
  assert.equal(bodyCrc(b), 151131488);
});

test('crc32 is unsigned and bodyCrc clears the top bit', () => {
  // CRC-32 check value of "123456789" is 0xCBF43926 (top bit set).
  const b = Buffer.from('123456789');
  assert.equal(crc32(b), 0xcbf43926);
  assert.equal(bodyCrc(b), 0xcbf43926 & 0x7fffffff);
});

test('crc32 over a sub-range equals crc32 of the slice', () => {
  const b = Buffer.from('xxbodyyy');
  assert.equal(bodyCrc(b, 2, 6), 1537739698);
  assert.equal(crc32(b, 0, 0), 0);
});

test('crc32 rejects a range outside the buffer', () => {
  assert.throws(() => crc32(Buffer.alloc(4), 2, 8), RangeError);
  assert.throws(() => crc32(Buffer.alloc(4), 3, 2), RangeError);
});

test('B08 body hello + 1b ac c9 5b has CRC32 0', () => {
  const b = Buffer.concat([Buffer.from('hello'), Buffer.from([0x1b, 0xac, 0xc9, 0x5b])]);
  assert.equal(crc32(b), 0);
  assert.equal(bodyCrc(b), 0);
});
