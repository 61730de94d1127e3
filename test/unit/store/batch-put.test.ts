/**
 * MessageStore.putMessages: a batch is one atomic block (RocketMQ `CommitLog.asyncPutMessages`
 * with a MessageExtBatch): consecutive queue offsets and CommitLog positions, one store time,
 * rolled whole to the next segment when it does not fit the rest of the current one (the
 * current one ends with the blank end-of-file record), and refused whole when one message or
 * the block is not storable.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dispatched, makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';
import { FaultyFileSystem } from '../../support/faulty-file-system.js';
import { BLANK_MAGIC_CODE, decodeRecord, encodeRecord } from '../../../src/common/message/record-codec.js';
import { MessageSysFlag } from '../../../src/common/message/sysflag.js';
import type { Clock } from '../../../src/common/time/clock.js';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import type { StoreConfig } from '../../../src/store/store-config.js';
import type { PutMessagesResult } from '../../../src/store/message-store.js';
import { createMessageId } from '../../../src/common/message/msgid.js';

const SEGMENT = 4096;
const BODY = Buffer.alloc(100, 0x61);

/** A clock that moves 1 ms every time it is read: any second reading gives another store time. */
function tickingClock(startMs = 1_700_000_000_000): Clock {
  let t = startMs;
  return { nowMs: () => (t += 1) };
}

function batchOf(n: number, tag: string, spec: { queueId?: number; body?: Buffer } = {}) {
  return Array.from({ length: n }, (_, i) => makeMessage({ body: spec.body ?? BODY, queueId: spec.queueId ?? 0, keys: `${tag}-${String(i).padStart(2, '0')}` }));
}

/** Reads the record at `offset` from the CommitLog and checks it is a message record. */
async function recordAt(store: DefaultMessageStore, offset: number) {
  const raw = await store.selectOneMessageByOffset(offset);
  assert.ok(raw, `a record at ${offset}`);
  return decodeRecord(raw);
}

async function rollsWhole(extra: Partial<StoreConfig>): Promise<void> {
  const root = tempDir();
  try {
    const fs = new FaultyFileSystem();
    const store = await openStore(smallConfig(root, { mappedFileSizeCommitLog: SEGMENT, ...extra }), { fs, clock: tickingClock() });
    const size = encodeRecord(makeMessage({ body: BODY, keys: 'S-00' })).length;
    // singles until the rest of the first segment holds 3 records but not 5
    const singles = Math.floor((SEGMENT - 3 * size) / size);
    for (let i = 0; i < singles; i++) assert.equal((await store.putMessage(makeMessage({ body: BODY, keys: `S-${String(i).padStart(2, '0')}` }))).status, 'PUT_OK');
    const end = singles * size;
    assert.ok(SEGMENT - end >= 3 * size && SEGMENT - end < 5 * size + 8, 'the rest of the segment fits part of the batch only');
    assert.equal(store.getMaxPhyOffset(), end);

    const r = await store.putMessages(batchOf(5, 'B'));
    assert.equal(r.status, 'PUT_OK');
    // the whole batch went to the next segment: exact offsets
    assert.equal(r.appendResult!.wroteOffset, SEGMENT);
    assert.equal(r.appendResult!.wroteBytes, 5 * size);
    assert.equal(r.appendResult!.queueOffset, singles);
    assert.deepEqual(r.appendResults!.map((a) => a.wroteOffset), [0, 1, 2, 3, 4].map((i) => SEGMENT + i * size));
    assert.deepEqual(r.appendResults!.map((a) => a.queueOffset), [0, 1, 2, 3, 4].map((i) => singles + i));
    assert.equal(r.appendResult!.msgId, r.appendResults!.map((a) => a.msgId).join(','));
    const times = new Set(r.appendResults!.map((a) => a.storeTimestamp));
    assert.equal(times.size, 1, 'one store time for the batch');
    assert.equal(r.appendResult!.storeTimestamp, r.appendResults![0]!.storeTimestamp);
    assert.equal(store.getMaxPhyOffset(), SEGMENT + 5 * size);

    // the first segment ends with the blank end-of-file record right after the singles
    const blank = store.commitLog.getData(end, 8)!;
    assert.equal(blank.readInt32BE(0), SEGMENT - end);
    assert.equal(blank.readInt32BE(4), BLANK_MAGIC_CODE);

    // on disk: each record follows the previous one exactly, with the answered offsets and time
    for (let i = 0; i < 5; i++) {
      const m = await recordAt(store, SEGMENT + i * size);
      assert.equal(m.commitLogOffset, SEGMENT + i * size);
      assert.equal(m.queueOffset, singles + i);
      assert.equal(m.storeTimestamp, r.appendResult!.storeTimestamp);
      assert.equal(m.properties.get('KEYS'), `B-0${i}`);
    }
    await dispatched(store);
    // the ConsumeQueue (10-entry files here, so read entry by entry) points at the same records
    assert.equal(store.getMaxOffsetInQueue('T', 0), singles + 5);
    assert.deepEqual([0, 1, 2, 3, 4].map((i) => store.getCommitLogOffsetInQueue('T', 0, singles + i)), [0, 1, 2, 3, 4].map((i) => SEGMENT + i * size));
    const got = await store.getMessage('g', 'T', 0, singles, 32);
    assert.equal(got.status, 'FOUND');
    assert.equal(got.messageQueueOffsets[0], singles);
    await store.shutdown();

    // recovery reads the same block back
    const again = await openStore(smallConfig(root, { mappedFileSizeCommitLog: SEGMENT, ...extra }));
    assert.equal(again.getMaxOffsetInQueue('T', 0), singles + 5);
    assert.equal(again.getMaxPhyOffset(), SEGMENT + 5 * size);
    assert.equal((await recordAt(again, SEGMENT + 4 * size)).properties.get('KEYS'), 'B-04');
    await again.shutdown();
  } finally {
    removeDir(root);
  }
}

test('putMessages: a batch that does not fit the rest of the segment goes whole to the next one (ASYNC_FLUSH)', () => rollsWhole({ flushDiskType: 'ASYNC_FLUSH' }));

test('putMessages: a batch that does not fit the rest of the segment goes whole to the next one (SYNC_FLUSH)', () => rollsWhole({ flushDiskType: 'SYNC_FLUSH' }));

test('putMessages: concurrent batches and singles under SYNC_FLUSH with a slow fdatasync are contiguous blocks', async () => {
  const root = tempDir();
  try {
    const fs = new FaultyFileSystem();
    const store = await openStore(smallConfig(root, { flushDiskType: 'SYNC_FLUSH', mappedFileSizeCommitLog: 1 << 20 }), { fs, clock: tickingClock() });
    fs.fdatasyncDelayMs = 5;
    const puts = Array.from({ length: 20 }, (_, i) => (i % 3 === 2 ? store.putMessage(makeMessage({ keys: `S${i}` })) : store.putMessages(batchOf(7, `B${i}`))));
    const results = await Promise.all(puts);
    await dispatched(store);
    for (const [i, r] of results.entries()) {
      assert.equal(r.status, 'PUT_OK', `put ${i}`);
      if (i % 3 === 2) continue;
      const list = (r as PutMessagesResult).appendResults!;
      assert.equal(list.length, 7);
      for (let k = 0; k < 7; k++) {
        assert.equal(list[k]!.queueOffset, r.appendResult!.queueOffset + k);
        if (k > 0) assert.equal(list[k]!.wroteOffset, list[k - 1]!.wroteOffset + list[k - 1]!.wroteBytes, 'records follow each other');
        const m = await recordAt(store, list[k]!.wroteOffset);
        assert.equal(m.queueOffset, r.appendResult!.queueOffset + k);
        assert.equal(m.storeTimestamp, r.appendResult!.storeTimestamp);
        assert.equal(m.properties.get('KEYS'), `B${i}-0${k}`);
      }
    }
    assert.equal(store.getMaxOffsetInQueue('T', 0), 14 * 7 + 6);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('putMessages: refused whole, nothing written, no queue offset taken', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root, { mappedFileSizeCommitLog: SEGMENT, maxMessageSize: 1024 }));
    assert.equal((await store.putMessage(makeMessage({ body: BODY }))).status, 'PUT_OK');
    const phy = store.getMaxPhyOffset();
    const refusals: [string, ReturnType<typeof batchOf>, RegExp][] = [
      ['a body over maxMessageSize', [...batchOf(2, 'A'), makeMessage({ body: Buffer.alloc(1025) }), ...batchOf(2, 'C')], /^batch message 2: message body size 1025 exceeds maxMessageSize 1024/],
      ['a block larger than a segment', batchOf(40, 'L'), /does not fit a CommitLog segment of 4096 bytes/],
      ['two queues', [...batchOf(2, 'Q'), ...batchOf(1, 'R', { queueId: 1 })], /^batch message 2: topic\/queue T-1 differs/],
      ['a transactional message', [makeMessage({ sysFlag: MessageSysFlag.TRANSACTION_PREPARED_TYPE })], /transactional messages cannot be sent in a batch/],
      ['no message', [], /batch holds no message/],
    ];
    for (const [what, msgs, remark] of refusals) {
      const r = await store.putMessages(msgs);
      assert.equal(r.status, 'MESSAGE_ILLEGAL', what);
      assert.match(r.remark!, remark, what);
      assert.equal(r.appendResult, undefined, what);
      assert.equal(store.getMaxPhyOffset(), phy, `${what}: nothing written`);
      assert.equal(store.getMaxOffsetInQueue('T', 0), 1, `${what}: no queue offset taken`);
      assert.equal(store.getMaxOffsetInQueue('T', 1), 0, what);
    }
    const ok = await store.putMessages(batchOf(3, 'OK'));
    assert.equal(ok.status, 'PUT_OK');
    assert.equal(ok.appendResult!.queueOffset, 1);
    assert.equal(ok.appendResult!.wroteOffset, phy);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('putMessages: a block over maxMessageSize + 64 KiB is refused whole', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root, { mappedFileSizeCommitLog: 1 << 20, maxMessageSize: 1024 }));
    const r = await store.putMessages(batchOf(80, 'X', { body: Buffer.alloc(1000) }));
    assert.equal(r.status, 'MESSAGE_ILLEGAL');
    assert.match(r.remark!, /^batch of 80 records totals \d+ bytes, exceeding maxMessageSize 1024 \+ 65536$/);
    assert.equal(store.getMaxPhyOffset(), 0);
    assert.equal(store.getMaxOffsetInQueue('T', 0), 0);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('putMessages: msgIds of one store host and of mixed hosts; appendResults made on first read, the same on every read and in a copy', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root, {}));
    const size = encodeRecord(makeMessage({ body: BODY, keys: 'B-00' })).length;
    const one = await store.putMessages(batchOf(4, 'B'));
    assert.equal(one.status, 'PUT_OK');
    const first = one.appendResults!;
    assert.equal(one.appendResults, first, 'made once');
    assert.deepEqual(first.map((a) => a.wroteOffset), [0, 1, 2, 3].map((i) => i * size));
    assert.deepEqual(first.map((a) => a.wroteBytes), [size, size, size, size]);
    assert.deepEqual(first.map((a) => a.msgId), [0, 1, 2, 3].map((i) => createMessageId({ ip: Buffer.from([127, 0, 0, 1]), port: 10911 }, i * size)));
    assert.equal(one.appendResult!.msgId, first.map((a) => a.msgId).join(','));
    assert.ok(first.every((a) => a.storeTimestamp === one.appendResult!.storeTimestamp));
    assert.deepEqual({ ...one }.appendResults, first, 'a spread copy holds them');
    assert.deepEqual(JSON.parse(JSON.stringify(one)).appendResults.map((a: { queueOffset: number }) => a.queueOffset), [0, 1, 2, 3]);

    // store hosts differ within the batch: each id names its own host
    const mixed = batchOf(3, 'M');
    mixed[1]!.storeHost = { ip: Buffer.from([10, 0, 0, 2]), port: 10911 };
    mixed[2]!.storeHost = { ip: Buffer.from([127, 0, 0, 1]), port: 10999 };
    const m = await store.putMessages(mixed);
    assert.equal(m.status, 'PUT_OK');
    const ids = m.appendResults!.map((a) => a.msgId);
    assert.deepEqual(ids, mixed.map((msg, i) => createMessageId(msg.storeHost, 4 * size + i * size)));
    assert.equal(m.appendResult!.msgId, ids.join(','));
    // one getter for all results (a getter closure per result gave each its own hidden class, held in old space with the batch's results)
    const getterOf = (r: object): unknown => Object.getOwnPropertyDescriptor(r, 'appendResults')?.get;
    assert.equal(typeof getterOf(one), 'function');
    assert.equal(getterOf(m), getterOf(one), 'the same getter function');
    assert.deepEqual(Object.keys(one).sort(), ['appendResult', 'appendResults', 'status'], 'the maker is not enumerable');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});
