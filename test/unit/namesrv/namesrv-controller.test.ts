import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { crc32 } from 'node:zlib';
import { ManualClock } from '../../../src/common/time/clock.js';
import { NamesrvController } from '../../../src/namesrv/namesrv-controller.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import type { ExtFieldValue, RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';

interface Env {
  ns: NamesrvController;
  client: RemotingClient;
  clock: ManualClock;
  /** `version`: the request's MQVersion ordinal (default tsmq's, V4_9_4). */
  call(code: number, ext?: Record<string, ExtFieldValue> | null, body?: Buffer | null, version?: number): Promise<RemotingCommand>;
}

async function setup(t: TestContext): Promise<Env> {
  const clock = new ManualClock(1_000_000);
  const ns = new NamesrvController({ listenPort: 0, host: '127.0.0.1', clock });
  await ns.start();
  const client = new RemotingClient();
  t.after(async () => {
    await client.close();
    await ns.shutdown();
  });
  const addr = `127.0.0.1:${ns.port}`;
  return {
    ns, client, clock,
    call: (code, ext, body, version) => {
      const cmd = createRequestCommand(code, ext ?? null, body ?? null);
      if (version !== undefined) cmd.version = version;
      return client.invokeSync(addr, cmd, 3000);
    },
  };
}

function registerBody(topics: Record<string, [number, number]>, counter = 1): Buffer {
  const table: Record<string, unknown> = {};
  for (const [name, [nums, perm]] of Object.entries(topics)) {
    table[name] = { topicName: name, readQueueNums: nums, writeQueueNums: nums, perm, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false, attributes: {} };
  }
  return Buffer.from(JSON.stringify({
    topicConfigSerializeWrapper: { topicConfigTable: table, dataVersion: { stateVersion: 0, timestamp: 1700000000000, counter } },
    filterServerList: [],
  }));
}

function brokerHeader(brokerId = 0, brokerAddr = '127.0.0.1:10911'): Record<string, ExtFieldValue> {
  return { brokerName: 'broker-a', brokerAddr, clusterName: 'DefaultCluster', haServerAddr: '127.0.0.1:10912', brokerId, compressed: false };
}

test('REGISTER_BROKER then GET_ROUTEINFO_BY_TOPIC returns the exact route JSON', async (t) => {
  const { call } = await setup(t);
  const reg = await call(RequestCode.REGISTER_BROKER, brokerHeader(), registerBody({ TopicA: [4, 6], TBW102: [8, 7] }));
  assert.equal(reg.code, ResponseCode.SUCCESS);
  assert.equal(reg.body!.toString(), '{"table":{}}');
  assert.deepEqual(reg.extFields, {});
  const route = await call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'TopicA' });
  assert.equal(route.code, 0);
  assert.equal(
    route.body!.toString(),
    '{"brokerDatas":[{"brokerAddrs":{"0":"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],' +
      '"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}',
  );
});

test('slave registration is answered with the master and its HA address (strings)', async (t) => {
  const { call } = await setup(t);
  await call(RequestCode.REGISTER_BROKER, brokerHeader(), registerBody({ TopicA: [4, 6], Filler: [1, 6] }));
  const reg = await call(RequestCode.REGISTER_BROKER, { ...brokerHeader(1, '127.0.0.1:11911'), haServerAddr: '127.0.0.1:11912' }, registerBody({}));
  assert.deepEqual(reg.extFields, { haServerAddr: '127.0.0.1:10912', masterAddr: '127.0.0.1:10911' });
});

test('unknown topic: TBW102-derived route for a client below V4_0_0 (ali-ons 121: intentional) and for %RETRY%/%DLQ%, 17 for 4.x/5.x clients (Apache) and without TBW102', async (t) => {
  const { call: call4 } = await setup(t);
  // ali-ons sends version 121 (V3_4_9) in every request
  const call = (code: number, ext?: Record<string, ExtFieldValue> | null, body?: Buffer | null) => call4(code, ext, body, 121);
  const none = await call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'NewTopic' });
  assert.equal(none.code, ResponseCode.TOPIC_NOT_EXIST);
  assert.equal(none.remark, 'No topic route info in name server for the topic: NewTopic');
  assert.equal(none.body, null);
  await call(RequestCode.REGISTER_BROKER, brokerHeader(), registerBody({ TopicA: [4, 6], Filler: [1, 6] }));
  assert.equal((await call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'NewTopic' })).code, ResponseCode.TOPIC_NOT_EXIST);
  await call(RequestCode.REGISTER_BROKER, brokerHeader(), registerBody({ TopicA: [4, 6], TBW102: [8, 7] }, 2));
  const auto = await call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'BrandNewTopic' });
  assert.equal(auto.code, 0);
  assert.deepEqual(JSON.parse(auto.body!.toString()).queueDatas, [
    { brokerName: 'broker-a', perm: 6, readQueueNums: 4, topicSysFlag: 0, writeQueueNums: 4 },
  ]);
  // Java 4.9.8 (409), Go (317), tsmq's own (401), Java 5.3.3 (479): Apache's 17, the client falls back itself
  for (const version of [213, 317, 401, 409, 479]) {
    const r = await call4(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'BrandNewTopic' }, null, version);
    assert.deepEqual([r.code, r.remark], [ResponseCode.TOPIC_NOT_EXIST, 'No topic route info in name server for the topic: BrandNewTopic'], String(version));
    const retry = await call4(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: '%RETRY%G1' }, null, version);
    assert.deepEqual(JSON.parse(retry.body!.toString()).queueDatas, [{ brokerName: 'broker-a', perm: 6, readQueueNums: 1, topicSysFlag: 0, writeQueueNums: 1 }]);
  }
  assert.equal((await call4(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: '%DLQ%G1' }, null, 409)).code, ResponseCode.SUCCESS);
  assert.equal((await call4(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'BrandNewTopic' }, null, 212)).code, ResponseCode.SUCCESS, 'V3_9_9 and below: the route');
});

test('missing header fields and bad bodies give SYSTEM_ERROR with a clear remark', async (t) => {
  const { call } = await setup(t);
  const r1 = await call(RequestCode.GET_ROUTEINFO_BY_TOPIC, {});
  assert.equal(r1.code, ResponseCode.SYSTEM_ERROR);
  assert.equal(r1.remark, 'the custom field <topic> is null');
  const { brokerId: _omit, ...noId } = brokerHeader();
  const r2 = await call(RequestCode.REGISTER_BROKER, noId, registerBody({}));
  assert.equal(r2.remark, 'the custom field <brokerId> is null');
  const r3 = await call(RequestCode.REGISTER_BROKER, brokerHeader(), Buffer.from('{not json'));
  assert.equal(r3.code, ResponseCode.SYSTEM_ERROR);
  assert.match(r3.remark!, /^register broker body is not valid JSON/);
  const body = registerBody({ T: [1, 6], Filler: [1, 6] });
  const good = crc32(body) & 0x7fffffff;
  const r4 = await call(RequestCode.REGISTER_BROKER, { ...brokerHeader(), bodyCrc32: good ^ 1 }, body);
  assert.deepEqual([r4.code, r4.remark], [ResponseCode.SYSTEM_ERROR, 'crc32 not match']);
  const r5 = await call(RequestCode.REGISTER_BROKER, { ...brokerHeader(), bodyCrc32: good }, body);
  assert.equal(r5.code, ResponseCode.SUCCESS);
});

test('GET_BROKER_CLUSTER_INFO and GET_ALL_TOPIC_LIST_FROM_NAMESERVER', async (t) => {
  const { call } = await setup(t);
  await call(RequestCode.REGISTER_BROKER, brokerHeader(), registerBody({ TopicB: [1, 6], TopicA: [4, 6] }));
  const info = await call(RequestCode.GET_BROKER_CLUSTER_INFO);
  assert.equal(
    info.body!.toString(),
    '{"brokerAddrTable":{"broker-a":{"brokerAddrs":{"0":"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}},' +
      '"clusterAddrTable":{"DefaultCluster":["broker-a"]}}',
  );
  const list = await call(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER);
  assert.equal(list.body!.toString(), '{"topicList":["TopicA","TopicB"]}');
});

test('KV config: put, get, not found, list, delete', async (t) => {
  const { call } = await setup(t);
  const miss = await call(RequestCode.GET_KV_CONFIG, { namespace: 'NS', key: 'k' });
  assert.deepEqual([miss.code, miss.remark], [ResponseCode.QUERY_NOT_FOUND, 'No config item, Namespace: NS Key: k']);
  assert.equal((await call(RequestCode.PUT_KV_CONFIG, { namespace: 'NS', key: 'k', value: 'v' })).code, 0);
  const hit = await call(RequestCode.GET_KV_CONFIG, { namespace: 'NS', key: 'k' });
  assert.deepEqual([hit.code, hit.extFields], [0, { value: 'v' }]);
  assert.equal((await call(RequestCode.GET_KVLIST_BY_NAMESPACE, { namespace: 'NS' })).body!.toString(), '{"table":{"k":"v"}}');
  await call(RequestCode.DELETE_KV_CONFIG, { namespace: 'NS', key: 'k' });
  assert.equal((await call(RequestCode.GET_KV_CONFIG, { namespace: 'NS', key: 'k' })).code, ResponseCode.QUERY_NOT_FOUND);
  const listMiss = await call(RequestCode.GET_KVLIST_BY_NAMESPACE, { namespace: 'NS' });
  assert.deepEqual([listMiss.code, listMiss.remark], [ResponseCode.QUERY_NOT_FOUND, 'No config item, Namespace: NS']);
});

test('QUERY_DATA_VERSION, BROKER_HEARTBEAT and expiry under a manual clock', async (t) => {
  const { call, ns, clock } = await setup(t);
  // the broker uses its own connection: expiry closes it
  const brokerSide = new RemotingClient();
  t.after(() => brokerSide.close());
  const brokerCall = (code: number, ext: Record<string, ExtFieldValue>, body?: Buffer): Promise<RemotingCommand> =>
    brokerSide.invokeSync(`127.0.0.1:${ns.port}`, createRequestCommand(code, ext, body ?? null), 3000);
  await brokerCall(RequestCode.REGISTER_BROKER, brokerHeader(), registerBody({ TopicA: [4, 6], Filler: [1, 6] }, 7));
  const dv = (counter: number): Buffer => Buffer.from(JSON.stringify({ stateVersion: 0, timestamp: 1700000000000, counter }));
  const q1 = await brokerCall(RequestCode.QUERY_DATA_VERSION, brokerHeader(), dv(8));
  assert.deepEqual(q1.extFields, { changed: 'true' });
  assert.equal(q1.body!.toString(), '{"counter":7,"stateVersion":0,"timestamp":1700000000000}');

  clock.advance(100_000);
  const q2 = await brokerCall(RequestCode.QUERY_DATA_VERSION, brokerHeader(), dv(7)); // unchanged: refreshes
  assert.deepEqual(q2.extFields, { changed: 'false' });
  clock.advance(100_000);
  ns.scanNotActiveBroker();
  assert.equal((await call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'TopicA' })).code, 0);

  const hb = await brokerCall(RequestCode.BROKER_HEARTBEAT, { clusterName: 'DefaultCluster', brokerAddr: '127.0.0.1:10911', brokerName: 'broker-a' });
  assert.equal(hb.code, 0);
  clock.advance(120_000);
  ns.scanNotActiveBroker();
  assert.equal((await call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'TopicA' })).code, 0);
  clock.advance(1);
  ns.scanNotActiveBroker();
  assert.equal((await call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'TopicA' })).code, ResponseCode.TOPIC_NOT_EXIST);
});

test('UNREGISTER_BROKER and DELETE_TOPIC_IN_NAMESRV', async (t) => {
  const { call } = await setup(t);
  await call(RequestCode.REGISTER_BROKER, brokerHeader(), registerBody({ TopicA: [4, 6], TopicB: [4, 6] }));
  assert.equal((await call(RequestCode.DELETE_TOPIC_IN_NAMESRV, { topic: 'TopicB' })).code, 0);
  assert.equal((await call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'TopicB' })).code, ResponseCode.TOPIC_NOT_EXIST);
  const { compressed: _c, haServerAddr: _h, ...unreg } = brokerHeader();
  assert.equal((await call(RequestCode.UNREGISTER_BROKER, unreg)).code, 0);
  assert.equal((await call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'TopicA' })).code, ResponseCode.TOPIC_NOT_EXIST);
});

test('a broker whose registering connection closes is dropped at once', async (t) => {
  const { call, ns } = await setup(t);
  const brokerSide = new RemotingClient();
  t.after(() => brokerSide.close());
  const addr = `127.0.0.1:${ns.port}`;
  await brokerSide.invokeSync(addr, createRequestCommand(RequestCode.REGISTER_BROKER, brokerHeader(), registerBody({ TopicA: [4, 6], Filler: [1, 6] })), 3000);
  assert.equal((await call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'TopicA' })).code, 0);
  await brokerSide.close();
  for (let i = 0; i < 100 && ns.routes.brokerLiveTable.size > 0; i++) await sleep(5);
  assert.equal((await call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'TopicA' })).code, ResponseCode.TOPIC_NOT_EXIST);
});

test('expiry closes the expired broker\'s connection', async (t) => {
  const { ns, clock } = await setup(t);
  const brokerSide = new RemotingClient();
  t.after(() => brokerSide.close());
  const addr = `127.0.0.1:${ns.port}`;
  await brokerSide.invokeSync(addr, createRequestCommand(RequestCode.REGISTER_BROKER, brokerHeader(), registerBody({ TopicA: [4, 6], Filler: [1, 6] })), 3000);
  assert.equal(ns.server.channels.length, 1);
  clock.advance(120_001);
  ns.scanNotActiveBroker();
  for (let i = 0; i < 100 && ns.server.channels.length > 0; i++) await sleep(5);
  assert.equal(ns.server.channels.length, 0);
  assert.equal(ns.routes.brokerAddrTable.size, 0);
});

test('a one-topic REGISTER_BROKER from a broker id not registered → SYSTEM_ERROR "register broker failed", nothing recorded (Apache 5.3.3); after a full registration it merges', async (t) => {
  const { call, ns } = await setup(t);
  const refused = await call(RequestCode.REGISTER_BROKER, brokerHeader(), registerBody({ Incr: [2, 6] }));
  assert.deepEqual([refused.code, refused.remark], [ResponseCode.SYSTEM_ERROR, 'register broker failed']);
  assert.equal(ns.routes.brokerAddrTable.size, 0);
  assert.equal(ns.routes.clusterAddrTable.size, 0);
  assert.equal((await call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'Incr' })).code, ResponseCode.TOPIC_NOT_EXIST);
  // an empty table or two topics are accepted (Apache checks size == 1 only)
  assert.equal((await call(RequestCode.REGISTER_BROKER, brokerHeader(1, '127.0.0.1:11911'), registerBody({}))).code, ResponseCode.SUCCESS);
  assert.equal((await call(RequestCode.REGISTER_BROKER, brokerHeader(), registerBody({ A: [1, 6], B: [1, 6] }))).code, ResponseCode.SUCCESS);
  const merged = await call(RequestCode.REGISTER_BROKER, brokerHeader(), registerBody({ Incr: [2, 6] }, 2));
  assert.equal(merged.code, ResponseCode.SUCCESS);
  assert.equal((await call(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'Incr' })).code, ResponseCode.SUCCESS);
  // a known broker name but another (unregistered) id is refused too
  const other = await call(RequestCode.REGISTER_BROKER, brokerHeader(2, '127.0.0.1:12911'), registerBody({ Incr: [2, 6] }));
  assert.deepEqual([other.code, other.remark], [ResponseCode.SYSTEM_ERROR, 'register broker failed']);
});
