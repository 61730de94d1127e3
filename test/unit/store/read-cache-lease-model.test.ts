/**
 * CommitLogReadCache leases against a model (fast-check): under any sequence of chunk lookups
 * (at once or on second miss), leases, releases (also repeated ones of an already released lease),
 * cached reads, truncation + rewrite of the segment (HA/recovery) and clear(), every view still
 * leased keeps the bytes it had when leased, and every chunk or read the cache serves holds the
 * segment's current bytes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import fc from 'fast-check';
import { nodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { MappedFile } from '../../../src/store/mapped-file/mapped-file.js';
import { CommitLogReadCache, type ReadCacheChunk } from '../../../src/store/commitlog/commit-log-read-cache.js';
import { removeDir, tempDir } from '../../support/store-fixtures.js';

const CHUNK = 4096;
const SEGMENT = 16 * CHUNK;

type Op =
  | { kind: 'get'; chunk: number; at: number; admitNow: boolean; lease: boolean }
  | { kind: 'unlease'; pick: number }
  | { kind: 'read'; pos: number; len: number }
  | { kind: 'truncate'; keepChunks: number; seed: number }
  | { kind: 'clear' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('get' as const), chunk: fc.nat(15), at: fc.nat(CHUNK - 1), admitNow: fc.boolean(), lease: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('unlease' as const), pick: fc.nat(50) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('read' as const), pos: fc.nat(SEGMENT - 1), len: fc.integer({ min: 1, max: 3000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), keepChunks: fc.nat(15), seed: fc.nat(255) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('clear' as const) }) },
);

function pattern(len: number, seed: number): Buffer {
  const b = Buffer.alloc(len);
  for (let i = 0; i < len; i++) b[i] = (i * 131 + seed * 17 + (i >> 8)) & 0xff;
  return b;
}

test('read cache leases: lent bytes never change, served bytes are always current (model-based)', () => {
  const root = tempDir();
  let n = 0;
  try {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 80 }), fc.integer({ min: 2, max: 4 }), (ops, capacityChunks) => {
        const mf = MappedFile.create(path.join(root, `s${n++}`), 0, SEGMENT, { fs: nodeFileSystem });
        try {
          let file = pattern(12 * CHUNK + 100, 1);
          mf.append(file);
          mf.commitNow();
          const cache = new CommitLogReadCache({ chunkBytes: CHUNK, capacityChunks });
          const held: Array<{ chunk: ReadCacheChunk; bytes: Buffer; released: boolean }> = [];
          for (const o of ops) {
            switch (o.kind) {
              case 'get': {
                const c = cache.chunkAt(mf, o.chunk * CHUNK + o.at, o.admitNow);
                if (c === null) break;
                assert.deepEqual(c.buf.subarray(0, c.length), file.subarray(c.start, c.start + c.length), 'a served chunk holds the current bytes');
                if (o.lease) {
                  cache.lease(c);
                  held.push({ chunk: c, bytes: Buffer.from(c.buf.subarray(0, c.length)), released: false });
                }
                break;
              }
              case 'unlease': {
                if (held.length === 0) break;
                const h = held[o.pick % held.length]!;
                // a second release of the same lease is the caller's bug the result guards against
                // (PulledMessages.released); here only first releases go to the cache
                if (!h.released) cache.unlease(h.chunk);
                h.released = true;
                break;
              }
              case 'read': {
                const len = Math.min(o.len, file.length - o.pos);
                if (len <= 0) break;
                const out = Buffer.alloc(len);
                assert.ok(cache.readInto(mf, o.pos, out, 0, len));
                assert.deepEqual(out, file.subarray(o.pos, o.pos + len), 'a read returns the current bytes');
                break;
              }
              case 'truncate': {
                const keep = Math.min(o.keepChunks * CHUNK, file.length);
                mf.truncateTo(keep);
                const more = pattern(12 * CHUNK + 100 - keep, o.seed + 2);
                mf.append(more);
                mf.commitNow();
                file = Buffer.concat([file.subarray(0, keep), more]);
                break;
              }
              case 'clear':
                cache.clear();
                break;
            }
            for (const h of held) if (!h.released) assert.deepEqual(h.chunk.buf.subarray(0, h.chunk.length), h.bytes, 'a leased view never changes');
          }
          assert.equal(cache.leasesHeld, held.filter((h) => !h.released).length);
        } finally {
          mf.close();
        }
      }),
      { numRuns: 300 },
    );
  } finally {
    removeDir(root);
  }
});
