/**
 * MessageStore.putEncodedBatch (the byte path of a batch send, common/message/encoded-batch.ts)
 * against putMessages with the MessageInners the general path makes of the same request: the
 * same CommitLog bytes, results, ConsumeQueue entries and index keys; the same block guarantees
 * (consecutive offsets and positions, one store time, rolled whole, refused whole).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dispatched, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';
import { BatchPropertyCompletion, decodeBatchBody } from '../../../src/common/message/batch-codec.js';
import { scanEncodedBatch, type EncodedBatch } from '../../../src/common/message/encoded-batch.js';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { MessageConst } from '../../../src/common/message/message-const.js';
import { encodeProperties } from '../../../src/common/message/properties.js';
import type { MessageInner } from '../../../src/common/message/message.js';
import type { Clock } from '../../../src/common/time/clock.js';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';

const SEGMENT = 8192;
const CLUSTER_NAME = 'C1';
const BATCH_PROPS = 'WAIT\x01true\x02UNIQ_KEY\x01BATCH0000000000000000000000000001\x02';
const bornHost = { ip: Buffer.from([10, 0, 0, 7]), port: 50000 };
const storeHost = { ip: Buffer.from([127, 0, 0, 1]), port: 10911 };

const fixedClock: Clock = { nowMs: () => 1_700_000_000_000 };

/** One item as a Java client ≥ 4.9 writes it: its properties text without the last separator. */
function itemBytes(flag: number, body: Buffer, props: Map<string, string>): Buffer {
  const text = Buffer.from(encodeProperties(props).slice(0, -1), 'utf8');
  const b = Buffer.alloc(22 + body.length + text.length);
  b.writeInt32BE(b.length, 0);
  b.writeInt32BE(flag, 12);
  b.writeInt32BE(body.length, 16);
  body.copy(b, 20);
  b.writeInt16BE(text.length, 20 + body.length);
  text.copy(b, 22 + body.length);
  return b;
}

/** A client batch body of `n` items: some with KEYS, multi-byte text, item 1 without UNIQ_KEY (it stores the batch's). */
function frameOf(n: number, tag: string, bodyBytes = 100): Buffer {
  return Buffer.concat(
    Array.from({ length: n }, (_, i) => {
      const props = new Map([['TAGS', i % 3 === 0 ? 'T\u00e9' : 'TagA'], ['WAIT', 'true']]);
      if (i % 2 === 0) props.set('KEYS', `${tag}-${i} order\u4e2d`);
      if (i !== 1) props.set('UNIQ_KEY', `${tag}${String(i).padStart(30, '0')}`);
      return itemBytes(i, Buffer.alloc(bodyBytes, 0x61 + (i % 26)), props);
    }),
  );
}

function shared<T extends EncodedBatch | null>(batch: T, queueId = 0): T {
  if (batch !== null) Object.assign(batch, { topic: 'T', queueId, sysFlag: 0, bornTimestamp: 1_699_999_999_000, bornHost, storeHost });
  return batch;
}

/** What the general path (SendMessageProcessor.sendBatch) hands putMessages for `frame`. */
function generalMessages(frame: Buffer, queueId = 0): MessageInner[] {
  const completion = new BatchPropertyCompletion(new Map([['WAIT', 'true'], ['UNIQ_KEY', 'BATCH0000000000000000000000000001']]), MessageConst.CLUSTER, CLUSTER_NAME);
  return decodeBatchBody(frame, { copyBodies: false }).map((item) => ({
    topic: 'T',
    queueId,
    flag: item.flag,
    body: item.body,
    properties: item.properties,
    sysFlag: 0,
    bornTimestamp: 1_699_999_999_000,
    bornHost,
    storeHost,
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
    encodedProperties: completion.complete(item),
    encodedPropertiesTail: completion.tail,
  }));
}

/** Every record of queue T-0, by queue offset. */
async function queueRecords(store: DefaultMessageStore): Promise<{ messages: Buffer[]; offsets: number[] }> {
  const messages: Buffer[] = [];
  const offsets: number[] = [];
  for (let at = 0; at < store.getMaxOffsetInQueue('T', 0); ) {
    const r = await store.getMessage('g', 'T', 0, at, 32);
    assert.equal(r.status, 'FOUND');
    messages.push(...r.messages);
    offsets.push(...r.messageQueueOffsets);
    at = r.nextBeginOffset;
  }
  return { messages, offsets };
}

async function commitLogBytes(store: DefaultMessageStore, from: number, to: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (let at = from; at < to; ) {
    const raw = await store.selectOneMessageByOffset(at);
    assert.ok(raw, `a record at ${at}`);
    parts.push(raw);
    at += raw.length;
  }
  return Buffer.concat(parts);
}

test('putEncodedBatch stores, answers, dispatches and indexes exactly as putMessages of the general path', async () => {
  const rootA = tempDir();
  const rootB = tempDir();
  try {
    const general = await openStore(smallConfig(rootA, { mappedFileSizeCommitLog: SEGMENT }), { clock: fixedClock });
    const encoded = await openStore(smallConfig(rootB, { mappedFileSizeCommitLog: SEGMENT }), { clock: fixedClock });
    for (const [round, n] of [[0, 5], [1, 7], [2, 3], [3, 6]] as const) {
      const frame = frameOf(n, `R${round}`);
      const batch = shared(scanEncodedBatch(frame, BATCH_PROPS, MessageConst.CLUSTER, CLUSTER_NAME));
      assert.ok(batch, 'taken by the byte path');
      const a = await general.putMessages(generalMessages(frame));
      const b = await encoded.putEncodedBatch(batch);
      assert.equal(b.status, 'PUT_OK');
      assert.deepEqual(b.appendResult, a.appendResult);
      assert.deepEqual(b.appendResults, a.appendResults);
      const end = a.appendResult!.wroteOffset + a.appendResult!.wroteBytes;
      assert.deepEqual(await commitLogBytes(encoded, b.appendResult!.wroteOffset, end), await commitLogBytes(general, a.appendResult!.wroteOffset, end));
      // consecutive positions and queue offsets, one store time
      const records = b.appendResults!.map((r) => r.wroteOffset);
      for (let k = 1; k < n; k++) assert.equal(records[k], records[k - 1]! + b.appendResults![k - 1]!.wroteBytes);
      assert.deepEqual(b.appendResults!.map((r) => r.queueOffset), b.appendResults!.map((_, k) => b.appendResult!.queueOffset + k));
      assert.equal(new Set(b.appendResults!.map((r) => r.storeTimestamp)).size, 1);
    }
    // round 3 rolled whole to the second segment on both
    await dispatched(general);
    await dispatched(encoded);
    assert.equal(encoded.getMaxOffsetInQueue('T', 0), 21);
    const ga = await queueRecords(general);
    const gb = await queueRecords(encoded);
    assert.equal(gb.messages.length, 21);
    assert.deepEqual(gb.messages, ga.messages);
    assert.deepEqual(gb.offsets, ga.offsets);
    // item 1 has no UNIQ_KEY of its own: it stores the batch's
    assert.equal(decodeRecord(gb.messages[1]!).properties.get('UNIQ_KEY'), 'BATCH0000000000000000000000000001');
    assert.equal(decodeRecord(gb.messages[1]!).properties.get('CLUSTER'), CLUSTER_NAME);
    // index: KEYS (split on spaces) and UNIQ_KEY
    for (const key of ['R1-2', 'order\u4e2d', 'R2000000000000000000000000000002', 'BATCH0000000000000000000000000001']) {
      const qa = await general.queryMessage('T', key, 64, 0, Number.MAX_SAFE_INTEGER);
      const qb = await encoded.queryMessage('T', key, 64, 0, Number.MAX_SAFE_INTEGER);
      assert.ok(qb.messages.length > 0, key);
      assert.deepEqual(qb.messages, qa.messages, key);
    }
    await general.shutdown();
    await encoded.shutdown();
  } finally {
    removeDir(rootA);
    removeDir(rootB);
  }
});

test('putEncodedBatch: refused whole, nothing written, no queue offset taken', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root, { mappedFileSizeCommitLog: SEGMENT, maxMessageSize: 1024 }), { clock: fixedClock });
    assert.equal((await store.putEncodedBatch(shared(scanEncodedBatch(frameOf(2, 'OK'), BATCH_PROPS, MessageConst.CLUSTER, CLUSTER_NAME))!)).status, 'PUT_OK');
    const phy = store.getMaxPhyOffset();
    const cases: [string, EncodedBatch, string, RegExp][] = [
      ['a body over maxMessageSize', shared(scanEncodedBatch(frameOf(3, 'B', 1025), BATCH_PROPS, MessageConst.CLUSTER, CLUSTER_NAME))!, 'MESSAGE_ILLEGAL', /^batch message 0: message body size 1025 exceeds maxMessageSize 1024/],
      ['a block larger than a segment', shared(scanEncodedBatch(frameOf(40, 'L', 200), BATCH_PROPS, MessageConst.CLUSTER, CLUSTER_NAME))!, 'MESSAGE_ILLEGAL', /does not fit a CommitLog segment of 8192 bytes/],
      ['an illegal topic', Object.assign(shared(scanEncodedBatch(frameOf(2, 'I'), BATCH_PROPS, MessageConst.CLUSTER, CLUSTER_NAME))!, { topic: 'bad topic' }), 'MESSAGE_ILLEGAL', /^batch message 0: /],
    ];
    for (const [what, batch, status, remark] of cases) {
      const r = await store.putEncodedBatch(batch);
      assert.equal(r.status, status, what);
      assert.match(r.remark!, remark, what);
      assert.equal(r.appendResult, undefined, what);
      assert.equal(store.getMaxPhyOffset(), phy, `${what}: nothing written`);
      assert.equal(store.getMaxOffsetInQueue('T', 0), 2, `${what}: no queue offset taken`);
    }
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});
