/**
 * getMessage's lend mode (zero-copy pulls): records as views of the CommitLog read cache's chunks
 * (GetMessageResult.bodyParts), leased until release(). Real store on disk, default read cache
 * (256 KiB chunks).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { tagsCode } from '../../../src/common/message/java-hash.js';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import type { GetMessageResult, MessageFilter } from '../../../src/store/message-store.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';
import { HOUR_MS, fillCommitLogFiles, localTime, openRetentionStore, retentionConfig, seqOf, setAge } from './retention-support.js';

const LEND_ALL = { minViewBytes: 0, maxParts: Number.POSITIVE_INFINITY };
const concat = (r: GetMessageResult): Buffer => Buffer.concat(r.bodyParts ?? (r.body ? [r.body] : []));
/** The records as the view-free part accessors describe them (partCount / partBuffer / partStart / partEnd). */
const concatParts = (r: GetMessageResult): Buffer => {
  const out: Buffer[] = [];
  for (let i = 0; i < (r.partCount ?? 0); i++) out.push(Buffer.from(r.partBuffer!(i).subarray(r.partStart!(i), r.partEnd!(i))));
  return Buffer.concat(out);
};

/** `queues` queues of topic T written round robin (`perQueue` each, ~1 KiB random bodies), plus a single-queue topic A written in one run of `adjacent` records. */
async function loadStore(root: string, queues: number, perQueue: number, adjacent: number): Promise<{ store: DefaultMessageStore; bodies: Buffer[][] }> {
  const store = await openStore(smallConfig(root, { mappedFileSizeCommitLog: 8 << 20, mappedFileSizeConsumeQueue: 20 * 4000 }));
  const bodies: Buffer[][] = Array.from({ length: queues + 1 }, () => []);
  for (let i = 0; i < perQueue * queues; i++) {
    const q = i % queues;
    const body = randomBytes(900 + (i % 7) * 30);
    bodies[q]!.push(body);
    assert.equal((await store.putMessage(makeMessage({ queueId: q, body, tags: i % 2 === 0 ? 'even' : 'odd' }))).status, 'PUT_OK');
  }
  for (let i = 0; i < adjacent; i++) {
    const body = randomBytes(1000);
    bodies[queues]!.push(body);
    assert.equal((await store.putMessage(makeMessage({ topic: 'A', queueId: 0, body }))).status, 'PUT_OK');
  }
  // everything below the write position of a full chunk: write a tail so the last chunks are all written
  for (let i = 0; i < 300; i++) await store.putMessage(makeMessage({ topic: 'Tail', queueId: 0, body: randomBytes(1000) }));
  return { store, bodies };
}

test('lend mode: interleaved records come as views of read-cache chunks (one per record), byte-equal to copy mode; release() ends the leases once, a second release changes nothing', async () => {
  const root = tempDir();
  try {
    const { store, bodies } = await loadStore(root, 8, 200, 0);
    const cache = store.commitLog.readCache;
    for (let q = 0; q < 8; q++) {
      for (let offset = 0; offset < 160; offset += 32) {
        const copy = await store.getMessage('g', 'T', q, offset, 32);
        const lent = await store.getMessage('g', 'T', q, offset, 32, null, LEND_ALL);
        assert.equal(lent.status, 'FOUND');
        assert.deepEqual(lent.messageQueueOffsets, copy.messageQueueOffsets);
        assert.equal(lent.nextBeginOffset, copy.nextBeginOffset);
        // records of a queue among 7 others are not adjacent: one view each (a record crossing a
        // chunk end is copied into the body)
        assert.ok(lent.bodyParts!.length >= 30, `${lent.bodyParts!.length} parts`);
        assert.ok(concat(lent).equals(copy.body!), `q${q}@${offset}: the views hold the copied bytes`);
        assert.equal(lent.partCount, lent.bodyParts!.length, 'one described part per view');
        assert.ok(concatParts(lent).equals(copy.body!), `q${q}@${offset}: the described parts hold the copied bytes`);
        assert.equal(lent.bufferTotalSizeBytes, copy.body!.length);
        lent.messages.forEach((m, i) => {
          const d = decodeRecord(m);
          assert.equal(d.queueOffset, offset + i);
          assert.ok(d.body.equals(bodies[q]![offset + i]!));
        });
        assert.ok(cache.leasesHeld > 0, 'chunks leased while the views are out');
        lent.release!();
        assert.equal(cache.leasesHeld, 0);
        lent.release!();
        assert.equal(cache.leasesHeld, 0, 'idempotent');
        copy.release!();
      }
    }
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('lend mode: adjacent records of one queue are one view per chunk; minViewBytes / maxParts copy short views and too many parts into one body', async () => {
  const root = tempDir();
  try {
    const { store, bodies } = await loadStore(root, 4, 100, 600);
    const cache = store.commitLog.readCache;
    const pool = () => store.getMessageBodyPoolStats();
    // one run of 32 adjacent records (~33 KB) within one 256 KiB chunk: one view, no body
    let views = 0;
    let copiedPulls = 0;
    for (let offset = 0; offset + 32 <= 600; offset += 32) {
      const r = await store.getMessage('g', 'A', 0, offset, 32, null, LEND_ALL);
      assert.equal(r.messageQueueOffsets.length, 32);
      assert.ok(r.bodyParts!.length <= 2, 'at most split once at a chunk boundary');
      views += r.bodyParts!.length;
      r.messages.forEach((m, i) => assert.ok(decodeRecord(m).body.equals(bodies[4]![offset + i]!)));
      // the broker's settings: one view when it is one run of >= 16 KiB, else everything copied into one body
      const before = pool().allocated + pool().reused;
      const b = await store.getMessage('g', 'A', 0, offset, 32, null, { minViewBytes: 16 * 1024, maxParts: 1 });
      assert.equal(b.bodyParts!.length, 1);
      assert.ok(b.body!.equals(concat(r)));
      if (pool().allocated + pool().reused > before) copiedPulls++;
      r.release!();
      b.release!();
    }
    assert.ok(views <= 18 + 4, `${views} views for 18 pulls`);
    assert.ok(copiedPulls >= 1 && copiedPulls <= 6, `pulls crossing a chunk end are copied, the others lent: ${copiedPulls} of 18 copied`);
    // interleaved records with minViewBytes above a record's size: all copied, one part, equal bytes
    const all = await store.getMessage('g', 'T', 1, 0, 32, null, LEND_ALL);
    const small = await store.getMessage('g', 'T', 1, 0, 32, null, { minViewBytes: 4096, maxParts: 64 });
    assert.equal(small.bodyParts!.length, 1);
    assert.ok(small.body!.equals(concat(all)));
    const few = await store.getMessage('g', 'T', 1, 0, 32, null, { minViewBytes: 0, maxParts: 4 });
    assert.equal(few.bodyParts!.length, 1, '32 views > maxParts 4: flattened');
    assert.ok(few.body!.equals(concat(all)));
    assert.ok(cache.leasesHeld > 0);
    for (const r of [all, small, few]) r.release!();
    assert.equal(cache.leasesHeld, 0, 'views copied out at finish hold no lease');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('lend mode: lent views stay intact while the cache is cleared and refilled by many other pulls; the freed chunks are reused only after release', async () => {
  const root = tempDir();
  try {
    const { store, bodies } = await loadStore(root, 16, 120, 0);
    const cache = store.commitLog.readCache;
    const held = await store.getMessage('g', 'T', 3, 40, 32, null, LEND_ALL);
    const expected = concat(held);
    assert.ok(expected.equals((await store.getMessage('g', 'T', 3, 40, 32)).body!));
    // drop every chunk (the held ones are retired), then pull everything else twice over
    cache.clear();
    for (let round = 0; round < 2; round++) {
      for (let q = 0; q < 16; q++) {
        for (let offset = 0; offset < 120; offset += 32) {
          const r = await store.getMessage('g', 'T', q, offset, 32, null, LEND_ALL);
          r.release!();
        }
      }
    }
    assert.ok(cache.retiredLeased >= 1);
    assert.ok(concat(held).equals(expected), 'the lent bytes were not overwritten');
    assert.ok(concatParts(held).equals(expected), 'the described parts were not overwritten either');
    held.messages.forEach((m, i) => assert.ok(decodeRecord(m).body.equals(bodies[3]![40 + i]!)));
    held.release!();
    assert.equal(cache.leasesHeld, 0);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('lend mode with filters: tag (ConsumeQueue) and record (SQL-like) filters see the same records as copy mode', async () => {
  const root = tempDir();
  try {
    const { store } = await loadStore(root, 4, 100, 0);
    const even: MessageFilter = {
      isMatchedByConsumeQueue: (code) => code === tagsCode('even'),
      isMatchedByCommitLog: (record) => decodeRecord(record).properties.get('TAGS') === 'even',
    };
    const odd: MessageFilter = { isMatchedByConsumeQueue: () => true, isMatchedByCommitLog: (record) => decodeRecord(record).properties.get('TAGS') === 'odd' };
    for (const filter of [even, odd]) {
      let matched = 0;
      for (let q = 0; q < 4; q++) {
        const copy = await store.getMessage('g', 'T', q, 0, 32, filter);
        const lent = await store.getMessage('g', 'T', q, 0, 32, filter, LEND_ALL);
        assert.equal(lent.status, copy.status);
        assert.deepEqual(lent.messageQueueOffsets, copy.messageQueueOffsets);
        matched += lent.messageQueueOffsets.length;
        assert.ok(concat(lent).equals(copy.body ?? Buffer.alloc(0)));
        lent.release!();
        copy.release!();
      }
      assert.equal(matched, 64, 'two queues of 100 match (32 per pull), two none');
    }
    assert.equal(store.commitLog.readCache.leasesHeld, 0);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('lend mode and retention: CommitLog files deleted while their records are lent leave the views intact; later pulls of the deleted range find nothing', async () => {
  const root = tempDir();
  try {
    const { store } = await openRetentionStore(retentionConfig(root, { mappedFileSizeCommitLog: 64 * 1024 }), { nowMs: localTime(15) });
    await fillCommitLogFiles(store, 4);
    // a run of adjacent records is lent from its chunk once the chunk missed twice (the first
    // pull reads the records into a body)
    const first = await store.getMessage('g', 'T', 0, 0, 32, null, LEND_ALL);
    assert.equal(store.commitLog.readCache.leasesHeld, 0);
    first.release!();
    const lent = await store.getMessage('g', 'T', 0, 0, 32, null, LEND_ALL);
    assert.equal(lent.status, 'FOUND');
    assert.ok(store.commitLog.readCache.leasesHeld > 0, 'records of the full first file are lent from a chunk');
    const copy = (await store.getMessage('g', 'T', 0, 0, 32)).body!;
    assert.ok(concat(lent).equals(copy));
    const files = store.commitLog.mfq.getFiles();
    [80, 75, 2, 0].forEach((h, i) => setAge(store, files[i]!, localTime(15), h * HOUR_MS));
    const r = await store.executeDeleteFilesManually();
    assert.equal(r.commitLog!.deleted.length, 2);
    assert.equal(store.getMinPhyOffset(), 2 * 64 * 1024);
    assert.ok(concat(lent).equals(copy), 'the lent bytes are unchanged after the deletion');
    assert.ok(concatParts(lent).equals(copy), 'and so are the described parts');
    lent.messages.forEach((m, i) => assert.equal(seqOf(m), i));
    const again = await store.getMessage('g', 'T', 0, 0, 32, null, LEND_ALL);
    assert.notEqual(again.status, 'FOUND', 'the read cache never serves a deleted file');
    assert.equal(again.messageQueueOffsets.length, 0);
    again.release!();
    lent.release!();
    assert.equal(store.commitLog.readCache.leasesHeld, 0);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});
