/**
 * Timers survive a master failover in controller mode (docs/failover.md), real processes: etcd +
 * `tsmq namesrv` + 2 `tsmq broker` replicas (enableControllerMode, allAckInSyncStateSet: an
 * acknowledged send is on both). The slave builds its own timer wheel from the replicated
 * rmq_sys_wheel_timer queue, bounded by the master's timer checkpoint (GET_TIMER_CHECK_POINT,
 * synced every second here), and never delivers.
 *
 * 1. N timers (delays 0.3–12 s) are sent to the master; the short ones fire before the kill.
 * 2. Both replicas answer GET_TIMER_CHECK_POINT with masterTimerQueueOffset N; the slave's read
 *    time follows the master's; GET_TIMER_METRICS of the slave equals the master's table.
 * 3. The slave's timerwheel equals the master's (units per slot) for every slot from 1 s ahead on.
 * 4. The master is SIGKILLed; the slave is elected and delivers every acknowledged timer, none
 *    before its time; duplicates (slots the old master delivered after its last synced
 *    checkpoint) are counted and must be few (bounded by the sync interval).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { EtcdGroupStore, type GroupView } from '../../../src/broker/controller/etcd-group-store.js';
import { EtcdServer, etcdSkipReason } from '../../support/etcd-server.js';
import { createTopic, HaCluster, waitUntil } from '../../support/ha-cluster.js';
import { LeanClient } from '../../support/lean-client.js';
import { checkpointOf, timerMetricsOf, wheelSlots } from '../../support/timer-replication.js';

const TOPIC = 'CtlTimerT';
const N = 200;
const REPLICAS = ['t1', 't2'];
const PRECISION_MS = 100;
const skip = etcdSkipReason();

describe('controller mode: pending timers survive a master SIGKILL', { skip: skip ?? false, timeout: 120_000 }, () => {
  let etcd: EtcdServer;
  let cluster: HaCluster;
  let group: EtcdGroupStore;
  const view = (): Promise<GroupView> => group.view();
  const nameOfAddr = (addr: string): string => REPLICAS.find((n) => cluster.addr(n) === addr) ?? addr;

  before(async () => {
    etcd = await EtcdServer.start();
    cluster = await HaCluster.start();
    group = new EtcdGroupStore([etcd.endpoint], '/tsmq/controller', 'HaCluster', 'ctlt', 2000);
    for (const [i, name] of REPLICAS.entries()) {
      await cluster.startBroker({
        name,
        brokerName: 'ctlt',
        brokerId: i + 1,
        brokerRole: 'SLAVE',
        conf: {
          enableControllerMode: 'true',
          etcdEndpoints: etcd.endpoint,
          etcdLeaseTtlSeconds: '2',
          allAckInSyncStateSet: 'true',
          slaveSynchronizeInterval: '1000',
          registerNameServerPeriod: '2000',
          timerPrecisionMs: String(PRECISION_MS),
          timerFlushIntervalMs: '200',
        },
      });
    }
    await waitUntil(
      async () => {
        const v = await view().catch(() => null);
        return !!v?.master && v.master.record.epochs !== null && v.syncStateSet?.masterEpoch === v.master.epoch && v.syncStateSet.members.length === 2;
      },
      30_000,
      () => `no master with both replicas in sync\n${cluster.logs(3000)}`,
    );
    for (const n of REPLICAS) await createTopic(cluster.addr(n), TOPIC, 1);
  });

  after(async () => {
    group?.close();
    await cluster?.close(process.env.TSMQ_HA_KEEP === '1');
    await etcd?.close();
  });

  it(`${N} timers: slave wheel = master wheel, every timer delivered by the new master, none early`, async () => {
    const masterAddr = (await view()).master!.record.addr;
    const master = nameOfAddr(masterAddr);
    const slave = REPLICAS.find((n) => n !== master)!;
    const slaveAddr = cluster.addr(slave);

    /** key → earliest allowed delivery (client time before the send + delay). */
    const due = new Map<string, number>();
    const c = new LeanClient(masterAddr);
    await c.ready;
    for (let i = 0; i < N; i += 20) {
      await Promise.all(
        Array.from({ length: 20 }, async (_, k) => {
          const key = `tm-${i + k}`;
          const delayMs = (i + k) % 10 === 0 ? 300 + ((i + k) % 7) * 50 : 6000 + (((i + k) * 37) % 6000);
          const t0 = Date.now();
          const r = await c.send(TOPIC, 0, Buffer.from(key), { KEYS: key, TIMER_DELAY_MS: String(delayMs), WAIT: 'true' }, 5000);
          assert.equal(r.code, 0, `send ${key}: ${r.code} ${r.remark}`);
          due.set(key, t0 + delayMs);
        }),
      );
    }
    c.close();
    const earlyOnes = [...due.values()].filter((d) => d < Date.now() + 5000).length;

    // (c) both answer GET_TIMER_CHECK_POINT; the slave took the master's offset and read time
    await waitUntil(async () => (await checkpointOf(masterAddr)).masterTimerQueueOffset === N, 10_000, () => 'master checkpoint never counted N entries');
    let slaveCp = await checkpointOf(slaveAddr);
    await waitUntil(
      async () => {
        slaveCp = await checkpointOf(slaveAddr);
        return slaveCp.masterTimerQueueOffset === N && slaveCp.lastTimerQueueOffset === N;
      },
      10_000,
      () => `slave checkpoint ${JSON.stringify(slaveCp)}\n${cluster.logs(2000)}`,
    );
    const masterCp = await checkpointOf(masterAddr);
    assert.ok(Math.abs(masterCp.lastReadTimeMs - slaveCp.lastReadTimeMs) <= 3000, `read times ${masterCp.lastReadTimeMs} vs ${slaveCp.lastReadTimeMs}`);
    let slaveMetrics: Record<string, { count: number }> = {};
    await waitUntil(
      async () => {
        slaveMetrics = await timerMetricsOf(slaveAddr);
        return JSON.stringify(slaveMetrics) === JSON.stringify(await timerMetricsOf(masterAddr));
      },
      10_000,
      () => `slave timer metrics ${JSON.stringify(slaveMetrics)}`,
    );

    // (b) the slave's wheel equals the master's from 1 s ahead on (both checkpoint every 200 ms)
    await new Promise((r) => setTimeout(r, 600));
    const from = Date.now() + 1000;
    const m = wheelSlots(cluster.broker(master).storeDir, PRECISION_MS, from, from + 60_000);
    const s = wheelSlots(cluster.broker(slave).storeDir, PRECISION_MS, from, from + 60_000);
    const pendingInWheel = [...m.values()].reduce((a, b) => a + b, 0);
    assert.ok(pendingInWheel > N / 2, `master wheel holds ${pendingInWheel} units ahead`);
    assert.deepEqual([...s.entries()].sort(), [...m.entries()].sort(), 'slave wheel (slot → units) differs from the master');

    // kill the master while most timers are pending
    const pendingAtKill = [...due.values()].filter((d) => d > Date.now()).length;
    const tKill = Date.now();
    await cluster.kill(master);
    await waitUntil(async () => (await view().catch(() => null))?.master?.record.replicaId === REPLICAS.indexOf(slave) + 1, 20_000, () => `slave not elected\n${cluster.logs(3000)}`);
    const failoverMs = Date.now() - tKill;

    // every timer delivered on the new master, none early
    const seen = new Map<string, number[]>();
    const reader = new LeanClient(slaveAddr);
    await reader.ready;
    let offset = 0;
    await waitUntil(
      async () => {
        for (;;) {
          const r = await reader.pull('GID_TIMER_CHECK', TOPIC, 0, offset, 32);
          if (r.code !== 0) break;
          for (let p = 0; p < r.body.length; ) {
            const msg = decodeRecord(r.body, p);
            const key = msg.properties.get('KEYS') ?? '';
            seen.set(key, [...(seen.get(key) ?? []), msg.storeTimestamp]);
            p += r.body.readInt32BE(p);
          }
          offset = Number(r.extFields.nextBeginOffset);
        }
        return [...due.keys()].every((k) => seen.has(k));
      },
      40_000,
      () => `missing ${[...due.keys()].filter((k) => !seen.has(k)).slice(0, 10).join(',')} of ${N}\n${cluster.logs(3000)}`,
    );
    reader.close();
    const early = [...seen].filter(([k, ts]) => ts.some((t) => t < due.get(k)!));
    assert.equal(early.length, 0, `delivered early: ${JSON.stringify(early.slice(0, 5).map(([k, ts]) => [k, due.get(k), ts]))}`);
    const duplicates = [...seen.values()].reduce((a, ts) => a + ts.length - 1, 0);
    const lateness = [...seen].map(([k, ts]) => Math.min(...ts) - due.get(k)!).sort((a, b) => a - b);
    // duplicates: only slots the old master delivered after the last checkpoint the slave synced
    // (sync every 1 s, checkpoint every 200 ms) — the short timers, at most
    assert.ok(duplicates <= earlyOnes, `${duplicates} duplicates > ${earlyOnes} timers due before the kill`);
    console.log(
      `controller timer failover: ${N} timers, ${pendingAtKill} pending at the kill, all ${seen.size} delivered by the new master, ` +
        `0 early, ${duplicates} duplicates, failover ${failoverMs} ms, lateness ms p50=${lateness[Math.floor(lateness.length / 2)]} max=${lateness.at(-1)}`,
    );
  });
});
