/**
 * Timers on a classic SLAVE (docs/ha.md, docs/internals/timer-store.md), real processes
 * (`tsmq namesrv`, SYNC_MASTER + SLAVE): the slave reads its replicated rmq_sys_wheel_timer
 * queue into its own wheel, bounded by the master's timer checkpoint (GET_TIMER_CHECK_POINT,
 * every second here), and never delivers: after N timers its checkpoint names the master's
 * offset N, its wheel equals the master's slot by slot, its TimerMetrics equal the master's
 * (GET_TIMER_METRICS), and once the timers fire the topic holds each exactly once on both.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTopic, HaCluster, queueMaxOffsets, waitUntil } from '../../support/ha-cluster.js';
import { LeanClient } from '../../support/lean-client.js';
import { checkpointOf, timerMetricsOf, wheelSlots } from '../../support/timer-replication.js';

const TOPIC = 'HaTimerT';
const N = 60;
const PRECISION_MS = 100;
const conf = { timerPrecisionMs: String(PRECISION_MS), timerFlushIntervalMs: '200', slaveSynchronizeInterval: '1000', registerNameServerPeriod: '1000' };

describe('classic master/slave: the slave builds the same timer wheel and never delivers', { timeout: 90_000 }, () => {
  let cluster: HaCluster;

  before(async () => {
    cluster = await HaCluster.start();
    await cluster.startBroker({ name: 'm', brokerName: 'hat', brokerId: 0, brokerRole: 'SYNC_MASTER', conf });
    await cluster.startBroker({ name: 's', brokerName: 'hat', brokerId: 1, brokerRole: 'SLAVE', conf });
    await createTopic(cluster.addr('m'), TOPIC, 1);
  });

  after(async () => {
    await cluster?.close(process.env.TSMQ_HA_KEEP === '1');
  });

  it(`${N} timers: slave checkpoint, wheel and metrics follow the master; delivered once`, async () => {
    const c = new LeanClient(cluster.addr('m'));
    await c.ready;
    await waitUntil(async () => (await c.send(TOPIC, 0, Buffer.from('probe'), { KEYS: 'probe', WAIT: 'true' }, 3000)).code === 0, 20_000, () => `master never acknowledged with the slave in sync\n${cluster.logs(2000)}`);
    const base = (await queueMaxOffsets(cluster.addr('m'), TOPIC, 1))[0]!; // probes (some stored while the slave was not in sync yet)
    // due 8–10.85 s after their send: the checks below must see all N still pending (with 4 s, at load 25 three had fired before the wheel was read)
    for (let i = 0; i < N; i++) {
      const r = await c.send(TOPIC, 0, Buffer.from(`t${i}`), { KEYS: `t${i}`, TIMER_DELAY_MS: String(8000 + (i % 20) * 150), WAIT: 'true' }, 3000);
      assert.equal(r.code, 0, `send t${i}: ${r.code} ${r.remark}`);
    }
    c.close();
    let cp = await checkpointOf(cluster.addr('s'));
    await waitUntil(
      async () => {
        cp = await checkpointOf(cluster.addr('s'));
        return cp.masterTimerQueueOffset === N && cp.lastTimerQueueOffset === N;
      },
      15_000,
      () => `slave checkpoint ${JSON.stringify(cp)}\n${cluster.logs(2000)}`,
    );
    await new Promise((r) => setTimeout(r, 500)); // both write their wheel at the next checkpoint (200 ms)
    const from = Date.now() + 1000;
    const m = wheelSlots(cluster.broker('m').storeDir, PRECISION_MS, from, from + 60_000);
    const s = wheelSlots(cluster.broker('s').storeDir, PRECISION_MS, from, from + 60_000);
    assert.equal([...m.values()].reduce((a, b) => a + b, 0), N, 'all N pending in the master wheel');
    assert.deepEqual([...s.entries()].sort(), [...m.entries()].sort(), 'slave wheel differs from the master');
    cp = await checkpointOf(cluster.addr('m'));
    await waitUntil(async () => JSON.stringify(await timerMetricsOf(cluster.addr('s'))) === JSON.stringify(await timerMetricsOf(cluster.addr('m'))), 10_000, () => 'slave timer metrics differ');
    assert.equal((await timerMetricsOf(cluster.addr('s')))[TOPIC]?.count, N);

    // the timers fire on the master only: each exactly once (after the probes) on both replicas
    let max = [-1];
    await waitUntil(async () => (max = await queueMaxOffsets(cluster.addr('m'), TOPIC, 1))[0] === base + N, 20_000, () => `master queue max ${max}, master checkpoint ${JSON.stringify(cp)}\n${cluster.logs(1500)}`);
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(await queueMaxOffsets(cluster.addr('m'), TOPIC, 1), [base + N]);
    assert.deepEqual(await queueMaxOffsets(cluster.addr('s'), TOPIC, 1), [base + N], 'the slave delivered nothing itself; it holds the master’s deliveries');
    await waitUntil(async () => (await checkpointOf(cluster.addr('s'))).lastReadTimeMs > from + 4000, 10_000, () => 'slave read time does not follow the master');
  });
});
