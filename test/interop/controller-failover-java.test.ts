/**
 * Apache RocketMQ 4.9.8's Java producer and push consumer (FailoverPeer, route refresh 1 s)
 * across a SIGKILL of the master of a controller-mode group: etcd + `tsmq namesrv` + 3 replicas
 * (allAckInSyncStateSet=true). The master is killed once the producer has been acknowledged for
 * a while; the peer produces for 15 s in all (about 12 s after the kill) and then drains its consumer.
 * Asserts: a new master with a higher epoch; production resumed within 10 s of the kill
 * (first acknowledged send after it) and went on; every acknowledged message was consumed
 * (at-least-once; redeliveries are counted, not failed).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EtcdGroupStore, type GroupView } from '../../src/broker/controller/etcd-group-store.js';
import { EtcdServer, etcdSkipReason } from '../support/etcd-server.js';
import { createTopic, HaCluster, queueMaxOffsets, waitUntil } from '../support/ha-cluster.js';
import { assertRanOk, buildPeer, javaSkipReason, runJava, type JavaRun } from './support/java-peers.js';

const REPLICAS = ['r1', 'r2', 'r3'];
const TOPIC = 'CtlFailoverJava';
const skip = javaSkipReason() || etcdSkipReason() || false;

describe('Apache 4.9.8 Java client across a controller-mode failover (SIGKILL of the master)', { skip, timeout: 240_000 }, () => {
  let etcd: EtcdServer;
  let cluster: HaCluster;
  let group: EtcdGroupStore;
  let v0: GroupView;
  let v1: GroupView;
  let run: JavaRun;
  let killedAt = 0;
  const idOf = (name: string): number => REPLICAS.indexOf(name) + 1;

  before(async () => {
    const peer = buildPeer('rocketmq4');
    etcd = await EtcdServer.start();
    cluster = await HaCluster.start();
    group = new EtcdGroupStore([etcd.endpoint], '/tsmq/controller', 'HaCluster', 'ctl', 2000);
    for (const n of REPLICAS) {
      await cluster.startBroker({ name: n, brokerName: 'ctl', brokerId: idOf(n), brokerRole: 'SLAVE', conf: { enableControllerMode: 'true', etcdEndpoints: etcd.endpoint, allAckInSyncStateSet: 'true', registerNameServerPeriod: '2000' } });
    }
    await waitUntil(
      async () => {
        const v = await group.view().catch(() => null);
        if (v?.master && v.master.record.epochs !== null && v.syncStateSet?.masterEpoch === v.master.epoch && v.syncStateSet.members.length === 3) v0 = v;
        return !!v0;
      },
      30_000,
      () => `no full sync state set\n${cluster.logs(2000)}`,
    );
    for (const n of REPLICAS) await createTopic(cluster.addr(n), TOPIC, 4);
    const masterName = REPLICAS[v0.master!.record.replicaId - 1]!;
    const running = runJava(await peer, 'tsmq.interop.FailoverPeer', [cluster.namesrvAddr, `topic=${TOPIC}`, 'durationMs=15000', 'pollMs=1000', 'drainMs=60000'], { timeoutMs: 200_000 });
    // kill once the producer has been acknowledged for ~2 s (JVM start-up time varies)
    await waitUntil(async () => (await queueMaxOffsets(cluster.addr(masterName), TOPIC, 4)).reduce((a, b) => a + Math.max(0, b), 0) > 0, 60_000, () => 'the Java producer never sent');
    await new Promise((r) => setTimeout(r, 2000));
    killedAt = Date.now();
    await cluster.kill(masterName);
    await waitUntil(
      async () => {
        const v = await group.view().catch(() => null);
        if (v?.master && v.master.record.replicaId !== v0.master!.record.replicaId && v.master.record.epochs !== null) v1 = v;
        return !!v1;
      },
      30_000,
      () => `no new master\n${cluster.logs(2000)}`,
    );
    run = await running;
    assertRanOk(run, 'FailoverPeer');
  });

  after(async () => {
    group?.close();
    await cluster?.close();
    await etcd?.close();
  });

  it('a new master with a higher epoch; production resumes within 10 s and every ack is consumed', () => {
    assert.ok(v1.master!.epoch > v0.master!.epoch);
    const acks = run.lines.filter((l) => l.type === 'ack');
    const before = acks.filter((l) => (l.t as number) < killedAt);
    const afterKill = acks.filter((l) => (l.t as number) > killedAt);
    assert.ok(before.length > 50, `acked before the kill: ${before.length}`);
    assert.ok(afterKill.length > 50, `acked after the kill: ${afterKill.length}`);
    const resumeMs = (afterKill[0]!.t as number) - killedAt;
    const summary = run.lines.find((l) => l.type === 'summary')!;
    console.log(`Java 4.9.8 across SIGKILL of replica ${v0.master!.record.replicaId}: new master ${v1.master!.record.replicaId} epoch ${v0.master!.epoch} → ${v1.master!.epoch}; first ack ${resumeMs} ms after the kill; ${JSON.stringify(summary)}`);
    assert.ok(resumeMs <= 10_000, `production resumed only ${resumeMs} ms after the kill`);
    assert.equal(summary.acked, acks.length);
    assert.equal(summary.missingCount, 0, `acknowledged but never consumed: ${JSON.stringify(summary.missing)}`);
  });
});
