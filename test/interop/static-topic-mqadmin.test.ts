/**
 * Static topics (RIP-21) judged by Apache's tools and client 5.3.3 against two tsmq brokers
 * (broker-a, broker-b of cluster HaCluster, one nameserver; test/support/ha-cluster.ts). One JVM
 * (mqadmin-run.ts) runs, in order:
 *   updateStaticTopic -c (8 logic queues over both brokers) and -b broker-a (4 logic queues on one
 *   broker), topicRoute, a Java producer sending to both topics and push consumers receiving
 *   every message, topicStatus, remappingStaticTopic moving StaticB's queues to broker-b, a new
 *   producer sending to the moved queues and a new consumer group reading StaticB from the first
 *   offset (old items on broker-a, new on broker-b).
 * After the JVM: the mapping survives a restart of broker-a (topicQueueMapping.json, 351 with
 * lo=true, the route's topicQueueMappingByBroker). Skips without java/mvn.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { javaSkipReason } from './support/java-peers.js';
import { HaCluster } from '../support/ha-cluster.js';
import { LeanClient } from '../support/lean-client.js';
import { RequestCode } from '../../src/remoting/codes/request-code.js';
import { parseLenientJson } from '../../src/broker/config-file/lenient-json.js';
import { runMqadmin, type CmdResult, type MqadminRun, type Step } from './mqadmin/mqadmin-run.js';

const CLUSTER = 'HaCluster';
const T = 'StaticT';
const B = 'StaticB';
const MOCK_BROKER = '__syslo__global__';

function steps(): Step[] {
  return [
    { op: 'mqadmin', id: 'createC', args: ['updateStaticTopic', '-t', T, '-qn', '8', '-c', CLUSTER] },
    { op: 'mqadmin', id: 'createB', args: ['updateStaticTopic', '-t', B, '-qn', '4', '-b', 'broker-a'] },
    { op: 'mqadmin', id: 'routeT', args: ['topicRoute', '-t', T] },
    { op: 'produce', as: 'pT', group: 'StaticPG', topic: T, count: 16, tag: 'TagA', keyPrefix: 't' },
    { op: 'consume', group: 'StaticCG', topic: T, expect: 16 },
    { op: 'produce', as: 'pB', group: 'StaticPG', topic: B, count: 8, tag: 'TagB', keyPrefix: 'b' },
    { op: 'consume', group: 'StaticCGB', topic: B, expect: 8 },
    { op: 'mqadmin', id: 'statusT', args: ['topicStatus', '-t', T] },
    { op: 'mqadmin', id: 'remap', args: ['remappingStaticTopic', '-t', B, '-b', 'broker-b'] },
    { op: 'mqadmin', id: 'routeB', args: ['topicRoute', '-t', B] },
    // a new producer group: its own client instance, so a fresh route (the old one is 30 s stale)
    { op: 'produce', as: 'pB2', group: 'StaticPG2', topic: B, count: 8, tag: 'TagB', keyPrefix: 'b2' },
    { op: 'consume', group: 'StaticCGB2', topic: B, expect: 16 },
    { op: 'mqadmin', id: 'statusB', args: ['topicStatus', '-t', B] },
  ];
}

describe('static topics: mqadmin 5.3.3 updateStaticTopic / remappingStaticTopic and the Java 5.3.3 client against two tsmq brokers', { skip: javaSkipReason(), timeout: 300_000 }, () => {
  let cluster: HaCluster;
  let run: MqadminRun;

  before(async () => {
    cluster = await HaCluster.start();
    await cluster.startBroker({ name: 'broker-a', brokerName: 'broker-a', brokerId: 0, brokerRole: 'ASYNC_MASTER' });
    await cluster.startBroker({ name: 'broker-b', brokerName: 'broker-b', brokerId: 0, brokerRole: 'ASYNC_MASTER' });
    run = await runMqadmin('rocketmq5', { namesrvAddr: cluster.namesrvAddr }, steps());
  });

  after(async () => {
    await cluster?.close();
  });

  function cmd(id: string): CmdResult {
    const c = run.cmds.get(id);
    assert.ok(c, `step ${id} did not run; JVM stderr tail:\n${run.stderr.slice(-3000)}\n${cluster.logs(2000)}`);
    assert.doesNotMatch(c.err, /SubCommandException|MQBrokerException|MQClientException|NullPointerException|not supported/, `${id} failed:\n${c.err.slice(0, 3000)}\n--- stdout:\n${c.out.slice(0, 1500)}`);
    return c;
  }

  /** Route JSON printed by topicRoute (everything from the first '{'). */
  function routeOf(id: string): { brokerDatas: unknown[]; queueDatas: Array<{ brokerName: string; readQueueNums: number; writeQueueNums: number }>; topicQueueMappingByBroker: Record<string, { bname: string; totalQueues: number; currIdMap: Record<string, number> }> } {
    const out = cmd(id).out;
    // fastjson prints integer map keys bare ({0:0})
    return parseLenientJson(out.slice(out.indexOf('{'))) as ReturnType<typeof routeOf>;
  }

  it('updateStaticTopic -c: 8 logic queues, 4 physical queues on each broker, in the route with their currIdMap', () => {
    assert.match(cmd('createC').out, /The new mapping data is written to file/);
    const route = routeOf('routeT');
    const qd = new Map(route.queueDatas.map((q) => [q.brokerName, q]));
    assert.equal(qd.get('broker-a')?.writeQueueNums, 4);
    assert.equal(qd.get('broker-b')?.writeQueueNums, 4);
    const m = route.topicQueueMappingByBroker;
    assert.deepEqual(Object.keys(m).sort(), ['broker-a', 'broker-b']);
    const logicIds = [...Object.keys(m['broker-a']!.currIdMap), ...Object.keys(m['broker-b']!.currIdMap)].map(Number).sort((a, b) => a - b);
    assert.deepEqual(logicIds, [0, 1, 2, 3, 4, 5, 6, 7], 'each logic queue has one leader');
    assert.equal(m['broker-a']!.totalQueues, 8);
    for (const info of Object.values(m)) assert.deepEqual(Object.values(info.currIdMap).sort(), [0, 1, 2, 3]);
  });

  it('Java producer: 16 sends, logic queue ids and the mock broker name; push consumer received all 16', () => {
    const sent = run.sent.get('pT');
    assert.equal(sent?.ok, 16);
    assert.ok(Number(sent?.queueId) >= 0 && Number(sent?.queueId) < 8, `queueId ${sent?.queueId}`);
    assert.equal(sent?.queueOffset, '0', 'the first send to a logic queue is at logic offset 0');
    assert.ok((run.consumed.get('StaticCG') ?? 0) >= 16, `consumed ${run.consumed.get('StaticCG')}`);
    assert.equal(run.sent.get('pB')?.ok, 8);
    assert.ok((run.consumed.get('StaticCGB') ?? 0) >= 8, `consumed ${run.consumed.get('StaticCGB')}`);
  });

  it('topicStatus: one row per logic queue under the mock broker name, offsets adding up to the 16 sends', () => {
    const out = cmd('statusT').out;
    const rows = out.split('\n').map((l) => l.trim().split(/\s+/)).filter((r) => r[0] === MOCK_BROKER);
    assert.equal(rows.length, 8, out);
    const total = rows.reduce((s, r) => s + Number(r[3]) - Number(r[2]), 0);
    assert.equal(total, 16, out);
  });

  it('remappingStaticTopic: StaticB moves to broker-b; new sends land there at logic offsets >= 10000 and a new group reads all 16', () => {
    cmd('remap');
    const route = routeOf('routeB');
    const m = route.topicQueueMappingByBroker;
    assert.deepEqual(Object.keys(m['broker-b']!.currIdMap).map(Number).sort(), [0, 1, 2, 3]);
    assert.deepEqual(m['broker-a']!.currIdMap, {});
    const sent = run.sent.get('pB2');
    assert.equal(sent?.ok, 8);
    assert.ok(Number(sent?.queueOffset) >= 10_000, `queueOffset ${sent?.queueOffset}`);
    assert.equal(run.consumed.get('StaticCGB2'), 16);
    // topicStatus: 4 logic queues; min from the old items (logic 0), max from the new leaders (>= 10000)
    const rows = cmd('statusB').out.split('\n').map((l) => l.trim().split(/\s+/)).filter((r) => r[0] === MOCK_BROKER);
    assert.equal(rows.length, 4, cmd('statusB').out);
    for (const r of rows) {
      assert.equal(r[2], '0', `min offset: ${r.join(' ')}`);
      assert.ok(Number(r[3]) >= 10_000, `max offset: ${r.join(' ')}`);
    }
  });

  it('the mapping survives a restart: topicQueueMapping.json, 351 with lo=true and the route', async () => {
    await cluster.stop('broker-a');
    await cluster.startBroker(cluster.broker('broker-a').spec);
    const file = JSON.parse(readFileSync(join(cluster.broker('broker-a').storeDir, 'config', 'topicQueueMapping.json'), 'utf8'));
    const detail = file.topicQueueMappingInfoMap[T];
    assert.equal(detail.bname, 'broker-a');
    assert.equal(detail.totalQueues, 8);
    assert.equal(Object.keys(detail.hostedQueues).length, 4);
    const c = new LeanClient(cluster.addr('broker-a'));
    await c.ready;
    try {
      const r = await c.invoke(RequestCode.GET_TOPIC_CONFIG, { topic: T, lo: 'true' });
      assert.equal(r.code, 0, r.remark ?? '');
      const body = JSON.parse(r.body!.toString('utf8'));
      assert.equal(body.topicName, T);
      assert.equal(body.writeQueueNums, 4);
      assert.deepEqual(Object.keys(body.mappingDetail.hostedQueues).sort(), Object.keys(detail.hostedQueues).sort());
      const plain = JSON.parse((await c.invoke(RequestCode.GET_TOPIC_CONFIG, { topic: T })).body!.toString('utf8'));
      assert.equal(plain.mappingDetail, undefined, 'without lo=true: no mapping detail (Apache)');
    } finally {
      c.close();
    }
  });
});
