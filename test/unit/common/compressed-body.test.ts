/**
 * compressedBodyProblem: the header check of a COMPRESSED body against its sysFlag compression
 * type (see src/common/message/compressed-body.ts for why Apache's Java consumer needs it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deflateSync, constants } from 'node:zlib';
import fc from 'fast-check';
import { compressedBodyProblem } from '../../../src/common/message/compressed-body.js';
import { MessageSysFlag } from '../../../src/common/message/sysflag.js';

const C = MessageSysFlag.COMPRESSED_FLAG;

test('every zlib stream Node writes passes, at every level and window size, as type 0 and type 3 (ZLIB)', () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 0, maxLength: 2000 }), fc.integer({ min: 0, max: 9 }), fc.integer({ min: 9, max: 15 }), (bytes, level, windowBits) => {
      const z = deflateSync(Buffer.from(bytes), { level, windowBits, strategy: constants.Z_DEFAULT_STRATEGY });
      assert.equal(compressedBodyProblem(C, z), null);
      assert.equal(compressedBodyProblem(C | MessageSysFlag.COMPRESSION_ZLIB_TYPE, z), null);
    }),
    { numRuns: 300 },
  );
});

test('a body that is not zlib data is refused with its first bytes named', () => {
  assert.equal(compressedBodyProblem(C, Buffer.from('not zlib')), 'sysFlag marks the body COMPRESSED (zlib) but it does not start with a zlib header (first bytes 6e6f7420)');
  assert.match(compressedBodyProblem(C, Buffer.from('H'))!, /has only 1 byte/);
  // a zlib header asking for a preset dictionary (FDICT): Java's Inflater cannot inflate it without one
  assert.match(compressedBodyProblem(C, Buffer.from([0x78, 0xbb, 0, 0, 0, 0]))!, /zlib header/);
  // gzip is not zlib
  assert.match(compressedBodyProblem(C, Buffer.from([0x1f, 0x8b, 8, 0, 0, 0]))!, /zlib header/);
});

test('LZ4 and ZSTD types need their frame magic; types 4-7 are unknown to Apache clients', () => {
  assert.equal(compressedBodyProblem(C | MessageSysFlag.COMPRESSION_LZ4_TYPE, Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x64])), null);
  assert.match(compressedBodyProblem(C | MessageSysFlag.COMPRESSION_LZ4_TYPE, deflateSync('x'))!, /LZ4 frame magic/);
  assert.equal(compressedBodyProblem(C | MessageSysFlag.COMPRESSION_ZSTD_TYPE, Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0])), null);
  assert.match(compressedBodyProblem(C | MessageSysFlag.COMPRESSION_ZSTD_TYPE, deflateSync('x'))!, /zstd frame magic/);
  for (const type of [4, 5, 6, 7]) {
    assert.match(compressedBodyProblem(C | (type << 8), deflateSync('x'))!, new RegExp(`unknown compression type ${type}`));
  }
});

test('no COMPRESSED flag, or an empty body (the client does not decompress it): nothing to check', () => {
  assert.equal(compressedBodyProblem(0, Buffer.from('plain')), null);
  assert.equal(compressedBodyProblem(MessageSysFlag.COMPRESSION_ZSTD_TYPE, Buffer.from('plain')), null);
  assert.equal(compressedBodyProblem(C, Buffer.alloc(0)), null);
  assert.equal(compressedBodyProblem(C | (7 << 8), Buffer.alloc(0)), null);
});

test("the first bytes Apache's 4.9.8 compressors write (CompressorFactory, levels 0/1/5/9) pass with their sysFlag types", () => {
  // observed from rocketmq-common 4.9.8: ZLIB 78 01 / 78 5e / 78 da, LZ4 frame 04 22 4d 18, ZSTD 28 b5 2f fd
  const rest = [0xed, 0xc9, 0x01, 0x10];
  for (const zlib of [[0x78, 0x01], [0x78, 0x5e], [0x78, 0xda]]) {
    assert.equal(compressedBodyProblem(C | MessageSysFlag.COMPRESSION_ZLIB_TYPE, Buffer.from([...zlib, ...rest])), null);
    assert.equal(compressedBodyProblem(C, Buffer.from([...zlib, ...rest])), null);
  }
  assert.equal(compressedBodyProblem(C | MessageSysFlag.COMPRESSION_LZ4_TYPE, Buffer.from([0x04, 0x22, 0x4d, 0x18, ...rest])), null);
  assert.equal(compressedBodyProblem(C | MessageSysFlag.COMPRESSION_ZSTD_TYPE, Buffer.from([0x28, 0xb5, 0x2f, 0xfd, ...rest])), null);
});
