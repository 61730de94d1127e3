import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { nodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { MappedFile } from '../../../src/store/mapped-file/mapped-file.js';
import { CommitLogReadCache } from '../../../src/store/commitlog/commit-log-read-cache.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

const CHUNK = 4096;

/** A 64 KiB segment holding `data` (written through the write buffer and committed). */
function segmentWith(root: string, name: string, data: Buffer): MappedFile {
  const mf = MappedFile.create(path.join(root, name), 0, 64 * 1024, { fs: nodeFileSystem });
  mf.append(data);
  mf.commitNow();
  return mf;
}

function read(cache: CommitLogReadCache, mf: MappedFile, pos: number, len: number): Buffer | null {
  const out = Buffer.alloc(len);
  return cache.readInto(mf, pos, out, 0, len) ? out : null;
}

test('read cache: a chunk is read whole on its second miss, then serves reads (also across a chunk boundary) with the file bytes', () => {
  const root = tempDir();
  try {
    const data = randomBytes(40 * 1024);
    const mf = segmentWith(root, 'a', data);
    const cache = new CommitLogReadCache({ chunkBytes: CHUNK, capacityChunks: 4 });
    assert.deepEqual(read(cache, mf, 100, 1000), data.subarray(100, 1100)); // first miss: remembered only
    assert.equal(cache.fills, 0);
    assert.equal(cache.bypasses, 1);
    assert.deepEqual(read(cache, mf, 2000, 500), data.subarray(2000, 2500)); // second miss of chunk 0: filled
    assert.equal(cache.fills, 1);
    assert.equal(cache.hits, 1);
    assert.deepEqual(read(cache, mf, 0, 2048), data.subarray(0, 2048));
    assert.equal(cache.hits, 2);
    // chunk 1 admitted (two misses), then a read spanning chunks 0 and 1
    read(cache, mf, CHUNK + 10, 10);
    read(cache, mf, CHUNK + 20, 10);
    assert.equal(cache.fills, 2);
    const hits = cache.hits;
    assert.deepEqual(read(cache, mf, CHUNK - 700, 1500), data.subarray(CHUNK - 700, CHUNK + 800));
    assert.equal(cache.hits, hits + 1);
    // reads over maxCachedReadBytes (here capped at half a chunk) are never cached
    assert.deepEqual(read(cache, mf, 0, CHUNK), data.subarray(0, CHUNK));
    assert.equal(cache.hits, hits + 1);
    // beyond the write position: unreadable, as from the file
    assert.equal(read(cache, mf, data.length - 10, 20), null);
    mf.close();
  } finally {
    removeDir(root);
  }
});

test('read cache: at most capacityChunks chunks, the least recently used one is replaced', () => {
  const root = tempDir();
  try {
    const data = randomBytes(40 * 1024);
    const mf = segmentWith(root, 'a', data);
    const cache = new CommitLogReadCache({ chunkBytes: CHUNK, capacityChunks: 2 });
    for (const chunk of [0, 1, 2]) for (let k = 0; k < 2; k++) read(cache, mf, chunk * CHUNK + k, 8);
    assert.equal(cache.fills, 3);
    assert.equal(cache.size, 2);
    for (let chunk = 0; chunk < 10; chunk++) {
      const pos = chunk * CHUNK + 123;
      assert.deepEqual(read(cache, mf, pos, 1000), data.subarray(pos, pos + 1000));
    }
    mf.close();
  } finally {
    removeDir(root);
  }
});

test('read cache: a chunk not all written yet is not cached; truncation and rewrite are never served stale', () => {
  const root = tempDir();
  try {
    const first = randomBytes(6000);
    const mf = segmentWith(root, 'a', first);
    const cache = new CommitLogReadCache({ chunkBytes: CHUNK, capacityChunks: 4 });
    // chunk 1 ends at 8192 > 6000 written: never filled, always read from the file
    for (let k = 0; k < 3; k++) assert.deepEqual(read(cache, mf, 5000, 500), first.subarray(5000, 5500));
    assert.equal(cache.fills, 0);
    read(cache, mf, 10, 10);
    read(cache, mf, 20, 10);
    assert.equal(cache.fills, 1);
    assert.deepEqual(read(cache, mf, 0, 100), first.subarray(0, 100));
    // recovery/HA truncation, then different bytes at the same positions
    mf.truncateTo(1000);
    const second = randomBytes(5000);
    mf.append(second);
    mf.commitNow();
    assert.deepEqual(read(cache, mf, 0, 1000), first.subarray(0, 1000), 'bytes below the cut are unchanged');
    assert.deepEqual(read(cache, mf, 1000, 2000), second.subarray(0, 2000), 'never the bytes from before the truncation');
    // recovery moving the positions (setPositions) invalidates as well
    read(cache, mf, 0, 10);
    read(cache, mf, 0, 10);
    mf.setPositions(500);
    assert.equal(read(cache, mf, 400, 200), null, 'beyond the recovered end');
    mf.close();
    // another segment object at the same offset (deleted and created again) does not see the old chunks
    const other = segmentWith(root, 'b', randomBytes(8192));
    const again = Buffer.alloc(100);
    assert.ok(cache.readInto(other, 0, again, 0, 100));
    const fromFile = Buffer.alloc(100);
    assert.ok(other.readInto(0, fromFile, 0, 100));
    assert.deepEqual(again, fromFile);
    other.close();
  } finally {
    removeDir(root);
  }
});

test('store: pulls served through the read cache return the stored records, round robin over 16 interleaved queues', async () => {
  const root = tempDir();
  try {
    // 4 MiB segment, ~1.2 MB of records: the first chunks (256 KiB) are all written. With 16
    // queues a queue's records are too far apart for span reads; while the pull's next record is
    // within a chunk's reach they are copied out of the chunk (chunkAt), else read on their own.
    const store = await openStore(smallConfig(root, { mappedFileSizeCommitLog: 4 << 20, mappedFileSizeConsumeQueue: 20 * 400 }));
    const queues = 16;
    const bodies: Buffer[][] = Array.from({ length: queues }, () => []);
    for (let i = 0; i < 1600; i++) {
      const q = i % queues;
      const body = randomBytes(600 + (i % 7) * 50);
      bodies[q]!.push(body);
      assert.equal((await store.putMessage(makeMessage({ queueId: q, body }))).status, 'PUT_OK');
    }
    for (let round = 0; round < 2; round++) {
      const next = new Array<number>(queues).fill(0);
      for (let pass = 0; pass < 10; pass++) {
        for (let q = 0; q < queues; q++) {
          const r = await store.getMessage('G', 'T', q, next[q]!, 10);
          assert.equal(r.status, 'FOUND');
          for (const [k, raw] of r.messages.entries()) {
            const expected = bodies[q]![next[q]! + k]!;
            assert.ok(raw.includes(expected), `queue ${q} offset ${next[q]! + k} round ${round}`);
          }
          next[q] = r.nextBeginOffset;
        }
      }
      assert.deepEqual(next, new Array<number>(queues).fill(100));
    }
    const cache = store.commitLog.readCache;
    assert.ok(cache.fills > 0 && cache.hits > cache.bypasses, `records served from chunks (fills ${cache.fills}, hits ${cache.hits}, bypasses ${cache.bypasses})`);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('read cache chunkAt: a missing chunk is read at once and holds the file bytes; a chunk not all written is null; truncation is never served stale', () => {
  const root = tempDir();
  try {
    const first = randomBytes(10_000);
    const mf = segmentWith(root, 'a', first);
    const cache = new CommitLogReadCache({ chunkBytes: CHUNK, capacityChunks: 4 });
    const c1 = cache.chunkAt(mf, CHUNK + 5);
    assert.ok(c1, 'chunk 1 (all written) is read on the first call');
    assert.equal(cache.fills, 1);
    assert.equal(c1.start, CHUNK);
    assert.equal(c1.length, CHUNK);
    assert.deepEqual(c1.buf.subarray(0, c1.length), first.subarray(CHUNK, 2 * CHUNK));
    assert.equal(cache.chunkAt(mf, CHUNK + 100)?.buf, c1.buf, 'the same chunk again, no new read');
    assert.equal(cache.fills, 1);
    assert.equal(cache.chunkAt(mf, 2 * CHUNK + 10), null, 'chunk 2 ends beyond the 10 000 bytes written');
    assert.equal(cache.chunkAt(mf, 10_000), null, 'at the write position');
    // truncation and different bytes at the same positions: a new read, not the old chunk
    mf.truncateTo(CHUNK + 1000);
    const second = randomBytes(8000);
    mf.append(second);
    mf.commitNow();
    const c2 = cache.chunkAt(mf, CHUNK + 1000);
    assert.ok(c2);
    assert.deepEqual(c2.buf.subarray(1000, 1000 + 3096), second.subarray(0, 3096));
    assert.deepEqual(c2.buf.subarray(0, 1000), first.subarray(CHUNK, CHUNK + 1000));
    assert.equal(cache.fills, 2);
    mf.close();
  } finally {
    removeDir(root);
  }
});

test('store: pulls of 4 interleaved queues copy the records out of read-cache chunks (span reads only at the unwritten tail), byte for byte', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root, { mappedFileSizeCommitLog: 4 << 20, mappedFileSizeConsumeQueue: 20 * 1000 }));
    const queues = 4;
    const bodies: Buffer[][] = Array.from({ length: queues }, () => []);
    // ~1.6 MB: six 256 KiB chunks all written, the rest of the last one not
    for (let i = 0; i < 2400; i++) {
      const q = i % queues;
      const body = randomBytes(500 + (i % 5) * 40);
      bodies[q]!.push(body);
      assert.equal((await store.putMessage(makeMessage({ queueId: q, body }))).status, 'PUT_OK');
    }
    const cache = store.commitLog.readCache;
    for (let round = 0; round < 2; round++) {
      const fills = cache.fills;
      const next = new Array<number>(queues).fill(0);
      for (let pass = 0; pass < 19; pass++) {
        for (let q = 0; q < queues; q++) {
          const r = await store.getMessage('G', 'T', q, next[q]!, 32);
          if (next[q] === 600) {
            assert.equal(r.status, 'OFFSET_OVERFLOW_ONE');
            continue;
          }
          assert.equal(r.status, 'FOUND');
          for (const [k, raw] of r.messages.entries()) {
            const expected = bodies[q]![next[q]! + k]!;
            assert.ok(raw.includes(expected), `queue ${q} offset ${next[q]! + k} round ${round}`);
            assert.equal(raw.readInt32BE(0), raw.length, 'one whole record');
          }
          assert.equal(r.body?.length, r.bufferTotalSizeBytes);
          next[q] = r.nextBeginOffset;
        }
      }
      assert.deepEqual(next, new Array<number>(queues).fill(600));
      // each written chunk read once per round at most (the first round) however many queues read it
      assert.ok(cache.fills - fills <= (round === 0 ? 7 : 0), `fills in round ${round}: ${cache.fills - fills}`);
    }
    assert.ok(cache.hits >= 2 * 4 * 6, `chunk lookups served (hits ${cache.hits}, fills ${cache.fills})`);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('read cache leases: a leased chunk is never refilled — eviction takes an unleased one, or retires the leased one and fills a fresh buffer; its buffer is reused only after the last unlease; a second unlease is ignored', () => {
  const root = tempDir();
  try {
    const data = randomBytes(40 * 1024);
    const mf = segmentWith(root, 'a', data);
    const cache = new CommitLogReadCache({ chunkBytes: CHUNK, capacityChunks: 2 });
    const a = cache.chunkAt(mf, 10)!;
    const aBuf = a.buf;
    cache.lease(a);
    assert.equal(cache.leasesHeld, 1);
    const b = cache.chunkAt(mf, CHUNK + 10)!;
    const bBuf = b.buf;
    // chunk 2: the least recently used is the leased chunk 0, but the unleased chunk 1 is taken
    const c = cache.chunkAt(mf, 2 * CHUNK + 10)!;
    assert.equal(c.buf, bBuf, 'the unleased chunk 1 was replaced');
    assert.equal(cache.chunkAt(mf, 20)?.buf, aBuf, 'the leased chunk 0 is still cached');
    assert.equal(cache.retiredLeased, 0);
    // every chunk leased: the least recently used leased one (chunk 2: chunk 0 was used since)
    // leaves the cache, a fresh buffer is filled
    cache.lease(c);
    const cBuf = c.buf;
    const fills = cache.fills;
    const d = cache.chunkAt(mf, 3 * CHUNK + 10)!;
    assert.equal(cache.fills, fills + 1);
    assert.equal(cache.retiredLeased, 1);
    assert.notEqual(d.buf, aBuf);
    assert.notEqual(d.buf, cBuf);
    // the retired chunk's bytes stay intact although chunk 2 is filled again elsewhere
    const c2 = cache.chunkAt(mf, 2 * CHUNK + 10)!;
    assert.notEqual(c2.buf, cBuf, 'chunk 2 read again into another buffer');
    assert.equal(cache.chunkAt(mf, 3 * CHUNK + 10)!.buf, d.buf);
    assert.deepEqual(cBuf.subarray(0, CHUNK), data.subarray(2 * CHUNK, 3 * CHUNK));
    assert.deepEqual(aBuf.subarray(0, CHUNK), data.subarray(0, CHUNK));
    // a second unlease changes nothing; the last unlease of the retired chunk frees its buffer
    cache.unlease(c);
    cache.unlease(c);
    assert.equal(cache.leasesHeld, 1, 'only chunk 0 is still leased');
    cache.unlease(a);
    cache.unlease(a);
    assert.equal(cache.leasesHeld, 0);
    cache.unlease({ buf: Buffer.alloc(1), start: 0, length: 1 });
    assert.equal(cache.leasesHeld, 0, 'a foreign chunk is ignored');
    cache.clear();
    const e = cache.chunkAt(mf, 5 * CHUNK + 10)!;
    assert.notEqual(e.buf, aBuf, 'clear() drops the free buffers too');
    mf.close();
  } finally {
    removeDir(root);
  }
});

test('read cache leases: a retired buffer goes back to the free list on its last unlease and is filled again only then; an invalidated (truncated) leased chunk keeps its bytes', () => {
  const root = tempDir();
  try {
    const data = randomBytes(40 * 1024);
    const mf = segmentWith(root, 'a', data);
    const cache = new CommitLogReadCache({ chunkBytes: CHUNK, capacityChunks: 4 });
    const a = cache.chunkAt(mf, 10)!;
    const aBuf = a.buf;
    cache.lease(a);
    cache.lease(a);
    // truncation moves the content epoch: chunk 0 is invalid, retired while leased twice
    mf.truncateTo(2 * CHUNK);
    const other = randomBytes(3 * CHUNK);
    mf.append(other);
    mf.commitNow();
    const a2 = cache.chunkAt(mf, 10)!;
    assert.notEqual(a2.buf, aBuf);
    assert.equal(cache.retiredLeased, 1);
    assert.deepEqual(aBuf.subarray(0, CHUNK), data.subarray(0, CHUNK), 'lent bytes unchanged');
    cache.unlease(a);
    // one lease left: chunks filled now must not get the retired buffer
    for (let i = 1; i < 5; i++) assert.notEqual(cache.chunkAt(mf, i * CHUNK + 1)!.buf, aBuf);
    assert.deepEqual(aBuf.subarray(0, CHUNK), data.subarray(0, CHUNK));
    cache.unlease(a);
    assert.equal(cache.leasesHeld, 0);
    // now free: the next chunk object made (a cached chunk found invalid leaves room) is filled into it
    mf.truncateTo(2 * CHUNK);
    mf.append(randomBytes(3 * CHUNK));
    mf.commitNow();
    assert.equal(cache.chunkAt(mf, CHUNK + 1)!.buf, aBuf, 'the freed buffer is reused');
    mf.close();
  } finally {
    removeDir(root);
  }
});

test('read cache footprint: readers that keep together use minActiveChunks buffers; readers spread over more regions grow it up to capacityChunks (no chunk read twice once grown); a quiet stretch shrinks it again', () => {
  const root = tempDir();
  try {
    const data = randomBytes(256 * 1024 - 100);
    const mf = MappedFile.create(path.join(root, 'big'), 0, 256 * 1024, { fs: nodeFileSystem });
    mf.append(data);
    mf.commitNow();
    const cache = new CommitLogReadCache({ chunkBytes: CHUNK, capacityChunks: 8, minActiveChunks: 2 });
    const chunks = Math.floor(data.length / CHUNK); // 63 whole chunks
    const check = (index: number): void => {
      const ch = cache.chunkAt(mf, index * CHUNK + 5);
      assert.ok(ch !== null, `chunk ${index}`);
      assert.ok(ch.buf.subarray(0, ch.length).equals(data.subarray(index * CHUNK, index * CHUNK + ch.length)), `chunk ${index} bytes`);
    };
    // one region walked forward, each chunk looked at 4 times (4 queues' pulls): every chunk read once, 2 buffers
    for (let i = 0; i < 20; i++) for (let q = 0; q < 4; q++) check(i);
    assert.equal(cache.fills, 20);
    assert.equal(cache.activeChunks, 2);
    assert.ok(cache.size <= 2);
    // 6 readers at 6 regions, round robin: the evicted chunks come back, so the cache grows to 8
    const regions = [20, 26, 32, 38, 44, 50];
    const fillsPerRound: number[] = [];
    for (let round = 0; round < 6; round++) {
      const before = cache.fills;
      for (const r of regions) check(r);
      fillsPerRound.push(cache.fills - before);
    }
    assert.equal(cache.activeChunks, 8);
    assert.deepEqual(fillsPerRound.slice(-3), [0, 0, 0], `fills per round ${fillsPerRound.join(',')}: none once grown`);
    // a long quiet stretch (4 × capacity fills, nothing evicted asked again) halves it, and again
    for (let pass = 0; pass < 3; pass++) for (let i = 0; i < chunks; i++) check(i);
    assert.ok(cache.activeChunks < 8, `active ${cache.activeChunks} after a quiet stretch`);
    assert.ok(cache.size <= cache.activeChunks);
    mf.close();
  } finally {
    removeDir(root);
  }
});
