/**
 * Incremental topic registration across implementations, against Apache RocketMQ 5.3.3's
 * NamesrvStartup / BrokerStartup (Maven Central jars):
 *
 * - a tsmq broker registered with Apache's nameserver: each UPDATE_AND_CREATE_TOPIC reaches
 *   Apache's routes as a one-topic increment before the broker answers (a route query right after
 *   the answer finds it), the other topics (system ones, earlier ones) keep their routes, an
 *   update changes the route; Apache refuses a one-topic registration of a broker it does not
 *   know (SYSTEM_ERROR "register broker failed"), and the tsmq broker, forgotten by Apache's
 *   nameserver, then registers in full before answering;
 * - an Apache broker registered with tsmq's nameserver: Apache's updateTopic sends only that
 *   topic (registerIncrementBrokerData, before it answers) and tsmq merges it, keeping the rest.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerController } from '../../src/broker/broker-controller.js';
import { NamesrvController } from '../../src/namesrv/namesrv-controller.js';
import type { RegisterBrokerRequest } from '../../src/namesrv/route/route-types.js';
import { silentLogger } from '../../src/common/logging/logger.js';
import { RequestCode } from '../../src/remoting/codes/request-code.js';
import { LeanClient } from '../support/lean-client.js';
import { javaSkipReason } from './support/java-peers.js';
import { freePortTriple, startApacheBroker, startApacheNamesrv, waitRegistered, type ServerProc } from './support/apache-server.js';

const TOPIC_HEADER = { readQueueNums: 4, writeQueueNums: 4, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false };

/** brokerName → writeQueueNums of a topic's route, or null when the nameserver has none. */
async function route(ns: LeanClient, topic: string): Promise<Record<string, number> | null> {
  const r = await ns.invoke(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic });
  if (r.code !== 0) return null;
  // Apache's fastjson writes unquoted int keys elsewhere; queueDatas is plain JSON
  const m = /"queueDatas":(\[[^\]]*\])/.exec(r.body.toString('utf8'));
  const qds = JSON.parse(m![1]!) as Array<{ brokerName: string; writeQueueNums: number }>;
  return Object.fromEntries(qds.map((q) => [q.brokerName, q.writeQueueNums]));
}

describe('incremental topic registration with Apache RocketMQ 5.3.3', { skip: javaSkipReason(), timeout: 300_000 }, () => {
  let home: string;
  const stops: Array<() => Promise<void>> = [];

  before(() => {
    home = mkdtempSync(join(tmpdir(), 'tsmq-topicreg-interop-'));
  });
  after(async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('a tsmq broker with Apache\'s nameserver: each created topic gets its route, the others keep theirs', async () => {
    const nsPort = await freePortTriple();
    const nsHome = join(home, 'ns-a');
    mkdirSync(nsHome);
    const apacheNs: ServerProc = await startApacheNamesrv(nsHome, nsPort);
    stops.push(() => apacheNs.stop());
    const broker = await BrokerController.create({
      brokerConfig: { storePathRootDir: join(home, 'tsmq-store'), listenPort: '0', namesrvAddr: `127.0.0.1:${nsPort}`, brokerName: 'tsmq-b', brokerIP1: '127.0.0.1', mappedFileSizeCommitLog: String(1024 * 1024) },
      logger: silentLogger,
    });
    await broker.start();
    stops.push(() => broker.shutdown());
    const bc = new LeanClient(`127.0.0.1:${broker.port}`);
    const nc = new LeanClient(`127.0.0.1:${nsPort}`);
    await Promise.all([bc.ready, nc.ready]);
    stops.push(async () => { bc.close(); nc.close(); });

    for (let i = 0; i < 5; i++) {
      assert.equal((await bc.invoke(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: `TsmqReg${i}`, ...TOPIC_HEADER })).code, 0);
      assert.deepEqual(await route(nc, `TsmqReg${i}`), { 'tsmq-b': 4 }, `TsmqReg${i} routed by Apache's nameserver right after the answer`);
    }
    for (let i = 0; i < 5; i++) assert.deepEqual(await route(nc, `TsmqReg${i}`), { 'tsmq-b': 4 });
    assert.deepEqual(await route(nc, 'TBW102'), { 'tsmq-b': 8 }, 'a system topic of the first full registration is kept');
    assert.deepEqual(await route(nc, 'tsmq-b'), { 'tsmq-b': 1 });
    assert.equal((await bc.invoke(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: 'TsmqReg2', ...TOPIC_HEADER, readQueueNums: 8, writeQueueNums: 8 })).code, 0);
    assert.deepEqual(await route(nc, 'TsmqReg2'), { 'tsmq-b': 8 });
    assert.deepEqual(await route(nc, 'TsmqReg3'), { 'tsmq-b': 4 });

    // what Apache 5.3.3 answers a one-topic registration from a broker it does not know
    const body = Buffer.from(JSON.stringify({ topicConfigSerializeWrapper: { topicConfigTable: { Lone: { topicName: 'Lone', ...TOPIC_HEADER } }, dataVersion: { stateVersion: 0, timestamp: 1, counter: 1 } }, filterServerList: [] }));
    const lone = await nc.invoke(RequestCode.REGISTER_BROKER, { brokerName: 'ghost-b', brokerAddr: '127.0.0.1:1', clusterName: 'DefaultCluster', haServerAddr: '127.0.0.1:2', brokerId: 0, compressed: false, bodyCrc32: 0 }, body);
    assert.deepEqual([lone.code, lone.remark], [1, 'register broker failed']);
    assert.equal(await route(nc, 'Lone'), null);

    // Apache's nameserver forgets the tsmq broker (as after its restart): the next increment is
    // refused, and the broker registers in full before it answers
    assert.equal((await nc.invoke(RequestCode.UNREGISTER_BROKER, { brokerName: 'tsmq-b', brokerAddr: broker.ctx.brokerAddr, clusterName: 'DefaultCluster', brokerId: 0 })).code, 0);
    assert.equal(await route(nc, 'TsmqReg3'), null, 'forgotten');
    assert.equal((await bc.invoke(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: 'TsmqRegAfter', ...TOPIC_HEADER })).code, 0);
    assert.deepEqual(await route(nc, 'TsmqRegAfter'), { 'tsmq-b': 4 });
    assert.deepEqual(await route(nc, 'TsmqReg3'), { 'tsmq-b': 4 }, 'the full registration brought the others back');
  });

  it('an Apache broker with tsmq\'s nameserver: updateTopic sends only that topic, tsmq keeps the rest', async () => {
    const namesrv = new NamesrvController({ listenPort: 0, host: '127.0.0.1', logger: silentLogger });
    await namesrv.start();
    stops.push(() => namesrv.shutdown());
    const seen: string[][] = [];
    const real = namesrv.routes.registerBroker.bind(namesrv.routes);
    namesrv.routes.registerBroker = (req: RegisterBrokerRequest) => {
      seen.push([...(req.topicConfigWrapper?.topicConfigTable.keys() ?? [])].sort());
      return real(req);
    };
    const brokerPort = await freePortTriple();
    const bHome = join(home, 'apache-b');
    const store = join(bHome, 'store');
    mkdirSync(store, { recursive: true });
    const conf = join(bHome, 'broker.conf');
    writeFileSync(conf, ['brokerClusterName=DefaultCluster', 'brokerName=apache-b', 'brokerId=0', `namesrvAddr=127.0.0.1:${namesrv.port}`, `listenPort=${brokerPort}`, 'brokerIP1=127.0.0.1', `storePathRootDir=${store}`, `storePathCommitLog=${join(store, 'commitlog')}`, 'autoCreateTopicEnable=true', ''].join('\n'));
    const apacheBroker = await startApacheBroker(bHome, conf);
    stops.push(() => apacheBroker.stop());
    const nsAddr = `127.0.0.1:${namesrv.port}`;
    await waitRegistered(nsAddr, 'DefaultCluster', `127.0.0.1:${brokerPort}`);
    const bc = new LeanClient(`127.0.0.1:${brokerPort}`);
    const nc = new LeanClient(nsAddr);
    await Promise.all([bc.ready, nc.ready]);
    stops.push(async () => { bc.close(); nc.close(); });
    assert.ok(seen[0]!.length > 5 && seen[0]!.includes('TBW102'), `first registration is full: ${seen[0]!.join(',')}`);

    const n = seen.length;
    assert.equal((await bc.invoke(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: 'ApacheReg1', ...TOPIC_HEADER })).code, 0);
    // Apache registers the increment before it answers
    assert.deepEqual(seen.slice(n).filter((t) => t.length < 5), [['ApacheReg1']]);
    assert.deepEqual(await route(nc, 'ApacheReg1'), { 'apache-b': 4 });
    assert.equal((await bc.invoke(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: 'ApacheReg1', ...TOPIC_HEADER, readQueueNums: 2, writeQueueNums: 2 })).code, 0);
    assert.deepEqual(await route(nc, 'ApacheReg1'), { 'apache-b': 2 });
    assert.deepEqual(await route(nc, 'TBW102'), { 'apache-b': 8 }, 'the full registration\'s topics are kept');
    assert.deepEqual(await route(nc, 'apache-b'), { 'apache-b': 1 });
  });
});
