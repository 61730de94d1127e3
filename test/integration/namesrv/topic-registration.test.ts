/**
 * A topic change registers only that topic with the nameserver (Apache 5.3.3
 * registerIncrementBrokerData), on a real tsmq broker + nameserver: the first registration
 * carries every topic; UPDATE_AND_CREATE_TOPIC, UPDATE_AND_CREATE_TOPIC_LIST and an
 * auto-create on send each carry only the changed topics (with the broker's new dataVersion);
 * the routes of all topics stay served, an update changes that topic's route, a deleted topic
 * (DELETE_TOPIC_IN_BROKER + DELETE_TOPIC_IN_NAMESRV) stays gone across a later full
 * registration (a brokerPermission change forces one). UPDATE_AND_CREATE_TOPIC answers after the
 * nameserver has the topic (a route query right after the answer finds it); a nameserver that
 * forgot the broker refuses the one-topic increment (SYSTEM_ERROR "register broker failed", as
 * Apache 5.3.3) and the broker registers in full before answering.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { NamesrvController } from '../../../src/namesrv/namesrv-controller.js';
import type { RegisterBrokerRequest } from '../../../src/namesrv/route/route-types.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { LeanClient } from '../../support/lean-client.js';
import { removeDir, tempDir } from '../../support/store-fixtures.js';
import { DelayProxy } from '../../support/delay-proxy.js';
import { TOPIC_REGISTRATION_ANSWER_WAIT_MS } from '../../../src/broker/processors/topic-admin-processors.js';

const TOPIC_HEADER = { readQueueNums: 4, writeQueueNums: 4, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false };

async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('topic registration: only the changed topics are registered', { timeout: 60_000 }, () => {
  let namesrv: NamesrvController;
  let broker: BrokerController;
  let brokerClient: LeanClient;
  let namesrvClient: LeanClient;
  let dir: string;
  /** Topic names of every REGISTER_BROKER the nameserver merged, in order. */
  const registrations: Array<{ topics: string[]; counter: number }> = [];

  const routeWriteQueues = async (topic: string): Promise<number | null> => {
    const r = await namesrvClient.invoke(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic });
    if (r.code !== 0) return null;
    const route = JSON.parse(r.body.toString('utf8')) as { queueDatas: Array<{ writeQueueNums: number }> };
    return route.queueDatas[0]!.writeQueueNums;
  };
  const registrationsAfter = async (n: number): Promise<Array<{ topics: string[]; counter: number }>> => {
    await until(`registration ${n + 1}`, () => registrations.length > n);
    await new Promise((r) => setTimeout(r, 100)); // a coalesced follow-up, if any
    return registrations.slice(n);
  };

  before(async () => {
    namesrv = new NamesrvController({ listenPort: 0, host: '127.0.0.1', logger: silentLogger });
    await namesrv.start();
    const real = namesrv.routes.registerBroker.bind(namesrv.routes);
    namesrv.routes.registerBroker = (req: RegisterBrokerRequest) => {
      registrations.push({ topics: [...(req.topicConfigWrapper?.topicConfigTable.keys() ?? [])].sort(), counter: req.topicConfigWrapper?.dataVersion.counter ?? -1 });
      return real(req);
    };
    dir = tempDir('tsmq-topic-registration-');
    broker = await BrokerController.create({
      brokerConfig: { storePathRootDir: dir, listenPort: '0', namesrvAddr: `127.0.0.1:${namesrv.port}`, brokerName: 'broker-reg', autoCreateTopicEnable: 'true', mappedFileSizeCommitLog: String(1024 * 1024) },
      logger: silentLogger,
    });
    await broker.start();
    brokerClient = new LeanClient(`127.0.0.1:${broker.port}`);
    namesrvClient = new LeanClient(`127.0.0.1:${namesrv.port}`);
    await Promise.all([brokerClient.ready, namesrvClient.ready]);
  });

  after(async () => {
    brokerClient?.close();
    namesrvClient?.close();
    await broker?.shutdown();
    await namesrv?.shutdown();
    if (dir) removeDir(dir);
  });

  it('the first registration carries every topic; each UPDATE_AND_CREATE_TOPIC carries only its topic', async () => {
    assert.equal(registrations.length, 1);
    const first = registrations[0]!.topics;
    assert.ok(first.includes('TBW102') && first.includes('broker-reg') && first.length >= 6, `system topics: ${first.join(',')}`);
    for (let i = 0; i < 20; i++) {
      const seen: number = registrations.length;
      const r = await brokerClient.invoke(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: `RegT${i}`, ...TOPIC_HEADER });
      assert.equal(r.code, 0, r.remark ?? '');
      assert.equal(registrations.length, seen + 1, 'registered before the answer');
      const regs = await registrationsAfter(seen);
      assert.deepEqual(regs.map((x) => x.topics), [[`RegT${i}`]]);
    }
    const counters = registrations.slice(1).map((x) => x.counter);
    assert.deepEqual(counters, [...counters].sort((a, b) => a - b), 'dataVersion counters increase');
    assert.ok(new Set(counters).size === counters.length);
    for (let i = 0; i < 20; i++) assert.equal(await routeWriteQueues(`RegT${i}`), 4, `route of RegT${i}`);
    for (const t of first) assert.notEqual(await routeWriteQueues(t), null, `route of ${t} kept`);
  });

  it('an update changes only that topic\'s route; the topic list and auto-create on send are increments too', async () => {
    let n = registrations.length;
    assert.equal((await brokerClient.invoke(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: 'RegT3', ...TOPIC_HEADER, readQueueNums: 8, writeQueueNums: 8 })).code, 0);
    assert.deepEqual((await registrationsAfter(n)).map((x) => x.topics), [['RegT3']]);
    assert.equal(await routeWriteQueues('RegT3'), 8);
    assert.equal(await routeWriteQueues('RegT4'), 4);

    n = registrations.length;
    const list = ['RegL1', 'RegL2', 'RegL3'].map((topic) => ({ topicName: topic, readQueueNums: 2, writeQueueNums: 2, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false, attributes: {} }));
    const r = await brokerClient.invoke(RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, {}, Buffer.from(JSON.stringify({ topicConfigList: list })));
    assert.equal(r.code, 0, r.remark ?? '');
    const regs = await registrationsAfter(n);
    assert.deepEqual(regs.flatMap((x) => x.topics).sort(), ['RegL1', 'RegL2', 'RegL3']);
    assert.ok(regs.every((x) => x.topics.length <= 3));
    for (const t of ['RegL1', 'RegL2', 'RegL3']) assert.equal(await routeWriteQueues(t), 2);

    n = registrations.length;
    const sent = await brokerClient.send('RegAuto', 0, Buffer.from('hello'));
    assert.equal(sent.code, 0, sent.remark ?? '');
    assert.deepEqual((await registrationsAfter(n)).map((x) => x.topics), [['RegAuto']]);
    assert.equal(await routeWriteQueues('RegAuto'), 4);
  });

  it('a deleted topic stays gone across a full registration', async () => {
    let n = registrations.length;
    assert.equal((await brokerClient.invoke(RequestCode.DELETE_TOPIC_IN_BROKER, { topic: 'RegT5' })).code, 0);
    assert.equal((await namesrvClient.invoke(RequestCode.DELETE_TOPIC_IN_NAMESRV, { topic: 'RegT5' })).code, 0);
    assert.equal(await routeWriteQueues('RegT5'), null);
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(registrations.length, n, 'a deletion registers nothing (Apache)');
    // brokerPermission change → full registration (Apache registerBrokerAll)
    assert.equal((await brokerClient.invoke(RequestCode.UPDATE_BROKER_CONFIG, {}, Buffer.from('brokerPermission=6\n'))).code, 0);
    const regs = await registrationsAfter(n);
    const full = regs.find((x) => x.topics.length > 20)!;
    assert.ok(full, 'a full registration followed');
    assert.ok(!full.topics.includes('RegT5'));
    assert.ok(full.topics.includes('RegT4') && full.topics.includes('RegAuto'));
    assert.equal(await routeWriteQueues('RegT5'), null);
    assert.equal(await routeWriteQueues('RegT3'), 8);
    n = registrations.length;
    assert.equal((await brokerClient.invoke(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: 'RegT5', ...TOPIC_HEADER, writeQueueNums: 2, readQueueNums: 2 })).code, 0);
    assert.deepEqual((await registrationsAfter(n)).map((x) => x.topics), [['RegT5']]);
    assert.equal(await routeWriteQueues('RegT5'), 2);
  });

  it('a nameserver that no longer knows the broker refuses the one-topic increment; the broker registers in full before it answers', async () => {
    const results: Array<{ topics: string[]; refused: boolean }> = [];
    const wrapped = namesrv.routes.registerBroker;
    namesrv.routes.registerBroker = (req: RegisterBrokerRequest) => {
      const r = wrapped(req);
      results.push({ topics: [...(req.topicConfigWrapper?.topicConfigTable.keys() ?? [])], refused: r === null });
      return r;
    };
    try {
      // as after a nameserver restart (or a broker expired by it)
      assert.equal((await namesrvClient.invoke(RequestCode.UNREGISTER_BROKER, { brokerName: 'broker-reg', brokerAddr: broker.ctx.brokerAddr, clusterName: 'DefaultCluster', brokerId: 0 })).code, 0);
      assert.equal(await routeWriteQueues('RegT1'), null, 'the nameserver forgot every topic of the broker');
      const r = await brokerClient.invoke(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: 'RegAfterForget', ...TOPIC_HEADER });
      assert.equal(r.code, 0, r.remark ?? '');
      assert.deepEqual(results.slice(0, 1), [{ topics: ['RegAfterForget'], refused: true }]);
      assert.equal(results.length, 2, 'the full registration followed before the answer');
      assert.equal(results[1]!.refused, false);
      assert.ok(results[1]!.topics.length > 20);
      assert.equal(await routeWriteQueues('RegAfterForget'), 4);
      assert.equal(await routeWriteQueues('RegT1'), 4, 'the other topics are back too');
    } finally {
      namesrv.routes.registerBroker = wrapped;
    }
  });
});

describe('UPDATE_AND_CREATE_TOPIC answers after the nameserver registration (bounded)', { timeout: 60_000 }, () => {
  let namesrv: NamesrvController;
  let proxy: DelayProxy;
  let broker: BrokerController;
  let brokerClient: LeanClient;
  let namesrvClient: LeanClient;
  let dir: string;

  before(async () => {
    namesrv = new NamesrvController({ listenPort: 0, host: '127.0.0.1', logger: silentLogger });
    await namesrv.start();
    proxy = await DelayProxy.start(namesrv.port);
    dir = tempDir('tsmq-topic-registration-slow-');
    broker = await BrokerController.create({
      brokerConfig: { storePathRootDir: dir, listenPort: '0', namesrvAddr: `127.0.0.1:${proxy.port}`, brokerName: 'broker-slow', mappedFileSizeCommitLog: String(1024 * 1024) },
      logger: silentLogger,
    });
    await broker.start();
    brokerClient = new LeanClient(`127.0.0.1:${broker.port}`);
    namesrvClient = new LeanClient(`127.0.0.1:${namesrv.port}`);
    await Promise.all([brokerClient.ready, namesrvClient.ready]);
  });

  after(async () => {
    if (proxy) proxy.delayMs = 0;
    brokerClient?.close();
    namesrvClient?.close();
    await broker?.shutdown();
    await proxy?.close();
    await namesrv?.shutdown();
    if (dir) removeDir(dir);
  });

  /** The topic's own route: 3 write queues (an unknown topic gets a TBW102-derived route of 4). */
  const routed = async (topic: string): Promise<boolean> => {
    const r = await namesrvClient.invoke(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic });
    return r.code === 0 && (JSON.parse(r.body.toString('utf8')) as { queueDatas: Array<{ writeQueueNums: number }> }).queueDatas[0]?.writeQueueNums === 3;
  };
  const HEADER3 = { ...TOPIC_HEADER, readQueueNums: 3, writeQueueNums: 3 };

  it('with a nameserver 400 ms away the route is there when the answer comes', async () => {
    proxy.delayMs = 400;
    for (const topic of ['SlowT1', 'SlowT2']) {
      const t0 = Date.now();
      const r = await brokerClient.invoke(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic, ...HEADER3 });
      assert.equal(r.code, 0, r.remark ?? '');
      assert.ok(Date.now() - t0 >= 400, `answered after ${Date.now() - t0} ms`);
      assert.equal(await routed(topic), true, `${topic} routed right after the answer`);
    }
    const list = ['SlowL1', 'SlowL2'].map((topicName) => ({ topicName, readQueueNums: 3, writeQueueNums: 3, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false, attributes: {} }));
    assert.equal((await brokerClient.invoke(RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, {}, Buffer.from(JSON.stringify({ topicConfigList: list })))).code, 0);
    assert.deepEqual([await routed('SlowL1'), await routed('SlowL2')], [true, true]);
  });

  it(`a nameserver that does not answer delays the answer by at most ${TOPIC_REGISTRATION_ANSWER_WAIT_MS} ms (SUCCESS); the registration completes later`, async () => {
    proxy.delayMs = Number.POSITIVE_INFINITY;
    const t0 = Date.now();
    const r = await brokerClient.invoke(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: 'StalledT', ...HEADER3 });
    const tookMs = Date.now() - t0;
    assert.equal(r.code, 0, r.remark ?? '');
    assert.ok(tookMs >= TOPIC_REGISTRATION_ANSWER_WAIT_MS - 50 && tookMs < TOPIC_REGISTRATION_ANSWER_WAIT_MS + 1500, `answered after ${tookMs} ms`);
    assert.equal(await routed('StalledT'), false);
    proxy.delayMs = 0;
    await until('StalledT routed once the nameserver answers', () => routed('StalledT'));
  });
});
