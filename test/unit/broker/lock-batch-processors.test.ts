import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerHarness } from './support/broker-harness.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';

let h: BrokerHarness;
afterEach(async () => {
  await h?.close();
});

const mq = (queueId: number) => ({ brokerName: 'broker-a', queueId, topic: 'TORD' });
/** The body the 4.9.8 Java client sends (fastjson, fields alphabetical). */
const body = (clientId: string, queueIds: number[], group = 'GID_ORD') =>
  Buffer.from(JSON.stringify({ clientId, consumerGroup: group, mqSet: queueIds.map(mq) }));

describe('LOCK_BATCH_MQ (41) / UNLOCK_BATCH_MQ (42)', () => {
  it('answers lockOKMQSet with exactly the queues the client now holds (fastjson MessageQueue JSON)', async () => {
    h = await BrokerHarness.create();
    const a = await h.call(RequestCode.LOCK_BATCH_MQ, null, body('10.0.0.1@A', [0, 1, 2]));
    assert.equal(a.code, ResponseCode.SUCCESS);
    assert.equal(a.remark, null);
    assert.equal(
      a.body!.toString(),
      '{"lockOKMQSet":[{"brokerName":"broker-a","queueId":0,"topic":"TORD"},{"brokerName":"broker-a","queueId":1,"topic":"TORD"},{"brokerName":"broker-a","queueId":2,"topic":"TORD"}]}',
    );
    const b = await h.call(RequestCode.LOCK_BATCH_MQ, null, body('10.0.0.2@B', [2, 3]));
    assert.deepEqual(JSON.parse(b.body!.toString()), { lockOKMQSet: [mq(3)] });
    const again = await h.call(RequestCode.LOCK_BATCH_MQ, null, body('10.0.0.1@A', [0, 1, 2, 3]));
    assert.deepEqual(JSON.parse(again.body!.toString()), { lockOKMQSet: [mq(0), mq(1), mq(2)] });
  });

  it('UNLOCK_BATCH_MQ by the holder frees the queues; the lock expires after 60 s without refresh', async () => {
    h = await BrokerHarness.create();
    await h.call(RequestCode.LOCK_BATCH_MQ, null, body('A', [0, 1]));
    const un = await h.call(RequestCode.UNLOCK_BATCH_MQ, null, body('A', [0]));
    assert.equal(un.code, ResponseCode.SUCCESS);
    assert.equal(un.body, null);
    const ignored = await h.call(RequestCode.UNLOCK_BATCH_MQ, null, body('B', [1]));
    assert.equal(ignored.code, ResponseCode.SUCCESS);
    const b = await h.call(RequestCode.LOCK_BATCH_MQ, null, body('B', [0, 1]));
    assert.deepEqual(JSON.parse(b.body!.toString()), { lockOKMQSet: [mq(0)] });
    h.clock.advance(60_001);
    const later = await h.call(RequestCode.LOCK_BATCH_MQ, null, body('B', [0, 1]));
    assert.deepEqual(JSON.parse(later.body!.toString()), { lockOKMQSet: [mq(0), mq(1)] });
  });

  it('an empty mqSet locks nothing; 5.x onlyThisBroker is accepted', async () => {
    h = await BrokerHarness.create();
    const r = await h.call(RequestCode.LOCK_BATCH_MQ, null, Buffer.from('{"clientId":"A","consumerGroup":"G","mqSet":[],"onlyThisBroker":false}'));
    assert.equal(r.code, ResponseCode.SUCCESS);
    assert.equal(r.body!.toString(), '{"lockOKMQSet":[]}');
  });

  it('a missing or malformed body answers SYSTEM_ERROR with a remark', async () => {
    h = await BrokerHarness.create();
    const cases: Array<[Buffer | null, string]> = [
      [null, 'LOCK_BATCH_MQ: request body is empty'],
      [Buffer.from('{"clientId":"A","mqSet":[]}'), 'LOCK_BATCH_MQ: consumerGroup is missing'],
      [Buffer.from('{"consumerGroup":"G","mqSet":[]}'), 'LOCK_BATCH_MQ: clientId is missing'],
      [Buffer.from('{"clientId":"A","consumerGroup":"G","mqSet":{}}'), 'LOCK_BATCH_MQ: mqSet is not an array'],
      [Buffer.from('{"clientId":"A","consumerGroup":"G","mqSet":[{"topic":"T","brokerName":"b","queueId":-1}]}'), 'LOCK_BATCH_MQ: mqSet[0].queueId is not a queue id: -1'],
      [Buffer.from('[1]'), 'LOCK_BATCH_MQ: body is not a JSON object'],
    ];
    for (const [b, remark] of cases) {
      const r = await h.call(RequestCode.LOCK_BATCH_MQ, null, b);
      assert.equal(r.code, ResponseCode.SYSTEM_ERROR, remark);
      assert.equal(r.remark, remark);
    }
    const bad = await h.call(RequestCode.UNLOCK_BATCH_MQ, null, Buffer.from('not json'));
    assert.equal(bad.code, ResponseCode.SYSTEM_ERROR);
    assert.match(bad.remark!, /^UNLOCK_BATCH_MQ: body is not JSON/);
  });
});
