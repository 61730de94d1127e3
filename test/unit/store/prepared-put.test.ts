/**
 * MessageStore.prepareMessage + putPreparedMessages: records encoded ahead and appended later, any
 * topics and queues in one call, must end up exactly as single puts of the same messages would
 * have written them (byte-equal CommitLog, end-of-file fillers included; queue offsets per queue;
 * ConsumeQueue, index and arriving listener fed), with one store time for the call.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dispatched, makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';
import { BLANK_MAGIC_CODE, decodeRecord } from '../../../src/common/message/record-codec.js';
import { MessageSysFlag } from '../../../src/common/message/sysflag.js';
import type { MessageInner } from '../../../src/common/message/message.js';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import { preparedColumnsOf, type PreparedMessage } from '../../../src/store/message-store.js';
import type { StoreConfig } from '../../../src/store/store-config.js';
import { ConsumeQueue } from '../../../src/store/consumequeue/consume-queue.js';
import { MappedFile } from '../../../src/store/mapped-file/mapped-file.js';
import { DIRECT_RUN_MIN_BYTES } from '../../../src/store/commitlog/commit-log.js';
import { FaultyFileSystem } from '../../support/faulty-file-system.js';

const SEGMENT = 4096;

/** 12 messages over T1 (queues 0, 1) and T2 (queue 3), ~450-byte records: the block spans a segment roll. */
function messages(): MessageInner[] {
  const spots: Array<[string, number]> = [['T1', 0], ['T2', 3], ['T1', 1], ['T1', 0], ['T2', 3], ['T1', 0]];
  return Array.from({ length: 12 }, (_, i) => {
    const [topic, queueId] = spots[i % spots.length]!;
    return makeMessage({ topic, queueId, body: Buffer.alloc(300 + i, 0x41 + i), tags: `tag${i % 3}`, keys: `K${i} shared`, properties: { UNIQ_KEY: `U${i}`, TIMER_DEQUEUE_MS: '1700000000000' } });
  });
}

/** Two singles first, so no queue starts at 0 by accident. */
async function seed(store: DefaultMessageStore): Promise<void> {
  for (const m of [makeMessage({ topic: 'T1', queueId: 0, body: 'seed-a' }), makeMessage({ topic: 'T2', queueId: 3, body: 'seed-b' })]) assert.equal((await store.putMessage(m)).status, 'PUT_OK');
}

function commitLogBytes(store: DefaultMessageStore): Buffer {
  const parts: Buffer[] = [];
  const max = store.getMaxPhyOffset();
  for (let at = 0; at < max; at += SEGMENT) parts.push(store.commitLog.getData(at, Math.min(SEGMENT, max - at))!);
  return Buffer.concat(parts);
}

/**
 * `segmentBytes` SEGMENT: the block spans a segment roll (dispatched record by record); larger:
 * the block lies in one segment and is dispatched as one (ConsumeQueue entries per queue in one
 * go, ConsumeQueue.putPositionColumns).
 */
async function sameAsSinglePuts(extra: Partial<StoreConfig>, segmentBytes = SEGMENT): Promise<void> {
  const rootA = tempDir();
  const rootB = tempDir();
  // the block's entries of one queue go in one call, from the block's columns (no DispatchRequest per record)
  const batchWrite = ConsumeQueue.prototype.putPositionColumns;
  let fastBatches = 0;
  ConsumeQueue.prototype.putPositionColumns = function (this: ConsumeQueue, c, rows, n) {
    if (n > 1) fastBatches++;
    return batchWrite.call(this, c, rows, n);
  };
  try {
    const cfg = (root: string) => smallConfig(root, { mappedFileSizeCommitLog: segmentBytes, mappedFileSizeConsumeQueue: 20 * 1000, ...extra });
    const a = await openStore(cfg(rootA));
    const b = await openStore(cfg(rootB));
    const arrived: string[] = [];
    a.setMessageArrivingListener((topic, queueId, logicOffset, _tags, _ts, props) => arrived.push(`${topic}-${queueId}@${logicOffset}:${props.get('UNIQ_KEY') ?? '-'}`));
    await seed(a);
    await seed(b);
    const start = a.getMaxPhyOffset();

    const prepared = messages().map((m) => {
      const p = a.prepareMessage(m);
      assert.ok('record' in p, `prepared: ${JSON.stringify(p)}`);
      return p as PreparedMessage;
    });
    assert.equal(a.getMaxPhyOffset(), start, 'preparing writes nothing');
    const r = await a.putPreparedMessages(prepared);
    assert.equal(r.status, 'PUT_OK');
    assert.equal(r.appended, 12);
    for (const m of messages()) assert.equal((await b.putMessage(m)).status, 'PUT_OK');
    await dispatched(a);
    await dispatched(b);

    // byte-equal CommitLogs (same clock value, so even the store times agree), fillers included
    assert.equal(a.getMaxPhyOffset(), b.getMaxPhyOffset());
    if (segmentBytes === SEGMENT) assert.ok(a.getMaxPhyOffset() > SEGMENT, 'the block crossed into a second segment');
    // one block, three queues with more than one record: written per queue in one go, unless it spans a roll
    assert.equal(fastBatches, segmentBytes === SEGMENT ? 0 : 3);
    assert.ok(commitLogBytes(a).equals(commitLogBytes(b)), 'CommitLog bytes equal to single puts');
    assert.ok(a.commitLog.getData(r.wroteOffset, 8));
    assert.equal(r.wroteOffset, start);
    assert.equal(r.wroteOffset + r.wroteBytes, a.getMaxPhyOffset());

    // walk the block: consecutive records (a filler where one did not fit), queue offsets per queue
    const next = new Map<string, number>([['T1-0', 1], ['T1-1', 0], ['T2-3', 1]]);
    let pos = start;
    const seen: string[] = [];
    while (pos < a.getMaxPhyOffset()) {
      const head = a.commitLog.getData(pos, 8)!;
      if (head.readInt32BE(4) === BLANK_MAGIC_CODE) {
        assert.equal(pos + head.readInt32BE(0), segmentBytes, 'the filler runs to the segment end');
        pos = segmentBytes;
        continue;
      }
      const m = decodeRecord((await a.selectOneMessageByOffset(pos))!);
      const q = `${m.topic}-${m.queueId}`;
      assert.equal(m.commitLogOffset, pos);
      assert.equal(m.queueOffset, next.get(q), `queue offset of ${m.properties.get('UNIQ_KEY')}`);
      assert.equal(m.storeTimestamp, r.storeTimestamp);
      assert.equal(a.getCommitLogOffsetInQueue(m.topic, m.queueId, m.queueOffset), pos, 'ConsumeQueue entry points at the record');
      next.set(q, m.queueOffset + 1);
      seen.push(m.properties.get('UNIQ_KEY')!);
      pos += m.storeSize;
    }
    assert.deepEqual(seen, messages().map((m) => m.properties.get('UNIQ_KEY')));
    assert.equal(a.getMaxOffsetInQueue('T1', 0), 7);
    assert.equal(a.getMaxOffsetInQueue('T1', 1), 2);
    assert.equal(a.getMaxOffsetInQueue('T2', 3), 5);
    assert.equal(arrived.length, 14);
    assert.equal(arrived.at(-1), 'T1-0@7:U11', 'the listener gets the record\'s properties');
    assert.equal(arrived[2], 'T1-0@2:U0');

    // tags codes in the ConsumeQueue match the single-put store's; the index finds keys and UNIQ_KEY
    const gotA = await a.getMessage('g', 'T2', 3, 0, 32);
    const gotB = await b.getMessage('g', 'T2', 3, 0, 32);
    assert.deepEqual(gotA.messages.map((x) => x.toString('hex')), gotB.messages.map((x) => x.toString('hex')));
    assert.equal((await a.queryMessage('T2', 'U4', 32, 0, Number.MAX_SAFE_INTEGER)).messages.length, 1);
    assert.equal((await a.queryMessage('T1', 'shared', 32, 0, Number.MAX_SAFE_INTEGER)).messages.length, 8);
    await a.shutdown();
    await b.shutdown();

    // recovery reads the same queues back
    const again = await openStore(cfg(rootA));
    assert.equal(again.getMaxOffsetInQueue('T1', 0), 7);
    assert.equal(again.getMaxOffsetInQueue('T2', 3), 5);
    assert.equal(again.getMaxPhyOffset(), pos);
    await again.shutdown();
  } finally {
    ConsumeQueue.prototype.putPositionColumns = batchWrite;
    removeDir(rootA);
    removeDir(rootB);
  }
}

test('putPreparedMessages: a multi-topic block is byte-equal to single puts, queue offsets per queue (ASYNC_FLUSH)', () => sameAsSinglePuts({ flushDiskType: 'ASYNC_FLUSH' }));

test('putPreparedMessages: a multi-topic block is byte-equal to single puts, queue offsets per queue (SYNC_FLUSH)', () => sameAsSinglePuts({ flushDiskType: 'SYNC_FLUSH' }));

test('putPreparedMessages: a block within one segment is dispatched as one, with the same ConsumeQueue, index and listener results as single puts (ASYNC_FLUSH)', () => sameAsSinglePuts({ flushDiskType: 'ASYNC_FLUSH' }, 64 * 1024));

test('putPreparedMessages: a block within one segment is dispatched as one, with the same ConsumeQueue, index and listener results as single puts (SYNC_FLUSH)', () => sameAsSinglePuts({ flushDiskType: 'SYNC_FLUSH' }, 64 * 1024));

test('prepareMessage refuses what putMessage refuses, and transactional half messages; putPreparedMessages refuses after shutdown', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root, { mappedFileSizeCommitLog: SEGMENT }));
    const badTopic = store.prepareMessage(makeMessage({ topic: 'bad topic!' }));
    assert.ok(!('record' in badTopic));
    assert.equal(badTopic.status, 'MESSAGE_ILLEGAL');
    assert.match(badTopic.remark, /topic/);
    const half = store.prepareMessage(makeMessage({ sysFlag: MessageSysFlag.TRANSACTION_PREPARED_TYPE }));
    assert.ok(!('record' in half));
    assert.equal(half.status, 'MESSAGE_ILLEGAL');
    const tooBig = store.prepareMessage(makeMessage({ body: Buffer.alloc(SEGMENT) }));
    assert.ok(!('record' in tooBig));
    assert.equal(tooBig.status, 'MESSAGE_ILLEGAL');
    const ok = store.prepareMessage(makeMessage({ body: 'x' })) as PreparedMessage;
    assert.equal(ok.record.readInt32BE(0), ok.record.length);
    await store.shutdown();
    const r = await store.putPreparedMessages([ok]);
    assert.equal(r.status, 'SERVICE_NOT_AVAILABLE');
    assert.equal(r.appended, 0);
  } finally {
    removeDir(root);
  }
});

/** 400 ~1.2 KB messages over T1 (queues 0, 1) and T2 (queue 3): ~480 KB, more than one 256 KiB segment. */
function manyMessages(): MessageInner[] {
  const spots: Array<[string, number]> = [['T1', 0], ['T2', 3], ['T1', 1]];
  return Array.from({ length: 400 }, (_, i) => {
    const [topic, queueId] = spots[i % spots.length]!;
    return makeMessage({ topic, queueId, body: Buffer.alloc(1000 + (i % 7), 0x41 + (i % 26)), tags: `tag${i % 3}`, keys: `K${i}`, properties: { UNIQ_KEY: `U${i}`, TIMER_DEQUEUE_MS: '1700000000000' } });
  });
}

/** prepareMessage with every record carved back to back out of one buffer (as the timer service's blocks). */
function prepareCarved(store: DefaultMessageStore, msgs: MessageInner[]): PreparedMessage[] {
  const block = Buffer.alloc(1 << 20);
  let used = 0;
  const alloc = (n: number): Buffer => block.subarray(used, (used += n));
  return msgs.map((m) => {
    const p = store.prepareMessage(m, alloc);
    assert.ok('record' in p, `prepared: ${JSON.stringify(p)}`);
    return p as PreparedMessage;
  });
}

const BIG_SEGMENT = 256 * 1024;

/** Every record of a queue, hex, in queue order (pulled 32 at a time). */
async function readQueue(store: DefaultMessageStore, topic: string, queueId: number): Promise<string[]> {
  const out: string[] = [];
  for (let offset = 0; offset < store.getMaxOffsetInQueue(topic, queueId); ) {
    const got = await store.getMessage('g', topic, queueId, offset, 32);
    assert.ok(got.nextBeginOffset > offset, `progress at ${topic}-${queueId}@${offset}`);
    out.push(...got.messages.map((x) => x.toString('hex')));
    offset = got.nextBeginOffset;
  }
  return out;
}

async function carvedSameAsSinglePuts(extra: Partial<StoreConfig>): Promise<void> {
  const rootA = tempDir();
  const rootB = tempDir();
  const direct = MappedFile.prototype.appendDirect;
  const directWrites: number[] = [];
  MappedFile.prototype.appendDirect = function (this: MappedFile, src: Buffer, off?: number, len?: number) {
    directWrites.push(len ?? src.length - (off ?? 0));
    return direct.call(this, src, off, len);
  };
  try {
    const cfg = (root: string) => smallConfig(root, { mappedFileSizeCommitLog: BIG_SEGMENT, mappedFileSizeConsumeQueue: 20 * 1000, maxIndexNum: 40_000, ...extra });
    const a = await openStore(cfg(rootA));
    const b = await openStore(cfg(rootB));
    await seed(a);
    await seed(b);
    const start = a.getMaxPhyOffset();
    const prepared = prepareCarved(a, manyMessages());
    // a put still in the write buffer when the block comes: written first, then the block from its own memory
    const first = makeMessage({ topic: 'T1', queueId: 0, body: 'just before' });
    const pa = a.putMessage(first);
    const r = await a.putPreparedMessages(prepared);
    assert.equal((await pa).status, 'PUT_OK');
    assert.equal(r.status, 'PUT_OK');
    assert.equal(r.appended, 400);
    assert.equal((await b.putMessage(first)).status, 'PUT_OK');
    for (const m of manyMessages()) assert.equal((await b.putMessage(m)).status, 'PUT_OK');
    await dispatched(a);
    await dispatched(b);

    assert.equal(directWrites.length, 2, 'one direct write per segment');
    assert.ok(directWrites.every((n) => n >= DIRECT_RUN_MIN_BYTES));
    assert.ok(a.getMaxPhyOffset() > BIG_SEGMENT, 'the block crossed into a second segment');
    assert.equal(a.getMaxPhyOffset(), b.getMaxPhyOffset());
    const bytes = (s: DefaultMessageStore) => Buffer.concat([s.commitLog.getData(0, BIG_SEGMENT)!, s.commitLog.getData(BIG_SEGMENT, s.getMaxPhyOffset() - BIG_SEGMENT)!]);
    assert.ok(bytes(a).equals(bytes(b)), 'CommitLog bytes equal to single puts (filler included)');
    assert.ok(r.wroteOffset > start);
    assert.equal(r.wroteOffset + r.wroteBytes, a.getMaxPhyOffset());
    for (const [topic, queueId, n] of [['T1', 0, 136], ['T1', 1, 133], ['T2', 3, 134]] as const) {
      assert.equal(a.getMaxOffsetInQueue(topic, queueId), n);
      const gotA = await readQueue(a, topic, queueId);
      assert.equal(gotA.length, n);
      assert.deepEqual(gotA, await readQueue(b, topic, queueId), `${topic}-${queueId} reads the same records`);
    }
    assert.equal((await a.queryMessage('T2', 'U397', 32, 0, Number.MAX_SAFE_INTEGER)).messages.length, 1);
    const maxPhy = a.getMaxPhyOffset();
    await a.shutdown();
    await b.shutdown();
    const again = await openStore(cfg(rootA));
    assert.equal(again.getMaxPhyOffset(), maxPhy);
    assert.equal(again.getMaxOffsetInQueue('T1', 0), 136);
    assert.equal(again.getMaxOffsetInQueue('T2', 3), 134);
    await again.shutdown();
  } finally {
    MappedFile.prototype.appendDirect = direct;
    removeDir(rootA);
    removeDir(rootB);
  }
}

test('putPreparedMessages: records carved back to back are written from their block (one pwrite per segment), byte-equal to single puts (ASYNC_FLUSH)', () => carvedSameAsSinglePuts({ flushDiskType: 'ASYNC_FLUSH' }));

test('putPreparedMessages: records carved back to back are written from their block, byte-equal to single puts (SYNC_FLUSH, asynchronous commits)', () => carvedSameAsSinglePuts({ flushDiskType: 'SYNC_FLUSH', commitCommitLogAsync: true }));

test('putPreparedMessages: a failed direct write on the store thread (file system without pwriteAsync) stores the records before it, gives back the queue offsets of the rest and sets the write-error flag', async () => {
  const root = tempDir();
  const fs = new FaultyFileSystem({ asyncWrites: false });
  // the second segment's first write is the block's second run
  fs.pathFault = (op, p) => (op === 'pwrite' && p.endsWith(String(BIG_SEGMENT).padStart(20, '0')) ? 'EIO' : null);
  try {
    const store = await openStore(smallConfig(root, { mappedFileSizeCommitLog: BIG_SEGMENT, mappedFileSizeConsumeQueue: 20 * 1000, maxIndexNum: 40_000 }), { fs });
    await seed(store);
    const prepared = prepareCarved(store, manyMessages());
    const r = await store.putPreparedMessages(prepared);
    assert.equal(r.status, 'SERVICE_NOT_AVAILABLE');
    assert.match(r.remark ?? '', /not writable/);
    assert.ok(r.appended > 100 && r.appended < 400, `appended ${r.appended}`);
    await dispatched(store);
    assert.equal(store.getMaxPhyOffset(), BIG_SEGMENT, 'the first segment ends with its filler; nothing after it');
    // queue offsets: only the stored records took one (each queue had its seed or not)
    const stored = manyMessages().slice(0, r.appended);
    const count = (t: string, q: number) => stored.filter((m) => m.topic === t && m.queueId === q).length;
    assert.equal(store.getMaxOffsetInQueue('T1', 0), 1 + count('T1', 0));
    assert.equal(store.getMaxOffsetInQueue('T1', 1), count('T1', 1));
    assert.equal(store.getMaxOffsetInQueue('T2', 3), 1 + count('T2', 3));
    const last = stored.at(-1)!;
    const got = await store.getMessage('g', last.topic, last.queueId, store.getMaxOffsetInQueue(last.topic, last.queueId) - 1, 1);
    assert.equal(decodeRecord(got.messages[0]!).properties.get('UNIQ_KEY'), `U${r.appended - 1}`);
    // the write-error flag refuses puts while the CommitLog cannot be written
    assert.equal((await store.putMessage(makeMessage({ topic: 'T1', queueId: 0, body: 'x' }))).status, 'SERVICE_NOT_AVAILABLE');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('putPreparedMessages: direct runs are written on the libuv pool; a failed pool write answers FLUSH_DISK_TIMEOUT with every record appended and dispatched (readable from the block), refuses puts, and the next commit writes the bytes', async () => {
  const root = tempDir();
  const fs = new FaultyFileSystem();
  try {
    const cfg = smallConfig(root, { mappedFileSizeCommitLog: 4 * 1024 * 1024, mappedFileSizeConsumeQueue: 20 * 1000, maxIndexNum: 40_000 });
    let store = await openStore(cfg, { fs });
    await seed(store);
    const msgs = manyMessages();
    const calls0 = fs.pwriteAsyncCalls;
    fs.pwriteErrorCode = 'EIO';
    const prepared = prepareCarved(store, msgs);
    const expected = prepared.map((p) => p.record); // views of the block: the append writes the position fields into them
    const r = await store.putPreparedMessages(prepared);
    assert.ok(fs.pwriteAsyncCalls > calls0, 'the run went to the pool');
    assert.equal(r.status, 'FLUSH_DISK_TIMEOUT');
    assert.match(r.remark ?? '', /page cache failed/);
    assert.equal(r.appended, msgs.length);
    await dispatched(store);
    // consumable: read from the block in memory
    const last = msgs.at(-1)!;
    const got = await store.getMessage('g', last.topic, last.queueId, store.getMaxOffsetInQueue(last.topic, last.queueId) - 1, 1);
    assert.equal(decodeRecord(got.messages[0]!).properties.get('UNIQ_KEY'), `U${msgs.length - 1}`);
    assert.equal((await store.putMessage(makeMessage({ topic: 'T1', queueId: 0, body: 'x' }))).status, 'SERVICE_NOT_AVAILABLE', 'the write-error flag refuses puts');
    fs.pwriteErrorCode = null;
    const snapshot = expected.map((b) => Buffer.from(b));
    await store.shutdown(); // flushes: the failed range is written again
    store = await openStore(cfg, { fs: new FaultyFileSystem() });
    for (const [i, m] of msgs.entries()) {
      if (i % 37 !== 0 && i !== msgs.length - 1) continue;
      const q = await readQueue(store, m.topic, m.queueId);
      assert.ok(q.includes(snapshot[i]!.toString('hex')), `record ${i} is in the CommitLog after the restart, byte-equal`);
    }
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('putPreparedMessages: a crash while the pool writes of two blocks are pending (the first in flight, the second waiting behind it) loses exactly the second; every ConsumeQueue entry left points at its own record', async () => {
  const root = tempDir();
  try {
    const cfg = smallConfig(root, { mappedFileSizeCommitLog: 8 * 1024 * 1024, mappedFileSizeConsumeQueue: 20 * 4000, maxIndexNum: 40_000 });
    const fs = new FaultyFileSystem();
    let store = await openStore(cfg, { fs });
    await seed(store);
    const base = store.getMaxPhyOffset();
    // 2,000 records of ~1 KiB in two blocks of ~1 MiB; the pool writes are slow
    const msgs = Array.from({ length: 2000 }, (_, i) => makeMessage({ topic: 'T1', queueId: i % 2, body: Buffer.alloc(1000, 0x41 + (i % 26)), keys: `K${i}`, properties: { UNIQ_KEY: `U${i}` } }));
    const block = Buffer.alloc(4 * 1024 * 1024);
    let used = 0;
    const prepared = msgs.map((m) => {
      const p = store.prepareMessage(m, (n) => block.subarray(used, (used += n)));
      assert.ok('record' in p);
      return p as PreparedMessage;
    });
    fs.pwriteAsyncDelayMs = 300;
    const puts = [store.putPreparedMessages(prepared.slice(0, 1000)), store.putPreparedMessages(prepared.slice(1000))];
    await new Promise((r) => setTimeout(r, 50)); // both appended and dispatched, the first block's write in flight
    assert.equal(store.getMaxOffsetInQueue('T1', 0), 1 + 1000, 'dispatched before the writes completed');
    const got = await store.getMessage('g', 'T1', 1, 999, 1);
    assert.equal(decodeRecord(got.messages[0]!).properties.get('UNIQ_KEY'), 'U1999', 'readable from the block before it is in the file');
    store.closeAbruptly({ commitPending: false }); // the write in flight is in the OS's hands; the second block is lost
    const answers = await Promise.all(puts);
    assert.notEqual(answers[1]!.status, 'PUT_OK', 'the second block was never written: not answered PUT_OK');
    store = await openStore(cfg, { fs: new FaultyFileSystem() });
    const end = store.getMaxPhyOffset();
    const sizes = prepared.map((p) => p.record.length);
    let k = 0;
    for (let at = base; at < end; k++) at += sizes[k]!;
    assert.equal(k, 1000, 'the first block is recovered whole, nothing of the second');
    assert.equal(end, base + sizes.slice(0, k).reduce((a, b) => a + b, 0), 'the CommitLog ends at a record boundary');
    for (const q of [0, 1]) {
      const n = store.getMaxOffsetInQueue('T1', q);
      const seeded = q === 0 ? 1 : 0;
      assert.equal(n - seeded, msgs.slice(0, k).filter((m) => m.queueId === q).length, `queue ${q} holds entries of the recovered records only`);
      const last = await store.getMessage('g', 'T1', q, n - 1, 1);
      const expect: number = [...msgs.slice(0, k).entries()].filter(([, m]) => m.queueId === q).at(-1)![0];
      assert.equal(decodeRecord(last.messages[0]!).properties.get('UNIQ_KEY'), `U${expect}`);
    }
    assert.equal((await store.putMessage(makeMessage({ topic: 'T1', queueId: 0, body: 'after' }))).status, 'PUT_OK');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('putPreparedMessages (SYNC_FLUSH, WAIT=false): the block is dispatched after the put answered and the caller released its columns; ConsumeQueue, index and listener get what was appended', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root, { flushDiskType: 'SYNC_FLUSH', mappedFileSizeCommitLog: BIG_SEGMENT, mappedFileSizeConsumeQueue: 20 * 1000, flushIntervalCommitLog: 200 }));
    const arrived: string[] = [];
    store.setMessageArrivingListener((topic, queueId, logicOffset, _tags, _ts, props) => arrived.push(`${topic}-${queueId}@${logicOffset}:${props.get('UNIQ_KEY')}`));
    const msgs = manyMessages().slice(0, 30);
    for (const m of msgs) m.properties.set('WAIT', 'false');
    const cols = preparedColumnsOf(prepareCarved(store, msgs));
    const r = await store.putPreparedMessages(cols);
    assert.equal(r.status, 'PUT_OK');
    assert.equal(r.appended, 30);
    assert.equal(store.getMaxOffsetInQueue('T1', 0), 0, 'not dispatched yet: SYNC_FLUSH dispatches after the flush');
    // the caller forgets its rows, as the timer service does once the put answered
    const view = cols.view as (Buffer | null)[];
    const uniq = cols.uniqKey as (string | null)[];
    const keys = cols.keys as string[];
    const topics = cols.topic as string[];
    for (let i = 0; i < 30; i++) {
      view[i] = null;
      uniq[i] = null;
      keys[i] = '';
      topics[i] = 'GONE';
    }
    for (const deadline = Date.now() + 10_000; store.dispatchBehindBytes() > 0; ) {
      assert.ok(Date.now() < deadline, `dispatch still ${store.dispatchBehindBytes()} bytes behind`);
      await new Promise((res) => setTimeout(res, 10));
    }
    assert.equal(store.getMaxOffsetInQueue('T1', 0), 10);
    assert.equal(store.getMaxOffsetInQueue('T2', 3), 10);
    assert.equal(store.getMaxOffsetInQueue('T1', 1), 10);
    assert.equal(store.getMaxOffsetInQueue('GONE', 0), 0);
    for (let q = 0; q < 10; q++) {
      const pos = store.getCommitLogOffsetInQueue('T2', 3, q);
      const m = decodeRecord((await store.selectOneMessageByOffset(pos))!);
      assert.equal(m.properties.get('UNIQ_KEY'), `U${q * 3 + 1}`, 'the ConsumeQueue entry points at its own record');
    }
    assert.equal((await store.queryMessage('T1', 'U27', 32, 0, Number.MAX_SAFE_INTEGER)).messages.length, 1, 'UNIQ_KEY indexed');
    assert.equal((await store.queryMessage('T2', 'K28', 32, 0, Number.MAX_SAFE_INTEGER)).messages.length, 1, 'KEYS indexed');
    assert.equal(arrived.length, 30);
    assert.equal(arrived[27], 'T1-0@10:U27', 'the listener gets the record\'s properties, decoded from the record');
    assert.equal(arrived[29], 'T1-1@10:U29');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});
