/**
 * Jepsen-style failover test of controller mode (docs/failover.md), all real processes:
 * etcd + `tsmq namesrv` + a group of 3 `tsmq broker` replicas (enableControllerMode=true,
 * allAckInSyncStateSet=true) under continuous SYNC sends from PRODUCERS concurrent producers
 * that route through the nameserver (brokerId 0 of the group).
 *
 * Rounds (TSMQ_FAILOVER_ROUNDS, default 30 in CI, 6 locally) cycle through the faults:
 *   kill  — SIGKILL the master; restarted on the same store after the failover
 *   stop  — SIGSTOP the master for longer than the lease, SIGCONT after the failover
 * Each round waits for the first acknowledged send from another replica (failover time, from
 * the fault) and then for the sync state set to hold all 3 replicas again (the old master
 * rejoined as a slave, truncated).
 *
 * Checks at the end, on the final master:
 * - every acknowledged message is present at its acknowledged (queue, queue offset), exactly once
 *   in the queue;
 * - no two acknowledgements name the same (queue, queue offset): no two masters accepted
 *   writes that both count;
 * - the epochs of the elections are distinct and increasing;
 * - p99 of the failover time ≤ 10 s (printed with p50 and the rounds run).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { EtcdGroupStore, type GroupView } from '../../../src/broker/controller/etcd-group-store.js';
import { EtcdServer, etcdSkipReason } from '../../support/etcd-server.js';
import { createTopic, HaCluster, waitUntil } from '../../support/ha-cluster.js';
import { LeanClient } from '../../support/lean-client.js';

const TOPIC = 'CtlFailover';
const QUEUES = 4;
const PRODUCERS = 3;
/** Apache's default sendMsgTimeout. */
const SEND_TIMEOUT_MS = 3000;
const REPLICAS = ['r1', 'r2', 'r3'];
const ROUNDS = Number(process.env.TSMQ_FAILOVER_ROUNDS ?? (process.env.CI === 'true' ? 30 : 6));
const FAULTS = (process.env.TSMQ_FAILOVER_FAULTS ?? 'kill,stop').split(',') as Array<'kill' | 'stop'>;
const skip = etcdSkipReason();

interface Ack {
  key: string;
  queueId: number;
  queueOffset: number;
  addr: string;
  atMs: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** brokerAddrs["0"] of the group in the nameserver's route of TOPIC (fastjson may leave the key unquoted). */
async function masterFromNamesrv(namesrv: string): Promise<string | null> {
  const c = new LeanClient(namesrv);
  try {
    await c.ready;
    const r = await c.invoke(105, { topic: TOPIC }, undefined, 2000);
    if (r.code !== 0) return null;
    const m = /"brokerAddrs"\s*:\s*\{[^}]*?"?\b0"?\s*:\s*"([^"]+)"/.exec(r.body.toString('utf8'));
    return m ? m[1]! : null;
  } catch {
    return null;
  } finally {
    c.close();
  }
}

describe('controller mode: automatic failover on etcd (Jepsen-style)', { skip: skip ?? false, timeout: 30 * 60_000 }, () => {
  let etcd: EtcdServer;
  let cluster: HaCluster;
  let group: EtcdGroupStore;
  const acks: Ack[] = [];
  let stopProducers = false;
  let producers: Promise<void>[] = [];
  const failoverMs: number[] = [];
  const epochs: number[] = [];
  const sendErrors: Record<string, number> = {};
  const faults: Array<{ round: number; kind: string; victim: string; t0: number }> = [];

  const view = (): Promise<GroupView> => group.view();
  const idOf = (name: string): number => REPLICAS.indexOf(name) + 1;
  const nameOfAddr = (addr: string): string => REPLICAS.find((n) => cluster.addr(n) === addr) ?? addr;

  async function startReplica(name: string): Promise<void> {
    await cluster.startBroker({
      name,
      brokerName: 'ctl',
      brokerId: idOf(name),
      brokerRole: 'SLAVE',
      conf: {
        enableControllerMode: 'true',
        etcdEndpoints: etcd.endpoint,
        allAckInSyncStateSet: 'true',
        slaveSynchronizeInterval: '1000',
        registerNameServerPeriod: '2000',
      },
    });
  }

  async function waitFullSyncStateSet(timeoutMs: number): Promise<GroupView> {
    let v: GroupView | null = null;
    await waitUntil(
      async () => {
        v = await view().catch(() => null);
        return !!v?.master && v.master.record.epochs !== null && v.syncStateSet?.masterEpoch === v.master.epoch && v.syncStateSet.members.length === REPLICAS.length;
      },
      timeoutMs,
      () => `sync state set never got all replicas: ${JSON.stringify(v)}\n${cluster.logs(3000)}`,
    );
    return v!;
  }

  async function producer(w: number): Promise<void> {
    let n = 0;
    let addr: string | null = null;
    let client: LeanClient | null = null;
    while (!stopProducers) {
      if (!addr || !client) {
        addr = await masterFromNamesrv(cluster.namesrvAddr);
        if (!addr) {
          await new Promise((r) => setTimeout(r, 100));
          continue;
        }
        client = new LeanClient(addr);
        await client.ready.catch(() => undefined);
      }
      const key = `p${w}-${n++}`;
      const queueId = n % QUEUES;
      try {
        const r = await client.send(TOPIC, queueId, Buffer.from(`body-${key}`), { KEYS: key, WAIT: 'true' }, SEND_TIMEOUT_MS);
        if (r.code === 0) {
          acks.push({ key, queueId, queueOffset: Number(r.extFields.queueOffset), addr, atMs: Date.now() });
          continue;
        }
        sendErrors[r.code] = (sendErrors[r.code] ?? 0) + 1;
      } catch {
        sendErrors.io = (sendErrors.io ?? 0) + 1;
      }
      client.close();
      client = null;
      addr = null;
      await new Promise((r) => setTimeout(r, 50));
    }
    client?.close();
  }

  before(async () => {
    etcd = await EtcdServer.start();
    cluster = await HaCluster.start();
    group = new EtcdGroupStore([etcd.endpoint], '/tsmq/controller', 'HaCluster', 'ctl', 2000);
    for (const n of REPLICAS) await startReplica(n);
    await waitUntil(async () => !!(await view()).master, 20_000, () => `no master elected\n${cluster.logs()}`);
    for (const n of REPLICAS) await createTopic(cluster.addr(n), TOPIC, QUEUES);
    await waitFullSyncStateSet(30_000);
  });

  after(async () => {
    stopProducers = true;
    await Promise.all(producers).catch(() => undefined);
    for (const b of cluster?.brokers.values() ?? []) if (b.proc) process.kill(b.proc.child.pid!, 'SIGCONT');
    group?.close();
    await cluster?.close(process.env.TSMQ_HA_KEEP === '1');
    await etcd?.close();
  });

  it(`${ROUNDS} rounds of ${FAULTS.join('/')} faults: no acknowledged loss, one writer per epoch, failover p99 ≤ 10 s`, async () => {
    producers = Array.from({ length: PRODUCERS }, (_, w) => producer(w));
    await waitUntil(() => acks.length > 50, 20_000, () => `producers get no acks: ${JSON.stringify(sendErrors)}\n${cluster.logs()}`);
    epochs.push((await view()).master!.epoch);
    for (let round = 0; round < ROUNDS; round++) {
      const kind = FAULTS[round % FAULTS.length]!;
      const before = await view();
      const oldAddr = before.master!.record.addr;
      const victim = nameOfAddr(oldAddr);
      const pid = cluster.broker(victim).proc!.child.pid!;
      const t0 = Date.now();
      faults.push({ round, kind, victim, t0 });
      if (kind === 'kill') await cluster.kill(victim);
      else process.kill(pid, 'SIGSTOP');
      await waitUntil(() => acks.some((a) => a.atMs > t0 && a.addr !== oldAddr), 40_000, () => `round ${round} (${kind} ${victim}): no acknowledged send on a new master; errors ${JSON.stringify(sendErrors)}\n${cluster.logs(3000)}`);
      failoverMs.push(acks.find((a) => a.atMs > t0 && a.addr !== oldAddr)!.atMs - t0);
      if (kind === 'kill') await startReplica(victim);
      else process.kill(pid, 'SIGCONT');
      const v = await waitFullSyncStateSet(60_000);
      epochs.push(v.master!.epoch);
    }
    stopProducers = true;
    await Promise.all(producers);

    const final = await waitFullSyncStateSet(30_000);
    const masterAddr = final.master!.record.addr;
    // one acknowledgement per (queue, offset)
    const slots = new Map<string, Ack>();
    for (const a of acks) {
      const slot = `${a.queueId}@${a.queueOffset}`;
      assert.equal(slots.get(slot), undefined, `two acknowledged sends at ${slot}: ${JSON.stringify(slots.get(slot))} and ${JSON.stringify(a)}; t0s ${JSON.stringify(faults)}`);
      slots.set(slot, a);
    }
    // every acknowledged message at its offset, exactly once, on the final master
    const c = new LeanClient(masterAddr);
    await c.ready;
    const counts = new Map<string, number>();
    const at = new Map<string, string>();
    for (let q = 0; q < QUEUES; q++) {
      let offset = 0;
      for (;;) {
        const r = await c.pull('GID_CTL_CHECK', TOPIC, q, offset, 32);
        if (r.code !== 0) break;
        let p = 0;
        let qo = offset;
        while (p < r.body.length) {
          const m = decodeRecord(r.body, p);
          const key = m.properties.get('KEYS') ?? '';
          counts.set(key, (counts.get(key) ?? 0) + 1);
          at.set(`${q}@${m.queueOffset ?? qo}`, key);
          qo++;
          p += r.body.readInt32BE(p);
        }
        offset = Number(r.extFields.nextBeginOffset);
      }
    }
    c.close();
    const missing = acks.filter((a) => at.get(`${a.queueId}@${a.queueOffset}`) !== a.key);
    assert.equal(missing.length, 0, `acknowledged messages lost or moved: ${JSON.stringify(missing.slice(0, 5))} (of ${acks.length})`);
    const dup = acks.filter((a) => counts.get(a.key) !== 1);
    assert.equal(dup.length, 0, `acknowledged messages not exactly once: ${JSON.stringify(dup.slice(0, 5))}`);
    for (let i = 1; i < epochs.length; i++) assert.ok(epochs[i]! > epochs[i - 1]!, `epochs must grow: ${epochs.join(',')}`);

    const sorted = [...failoverMs].sort((a, b) => a - b);
    const p50 = percentile(sorted, 50);
    const p99 = percentile(sorted, 99);
    console.log(`controller failover: ${ROUNDS} rounds (${FAULTS.join('/')}), ${acks.length} acknowledged sends, failover ms p50=${p50} p99=${p99} max=${sorted.at(-1)} all=${failoverMs.join(',')}; send errors ${JSON.stringify(sendErrors)}`);
    assert.ok(p99 <= 10_000, `failover p99 ${p99} ms > 10 s`);
  });
});
