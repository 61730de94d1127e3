/**
 * The admin request codes mqadmin and the dashboard use (in-process broker, FakeMessageStore):
 * subscription groups (200/207/352), connections (203/204/328), broker → client calls (307/309),
 * broker config (25/26), runtime info (28), 351, 300/343, 314, 317, 305, 306.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import { BrokerHarness, FakeChannel } from './support/broker-harness.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { createResponseCommand } from '../../../src/remoting/protocol/commands.js';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';
import { newTopicConfig } from '../../../src/broker/topic/topic-config.js';

let h: BrokerHarness;
afterEach(async () => {
  await h?.close();
});

const json = (r: RemotingCommand): any => JSON.parse(r.body!.toString('utf8')); // (bodies of unknown shape)

/** A channel whose peer answers server-initiated requests with `answer` (or never, when null). */
class AnsweringChannel extends FakeChannel {
  readonly asked: RemotingCommand[] = [];
  constructor(private readonly answer: ((req: RemotingCommand) => RemotingCommand) | null) {
    super('127.0.0.1:50077');
  }
  invoke(request: RemotingCommand, timeoutMs: number): Promise<RemotingCommand> {
    this.asked.push(request);
    if (!this.answer) return Promise.reject(Object.assign(new Error(`timeout ${timeoutMs}`), { name: 'RemotingTimeoutError' }));
    return Promise.resolve(this.answer(request));
  }
}

describe('subscription groups: 200 create/update, 352 get, 207 delete', () => {
  it('round-trips every field incl. consumeMessageOrderly; illegal name → 29; delete with cleanOffset drops offsets', async () => {
    h = await BrokerHarness.create();
    const body = { groupName: 'GID_ORD', consumeMessageOrderly: true, retryMaxTimes: 3, consumeBroadcastEnable: false, retryQueueNums: 2, groupRetryPolicy: { type: 'CUSTOMIZED' } };
    assert.equal((await h.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, null, Buffer.from(JSON.stringify(body)))).code, ResponseCode.SUCCESS);
    const got = json(await h.call(RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, { group: 'GID_ORD' }));
    assert.equal(got.consumeMessageOrderly, true);
    assert.equal(got.retryMaxTimes, 3);
    assert.equal(got.consumeBroadcastEnable, false);
    assert.equal(got.retryQueueNums, 2);
    assert.equal(got.consumeEnable, true, 'missing fields take Apache defaults');
    const all = json(await h.call(RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, null));
    assert.equal(all.subscriptionGroupTable.GID_ORD.consumeMessageOrderly, true);

    const bad = await h.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, null, Buffer.from(JSON.stringify({ groupName: 'bad name!' })));
    assert.equal(bad.code, ResponseCode.INVALID_PARAMETER);
    const garbage = await h.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, null, Buffer.from('{nope'));
    assert.equal(garbage.code, ResponseCode.SYSTEM_ERROR);

    h.ctx.consumerOffsetManager.commitOffset('t', 'GID_ORD', 'T', 0, 5);
    assert.equal((await h.call(RequestCode.DELETE_SUBSCRIPTIONGROUP, { groupName: 'GID_ORD', cleanOffset: true })).code, ResponseCode.SUCCESS);
    const missing = await h.call(RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, { group: 'GID_ORD' });
    assert.equal(missing.code, ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST);
    assert.equal(h.ctx.consumerOffsetManager.queryOffset('GID_ORD', 'T', 0), -1);
  });
});

describe('225 UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (mqadmin updateSubGroupList)', () => {
  it('creates every group of the list with its fields; one illegal name → 29 and none is created; bad body → 1', async () => {
    h = await BrokerHarness.create();
    const list = { groupConfigList: [{ groupName: 'GL1', retryMaxTimes: 5, consumeFromMinEnable: true }, { groupName: 'GL2', consumeMessageOrderly: true, retryQueueNums: 2 }] };
    assert.equal((await h.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST, null, Buffer.from(JSON.stringify(list)))).code, ResponseCode.SUCCESS);
    const gl1 = json(await h.call(RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, { group: 'GL1' }));
    const gl2 = json(await h.call(RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, { group: 'GL2' }));
    assert.deepEqual([gl1.retryMaxTimes, gl1.consumeFromMinEnable, gl1.consumeMessageOrderly], [5, true, false]);
    assert.deepEqual([gl2.retryMaxTimes, gl2.consumeMessageOrderly, gl2.retryQueueNums], [16, true, 2]);
    const mixed = { groupConfigList: [{ groupName: 'GL3' }, { groupName: 'bad name!' }] };
    const bad = await h.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST, null, Buffer.from(JSON.stringify(mixed)));
    assert.equal(bad.code, ResponseCode.INVALID_PARAMETER);
    assert.match(bad.remark ?? '', /bad name!/);
    assert.equal((await h.call(RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, { group: 'GL3' })).code, ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST);
    for (const body of ['{nope', '{"groupConfigList":3}', '{"groupConfigList":[{"groupName":"GL4","retryMaxTimes":"x"}]}']) {
      assert.equal((await h.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST, null, Buffer.from(body))).code, ResponseCode.SYSTEM_ERROR, body);
    }
  });
});

describe('connections: 203 consumer, 204 producer', () => {
  it('live consumer with its subscription and settings; offline group → 206; producers listed', async () => {
    h = await BrokerHarness.create();
    await h.heartbeat('10.0.0.9@c1', 'GID_C', 'TopicC', 'TagA || TagB');
    const r = await h.call(RequestCode.GET_CONSUMER_CONNECTION_LIST, { consumerGroup: 'GID_C' });
    assert.equal(r.code, ResponseCode.SUCCESS);
    const cc = json(r);
    assert.deepEqual(cc.connectionSet, [{ clientAddr: '127.0.0.1:50001', clientId: '10.0.0.9@c1', language: 'JAVA', version: cc.connectionSet[0].version }]);
    assert.equal(cc.consumeType, 'CONSUME_PASSIVELY');
    assert.equal(cc.messageModel, 'CLUSTERING');
    assert.equal(cc.consumeFromWhere, 'CONSUME_FROM_LAST_OFFSET');
    assert.deepEqual(cc.subscriptionTable.TopicC.tagsSet, ['TagA', 'TagB']);
    assert.equal(cc.subscriptionTable.TopicC.compiledExpression, undefined);
    const off = await h.call(RequestCode.GET_CONSUMER_CONNECTION_LIST, { consumerGroup: 'NOBODY' });
    assert.equal(off.code, ResponseCode.CONSUMER_NOT_ONLINE);
    assert.equal(off.remark, 'the consumer group[NOBODY] not online');
    const p = json(await h.call(RequestCode.GET_PRODUCER_CONNECTION_LIST, { producerGroup: 'CLIENT_INNER_PRODUCER' }));
    assert.equal(p.connectionSet[0].clientId, '10.0.0.9@c1');
    assert.deepEqual(json(await h.call(RequestCode.GET_PRODUCER_CONNECTION_LIST, { producerGroup: 'NONE' })), { connectionSet: [] });
  });

  it('328 GET_ALL_PRODUCER_INFO: ProducerTableInfo of every live producer group (mqadmin producer -b)', async () => {
    h = await BrokerHarness.create();
    assert.deepEqual(json(await h.call(RequestCode.GET_ALL_PRODUCER_INFO, null)), { data: {} });
    await h.heartbeat('10.0.0.9@c1', 'GID_C', 'TopicC', '*');
    const r = await h.call(RequestCode.GET_ALL_PRODUCER_INFO, null);
    assert.equal(r.code, ResponseCode.SUCCESS);
    const data = json(r).data;
    assert.deepEqual(Object.keys(data), ['CLIENT_INNER_PRODUCER']);
    const [p] = data.CLIENT_INNER_PRODUCER;
    assert.deepEqual(p, { clientId: '10.0.0.9@c1', remoteIP: '/127.0.0.1:50001', language: 'JAVA', version: p.version, lastUpdateTimestamp: h.ctx.clock.nowMs() });
    assert.equal(typeof p.version, 'number');
  });
});

describe('307 / 309: the broker asks the client over its own channel', () => {
  it('forwards header (and for 309 the stored record), returns the client answer; not online → 1; timeout → 207', async () => {
    h = await BrokerHarness.create();
    const ch = new AnsweringChannel((req) => createResponseCommand(req, 0, null, null, Buffer.from(`{"asked":${req.code}}`)));
    await h.heartbeat('10.0.0.9@c2', 'GID_R', 'TopicR', '*', ch);
    const r = await h.call(RequestCode.GET_CONSUMER_RUNNING_INFO, { consumerGroup: 'GID_R', clientId: '10.0.0.9@c2', jstackEnable: false });
    assert.equal(r.code, ResponseCode.SUCCESS);
    assert.deepEqual(json(r), { asked: 307 });
    assert.equal(ch.asked[0]!.extFields!.clientId, '10.0.0.9@c2');

    await h.send('TopicR', 'direct');
    const msgId = (await h.ctx.store.lookMessageByOffset(0))!.msgId;
    const d = await h.call(RequestCode.CONSUME_MESSAGE_DIRECTLY, { consumerGroup: 'GID_R', clientId: '10.0.0.9@c2', msgId, topic: 'TopicR' });
    assert.deepEqual(json(d), { asked: 309 });
    const forwarded = ch.asked[1]!;
    assert.equal(forwarded.extFields!.brokerName, 'broker-a');
    assert.ok(forwarded.body && forwarded.body.includes(Buffer.from('direct')), 'the stored record goes to the client');

    const absent = await h.call(RequestCode.GET_CONSUMER_RUNNING_INFO, { consumerGroup: 'GID_R', clientId: 'nobody' });
    assert.equal(absent.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(absent.remark, 'The Consumer <GID_R> <nobody> not online');
  });
});

describe('broker config: 26 get, 25 update', () => {
  it('shows broker and store keys; an update is applied live and persisted; black list → 16; a bad value → 1 and nothing changes', async () => {
    h = await BrokerHarness.create();
    const text = (await h.call(RequestCode.GET_BROKER_CONFIG, null)).body!.toString();
    assert.match(text, /^brokerName=broker-a$/m);
    assert.match(text, /^mappedFileSizeCommitLog=\d+$/m);
    const up = await h.call(RequestCode.UPDATE_BROKER_CONFIG, null, Buffer.from('autoCreateTopicEnable=false\nnoSuchKey=1\n'));
    assert.equal(up.code, ResponseCode.SUCCESS);
    assert.equal(h.ctx.config.autoCreateTopicEnable, false, 'live BrokerConfig changed');
    assert.match((await h.call(RequestCode.GET_BROKER_CONFIG, null)).body!.toString(), /^autoCreateTopicEnable=false$/m);
    const file = join(h.ctx.config.storePathRootDir, 'config', 'broker.properties');
    assert.ok(existsSync(file));
    assert.match(readFileSync(file, 'utf8'), /^autoCreateTopicEnable=false$/m);
    assert.doesNotMatch(readFileSync(file, 'utf8'), /noSuchKey/, 'unknown keys are ignored (Apache)');
    const black = await h.call(RequestCode.UPDATE_BROKER_CONFIG, null, Buffer.from('brokerConfigPath=/etc/x'));
    assert.equal(black.code, ResponseCode.NO_PERMISSION);
    const bad = await h.call(RequestCode.UPDATE_BROKER_CONFIG, null, Buffer.from('brokerPermission=9'));
    assert.equal(bad.code, ResponseCode.SYSTEM_ERROR);
    assert.match(bad.remark!, /brokerPermission/);
    assert.equal(h.ctx.config.brokerPermission, 6);
  });

  it("shows the components' keys (transactions, timers, pop, controller, remoting) with their resolved values; an update of one is validated by its resolver and recorded for the next start", async () => {
    h = await BrokerHarness.create();
    const kv = (text: string): Map<string, string> => new Map(text.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    const before = kv((await h.call(RequestCode.GET_BROKER_CONFIG, null)).body!.toString());
    // Apache 5.3.3 defaults of keys Apache's getBrokerConfig lists
    assert.equal(before.get('transactionTimeOut'), '6000');
    assert.equal(before.get('transactionCheckInterval'), '30000');
    assert.equal(before.get('timerWheelEnable'), 'true');
    assert.equal(before.get('timerPrecisionMs'), '1000');
    assert.equal(before.get('enableControllerMode'), 'false');
    assert.equal(before.get('serverChannelMaxIdleTimeSeconds'), '120');
    assert.equal(before.get('enableDetailStat'), 'true');
    assert.equal(before.get('clientCallbackExecutorThreads'), String(availableParallelism()));
    assert.ok(before.has('maxPopPollingSize'));
    assert.equal(before.get('configBlackList'), 'configBlackList;brokerConfigPath', "Apache's default, the keys an update is refused for");
    const up = await h.call(RequestCode.UPDATE_BROKER_CONFIG, null, Buffer.from('transactionTimeOut=9000\n'));
    assert.equal(up.code, ResponseCode.SUCCESS);
    assert.equal(kv((await h.call(RequestCode.GET_BROKER_CONFIG, null)).body!.toString()).get('transactionTimeOut'), '9000');
    assert.match(readFileSync(join(h.ctx.config.storePathRootDir, 'config', 'broker.properties'), 'utf8'), /^transactionTimeOut=9000$/m);
    const bad = await h.call(RequestCode.UPDATE_BROKER_CONFIG, null, Buffer.from('timerPrecisionMs=-5\n'));
    assert.equal(bad.code, ResponseCode.SYSTEM_ERROR);
    assert.match(bad.remark!, /timerPrecisionMs/);
    assert.equal(kv((await h.call(RequestCode.GET_BROKER_CONFIG, null)).body!.toString()).get('timerPrecisionMs'), '1000', 'nothing changed');
  });

  it('autoCreateTopicEnable=false applied live: the next send to a missing topic gets 17 and creates nothing; true again creates it', async () => {
    h = await BrokerHarness.create();
    assert.equal((await h.send('AutoBefore', 'x')).code, ResponseCode.SUCCESS);
    assert.equal((await h.call(RequestCode.UPDATE_BROKER_CONFIG, null, Buffer.from('autoCreateTopicEnable=false'))).code, ResponseCode.SUCCESS);
    const refused = await h.send('AutoMissing', 'x');
    assert.equal(refused.code, ResponseCode.TOPIC_NOT_EXIST);
    assert.equal(h.ctx.topicConfigManager.selectTopicConfig('AutoMissing'), undefined);
    assert.equal((await h.send('AutoBefore', 'y')).code, ResponseCode.SUCCESS, 'existing topics still take messages');
    assert.equal((await h.call(RequestCode.UPDATE_BROKER_CONFIG, null, Buffer.from('autoCreateTopicEnable=true'))).code, ResponseCode.SUCCESS);
    assert.equal((await h.send('AutoMissing', 'x')).code, ResponseCode.SUCCESS);
  });
});

describe('28 runtime info, 351 topic config, 300/343 who consumes, 314 clone, 317 broker consume stats, 305 system topics, 306', () => {
  it('answer with the real broker state', async () => {
    h = await BrokerHarness.create();
    h.ctx.topicConfigManager.updateTopicConfig(newTopicConfig('TW', { readQueueNums: 2, writeQueueNums: 2 }));
    for (let i = 0; i < 3; i++) await h.send('TW', `m${i}`, { queueId: 0 });
    await h.pull('GID_W', 'TW', 0, 0);
    h.clock.advance(1000);
    h.ctx.consumerOffsetManager.commitOffset('t', 'GID_W', 'TW', 0, 3);

    const rt = json(await h.call(RequestCode.GET_BROKER_RUNTIME_INFO, null)).table;
    assert.equal(rt.putMessageTimesTotal, '3');
    assert.equal(rt.msgGetTotalTodayNow, '3');
    assert.equal(rt.commitLogMaxOffset, String(h.ctx.store.getMaxPhyOffset()));
    assert.ok(Number(rt.putTps.split(' ')[0]) > 0, rt.putTps);
    assert.equal(rt.getTransferedTps, rt.getTransferredTps);
    assert.equal(rt.commitLogConfirmOffset, undefined, "classic mode: Apache's key set, no confirm offset");

    const tc = json(await h.call(RequestCode.GET_TOPIC_CONFIG, { topic: 'TW' }));
    assert.equal(tc.topicName, 'TW');
    assert.equal(tc.writeQueueNums, 2);
    const none = await h.call(RequestCode.GET_TOPIC_CONFIG, { topic: 'NOPE' });
    assert.equal(none.code, ResponseCode.TOPIC_NOT_EXIST);
    assert.equal(none.remark, 'No topic in this broker. topic: NOPE');

    await h.heartbeat('10.0.0.9@c3', 'GID_LIVE', 'TW');
    assert.deepEqual(json(await h.call(RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, { topic: 'TW' })).groupList, ['GID_LIVE', 'GID_W']);
    assert.deepEqual(json(await h.call(RequestCode.QUERY_TOPICS_BY_CONSUMER, { group: 'GID_W' })).topicList, ['TW']);

    assert.equal((await h.call(RequestCode.CLONE_GROUP_OFFSET, { srcGroup: 'GID_W', destGroup: 'GID_W2', topic: '', offline: false })).code, ResponseCode.SUCCESS);
    assert.equal(h.ctx.consumerOffsetManager.queryOffset('GID_W2', 'TW', 0), 3, 'a blank topic clones every topic of the source');

    h.ctx.subscriptionGroupManager.findSubscriptionGroupConfig('GID_W');
    // MessageQueue object keys (fastjson form): not JSON.parse-able, checked as text
    const bcs = (await h.call(RequestCode.GET_BROKER_CONSUME_STATS, { isOrder: false })).body!.toString();
    assert.match(bcs, /^\{"brokerAddr":"[^"]+","consumeStatsList":\[/);
    assert.match(bcs, /\{"GID_W":\[\{"consumeTps":(\d+\.\d+),"offsetTable":\{\{"brokerName":"broker-a","queueId":0,"topic":"TW"\}:\{"brokerOffset":3,"consumerOffset":3,/);
    assert.ok(Number(/"GID_W":\[\{"consumeTps":([\d.]+)/.exec(bcs)![1]) > 0, 'the pull counted');
    assert.match(bcs, /"totalDiff":0,"totalInflightDiff":0\}$/);

    assert.ok(json(await h.call(RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER, null)).topicList.includes('TBW102'));
    assert.equal((await h.call(RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE, null)).code, ResponseCode.SUCCESS);
    assert.equal(h.ctx.store.getMaxOffsetInQueue('TW', 0), 3, 'a live queue is kept');
  });
});
