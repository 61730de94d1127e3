import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerHarness, FakeChannel } from './support/broker-harness.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { decodeRecord, readRecordTotalSize } from '../../../src/common/message/record-codec.js';
import type { MessageExt } from '../../../src/common/message/message.js';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';

let h: BrokerHarness;
afterEach(async () => {
  await h?.close();
});

/** Decodes a pull body the way ali-ons does: records back to back, no padding. */
function records(body: Buffer | null): MessageExt[] {
  const out: MessageExt[] = [];
  let p = 0;
  while (body && p < body.length) {
    out.push(decodeRecord(body, p));
    p += readRecordTotalSize(body, p);
  }
  return out;
}

const NO_SUSPEND = 4; // subscription only

function ext(r: RemotingCommand | null): Record<string, unknown> {
  assert.ok(r, 'expected a reply');
  return r.extFields as Record<string, unknown>;
}

describe('PULL_MESSAGE (11)', () => {
  it('B26 reply codes and nextBeginOffset for every offset outcome, with all four header values', async () => {
    h = await BrokerHarness.create();
    for (let i = 0; i < 100; i++) {
      await h.send('T26', `m${i}`, { queueId: 1 });
      await h.send('T26', `m${i}`, { queueId: 2 });
    }
    h.fake.setMinOffset('T26', 2, 40);
    const pull = (q: number, off: number) => h.pull('G', 'T26', q, off, { sysFlag: NO_SUSPEND });
    const check = async (q: number, off: number, code: number, next: number, min: number, max: number) => {
      const r = await pull(q, off);
      assert.equal(r!.code, code, `q${q} @${off}`);
      assert.deepEqual(ext(r), { nextBeginOffset: next, minOffset: min, maxOffset: max, suggestWhichBrokerId: 0 }, `q${q} @${off}`);
    };
    await check(1, 100, ResponseCode.PULL_NOT_FOUND, 100, 0, 100); // OFFSET_OVERFLOW_ONE
    await check(1, 150, ResponseCode.PULL_OFFSET_MOVED, 100, 0, 100); // OVERFLOW_BADLY → max even though min is 0
    await check(2, 150, ResponseCode.PULL_OFFSET_MOVED, 100, 40, 100);
    await check(2, 10, ResponseCode.PULL_OFFSET_MOVED, 40, 40, 100); // OFFSET_TOO_SMALL
    await check(3, 5, ResponseCode.PULL_OFFSET_MOVED, 0, 0, 0); // NO_MESSAGE_IN_QUEUE, offset ≠ 0
    await check(3, 0, ResponseCode.PULL_NOT_FOUND, 0, 0, 0); // NO_MESSAGE_IN_QUEUE at 0
    const found = await pull(1, 98);
    assert.equal(found!.code, ResponseCode.SUCCESS);
    assert.deepEqual(ext(found), { nextBeginOffset: 100, minOffset: 0, maxOffset: 100, suggestWhichBrokerId: 0 });
    assert.deepEqual(records(found!.body).map((m) => [m.queueOffset, m.body.toString()]), [[98, 'm98'], [99, 'm99']]);
  });

  it('B26 on a slave the consumer is not moved: 20 with nextBeginOffset = requested offset', async () => {
    h = await BrokerHarness.create({ config: { brokerRole: 'SLAVE' } });
    h.ctx.topicConfigManager.createTopicInSendMessageBackMethod('T26S', 4, 6, 0);
    const r = await h.pull('G', 'T26S', 0, 5, { sysFlag: NO_SUSPEND });
    assert.equal(r!.code, ResponseCode.PULL_RETRY_IMMEDIATELY);
    assert.equal(ext(r).nextBeginOffset, 5);
  });

  it('returns records packed back to back and stores commitOffset when sysFlag bit 0 is set', async () => {
    h = await BrokerHarness.create();
    for (let i = 0; i < 5; i++) await h.send('TP', `body-${i}`, { tags: 'TagA' });
    const r = await h.pull('GP', 'TP', 0, 0, { sysFlag: 7, commitOffset: 3, maxMsgNums: 32 });
    assert.equal(r!.code, ResponseCode.SUCCESS);
    const msgs = records(r!.body);
    assert.equal(msgs.length, 5);
    assert.equal(r!.body!.length, msgs.reduce((n, m) => n + m.storeSize, 0));
    assert.deepEqual(msgs.map((m) => m.body.toString()), ['body-0', 'body-1', 'body-2', 'body-3', 'body-4']);
    assert.equal(h.ctx.consumerOffsetManager.queryOffset('GP', 'TP', 0), 3);
    await h.pull('GP', 'TP', 0, 5, { sysFlag: 7, commitOffset: -1 });
    assert.equal(h.ctx.consumerOffsetManager.queryOffset('GP', 'TP', 0), 3, 'negative commitOffset ignored');
    await h.pull('GP', 'TP', 0, 5, { sysFlag: 6, commitOffset: 4 });
    assert.equal(h.ctx.consumerOffsetManager.queryOffset('GP', 'TP', 0), 3, 'ignored without bit 0');
  });

  it("tag filter 'TagA || TagC' returns only TagA/TagC and advances past the rest", async () => {
    h = await BrokerHarness.create();
    for (const t of ['TagA', 'TagB', 'TagC', 'TagA', 'TagD']) await h.send('TF', t, { tags: t });
    const r = await h.pull('GF', 'TF', 0, 0, { subscription: 'TagA || TagC', sysFlag: NO_SUSPEND });
    assert.equal(r!.code, ResponseCode.SUCCESS);
    assert.deepEqual(records(r!.body).map((m) => [m.queueOffset, m.properties.get('TAGS')]), [[0, 'TagA'], [2, 'TagC'], [3, 'TagA']]);
    assert.equal(ext(r).nextBeginOffset, 5);
    const none = await h.pull('GF', 'TF', 0, 4, { subscription: 'TagA || TagC', sysFlag: NO_SUSPEND });
    assert.equal(none!.code, ResponseCode.PULL_RETRY_IMMEDIATELY);
    assert.equal(ext(none).nextBeginOffset, 5);
  });

  it('B25 colliding tag hashes (Aa/BB) are filtered exactly; the Aa subscriber moves past the 5 BB messages', async () => {
    h = await BrokerHarness.create();
    for (let i = 0; i < 5; i++) await h.send('T25', `bb${i}`, { tags: 'BB' });
    await h.send('T25', 'aa', { tags: 'Aa' });
    const aa = await h.pull('GA', 'T25', 0, 0, { subscription: 'Aa', maxMsgNums: 5, sysFlag: NO_SUSPEND });
    assert.equal(aa!.code, ResponseCode.SUCCESS);
    assert.deepEqual(records(aa!.body).map((m) => m.body.toString()), ['aa']);
    assert.equal(ext(aa).nextBeginOffset, 6);
    const bb = await h.pull('GB', 'T25', 0, 0, { subscription: 'BB', maxMsgNums: 5, sysFlag: NO_SUSPEND });
    assert.deepEqual(records(bb!.body).map((m) => m.body.toString()), ['bb0', 'bb1', 'bb2', 'bb3', 'bb4']);
    assert.equal(ext(bb).nextBeginOffset, 5);
    const bbNext = await h.pull('GB', 'T25', 0, 5, { subscription: 'BB', maxMsgNums: 5, sysFlag: NO_SUSPEND });
    assert.equal(bbNext!.code, ResponseCode.PULL_RETRY_IMMEDIATELY);
    assert.equal(ext(bbNext).nextBeginOffset, 6);
  });

  it('long polling: a held pull is answered when a message arrives', async () => {
    h = await BrokerHarness.create();
    h.ctx.topicConfigManager.createTopicInSendMessageBackMethod('TL', 4, 6, 0);
    const ch = new FakeChannel('127.0.0.1:50002');
    const held = await h.pull('GL', 'TL', 0, 0, { channel: ch, suspendTimeoutMillis: 10_000 });
    assert.equal(held, null, 'request parked');
    assert.equal(h.broker.pullRequestHoldService.size, 1);
    const reply = ch.nextSent();
    await h.send('TL', 'wake up', { queueId: 0 });
    const r = await reply;
    assert.equal(r.code, ResponseCode.SUCCESS);
    assert.equal(r.flag & 1, 1, 'sent as a response');
    assert.deepEqual(records(r.body).map((m) => m.body.toString()), ['wake up']);
    assert.equal(ext(r).nextBeginOffset, 1);
    assert.equal(h.broker.pullRequestHoldService.size, 0);
  });

  it('long polling: an arrival on another queue or with a non-matching tag does not wake; the timeout answers 19 with the requested offset', async () => {
    h = await BrokerHarness.create();
    await h.send('TL2', 'x', { queueId: 0, tags: 'TagB' }); // queue 0 max = 1
    const ch = new FakeChannel('127.0.0.1:50003');
    const held = await h.pull('GL2', 'TL2', 0, 1, { channel: ch, subscription: 'TagA', suspendTimeoutMillis: 60 });
    assert.equal(held, null);
    await h.send('TL2', 'other queue', { queueId: 1, tags: 'TagA' });
    await h.send('TL2', 'wrong tag', { queueId: 0, tags: 'TagB' });
    assert.equal(ch.sent.length, 0);
    const r = await ch.nextSent();
    assert.equal(r.code, ResponseCode.PULL_RETRY_IMMEDIATELY, 'the re-run scans past the TagB entry');
    assert.equal(ext(r).nextBeginOffset, 2);
    const ch2 = new FakeChannel('127.0.0.1:50004');
    assert.equal(await h.pull('GL2', 'TL2', 0, 2, { channel: ch2, suspendTimeoutMillis: 30 }), null);
    const timedOut = await ch2.nextSent();
    assert.equal(timedOut.code, ResponseCode.PULL_NOT_FOUND);
    assert.deepEqual(ext(timedOut), { nextBeginOffset: 2, minOffset: 0, maxOffset: 2, suggestWhichBrokerId: 0 });
  });

  it('long polling: the periodic check wakes a request whose queue grew, and a closed channel drops its request', async () => {
    h = await BrokerHarness.create();
    h.ctx.topicConfigManager.createTopicInSendMessageBackMethod('TL3', 1, 6, 0);
    const ch = new FakeChannel();
    assert.equal(await h.pull('G3', 'TL3', 0, 0, { channel: ch }), null);
    h.fake.setMessageArrivingListener(null); // arrivals go unnoticed, only the check can see them
    await h.send('TL3', 'late');
    const reply = ch.nextSent();
    h.broker.pullRequestHoldService.checkHoldRequest();
    assert.equal((await reply).code, ResponseCode.SUCCESS);

    const closing = new FakeChannel();
    assert.equal(await h.pull('G3', 'TL3', 0, 1, { channel: closing }), null);
    assert.equal(h.broker.pullRequestHoldService.size, 1);
    closing.close();
    assert.equal(h.broker.pullRequestHoldService.size, 0);
  });

  it('without the suspend bit nothing is held: 19 at once', async () => {
    h = await BrokerHarness.create();
    h.ctx.topicConfigManager.createTopicInSendMessageBackMethod('TN', 1, 6, 0);
    const r = await h.pull('GN', 'TN', 0, 0, { sysFlag: NO_SUSPEND });
    assert.equal(r!.code, ResponseCode.PULL_NOT_FOUND);
    assert.equal(ext(r).nextBeginOffset, 0);
  });

  it('request errors: unknown topic 17, bad queue 1, bad subscription 23, SQL92 1, no subscription 24', async () => {
    h = await BrokerHarness.create();
    assert.equal((await h.pull('G', 'Nope', 0, 0))!.code, ResponseCode.TOPIC_NOT_EXIST);
    h.ctx.topicConfigManager.createTopicInSendMessageBackMethod('TE', 4, 6, 0);
    const q = await h.pull('G', 'TE', 4, 0);
    assert.equal(q!.code, ResponseCode.SYSTEM_ERROR);
    assert.match(q!.remark!, /queueId\[4\] is illegal/);
    assert.equal((await h.pull('G', 'TE', 0, 0, { subscription: '||' }))!.code, ResponseCode.SUBSCRIPTION_PARSE_FAILED);
    const sql = await h.invoke(RequestCode.PULL_MESSAGE, {
      consumerGroup: 'G', topic: 'TE', queueId: 0, queueOffset: 0, maxMsgNums: 1, sysFlag: 6, commitOffset: -1,
      suspendTimeoutMillis: 10, subscription: 'a > 1', subVersion: 1, expressionType: 'SQL92',
    });
    assert.equal(sql!.code, ResponseCode.SYSTEM_ERROR);
    assert.equal((await h.pull('G', 'TE', 0, 0, { sysFlag: 2 }))!.code, ResponseCode.SUBSCRIPTION_NOT_EXIST);
  });

  it('without the subscription bit the registered subscription (from HEART_BEAT) filters', async () => {
    h = await BrokerHarness.create();
    await h.send('TH', 'a', { tags: 'TagA' });
    await h.send('TH', 'b', { tags: 'TagB' });
    await h.heartbeat('10.0.0.1@1', 'GH', 'TH', 'TagB');
    const r = await h.pull('GH', 'TH', 0, 0, { sysFlag: 0 });
    assert.deepEqual(records(r!.body).map((m) => m.body.toString()), ['b']);
  });

  it('LITE_PULL_MESSAGE (361) as the 5.x DefaultLitePullConsumer sends it (sysFlag 0x14 = subscription + lite pull, tag filter): served like PULL_MESSAGE', async () => {
    h = await BrokerHarness.create();
    for (let i = 0; i < 6; i++) await h.send('TL', `lite-${i}`, { tags: i % 2 === 0 ? 'TagA' : 'TagB' });
    const lite = (offset: number, subscription: string) => h.invoke(RequestCode.LITE_PULL_MESSAGE, {
      consumerGroup: 'GL', topic: 'TL', queueId: 0, queueOffset: offset, maxMsgNums: 32, sysFlag: 0x14, commitOffset: 0,
      suspendTimeoutMillis: 20000, subscription, subVersion: 1, expressionType: 'TAG',
    });
    const r = await lite(2, 'TagB');
    assert.equal(r!.code, ResponseCode.SUCCESS);
    assert.deepEqual(ext(r), { nextBeginOffset: 6, minOffset: 0, maxOffset: 6, suggestWhichBrokerId: 0 });
    assert.deepEqual(records(r!.body).map((m) => [m.queueOffset, m.body.toString()]), [[3, 'lite-3'], [5, 'lite-5']]);
    assert.equal(h.ctx.consumerOffsetManager.queryOffset('GL', 'TL', 0), -1, 'no commit without sysFlag bit 0');
    assert.equal((await lite(9, '*'))!.code, ResponseCode.PULL_OFFSET_MOVED);
  });
});
