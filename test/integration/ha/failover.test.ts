/**
 * SYNC_MASTER failover across processes, with the real `ali-ons` client:
 *
 *   namesrv, broker-a = master (SYNC_MASTER) + slave (brokerId 1), broker-b = master only.
 *
 * - B32 on the wire: a bogus HA report beyond the master max closes that connection; with no
 *   real slave a send gets SLAVE_NOT_AVAILABLE (11), not SEND_OK.
 * - Every SEND_OK of broker-a is on the slave when the master is SIGKILLed (pulls from the slave).
 * - A consumer group keeps working with the master down: it reads broker-a from the slave,
 *   starting at the offsets it committed to the master (synced to the slave: no redelivery).
 * - Sends fail over to broker-b.
 * - With slaveReadEnable and accessMessageInMemoryMaxRatio=0 the master suggests brokerId 1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { createConsumer, newMessage, startProducer, type OnsConsumer, type OnsMessage, type OnsProducer } from '../../support/ali-ons-client.js';
import { consumerOffsets, createTopic, HaCluster, queueMaxOffsets, RawHAPeer, waitUntil } from '../../support/ha-cluster.js';
import { LeanClient } from '../../support/lean-client.js';

const TOPIC = 'HaFailover';
const GROUP = 'GID_HA_FAILOVER';
const QUEUES = 2;
const FAST = { pollNameServerInteval: 1000, persistConsumerOffsetInterval: 500, rebalanceInterval: 2000, heartbeatBrokerInterval: 2000 };

/** Every record key found on `addr` for TOPIC, by raw pulls from offset 0. */
async function keysOn(addr: string): Promise<Set<string>> {
  const keys = new Set<string>();
  const c = new LeanClient(addr);
  await c.ready;
  try {
    for (let q = 0; q < QUEUES; q++) {
      let offset = 0;
      for (;;) {
        const r = await c.pull('GID_HA_INSPECT', TOPIC, q, offset, 32);
        if (r.code !== 0) break;
        let at = 0;
        while (at < r.body.length) {
          const m = decodeRecord(r.body, at);
          keys.add(m.properties.get('KEYS') ?? '');
          at += r.body.readInt32BE(at);
        }
        offset = Number(r.extFields.nextBeginOffset);
      }
    }
  } finally {
    c.close();
  }
  return keys;
}

/**
 * ali-ons' close can hang or give up when a broker it knows is dead (the killed master) and
 * then leaves its scheduled loops running, which keeps this process alive.
 */
async function closeOns(client: OnsProducer | OnsConsumer): Promise<void> {
  const mq = client._mqClient;
  await Promise.race([client.close().catch(() => undefined), new Promise((r) => setTimeout(r, 5000).unref())]);
  if (mq && mq._inited) {
    // still running: stop its scheduled loops and sockets by hand
    mq._inited = false;
    for (const ch of mq._channels?.values?.() ?? []) ch.close?.();
  }
}

describe('SYNC_MASTER failover with ali-ons', { timeout: 150_000 }, () => {
  let cluster: HaCluster;
  let producer: OnsProducer | null = null;
  const consumers: OnsConsumer[] = [];

  before(async () => {
    cluster = await HaCluster.start();
  });

  after(async () => {
    for (const c of consumers) await closeOns(c);
    if (producer) await closeOns(producer);
    await cluster?.close(process.env.TSMQ_HA_KEEP === '1');
  });

  it('acknowledged messages survive a master crash; consumers read the slave; sends go to broker-b', async () => {
    const masterConf = { slaveReadEnable: 'true', accessMessageInMemoryMaxRatio: '0', slaveTimeout: '3000' };
    await cluster.startBroker({ name: 'master-a', brokerName: 'broker-a', brokerId: 0, brokerRole: 'SYNC_MASTER', conf: masterConf });
    await cluster.startBroker({ name: 'master-b', brokerName: 'broker-b', brokerId: 0, brokerRole: 'ASYNC_MASTER' });
    await createTopic(cluster.addr('master-a'), TOPIC, QUEUES);
    await createTopic(cluster.addr('master-b'), TOPIC, QUEUES);

    // B32 over the wire, before any slave exists
    const bogus = await RawHAPeer.connect(cluster.broker('master-a').haListenPort);
    bogus.report(1_000_000);
    await bogus.closedPromise;
    assert.equal(bogus.received.length, 12, 'truncation hint, then close');
    const lean = new LeanClient(cluster.addr('master-a'));
    await lean.ready;
    const lonely = await lean.send(TOPIC, 0, Buffer.from('no slave yet'), { KEYS: 'lonely', WAIT: 'true' });
    assert.equal(lonely.code, 11, 'SLAVE_NOT_AVAILABLE');

    await cluster.startBroker({ name: 'slave-a', brokerName: 'broker-a', brokerId: 1, brokerRole: 'SLAVE', conf: { slaveReadEnable: 'true', slaveSynchronizeInterval: '500' } });
    await waitUntil(async () => (await lean.send('HaProbe', 0, Buffer.from('probe'), { WAIT: 'true' })).code === 0, 20_000, () => `slave not attached\n${cluster.logs()}`);
    lean.close();

    producer = await startProducer(cluster.namesrvAddr, 'PID_HA_FAILOVER', { ...FAST, instanceName: 'ha-producer' });
    producer.on('error', () => undefined); // connection errors to the killed master are expected
    const sendAll = async (prefix: string, n: number): Promise<Array<{ key: string; broker: string; status: string }>> => {
      const out = [];
      for (let i = 0; i < n; i++) {
        const key = `${prefix}-${i}`;
        const r = await producer!.send(newMessage(TOPIC, 'T', Buffer.from(`body of ${key}`), [key]));
        out.push({ key, broker: String(r.messageQueue.brokerName), status: String(r.sendStatus) });
      }
      return out;
    };
    const phase1 = await sendAll('p1', 60);
    assert.deepEqual([...new Set(phase1.map((r) => r.status))], ['SEND_OK']);
    assert.ok(phase1.some((r) => r.broker === 'broker-a') && phase1.some((r) => r.broker === 'broker-b'));

    // the master points slow consumers to the slave (lag > 0 % of RAM)
    const probe = new LeanClient(cluster.addr('master-a'));
    await probe.ready;
    const pulled = await probe.pull('GID_HA_INSPECT', TOPIC, 0, 0, 1);
    probe.close();
    assert.equal(pulled.code, 0);
    assert.equal(pulled.extFields.suggestWhichBrokerId, '1');

    const seen1 = new Set<string>();
    const g1 = createConsumer(cluster.namesrvAddr, GROUP, { ...FAST, instanceName: 'ha-consumer-1' });
    consumers.push(g1);
    g1.subscribe(TOPIC, '*', async (msg: OnsMessage) => void seen1.add(msg.keys));
    await g1.ready();
    await waitUntil(() => phase1.every((r) => seen1.has(r.key)), 60_000, () => `G1 got ${seen1.size}/${phase1.length}`);
    // committed to both masters and synced to the slave
    const maxA = await queueMaxOffsets(cluster.addr('master-a'), TOPIC, QUEUES);
    const maxB = await queueMaxOffsets(cluster.addr('master-b'), TOPIC, QUEUES);
    await waitUntil(
      async () => {
        const a = await consumerOffsets(cluster.addr('master-a'), GROUP, TOPIC, QUEUES);
        const s = await consumerOffsets(cluster.addr('slave-a'), GROUP, TOPIC, QUEUES);
        const b = await consumerOffsets(cluster.addr('master-b'), GROUP, TOPIC, QUEUES);
        return a.every((v, i) => v === maxA[i]) && s.every((v, i) => v === maxA[i]) && b.every((v, i) => v === maxB[i]);
      },
      30_000,
      () => `offsets not committed/synced (max a ${maxA}, b ${maxB})`,
    );
    await closeOns(g1);
    consumers.length = 0;

    const phase2 = await sendAll('p2', 60);
    assert.deepEqual([...new Set(phase2.map((r) => r.status))], ['SEND_OK'], 'SYNC_MASTER acks only what the slave holds');

    await cluster.kill('master-a');

    const onSlave = await keysOn(cluster.addr('slave-a'));
    const ackedA = [...phase1, ...phase2].filter((r) => r.broker === 'broker-a').map((r) => r.key);
    assert.ok(ackedA.length > 20);
    assert.deepEqual(ackedA.filter((k) => !onSlave.has(k)), [], 'every acknowledged message of broker-a is on the slave');

    const seen2 = new Map<string, number>();
    const g2 = createConsumer(cluster.namesrvAddr, GROUP, { ...FAST, instanceName: 'ha-consumer-2' });
    consumers.push(g2);
    g2.subscribe(TOPIC, '*', async (msg: OnsMessage) => void seen2.set(msg.keys, (seen2.get(msg.keys) ?? 0) + 1));
    await g2.ready();
    await waitUntil(() => phase2.every((r) => seen2.has(r.key)), 60_000, () => `G2 got ${[...seen2.keys()].filter((k) => k.startsWith('p2')).length}/${phase2.length}\n${cluster.logs(1500)}`);
    assert.deepEqual([...seen2.keys()].filter((k) => k.startsWith('p1')), [], 'committed offsets kept: nothing of phase 1 again');

    const phase3 = await sendAll('p3', 20);
    assert.deepEqual([...new Set(phase3.map((r) => r.broker))], ['broker-b'], 'sends fail over to the other broker name');
    await waitUntil(() => phase3.every((r) => seen2.has(r.key)), 30_000, () => 'G2 gets phase 3 from broker-b');
  });
});
