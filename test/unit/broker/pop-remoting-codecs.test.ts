/**
 * The text and byte forms of the remoting pop protocol: extra info (POP_CK), start/msg offset
 * infos, BatchAck BitSets, the RECONSUMETIMES patch of popped records, and the broker-side queue
 * allocation strategies (same results as Apache's AVG / AVG_BY_CIRCLE).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildExtraInfo, ExtraInfoError, msgOffsetInfoOf, orderCountInfoOf, parseExtraInfo, startOffsetInfoOf } from '../../../src/broker/pop/extra-info.js';
import { bitSetIndexes, parseBatchAckBody } from '../../../src/broker/processors/ack-message-processor.js';
import { withReconsumeTimes } from '../../../src/broker/processors/pop-message-processor.js';
import { allocateAveragely, allocateAveragelyByCircle } from '../../../src/broker/loadbalance/allocate-message-queue.js';
import { decodeRecord, encodeRecord } from '../../../src/common/message/record-codec.js';
import { socketAddressOf } from '../../../src/common/message/msgid.js';

test('extra info: 8-field form round-trips; 7-field form parses; malformed fields are named', () => {
  const text = buildExtraInfo({ ckQueueOffset: 5, popTimeMs: 1_700_000_000_123, invisibleTimeMs: 60_000, reviveQid: 0, brokerName: 'broker-a', queueId: 3, msgQueueOffset: 7 });
  assert.equal(text, '5 1700000000123 60000 0 0 broker-a 3 7');
  assert.deepEqual(parseExtraInfo(text), { ckQueueOffset: 5, popTimeMs: 1_700_000_000_123, invisibleTimeMs: 60_000, reviveQid: 0, retry: '0', brokerName: 'broker-a', queueId: 3, msgQueueOffset: 7 });
  assert.equal(parseExtraInfo('5 1 2 999 1 b 0').msgQueueOffset, undefined);
  assert.equal(parseExtraInfo('5 1 2 999 1 b 0').reviveQid, 999);
  assert.throws(() => parseExtraInfo(''), ExtraInfoError);
  assert.throws(() => parseExtraInfo('x'), /1 fields/);
  assert.throws(() => parseExtraInfo('5 now 2 0 0 b 0 7'), /popTime is not a number/);
  assert.throws(() => parseExtraInfo('5 1 2 0 7 b 0 7'), /retry flag/);
  assert.throws(() => parseExtraInfo('5 1 2 0 0 b -1 7'), /queueId is out of range/);
  assert.throws(() => parseExtraInfo('5 1 2 0 0 b 0 99999999999999999999'), /msgQueueOffset/);
});

test('startOffsetInfo / msgOffsetInfo / orderCountInfo are the strings ExtraInfoUtil parses', () => {
  const queues = [
    { queueId: 2, startOffset: 10, offsets: [10, 12] },
    { queueId: 0, startOffset: 4, offsets: [4] },
  ];
  assert.equal(startOffsetInfoOf(queues), '0 2 10;0 0 4');
  assert.equal(msgOffsetInfoOf(queues), '0 2 10,12;0 0 4');
  assert.equal(orderCountInfoOf([{ queueId: 2, count: 1 }]), '0 2 1');
  assert.equal(startOffsetInfoOf([]), '');
});

test('BatchAck: Java BitSet.toByteArray bits and the short or long field names', () => {
  assert.deepEqual(bitSetIndexes(Buffer.from([0b101, 0, 0b1000_0000])), [0, 2, 23]);
  const body = parseBatchAckBody(Buffer.from(JSON.stringify({ brokerName: 'b', acks: [{ c: 'G', t: 'T', r: '0', so: 7, q: 1, rq: 0, pt: 100, it: 5000, b: Buffer.from([0b11]).toString('base64') }] })));
  assert.deepEqual(body.acks[0], { consumerGroup: 'G', topic: 'T', retry: '0', startOffset: 7, queueId: 1, reviveQueueId: 0, popTime: 100, invisibleTime: 5000, bits: [0, 1] });
  const long = parseBatchAckBody(Buffer.from(JSON.stringify({ acks: [{ consumerGroup: 'G', topic: 'T', startOffset: 0, queueId: 0, popTime: 1, invisibleTime: 2, bitSet: [4] }] })));
  assert.deepEqual(long.acks[0]!.bits, [2]);
  assert.throws(() => parseBatchAckBody(Buffer.from('{"acks":[{"c":"G","t":"T","so":"x","q":0,"pt":1,"it":1,"b":""}]}')), /startOffset is not an integer/);
});

test('withReconsumeTimes patches a copy of the record, for IPv4 and IPv6 store hosts', () => {
  for (const host of ['127.0.0.1', '::1']) {
    const rec = encodeRecord({
      topic: 'T',
      queueId: 0,
      flag: 0,
      body: Buffer.from('x'),
      properties: new Map(),
      sysFlag: host.includes(':') ? 0x20 | 0x10 : 0,
      bornTimestamp: 1,
      bornHost: socketAddressOf(host, 1),
      storeHost: socketAddressOf(host, 2),
      reconsumeTimes: 0,
      preparedTransactionOffset: 0,
    });
    const patched = withReconsumeTimes(rec, 3);
    assert.equal(decodeRecord(patched, 0).reconsumeTimes, 3);
    assert.equal(decodeRecord(rec, 0).reconsumeTimes, 0, 'the stored record is not changed');
    assert.equal(withReconsumeTimes(rec, 0), rec, 'no copy when nothing changes');
  }
});

test('allocation strategies match Apache AVG and AVG_BY_CIRCLE', () => {
  const mqs = Array.from({ length: 5 }, (_, queueId) => ({ topic: 'T', brokerName: 'b', queueId }));
  const ids = (cid: string, f: typeof allocateAveragely, cids: string[]) => f(cid, mqs, cids).map((q) => q.queueId);
  assert.deepEqual(['a', 'b'].map((c) => ids(c, allocateAveragely, ['a', 'b'])), [[0, 1, 2], [3, 4]]);
  assert.deepEqual(['a', 'b', 'c'].map((c) => ids(c, allocateAveragely, ['a', 'b', 'c'])), [[0, 1], [2, 3], [4]]);
  assert.deepEqual(['a', 'b'].map((c) => ids(c, allocateAveragelyByCircle, ['a', 'b'])), [[0, 2, 4], [1, 3]]);
  assert.deepEqual(ids('z', allocateAveragely, ['a']), []);
  const seven = Array.from({ length: 7 }, (_, i) => `c${i}`);
  assert.deepEqual(seven.map((c) => ids(c, allocateAveragely, seven)), [[0], [1], [2], [3], [4], [], []]);
});
