/**
 * Master/slave replication across processes on loopback: `tsmq namesrv` + `tsmq broker -c`
 * children (test/support/ha-cluster.ts). The slave learns its master's HA address from the
 * nameserver registration reply.
 *
 * 1. An empty slave catches up a backlog (64 MiB; 1 GiB with TSMQ_LONG=1) and the two
 *    CommitLogs are byte-for-byte equal.
 * 2. Continuous produce while the slave is SIGKILLed and restarted: every acknowledged message
 *    reaches the slave (queue max offsets equal, CommitLogs byte-equal).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTopic, firstCommitLogDifference, HaCluster, produce, queueMaxOffsets, storeOffsets, waitUntil } from '../../support/ha-cluster.js';

const LONG = process.env.TSMQ_LONG === '1';
const MiB = 1024 * 1024;
const SEGMENT = 16 * MiB;
const STORE_CONF = { mappedFileSizeCommitLog: String(SEGMENT), flushIntervalCommitLog: '100' };

describe('replication across processes', { timeout: LONG ? 1_800_000 : 150_000 }, () => {
  let cluster: HaCluster;

  before(async () => {
    cluster = await HaCluster.start();
  });

  after(async () => {
    await cluster?.close(process.env.TSMQ_HA_KEEP === '1');
  });

  it(`an empty slave catches up a ${LONG ? '1 GiB' : '64 MiB'} backlog; the CommitLogs are byte-equal`, async () => {
    const backlog = (LONG ? 1024 : 64) * MiB;
    const bodyBytes = LONG ? 16 * 1024 : 4 * 1024;
    await cluster.startBroker({ name: 'm1', brokerName: 'broker-a', brokerId: 0, brokerRole: 'ASYNC_MASTER', conf: STORE_CONF });
    const topic = 'HaBacklog';
    await createTopic(cluster.addr('m1'), topic, 4);
    const sent = await produce(cluster.addr('m1'), topic, { queues: 4, count: Math.ceil(backlog / bodyBytes), bodyBytes, window: 64 });
    assert.equal(sent.failed, 0, JSON.stringify(sent.codes));
    const masterMax = await queueMaxOffsets(cluster.addr('m1'), topic, 4);

    const t0 = Date.now();
    await cluster.startBroker({ name: 's1', brokerName: 'broker-a', brokerId: 1, brokerRole: 'SLAVE', conf: STORE_CONF });
    let slaveMax: number[] = [];
    await waitUntil(
      async () => {
        slaveMax = await queueMaxOffsets(cluster.addr('s1'), topic, 4);
        return slaveMax.every((v, i) => v === masterMax[i]);
      },
      LONG ? 900_000 : 90_000,
      () => `slave queues ${slaveMax} / master ${masterMax}\n${cluster.logs()}`,
    );
    const seconds = (Date.now() - t0) / 1000;
    console.log(`# catch-up of ${(backlog / MiB).toFixed(0)} MiB (${sent.acked} msgs) incl. slave start: ${seconds.toFixed(1)} s, ${(backlog / MiB / seconds).toFixed(1)} MiB/s`);

    await cluster.stop('s1');
    await cluster.stop('m1');
    const m = await storeOffsets(cluster.broker('m1').storeDir, STORE_CONF);
    const s = await storeOffsets(cluster.broker('s1').storeDir, STORE_CONF);
    assert.deepEqual(s, m);
    assert.ok(m.max >= backlog);
    assert.equal(firstCommitLogDifference(cluster.broker('m1').storeDir, cluster.broker('s1').storeDir, 0, m.max), -1);
  });

  it('continuous produce while the slave is SIGKILLed and restarted: every acked message reaches the slave', async () => {
    const conf = { ...STORE_CONF, mappedFileSizeCommitLog: String(4 * MiB) };
    await cluster.startBroker({ name: 'm2', brokerName: 'broker-c', brokerId: 0, brokerRole: 'ASYNC_MASTER', conf });
    await cluster.startBroker({ name: 's2', brokerName: 'broker-c', brokerId: 1, brokerRole: 'SLAVE', conf });
    const topic = 'HaContinuous';
    await createTopic(cluster.addr('m2'), topic, 4);
    let acked = 0;
    const producing = produce(cluster.addr('m2'), topic, { queues: 4, count: 40_000, bodyBytes: 1024, window: 8, onAck: () => acked++ });
    await waitUntil(() => acked >= 5000, 60_000, () => `acked ${acked}`);
    await cluster.kill('s2');
    const killedAt = acked;
    await waitUntil(() => acked >= killedAt + 5000, 60_000, () => `acked ${acked} while the slave is down`);
    await cluster.startBroker({ name: 's2', brokerName: 'broker-c', brokerId: 1, brokerRole: 'SLAVE', conf });
    const sent = await producing;
    assert.equal(sent.failed, 0, JSON.stringify(sent.codes));
    assert.equal(sent.acked, 40_000);
    const masterMax = await queueMaxOffsets(cluster.addr('m2'), topic, 4);
    assert.equal(masterMax.reduce((a, b) => a + b, 0), 40_000);
    let slaveMax: number[] = [];
    await waitUntil(
      async () => {
        slaveMax = await queueMaxOffsets(cluster.addr('s2'), topic, 4);
        return slaveMax.every((v, i) => v === masterMax[i]);
      },
      60_000,
      () => `slave queues ${slaveMax} / master ${masterMax}\n${cluster.logs()}`,
    );
    await cluster.stop('s2');
    await cluster.stop('m2');
    const m = await storeOffsets(cluster.broker('m2').storeDir, conf);
    const s = await storeOffsets(cluster.broker('s2').storeDir, conf);
    assert.deepEqual(s, m);
    assert.equal(firstCommitLogDifference(cluster.broker('m2').storeDir, cluster.broker('s2').storeDir, 0, m.max), -1);
  });
});
