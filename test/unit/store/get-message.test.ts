import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { tagsCode } from '../../../src/common/message/java-hash.js';
import { offsetToFileName } from '../../../src/store/mapped-file/file-names.js';
import type { MessageFilter } from '../../../src/store/message-store.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

const bodyFor = (recordSize: number, topic = 'T'): Buffer => Buffer.alloc(recordSize - 91 - topic.length, 0x61);

/** Builds Q1 (min 0, max 100), Q2 (min 40, max 100) and an empty Q3 on topic T. */
async function buildB26Store(root: string): Promise<void> {
  const cfg = smallConfig(root);
  const store = await openStore(cfg);
  // Q2's first 40 records fill CommitLog files 0..9 exactly (4 × 1000 bytes each)
  for (let i = 0; i < 40; i++) assert.equal((await store.putMessage(makeMessage({ queueId: 2, body: bodyFor(1000) }))).status, 'PUT_OK');
  assert.equal(store.getMaxPhyOffset(), 9 * 4096 + 4000);
  for (let i = 0; i < 100; i++) await store.putMessage(makeMessage({ queueId: 1, body: bodyFor(1000) }));
  for (let i = 0; i < 60; i++) await store.putMessage(makeMessage({ queueId: 2, body: bodyFor(1000) }));
  await store.shutdown();
  // retention analog: the 10 oldest CommitLog files are gone
  for (let f = 0; f < 10; f++) fs.unlinkSync(path.join(root, 'commitlog', offsetToFileName(f * 4096)));
}

test('B26 pull offsets out of range: OVERFLOW_ONE / OVERFLOW_BADLY / TOO_SMALL / NO_MESSAGE_IN_QUEUE with exact nextBeginOffset', async () => {
  const root = tempDir();
  try {
    await buildB26Store(root);
    const store = await openStore(smallConfig(root));
    assert.equal(store.getMinOffsetInQueue('T', 1), 0);
    assert.equal(store.getMaxOffsetInQueue('T', 1), 100);
    assert.equal(store.getMinOffsetInQueue('T', 2), 40);
    assert.equal(store.getMaxOffsetInQueue('T', 2), 100);
    const pull = async (q: number, off: number) => {
      const r = await store.getMessage('g', 'T', q, off, 32);
      return [r.status, r.nextBeginOffset];
    };
    assert.deepEqual(await pull(1, 100), ['OFFSET_OVERFLOW_ONE', 100]);
    assert.deepEqual(await pull(1, 150), ['OFFSET_OVERFLOW_BADLY', 100], 'max, never 0 although min is 0');
    assert.deepEqual(await pull(2, 150), ['OFFSET_OVERFLOW_BADLY', 100]);
    assert.deepEqual(await pull(2, 10), ['OFFSET_TOO_SMALL', 40]);
    assert.deepEqual(await pull(3, 5), ['NO_MESSAGE_IN_QUEUE', 0]);
    const found = await store.getMessage('g', 'T', 2, 40, 32);
    assert.equal(found.status, 'FOUND');
    assert.equal(decodeRecord(found.messages[0]!).queueOffset, 40);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('B26 on a slave without offset checking the next offset is the requested one', async () => {
  const root = tempDir();
  try {
    await buildB26Store(root);
    const store = await openStore(smallConfig(root, { brokerRole: 'SLAVE' }));
    const pull = async (q: number, off: number) => {
      const r = await store.getMessage('g', 'T', q, off, 32);
      return [r.status, r.nextBeginOffset];
    };
    assert.deepEqual(await pull(1, 100), ['OFFSET_OVERFLOW_ONE', 100]);
    assert.deepEqual(await pull(1, 150), ['OFFSET_OVERFLOW_BADLY', 150]);
    assert.deepEqual(await pull(2, 10), ['OFFSET_TOO_SMALL', 10]);
    assert.deepEqual(await pull(3, 5), ['NO_MESSAGE_IN_QUEUE', 5]);
    assert.equal((await store.putMessage(makeMessage())).status, 'SERVICE_NOT_AVAILABLE');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

function hashFilter(...tags: string[]): MessageFilter {
  const codes = new Set(tags.map((t) => tagsCode(t)));
  return { isMatchedByConsumeQueue: (code) => codes.has(code) };
}
function exactTagFilter(tag: string): MessageFilter {
  return {
    isMatchedByConsumeQueue: (code) => code === tagsCode(tag),
    isMatchedByCommitLog: (record) => decodeRecord(record, 0, { readBody: false }).properties.get('TAGS') === tag,
  };
}

test('B25 tags Aa and BB collide (2112): pulls advance past filtered entries and never stick at 0', async () => {
  const root = tempDir();
  try {
    assert.equal(tagsCode('Aa'), 2112);
    assert.equal(tagsCode('BB'), 2112);
    const store = await openStore(smallConfig(root));
    for (let i = 0; i < 5; i++) await store.putMessage(makeMessage({ tags: 'BB', body: `bb${i}` }));
    await store.putMessage(makeMessage({ tags: 'Aa', body: 'aa' }));
    // hash-only broker filter: the BB batch passes the CQ stage (client drops it), offset still moves to 5, then 6
    const first = await store.getMessage('g', 'T', 0, 0, 5, hashFilter('Aa'));
    assert.equal(first.status, 'FOUND');
    assert.equal(first.messages.length, 5);
    assert.equal(first.nextBeginOffset, 5);
    const second = await store.getMessage('g', 'T', 0, first.nextBeginOffset, 5, hashFilter('Aa'));
    assert.deepEqual(second.messages.map((m) => decodeRecord(m).body.toString()), ['aa']);
    assert.equal(second.nextBeginOffset, 6);
    // exact second-stage filter: the Aa subscriber gets only Aa in one pull and moves past the 5 BB entries
    const aa = await store.getMessage('g', 'T', 0, 0, 5, exactTagFilter('Aa'));
    assert.equal(aa.status, 'FOUND');
    assert.deepEqual(aa.messageQueueOffsets, [5]);
    assert.equal(aa.nextBeginOffset, 6);
    const bb = await store.getMessage('g2', 'T', 0, 0, 5, exactTagFilter('BB'));
    assert.deepEqual(bb.messageQueueOffsets, [0, 1, 2, 3, 4]);
    assert.equal(bb.nextBeginOffset, 5);
    const bbRest = await store.getMessage('g2', 'T', 0, 5, 5, exactTagFilter('BB'));
    assert.equal(bbRest.status, 'NO_MATCHED_MESSAGE');
    assert.equal(bbRest.nextBeginOffset, 6);
    const other = await store.getMessage('g3', 'T', 0, 0, 5, hashFilter('TagX'));
    assert.equal(other.status, 'NO_MATCHED_MESSAGE');
    assert.equal(other.nextBeginOffset, 6);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('pull batch limits: in-memory count 32, on-disk count 8 and bytes 64 KiB, maxMsgNums, one CQ file per pull', async () => {
  const root = tempDir();
  try {
    const cfg = smallConfig(root, { mappedFileSizeCommitLog: 1 << 20, mappedFileSizeConsumeQueue: 6000 });
    let store = await openStore(cfg);
    for (let i = 0; i < 80; i++) await store.putMessage(makeMessage({ body: bodyFor(1000) }));
    let r = await store.getMessage('g', 'T', 0, 0, 100);
    assert.equal(r.messages.length, 32);
    assert.equal(r.nextBeginOffset, 32);
    assert.equal(r.bufferTotalSizeBytes, 32 * 1000);
    r = await store.getMessage('g', 'T', 0, 0, 5);
    assert.equal(r.messages.length, 5);
    assert.equal(r.nextBeginOffset, 5);
    await store.shutdown();
    store = await openStore(cfg, { totalMemoryBytes: 0 }); // everything counts as on disk
    r = await store.getMessage('g', 'T', 0, 0, 100);
    assert.equal(r.messages.length, 8);
    assert.equal(r.suggestPullingFromSlave, true);
    await store.shutdown();
    store = await openStore({ ...cfg, maxTransferCountOnMessageInDisk: 1000 }, { totalMemoryBytes: 0 });
    r = await store.getMessage('g', 'T', 0, 0, 100);
    assert.equal(r.messages.length, 65, '65 × 1000 B ≤ 64 KiB < 66 × 1000 B');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('a pull reads at most one ConsumeQueue file', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    for (let i = 0; i < 25; i++) await store.putMessage(makeMessage());
    const r = await store.getMessage('g', 'T', 0, 7, 32);
    assert.deepEqual([r.status, r.messages.length, r.nextBeginOffset], ['FOUND', 3, 10]);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('pulled records are the CommitLog records byte for byte, with read-ahead over adjacent records, file ends, filters and one body', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root)); // 4 KiB CommitLog files: runs of adjacent records cross file ends
    // queue 0: runs of 1..7 adjacent records (batches and single puts), broken by records of queue 1
    let n = 0;
    for (let run = 1; n < 120; run = (run % 7) + 1) {
      const batch = Array.from({ length: run }, () => makeMessage({ tags: n % 3 === 0 ? 'A' : 'B', body: `m${n++}-${'x'.repeat(n % 97)}` }));
      assert.equal((run > 1 ? await store.putMessages(batch) : await store.putMessage(batch[0]!)).status, 'PUT_OK');
      await store.putMessage(makeMessage({ queueId: 1, body: 'other' }));
    }
    const max = store.getMaxOffsetInQueue('T', 0);
    assert.equal(max, n);
    const check = async (maxMsgNums: number, filter: MessageFilter | null, expectTag: string | null) => {
      const seen: number[] = [];
      for (let off = 0; off < max; ) {
        const r = await store.getMessage('g', 'T', 0, off, maxMsgNums, filter);
        assert.ok(r.nextBeginOffset > off, `progress from ${off}`);
        if (r.status === 'FOUND') {
          assert.ok(r.messages.length <= maxMsgNums);
          assert.deepEqual(r.body, Buffer.concat(r.messages), 'body is the records concatenated');
          assert.equal(r.bufferTotalSizeBytes, r.body!.length);
          for (const [i, m] of r.messages.entries()) {
            const ext = decodeRecord(m);
            assert.equal(ext.queueOffset, r.messageQueueOffsets[i]);
            assert.deepEqual(m, await store.selectOneMessageByOffset(ext.commitLogOffset), `record at queue offset ${ext.queueOffset}`);
            if (expectTag) assert.equal(ext.properties.get('TAGS'), expectTag);
            seen.push(ext.queueOffset);
          }
        } else {
          assert.equal(r.status, 'NO_MATCHED_MESSAGE');
          assert.equal(r.body, undefined);
        }
        off = r.nextBeginOffset;
      }
      return seen;
    };
    const all = Array.from({ length: n }, (_, i) => i);
    for (const k of [1, 3, 8, 32]) assert.deepEqual(await check(k, null, null), all, `maxMsgNums ${k}`);
    const aOffsets = all.filter((i) => i % 3 === 0);
    // CQ-stage filter skips records in the middle of a read-ahead run
    assert.deepEqual(await check(4, hashFilter('A'), 'A'), aOffsets);
    // CommitLog-stage filter rejects records after they were read
    assert.deepEqual(await check(5, exactTagFilter('A'), 'A'), aOffsets);
    assert.deepEqual(await check(32, exactTagFilter('B'), 'B'), all.filter((i) => i % 3 !== 0));
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('getConsumeQueueEntries (QUERY_CONSUME_QUEUE): entries from an offset with CommitLog offset, size and tags code; from below the min starts at the min; unknown queue → null', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    const sizes: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await store.putMessage(makeMessage({ queueId: 0, body: Buffer.from(`e${i}`.repeat(i + 1)), tags: `Tag${i}` }));
      assert.equal(r.status, 'PUT_OK');
      sizes.push(r.appendResult!.wroteBytes);
    }
    const entries = store.getConsumeQueueEntries!('T', 0, 1, 2)!;
    assert.deepEqual(entries.map((e) => [e.queueOffset, e.sizeBytes, e.tagsCode]), [[1, sizes[1], tagsCode('Tag1')], [2, sizes[2], tagsCode('Tag2')]]);
    assert.equal(entries[0]!.phyOffset, store.getCommitLogOffsetInQueue('T', 0, 1));
    assert.equal(entries[1]!.phyOffset - entries[0]!.phyOffset, sizes[1]);
    assert.deepEqual(store.getConsumeQueueEntries!('T', 0, 3, 10)!.map((e) => e.queueOffset), [3]);
    assert.deepEqual(store.getConsumeQueueEntries!('T', 0, 9, 10), []);
    assert.equal(store.getConsumeQueueEntries!('T', 5, 0, 10), null);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});
