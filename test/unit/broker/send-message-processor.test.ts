import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { deflateSync } from 'node:zlib';
import { BrokerHarness } from './support/broker-harness.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { createMessageId, socketAddressFromString } from '../../../src/common/message/msgid.js';
import { encodeBatchBody } from '../../../src/common/message/batch-codec.js';
import { MessageSysFlag } from '../../../src/common/message/sysflag.js';

let h: BrokerHarness;
afterEach(async () => {
  await h?.close();
});

describe('SEND_MESSAGE_V2 (310)', () => {
  it('maps the one-letter header to the stored message and replies msgId/queueId/queueOffset', async () => {
    h = await BrokerHarness.create();
    const body = deflateSync(Buffer.alloc(5000, 'a'));
    const r = await h.call(
      RequestCode.SEND_MESSAGE_V2,
      {
        a: 'PID_X',
        b: 'TopicA',
        c: 'TBW102',
        d: 4,
        e: 2,
        f: 1,
        g: 1_699_999_999_123,
        h: 7,
        i: 'TAGS\u0001TagA\u0002KEYS\u0001k1 k2\u0002UNIQ_KEY\u0001U1\u0002',
        j: 3,
        k: false,
      },
      body,
    );
    assert.equal(r.code, ResponseCode.SUCCESS);
    const stored = h.fake.puts[0]!;
    assert.equal(stored.topic, 'TopicA');
    assert.equal(stored.queueId, 2);
    assert.equal(stored.flag, 7);
    assert.equal(stored.sysFlag & 1, 1, 'compressed flag kept');
    assert.deepEqual(stored.body, body, 'compressed body stored as sent');
    assert.equal(stored.bornTimestamp, 1_699_999_999_123);
    assert.deepEqual(stored.bornHost, socketAddressFromString('127.0.0.1:50001'));
    assert.deepEqual(stored.storeHost, socketAddressFromString('127.0.0.1:10911'));
    assert.equal(stored.reconsumeTimes, 3);
    assert.equal(stored.properties.get('TAGS'), 'TagA');
    assert.equal(stored.properties.get('KEYS'), 'k1 k2');
    assert.equal(stored.properties.get('UNIQ_KEY'), 'U1');
    assert.equal(stored.properties.get('CLUSTER'), 'DefaultCluster');
    assert.equal(r.extFields!.msgId, createMessageId(socketAddressFromString('127.0.0.1:10911'), 0));
    assert.equal(r.extFields!.queueId, 2);
    assert.equal(r.extFields!.queueOffset, 0);
    const r2 = await h.send('TopicA', 'second', { queueId: 2 });
    assert.equal(r2.extFields!.queueOffset, 1);
  });

  it('SEND_MESSAGE (10) takes the V1 field names', async () => {
    h = await BrokerHarness.create();
    const r = await h.call(
      RequestCode.SEND_MESSAGE,
      { producerGroup: 'P', topic: 'TopicV1', defaultTopic: 'TBW102', defaultTopicQueueNums: '4', queueId: '1', sysFlag: '0', bornTimestamp: '5', flag: '0', properties: 'TAGS\u0001x\u0002' },
      Buffer.from('v1'),
    );
    assert.equal(r.code, ResponseCode.SUCCESS);
    assert.equal(h.fake.puts[0]!.queueId, 1);
    assert.equal(h.fake.puts[0]!.properties.get('TAGS'), 'x');
  });

  it('a missing required header field is an error naming the field', async () => {
    h = await BrokerHarness.create();
    await assert.rejects(h.invoke(RequestCode.SEND_MESSAGE_V2, { a: 'P', c: 'TBW102', d: 4, e: 0, f: 0, g: 1, h: 0 }, Buffer.from('x')), /<b>/);
  });

  it('auto-creates an unknown topic from TBW102 with 4 queues, perm 6', async () => {
    h = await BrokerHarness.create();
    assert.equal(h.ctx.topicConfigManager.selectTopicConfig('NewTopic'), undefined);
    const r = await h.send('NewTopic', 'x', { queueId: 3 });
    assert.equal(r.code, ResponseCode.SUCCESS);
    const tc = h.ctx.topicConfigManager.selectTopicConfig('NewTopic')!;
    assert.deepEqual([tc.readQueueNums, tc.writeQueueNums, tc.perm], [4, 4, 6]);
    const tbw = h.ctx.topicConfigManager.selectTopicConfig('TBW102')!;
    assert.deepEqual([tbw.readQueueNums, tbw.writeQueueNums, tbw.perm], [8, 8, 7]);
  });

  it('without autoCreateTopicEnable an unknown topic is 17 TOPIC_NOT_EXIST', async () => {
    h = await BrokerHarness.create({ config: { autoCreateTopicEnable: 'false' } });
    const r = await h.send('Unknown', 'x');
    assert.equal(r.code, ResponseCode.TOPIC_NOT_EXIST);
    assert.match(r.remark!, /topic\[Unknown\] not exist/);
    assert.equal(h.fake.puts.length, 0);
  });

  it('illegal and too-long topics get 13 MESSAGE_ILLEGAL with a clear remark, before any write', async () => {
    h = await BrokerHarness.create();
    const bad = await h.send('bad topic!', 'x');
    assert.equal(bad.code, ResponseCode.MESSAGE_ILLEGAL);
    assert.match(bad.remark!, /illegal topic: .*characters other than/);
    const long = await h.send('T'.repeat(128), 'x');
    assert.equal(long.code, ResponseCode.MESSAGE_ILLEGAL);
    assert.match(long.remark!, /too long: 128 characters, the limit is 127/);
    const blank = await h.send(' ', 'x');
    assert.equal(blank.code, ResponseCode.MESSAGE_ILLEGAL);
    assert.equal(h.fake.puts.length, 0);
    assert.equal(h.ctx.topicConfigManager.selectTopicConfig('T'.repeat(128)), undefined, 'no topic created');
  });

  it('B23 a body of maxMessageSize + 1 is rejected with 13; maxMessageSize - 10 is accepted', async () => {
    h = await BrokerHarness.create();
    const limit = 4 * 1024 * 1024;
    const over = await h.send('BigTopic', Buffer.alloc(limit + 1, 1));
    assert.equal(over.code, ResponseCode.MESSAGE_ILLEGAL);
    assert.equal(over.remark, 'message body size 4194305 exceeds maxMessageSize 4194304 (the body as received)');
    const zipped = await h.send('BigTopic', Buffer.alloc(4_195_595, 1), { sysFlag: MessageSysFlag.COMPRESSED_FLAG });
    assert.equal(zipped.code, ResponseCode.MESSAGE_ILLEGAL);
    assert.equal(zipped.remark, 'message body size 4195595 exceeds maxMessageSize 4194304 (the body as received, compressed by the client)');
    const under = await h.send('BigTopic', Buffer.alloc(limit - 10, 1));
    assert.equal(under.code, ResponseCode.SUCCESS);
  });

  it('system topics that take no sends get 16; queueId beyond the queues gets 1', async () => {
    h = await BrokerHarness.create();
    const sched = await h.send('SCHEDULE_TOPIC_XXXX', 'x');
    assert.equal(sched.code, ResponseCode.NO_PERMISSION);
    await h.send('TopicQ', 'x');
    const q = await h.send('TopicQ', 'x', { queueId: 4 });
    assert.equal(q.code, ResponseCode.SYSTEM_ERROR);
    assert.match(q.remark!, /request queueId\[4\] is illegal/);
  });

  it('a broker without write permission refuses sends with 16', async () => {
    h = await BrokerHarness.create({ config: { brokerPermission: '4' } });
    const r = await h.send('TopicA', 'x');
    assert.equal(r.code, ResponseCode.NO_PERMISSION);
    assert.match(r.remark!, /sending message is forbidden/);
  });

  it('DELAY > 0 is stored in SCHEDULE_TOPIC_XXXX queue level-1 with REAL_TOPIC/REAL_QID; level clamped to the max', async () => {
    h = await BrokerHarness.create();
    const r = await h.send('TopicD', 'later', { queueId: 1, props: { DELAY: '3' } });
    assert.equal(r.code, ResponseCode.SUCCESS);
    assert.equal(r.extFields!.queueId, 1, 'reply keeps the requested queue');
    const s = h.fake.puts[0]!;
    assert.equal(s.topic, 'SCHEDULE_TOPIC_XXXX');
    assert.equal(s.queueId, 2);
    assert.equal(s.properties.get('REAL_TOPIC'), 'TopicD');
    assert.equal(s.properties.get('REAL_QID'), '1');
    assert.equal(s.properties.get('DELAY'), '3');
    await h.send('TopicD', 'much later', { props: { DELAY: '99' } });
    assert.equal(h.fake.puts[1]!.queueId, 17);
    assert.equal(h.fake.puts[1]!.properties.get('DELAY'), '18');
  });

  it('maps store statuses to response codes with the store remark', async () => {
    h = await BrokerHarness.create();
    const cases: Array<[string, number]> = [
      ['CREATE_MAPPED_FILE_FAILED', 1],
      ['UNKNOWN_ERROR', 1],
      ['MESSAGE_ILLEGAL', 13],
      ['PROPERTIES_SIZE_EXCEEDED', 13],
      ['SERVICE_NOT_AVAILABLE', 14],
      ['OS_PAGE_CACHE_BUSY', 2],
    ];
    for (const [status, code] of cases) {
      h.fake.nextPutStatus = { status: status as never, remark: `because ${status}` };
      const r = await h.send('TopicS', 'x');
      assert.equal(r.code, code, status);
      assert.equal(r.remark, `because ${status}`);
      assert.equal(r.extFields!.msgId, undefined);
    }
    h.fake.nextPutStatus = { status: 'SERVICE_NOT_AVAILABLE' };
    assert.match((await h.send('TopicS', 'x')).remark!, /service not available now/);
  });

  it('flush timeouts still reply with msgId and queueOffset (10 / 12 / 11)', async () => {
    h = await BrokerHarness.create();
    const store = h.fake;
    const realPut = store.putMessage.bind(store);
    for (const [status, code] of [['FLUSH_DISK_TIMEOUT', 10], ['FLUSH_SLAVE_TIMEOUT', 12], ['SLAVE_NOT_AVAILABLE', 11]] as const) {
      store.putMessage = async (m) => ({ ...(await realPut(m)), status });
      const r = await h.send('TopicF', 'x');
      assert.equal(r.code, code);
      assert.equal(typeof r.extFields!.msgId, 'string');
      assert.equal(typeof r.extFields!.queueOffset, 'number');
    }
  });

  it('a %RETRY% send at or past its max reconsume times goes to %DLQ%<group>', async () => {
    h = await BrokerHarness.create();
    const ok = await h.send('%RETRY%G1', 'x', { reconsumeTimes: 2, maxReconsumeTimes: 3 });
    assert.equal(ok.code, ResponseCode.SUCCESS);
    assert.equal(h.fake.puts[0]!.topic, '%RETRY%G1');
    const dlq = await h.send('%RETRY%G1', 'x', { reconsumeTimes: 3, maxReconsumeTimes: 3 });
    assert.equal(dlq.code, ResponseCode.SUCCESS);
    assert.equal(h.fake.puts[1]!.topic, '%DLQ%G1');
    const tc = h.ctx.topicConfigManager.selectTopicConfig('%DLQ%G1')!;
    assert.deepEqual([tc.readQueueNums, tc.writeQueueNums, tc.perm], [1, 1, 6]);
    const byGroup = await h.send('%RETRY%G1', 'x', { reconsumeTimes: 16 });
    assert.equal(byGroup.code, ResponseCode.SUCCESS);
    assert.equal(h.fake.puts[2]!.topic, '%DLQ%G1', 'group retryMaxTimes 16 applies without header l');
  });

  it('replies transactionId = the UNIQ_KEY of the message (Apache handlePutMessageResult; TransactionSendResult.getTransactionId), absent without one', async () => {
    h = await BrokerHarness.create();
    const half = await h.send('TopicT', 'x', { props: { TRAN_MSG: 'true', UNIQ_KEY: 'FD00000000000000000000000000000A0001' } });
    assert.equal(half.code, ResponseCode.SUCCESS);
    assert.equal(half.extFields!.transactionId, 'FD00000000000000000000000000000A0001');
    const plain = await h.send('TopicT', 'y', { props: { UNIQ_KEY: 'FD00000000000000000000000000000A0002' } });
    assert.equal(plain.extFields!.transactionId, 'FD00000000000000000000000000000A0002');
    const noKey = await h.send('TopicT', 'z');
    assert.equal(noKey.code, ResponseCode.SUCCESS);
    assert.equal(noKey.extFields!.transactionId, undefined);
  });

  it('transactional half messages go to RMQ_SYS_TRANS_HALF_TOPIC queue 0 with the real topic saved and PGROUP set', async () => {
    h = await BrokerHarness.create();
    const r = await h.send('TopicT', 'x', { props: { TRAN_MSG: 'true' } });
    assert.equal(r.code, ResponseCode.SUCCESS);
    assert.equal(h.fake.puts.length, 1);
    const half = h.fake.puts[0]!;
    assert.equal(half.topic, 'RMQ_SYS_TRANS_HALF_TOPIC');
    assert.equal(half.queueId, 0);
    assert.equal(half.properties.get('REAL_TOPIC'), 'TopicT');
    assert.ok(half.properties.get('PGROUP'), 'producer group kept for the check-back');
  });

  it('TRAN_MSG is read as Java Boolean.parseBoolean: TRUE / True make a half message (kept as sent), anything else a plain send', async () => {
    h = await BrokerHarness.create();
    for (const v of ['TRUE', 'True']) {
      const r = await h.send('TopicT', v, { props: { TRAN_MSG: v } });
      assert.equal(r.code, ResponseCode.SUCCESS);
      const half = h.fake.puts.at(-1)!;
      assert.equal(half.topic, 'RMQ_SYS_TRANS_HALF_TOPIC', `TRAN_MSG=${v}`);
      assert.equal(half.properties.get('REAL_TOPIC'), 'TopicT');
      assert.equal(half.properties.get('TRAN_MSG'), v, 'the property as the producer sent it');
    }
    for (const v of ['yes', '1', 'false']) {
      const r = await h.send('TopicT', v, { props: { TRAN_MSG: v } });
      assert.equal(r.code, ResponseCode.SUCCESS);
      assert.equal(h.fake.puts.at(-1)!.topic, 'TopicT', `TRAN_MSG=${v} is not transactional`);
    }
    assert.equal(h.fake.getMaxOffsetInQueue('RMQ_SYS_TRANS_HALF_TOPIC', 0), 2);
  });

  it('transactional half messages are refused with 16 when rejectTransactionMessage=true', async () => {
    h = await BrokerHarness.create({ config: { rejectTransactionMessage: 'true' } });
    const r = await h.send('TopicT', 'x', { props: { TRAN_MSG: 'true' } });
    assert.equal(r.code, ResponseCode.NO_PERMISSION);
    assert.equal(h.fake.puts.length, 0);
  });

  it('SEND_BATCH_MESSAGE (320) stores every item and replies comma-joined ids', async () => {
    h = await BrokerHarness.create();
    const body = encodeBatchBody([
      { flag: 0, body: Buffer.from('one'), properties: new Map([['TAGS', 'a']]) },
      { flag: 1, body: Buffer.from('two'), properties: new Map([['TAGS', 'b']]) },
    ]);
    const r = await h.call(RequestCode.SEND_BATCH_MESSAGE, { a: 'P', b: 'TopicB', c: 'TBW102', d: 4, e: 0, f: 0, g: 1, h: 0, m: true }, body);
    assert.equal(r.code, ResponseCode.SUCCESS);
    assert.equal(String(r.extFields!.msgId).split(',').length, 2);
    assert.equal(r.extFields!.queueOffset, 0);
    assert.deepEqual(h.fake.puts.map((p) => p.body.toString()), ['one', 'two']);
    assert.equal(h.fake.puts[1]!.flag, 1);
  });
});
