/**
 * Jepsen-style failover test of controller mode (docs/failover.md), all real processes:
 * etcd + `tsmq namesrv` + a group of 3 `tsmq broker` replicas (enableControllerMode=true,
 * allAckInSyncStateSet=true) under continuous SYNC sends from PRODUCERS concurrent producers
 * that route through the nameserver (brokerId 0 of the group).
 *
 * Rounds (TSMQ_FAILOVER_ROUNDS, default 30 in CI, 6 locally; TSMQ_FAILOVER_FAULTS picks kinds) cycle through the faults:
 *   kill  — SIGKILL the master; restarted on the same store after the failover
 *   stop  — SIGSTOP the master for longer than the lease, SIGCONT after the failover
 *   isolate — cut the master's connections to etcd (its own TCP path, see EtcdLink) and refuse
 *           new ones until after the failover; producers can still reach it (it must refuse)
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
 * - all replicas end with byte-identical CommitLogs (diverged tails were truncated);
 * - p99 of the failover time ≤ 10 s (printed with p50 and the rounds run).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { EtcdGroupStore, type GroupView } from '../../../src/broker/controller/etcd-group-store.js';
import { EtcdServer, etcdSkipReason } from '../../support/etcd-server.js';
import { createTopic, firstCommitLogDifference, freePort, HaCluster, waitUntil } from '../../support/ha-cluster.js';
import { LeanClient } from '../../support/lean-client.js';

const TOPIC = 'CtlFailover';
const QUEUES = 4;
const PRODUCERS = 3;
/** Apache's default sendMsgTimeout. */
const SEND_TIMEOUT_MS = 3000;
const REPLICAS = ['r1', 'r2', 'r3'];
const ROUNDS = Number(process.env.TSMQ_FAILOVER_ROUNDS ?? (process.env.CI === 'true' ? 30 : 6));
const FAULTS = (process.env.TSMQ_FAILOVER_FAULTS ?? 'kill,stop,isolate').split(',') as Array<'kill' | 'stop' | 'isolate'>;

/**
 * A replica's own TCP path to etcd (127.0.0.1 only). `cut()` closes every connection and refuses
 * new ones: the replica is isolated from the control plane (its lease cannot be renewed) while
 * producers can still reach it; `heal()` lets it reconnect.
 */
class EtcdLink {
  private readonly sockets = new Set<Socket>();
  private blocked = false;
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async open(etcdPort: number): Promise<EtcdLink> {
    const port = await freePort();
    let link: EtcdLink | null = null;
    const server = createServer((a) => {
      if (!link || link.blocked) return void a.destroy();
      const b = connect(etcdPort, '127.0.0.1');
      for (const s of [a, b]) {
        link.sockets.add(s);
        s.on('error', () => undefined);
        s.once('close', () => {
          link?.sockets.delete(s);
          a.destroy();
          b.destroy();
        });
      }
      a.pipe(b);
      b.pipe(a);
    });
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
    link = new EtcdLink(server, port);
    return link;
  }

  cut(): void {
    this.blocked = true;
    for (const s of this.sockets) s.destroy();
  }

  heal(): void {
    this.blocked = false;
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((r) => this.server.close(() => r()));
  }
}
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
  const links = new Map<string, EtcdLink>();
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
        etcdEndpoints: `http://127.0.0.1:${links.get(name)!.port}`,
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
    for (const n of REPLICAS) links.set(n, await EtcdLink.open(etcd.clientPort));
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
    for (const l of links.values()) await l.close();
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
      else if (kind === 'stop') process.kill(pid, 'SIGSTOP');
      else links.get(victim)!.cut();
      await waitUntil(() => acks.some((a) => a.atMs > t0 && a.addr !== oldAddr), 40_000, () => `round ${round} (${kind} ${victim}): no acknowledged send on a new master; errors ${JSON.stringify(sendErrors)}\n${cluster.logs(3000)}`);
      failoverMs.push(acks.find((a) => a.atMs > t0 && a.addr !== oldAddr)!.atMs - t0);
      if (kind === 'kill') await startReplica(victim);
      else if (kind === 'stop') process.kill(pid, 'SIGCONT');
      else links.get(victim)!.heal();
      const v = await waitFullSyncStateSet(120_000);
      epochs.push(v.master!.epoch);
    }
    // diverged tail: the master appends while both slaves are paused (nothing acked), then dies;
    // a slave is elected and the old master, restarted, must truncate what only it holds
    {
      const v = await view();
      const oldAddr = v.master!.record.addr;
      const victim = nameOfAddr(oldAddr);
      const slaves = REPLICAS.filter((n) => n !== victim);
      const maxBefore = v.replicas.find((r) => r.replicaId === idOf(victim))!.maxOffset;
      for (const n of slaves) process.kill(cluster.broker(n).proc!.child.pid!, 'SIGSTOP');
      // more than the paused slaves' socket buffers can take, sent without waiting for replicas
      const direct = new LeanClient(oldAddr);
      await direct.ready;
      const big = Buffer.alloc(8192, 'tail');
      for (let i = 0; i < 3000; i += 50) {
        await Promise.all(Array.from({ length: 50 }, (_, k) => direct.send(TOPIC, (i + k) % QUEUES, big, { KEYS: `tail-${i + k}`, WAIT: 'false' }, SEND_TIMEOUT_MS).catch(() => null)));
      }
      direct.close();
      await cluster.kill(victim);
      for (const n of slaves) process.kill(cluster.broker(n).proc!.child.pid!, 'SIGCONT');
      const t0 = Date.now();
      await waitUntil(() => acks.some((a) => a.atMs > t0 && a.addr !== oldAddr), 40_000, () => `diverged-tail round: no new master\n${cluster.logs(3000)}`);
      await startReplica(victim);
      const w = await waitFullSyncStateSet(120_000);
      epochs.push(w.master!.epoch);
      await waitUntil(() => /truncated to \d+/.test(cluster.broker(victim).proc?.log ?? ''), 10_000, () => `old master ${victim} (max ${maxBefore} before the pause) did not truncate:\n${cluster.broker(victim).proc?.log.slice(-4000)}`);
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

    // every replica holds the same CommitLog bytes once caught up (diverged tails were truncated)
    let maxes: number[] = [];
    await waitUntil(
      async () => {
        const v = await view();
        maxes = REPLICAS.map((n) => v.replicas.find((r) => r.replicaId === idOf(n))?.maxOffset ?? -1);
        return maxes.every((m) => m === maxes[0] && m > 0);
      },
      20_000,
      () => `replicas do not converge: ${maxes.join(',')}`,
    );
    for (const n of REPLICAS.slice(1)) {
      assert.equal(firstCommitLogDifference(cluster.broker(REPLICAS[0]!).storeDir, cluster.broker(n).storeDir, 0, maxes[0]!), -1, `${n} differs from ${REPLICAS[0]}`);
    }
    const truncations = [...cluster.brokers.values()].reduce((k, b) => k + (b.proc?.log.match(/truncated to \d+/g)?.length ?? 0), 0);

    const sorted = [...failoverMs].sort((a, b) => a - b);
    const p50 = percentile(sorted, 50);
    const p99 = percentile(sorted, 99);
    console.log(`controller failover: ${ROUNDS} rounds (${FAULTS.join('/')}), ${acks.length} acknowledged sends, failover ms p50=${p50} p99=${p99} max=${sorted.at(-1)} all=${failoverMs.join(',')}; truncations seen in running replicas' logs ${truncations}; send errors ${JSON.stringify(sendErrors)}`);
    assert.ok(p99 <= 10_000, `failover p99 ${p99} ms > 10 s`);
  });
});
