import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerHarness, FakeChannel } from './support/broker-harness.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { isOneway } from '../../../src/remoting/protocol/commands.js';

let h: BrokerHarness;
afterEach(async () => {
  await h?.close();
});

const consumerList = async (group: string): Promise<{ code: number; ids?: string[]; remark: string | null }> => {
  const r = await h.call(RequestCode.GET_CONSUMER_LIST_BY_GROUP, { consumerGroup: group });
  return { code: r.code, remark: r.remark, ...(r.body ? { ids: JSON.parse(r.body.toString()).consumerIdList } : {}) };
};

/** The NOTIFY_CONSUMER_IDS_CHANGED (40) requests `ch` got since the last call (then forgets them). */
function notifies(ch: FakeChannel): string[] {
  const got = ch.sent.filter((c) => c.code === RequestCode.NOTIFY_CONSUMER_IDS_CHANGED);
  for (const c of got) assert.ok(isOneway(c), 'sent oneway');
  assert.deepEqual(got.map((c) => c.body), got.map(() => null));
  ch.sent.length = 0;
  return got.map((c) => String((c.extFields as Record<string, unknown>).consumerGroup));
}

describe('NOTIFY_CONSUMER_IDS_CHANGED (40) to the group on every membership change (Apache CHANGE event)', () => {
  it('join, subscription change, unregister and a closed connection tell the remaining clients; a plain re-heartbeat does not; the group flag turns it off', async () => {
    h = await BrokerHarness.create();
    const a = new FakeChannel('127.0.0.1:50011');
    const b = new FakeChannel('127.0.0.1:50012');
    await h.heartbeat('10.0.0.1@a', 'GN', 'TN', '*', a);
    assert.deepEqual(notifies(a), ['GN'], 'a joining client is told itself (its rebalance starts at once)');
    await h.heartbeat('10.0.0.1@a', 'GN', 'TN', '*', a);
    assert.deepEqual(notifies(a), [], 'nothing changed');
    await h.heartbeat('10.0.0.2@b', 'GN', 'TN', '*', b);
    assert.deepEqual([notifies(a), notifies(b)], [['GN'], ['GN']]);
    await h.heartbeat('10.0.0.2@b', 'GN', 'TN2', '*', b);
    assert.deepEqual([notifies(a), notifies(b)], [['GN'], ['GN']], 'subscribed topics changed (Apache: a topic added or removed)');
    await h.call(RequestCode.UNREGISTER_CLIENT, { clientID: '10.0.0.2@b', consumerGroup: 'GN' }, null, b);
    assert.deepEqual([notifies(a), notifies(b)], [['GN'], []], 'only the remaining client');
    await h.heartbeat('10.0.0.2@b', 'GN', 'TN', '*', b);
    notifies(a);
    b.close();
    assert.deepEqual(notifies(a), ['GN'], 'closed connection');
    h.ctx.subscriptionGroupManager.updateSubscriptionGroupConfig({ ...h.ctx.subscriptionGroupManager.get('GN')!, notifyConsumerIdsChangedEnable: false });
    const d = new FakeChannel('127.0.0.1:50014');
    await h.heartbeat('10.0.0.4@d', 'GN', 'TN', '*', d);
    assert.deepEqual([notifies(a), notifies(d)], [[], []], 'notifyConsumerIdsChangedEnable=false');
  });

  it('a client silent for more than 120 s: the scan drops it and tells the others', async () => {
    h = await BrokerHarness.create();
    const a = new FakeChannel('127.0.0.1:50021');
    const b = new FakeChannel('127.0.0.1:50022');
    await h.heartbeat('10.0.0.1@a', 'GE', 'TE', '*', a);
    h.clock.advance(100_000);
    await h.heartbeat('10.0.0.2@b', 'GE', 'TE', '*', b);
    notifies(a);
    notifies(b);
    h.clock.advance(30_000);
    assert.equal(h.ctx.consumerManager.scanNotActiveChannel(), 1);
    assert.deepEqual([notifies(b)], [['GE']]);
  });
});

describe('client management (34, 35, 38)', () => {
  it('HEART_BEAT registers the client, creates %RETRY%<group> (1 queue, perm 6) and the subscription group', async () => {
    h = await BrokerHarness.create();
    const r = await h.heartbeat('10.0.0.1@123', 'GID_A', 'TopicA', 'TagA || TagC');
    assert.equal(r.code, ResponseCode.SUCCESS);
    const retry = h.ctx.topicConfigManager.selectTopicConfig('%RETRY%GID_A')!;
    assert.deepEqual([retry.readQueueNums, retry.writeQueueNums, retry.perm], [1, 1, 6]);
    const sgc = h.ctx.subscriptionGroupManager.get('GID_A')!;
    assert.deepEqual([sgc.retryQueueNums, sgc.retryMaxTimes], [1, 16]);
    const sub = h.ctx.consumerManager.findSubscriptionData('GID_A', 'TopicA')!;
    assert.deepEqual(sub.tagsSet, ['TagA', 'TagC']);
    assert.deepEqual(sub.codeSet, [2598919, 2598921]);
    assert.deepEqual(await consumerList('GID_A'), { code: 0, remark: null, ids: ['10.0.0.1@123'] });
    assert.deepEqual(h.ctx.producerManager.clientIds('CLIENT_INNER_PRODUCER'), ['10.0.0.1@123']);
  });

  it('GET_CONSUMER_LIST_BY_GROUP with no live consumer: 1 "no consumer for this group"', async () => {
    h = await BrokerHarness.create();
    const r = await consumerList('Nobody');
    assert.equal(r.code, ResponseCode.SYSTEM_ERROR);
    assert.match(r.remark!, /^no consumer for this group/);
  });

  it('two clients on two connections are both listed; UNREGISTER_CLIENT removes one', async () => {
    h = await BrokerHarness.create();
    const c1 = new FakeChannel('10.0.0.1:1');
    const c2 = new FakeChannel('10.0.0.2:1');
    await h.heartbeat('10.0.0.1@1', 'G', 'T', '*', c1);
    await h.heartbeat('10.0.0.2@1', 'G', 'T', '*', c2);
    await h.heartbeat('10.0.0.1@1', 'G', 'T', '*', c1); // refresh does not duplicate
    assert.deepEqual((await consumerList('G')).ids, ['10.0.0.1@1', '10.0.0.2@1']);
    const r = await h.call(RequestCode.UNREGISTER_CLIENT, { clientID: '10.0.0.1@1', consumerGroup: 'G' }, null, c1);
    assert.equal(r.code, ResponseCode.SUCCESS);
    assert.deepEqual((await consumerList('G')).ids, ['10.0.0.2@1']);
    const p = await h.call(RequestCode.UNREGISTER_CLIENT, { clientID: '10.0.0.2@1', producerGroup: 'CLIENT_INNER_PRODUCER' }, null, c2);
    assert.equal(p.code, ResponseCode.SUCCESS);
    assert.deepEqual((await consumerList('G')).ids, ['10.0.0.2@1'], 'a producer unregister leaves the consumer');
  });

  it('a closed connection removes its client', async () => {
    h = await BrokerHarness.create();
    const c1 = new FakeChannel('10.0.0.1:1');
    await h.heartbeat('10.0.0.1@1', 'G', 'T', '*', c1);
    c1.close();
    assert.equal((await consumerList('G')).code, ResponseCode.SYSTEM_ERROR);
  });

  it('a client silent for more than 120 s is dropped by the scan', async () => {
    h = await BrokerHarness.create();
    const c1 = new FakeChannel('10.0.0.1:1');
    const c2 = new FakeChannel('10.0.0.2:1');
    await h.heartbeat('10.0.0.1@1', 'G', 'T', '*', c1);
    h.clock.advance(60_000);
    await h.heartbeat('10.0.0.2@1', 'G', 'T', '*', c2);
    h.clock.advance(60_001);
    assert.equal(h.ctx.consumerManager.scanNotActiveChannel(), 1);
    assert.deepEqual((await consumerList('G')).ids, ['10.0.0.2@1']);
    assert.equal(c1.closed, true);
  });

  it('a malformed heartbeat body is answered with 1 and a reason', async () => {
    h = await BrokerHarness.create();
    const r = await h.call(RequestCode.HEART_BEAT, null, Buffer.from('{not json'));
    assert.equal(r.code, ResponseCode.SYSTEM_ERROR);
    assert.match(r.remark!, /not valid JSON/);
    const none = await h.call(RequestCode.HEART_BEAT, null, null);
    assert.match(none.remark!, /missing/);
  });
});
