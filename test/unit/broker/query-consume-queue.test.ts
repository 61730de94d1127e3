import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerHarness } from './support/broker-harness.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { tagsCode } from '../../../src/common/message/java-hash.js';

let h: BrokerHarness;
afterEach(async () => {
  await h?.close();
});

describe('321 QUERY_CONSUME_QUEUE (mqadmin queryCq)', () => {
  it('returns the entries from index (offset, size, tags code), min/max, and with a live group its subscription and the tag filter per entry', async () => {
    h = await BrokerHarness.create();
    for (let i = 0; i < 5; i++) assert.equal((await h.send('TQ', `m${i}`, { tags: i % 2 === 0 ? 'TagA' : 'TagB', queueId: 0 })).code, ResponseCode.SUCCESS);
    await h.heartbeat('10.0.0.1@q', 'GQ', 'TQ', 'TagA');
    const r = await h.call(RequestCode.QUERY_CONSUME_QUEUE, { topic: 'TQ', queueId: 0, index: 1, count: 3, consumerGroup: 'GQ' });
    assert.equal(r.code, ResponseCode.SUCCESS);
    const body = JSON.parse(r.body!.toString()) as { maxQueueIndex: number; minQueueIndex: number; subscriptionData: { subString: string }; queueData: Array<{ physicOffset: number; physicSize: number; tagsCode: number; eval: boolean }> };
    assert.deepEqual([body.minQueueIndex, body.maxQueueIndex, body.subscriptionData.subString], [0, 5, 'TagA']);
    const expected = [];
    for (const i of [1, 2, 3]) {
      const physicOffset = h.store.getCommitLogOffsetInQueue('TQ', 0, i);
      const record = (await h.store.lookMessageByOffset(physicOffset))!;
      assert.equal(record.body.toString(), `m${i}`);
      expected.push({ physicOffset, physicSize: record.storeSize, tagsCode: tagsCode(i % 2 === 0 ? 'TagA' : 'TagB'), eval: i % 2 === 0 });
    }
    assert.deepEqual(body.queueData, expected);
    const offline = JSON.parse((await h.call(RequestCode.QUERY_CONSUME_QUEUE, { topic: 'TQ', queueId: 0, index: 4, count: 10, consumerGroup: 'NOBODY' })).body!.toString());
    assert.equal(offline.filterData, 'NOBODY@TQ is not online!');
    assert.equal(offline.queueData.length, 1);
    const missing = await h.call(RequestCode.QUERY_CONSUME_QUEUE, { topic: 'TQ', queueId: 3, index: 0, count: 1 });
    assert.deepEqual([missing.code, missing.remark], [ResponseCode.SYSTEM_ERROR, '3@TQ is not exist!']);
  });
});
