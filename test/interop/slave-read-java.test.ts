/**
 * A topic auto-created on the master is readable from its slave at once (docs/ha.md "Topics on
 * a slave"; src/broker/ha/replica-topic-learner.ts), judged by Apache RocketMQ 4.9.8's Java
 * client: `tsmq namesrv` + classic ASYNC_MASTER + SLAVE processes, the slave's periodic sync
 * pushed out to 10 min (slaveSynchronizeInterval=600000) so only the fix can give it the topic.
 *
 * 1. The Java producer auto-creates the topic on the master (TBW102) and sends SYNC and ASYNC.
 * 2. Once the slave holds every message (queue max offsets equal), the master is SIGKILLed.
 * 3. A Java lite-pull consumer (CONSUME_FROM_FIRST_OFFSET) reads from the slave: every
 *    acknowledged key arrives with the right body, and no PULL_MESSAGE is answered
 *    TOPIC_NOT_EXIST (17). Before the fix the slave answered 17 until its next periodic sync.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HaCluster, queueMaxOffsets, waitUntil } from '../support/ha-cluster.js';
import { assertRanOk, buildPeer, javaSkipReason, runJava, type JavaRun } from './support/java-peers.js';

const TOPIC = 'SlaveReadAutoCreated';
const skip = javaSkipReason() || false;
type Line = Record<string, unknown>;
const linesOf = (run: JavaRun, type: string): Line[] => run.lines.filter((l) => l.type === type);

describe('Apache 4.9.8 Java consumer reads an auto-created topic from the slave after the master died', { skip, timeout: 180_000 }, () => {
  let cluster: HaCluster;
  let produced: JavaRun;
  let consumed: JavaRun;

  before(async () => {
    const peer = buildPeer('rocketmq4');
    cluster = await HaCluster.start();
    await cluster.startBroker({ name: 'm1', brokerName: 'broker-a', brokerId: 0, brokerRole: 'ASYNC_MASTER', conf: { registerNameServerPeriod: '2000' } });
    await cluster.startBroker({ name: 's1', brokerName: 'broker-a', brokerId: 1, brokerRole: 'SLAVE', conf: { registerNameServerPeriod: '2000', slaveSynchronizeInterval: '600000' } });
    // the slave's start-up sync rounds (on the master address, then after 3 s) are over before the topic exists
    await new Promise((r) => setTimeout(r, 4000));
    produced = await runJava(await peer, 'tsmq.interop.ClientPeer', [cluster.namesrvAddr, 'produce', `topic=${TOPIC}`, 'n=10', 'orderIds=1', 'perOrder=1'], { timeoutMs: 90_000 });
    assertRanOk(produced, 'producer');
    const master = await queueMaxOffsets(cluster.addr('m1'), TOPIC, 4);
    let slave: number[] = [];
    await waitUntil(
      async () => {
        slave = await queueMaxOffsets(cluster.addr('s1'), TOPIC, 4);
        return slave.every((v, i) => v === master[i]);
      },
      30_000,
      () => `slave queues ${slave} / master ${master}\n${cluster.logs()}`,
    );
    await new Promise((r) => setTimeout(r, 2500)); // the nameserver holds the master's registration of the topic
    await cluster.kill('m1');
    consumed = await runJava(await peer, 'tsmq.interop.ClientPeer', [cluster.namesrvAddr, 'lite-pull', `topic=${TOPIC}`, 'group=GID_SLAVE_READ', 'expect=20', 'timeoutMs=30000', 'idleMs=1500'], { timeoutMs: 90_000 });
    assertRanOk(consumed, 'consumer');
  });

  after(async () => {
    await cluster?.close();
  });

  it('every acknowledged message is consumed from the slave, with its body', () => {
    const acked = linesOf(produced, 'sent')
      .filter((l) => (l.mode === 'sync' || l.mode === 'async') && l.status === 'SEND_OK')
      .map((l) => l.key as string);
    assert.equal(acked.length, 20, `producer: ${produced.stdout.slice(-2000)}`);
    const recv = linesOf(consumed, 'recv');
    const keys = new Set(recv.map((l) => l.key as string));
    const missing = acked.filter((k) => !keys.has(k));
    assert.deepEqual(missing, [], `missing from the slave; consumer output:\n${consumed.stdout.slice(-3000)}\n${cluster.logs(3000)}`);
    assert.ok(recv.every((l) => l.bodyOk === true), 'a body differs');
  });

  it('the slave never answered a pull with TOPIC_NOT_EXIST (17)', () => {
    const pull = linesOf(consumed, 'rpc').find((l) => l.code === 11);
    const responses = (pull?.responses as Record<string, number> | undefined) ?? {};
    assert.ok((responses['0'] ?? 0) > 0, `no successful pull: ${JSON.stringify(pull)}`);
    assert.equal(responses['17'], undefined, `PULL_MESSAGE responses ${JSON.stringify(responses)}`);
  });
});
