/**
 * Controller mode: consumers read only what the sync state set confirmed (Apache 5
 * `getReputEndOffset` = confirm offset unless readUnCommitted; docs/failover.md "What consumers
 * see"). One master store, two slave stores in one process, real HA sockets; slave 3 replicates
 * through a TCP proxy that can be frozen (a SIGSTOPped replica: it neither reads nor acks).
 *
 * Asserted with real values: ConsumeQueue max offsets and pulled bodies on the master and on the
 * healthy slave, the arrival notices, the put status and when it resolves.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { silentLogger } from '../../../../src/common/logging/logger.js';
import { SyncStateSet } from '../../../../src/broker/controller/sync-state-set.js';
import type { DefaultMessageStore } from '../../../../src/store/default-message-store.js';
import type { PutMessageResult } from '../../../../src/store/message-store.js';
import type { StoreConfig } from '../../../../src/store/store-config.js';
import { decodeRecord } from '../../../../src/common/message/record-codec.js';
import { waitUntil } from '../../../support/ha-cluster.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../../support/store-fixtures.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** Forwards 127.0.0.1:<port> to `target`; `freeze()` stops both directions (bytes stay queued), `thaw()` resumes. */
class FreezableProxy {
  private frozen = false;
  private readonly pairs: Array<[Socket, Socket]> = [];
  private constructor(private readonly server: Server) {}

  static async start(targetPort: number): Promise<FreezableProxy> {
    let proxy!: FreezableProxy;
    const server = createServer((client) => {
      const upstream = connect(targetPort, '127.0.0.1');
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
      proxy.pairs.push([client, upstream]);
      if (proxy.frozen) proxy.pausePair(client, upstream);
    });
    proxy = new FreezableProxy(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  private pausePair(a: Socket, b: Socket): void {
    a.unpipe(b);
    b.unpipe(a);
    a.pause();
    b.pause();
  }

  freeze(): void {
    this.frozen = true;
    for (const [a, b] of this.pairs) this.pausePair(a, b);
  }

  thaw(): void {
    this.frozen = false;
    for (const [a, b] of this.pairs) {
      a.pipe(b);
      b.pipe(a);
    }
  }

  async close(): Promise<void> {
    for (const [a, b] of this.pairs) {
      a.destroy();
      b.destroy();
    }
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

async function open(role: StoreConfig['brokerRole'], extra: Partial<StoreConfig> = {}): Promise<DefaultMessageStore> {
  const root = tempDir('tsmq-confirm-');
  const store = await openStore(smallConfig(root, { brokerRole: role, mappedFileSizeCommitLog: 64 * 1024, ...extra }));
  cleanups.push(async () => {
    await store.shutdown();
    removeDir(root);
  });
  return store;
}

interface Group {
  master: DefaultMessageStore;
  sss: SyncStateSet;
  slave2: DefaultMessageStore;
  slave3: DefaultMessageStore;
  proxy3: FreezableProxy;
  /** Topic/queue of each arrival notice the master's store gave (dispatch time). */
  arrivals: string[];
}

/** Master (replica 1) with a sync state set, slave 2 direct, slave 3 behind a freezable proxy; waits until {1,2,3} is confirmed. */
async function group(o: { allAckInSyncStateSet: boolean; maxOutOfSyncMs?: number; masterExtra?: Partial<StoreConfig> }): Promise<Group> {
  const master = await open('SYNC_MASTER', o.masterExtra ?? {});
  const replication = await master.switchReplication('MASTER', { listenPort: 0, host: '127.0.0.1' });
  const ha = replication.master!;
  const sss = new SyncStateSet({
    selfId: 1,
    masterEpoch: 1,
    epochStartOffset: 0,
    ha,
    maxOffset: () => master.getMaxPhyOffset(),
    writeRecord: async () => true,
    allAckInSyncStateSet: o.allAckInSyncStateSet,
    maxOutOfSyncMs: o.maxOutOfSyncMs ?? 60_000,
    slaveTimeoutMs: 10_000,
    fence: () => null,
    onConfirmChanged: () => master.confirmOffsetChanged(),
    logger: silentLogger,
  });
  assert.equal(await sss.init(), true);
  master.setControllerHooks({ fence: () => null, ack: sss, confirm: sss });
  const arrivals: string[] = [];
  master.setMessageArrivingListener((topic, queueId, logicOffset) => arrivals.push(`${topic}/${queueId}@${logicOffset}`));
  const checker = setInterval(() => void sss.check(), 50);
  cleanups.push(() => {
    clearInterval(checker);
    sss.stop('test over');
  });
  const proxy3 = await FreezableProxy.start(ha.port);
  cleanups.push(() => proxy3.close());
  const slave2 = await open('SLAVE');
  await slave2.switchReplication('SLAVE', { listenPort: 0, masterAddress: `127.0.0.1:${ha.port}`, helloReplicaId: 2, reconnectIntervalMs: 200 });
  const slave3 = await open('SLAVE');
  await slave3.switchReplication('SLAVE', { listenPort: 0, masterAddress: `127.0.0.1:${proxy3.port}`, helloReplicaId: 3, reconnectIntervalMs: 200 });
  await waitUntil(() => sss.confirmedMembers().length === 3, 5000, () => `sync state set ${sss.confirmedMembers().join(',')}`);
  return { master, sss, slave2, slave3, proxy3, arrivals };
}

/** Messages consumable from T/0 (ConsumeQueue max offset). */
function consumable(store: DefaultMessageStore): number {
  return store.getMaxOffsetInQueue('T', 0);
}

async function bodyAt(store: DefaultMessageStore, queueOffset: number): Promise<string | null> {
  const r = await store.getMessage('g', 'T', 0, queueOffset, 1);
  const rec = r.messages[0];
  return rec ? decodeRecord(rec).body.toString() : null;
}

/** Starts a put and records when it resolved. */
function put(store: DefaultMessageStore, body: string): { done: Promise<PutMessageResult>; result: () => PutMessageResult | null } {
  let result: PutMessageResult | null = null;
  const done = store.putMessage(makeMessage({ body, queueId: 0 })).then((r) => (result = r));
  return { done, result: () => result };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('controller mode: the confirm offset bounds what consumers read', () => {
  it('allAckInSyncStateSet: a message is consumable (master and slaves) only once every member holds it; a frozen member holds it back until it acks', async () => {
    const g = await group({ allAckInSyncStateSet: true });
    const a = put(g.master, 'A');
    assert.equal((await a.done).status, 'PUT_OK');
    assert.equal(consumable(g.master), 1, 'A is consumable on the master when SEND_OK is answered');
    assert.equal(await bodyAt(g.master, 0), 'A');
    await waitUntil(() => consumable(g.slave2) === 1, 3000, () => `slave 2 consumable ${consumable(g.slave2)}`);

    g.proxy3.freeze();
    const b = put(g.master, 'B');
    await waitUntil(() => g.slave2.getMaxPhyOffset() === g.master.getMaxPhyOffset(), 3000, () => 'slave 2 holds B');
    await sleep(400);
    assert.equal(b.result(), null, 'no SEND_OK while member 3 has not acked (Apache allAckInSyncStateSet)');
    assert.equal(consumable(g.master), 1, 'B is not consumable on the master before member 3 acks');
    assert.equal(await bodyAt(g.master, 1), null);
    assert.ok(g.master.getConfirmOffset() < g.master.getMaxPhyOffset(), `confirm ${g.master.getConfirmOffset()} < max ${g.master.getMaxPhyOffset()}`);
    assert.deepEqual(g.arrivals, ['T/0@1'], 'no arrival notice (long poll wake-up) for B yet');
    assert.equal(consumable(g.slave2), 1, 'slave 2 holds B but must not serve it: the master has not confirmed it');

    g.proxy3.thaw();
    assert.equal((await b.done).status, 'PUT_OK');
    assert.equal(consumable(g.master), 2, 'B consumable once member 3 acked');
    assert.equal(await bodyAt(g.master, 1), 'B');
    assert.deepEqual(g.arrivals, ['T/0@1', 'T/0@2'], 'the arrival notice came with the confirmation');
    await waitUntil(() => consumable(g.slave2) === 2 && consumable(g.slave3) === 2, 3000, () => `slaves consumable ${consumable(g.slave2)}, ${consumable(g.slave3)}`);
    assert.equal(await bodyAt(g.slave2, 1), 'B');
  });

  it('allAckInSyncStateSet: a member frozen longer than the out-of-sync time leaves the set and the message becomes consumable', async () => {
    const g = await group({ allAckInSyncStateSet: true, maxOutOfSyncMs: 800 });
    g.proxy3.freeze();
    const c = put(g.master, 'C');
    await sleep(300);
    assert.equal(c.result(), null);
    assert.equal(consumable(g.master), 0, 'C held back while member 3 is in the set');
    const status = (await c.done).status;
    assert.equal(status, 'PUT_OK', 'answered once the set shrank to the members holding C');
    assert.deepEqual(g.sss.confirmedMembers(), [1, 2]);
    assert.equal(consumable(g.master), 1);
    assert.equal(await bodyAt(g.master, 0), 'C');
    await waitUntil(() => consumable(g.slave2) === 1, 3000, () => `slave 2 consumable ${consumable(g.slave2)}`);
    assert.equal(consumable(g.slave3), 0, 'the frozen replica has nothing');
  });

  it('allAckInSyncStateSet: a frozen member that left the set does not rejoin before it acks more (the next send and message are not held back again); it rejoins once thawed', async () => {
    const g = await group({ allAckInSyncStateSet: true, maxOutOfSyncMs: 800 });
    g.proxy3.freeze();
    assert.equal((await put(g.master, 'C').done).status, 'PUT_OK');
    assert.deepEqual(g.sss.confirmedMembers(), [1, 2]);
    await sleep(200); // several membership checks while member 3 is still connected (frozen) and close behind
    const started = Date.now();
    const e = put(g.master, 'E');
    assert.equal((await e.done).status, 'PUT_OK');
    const waitedMs = Date.now() - started;
    assert.ok(waitedMs < 400, `E answered after ${waitedMs} ms: the frozen member must not be waited for again (it was re-added while still frozen)`);
    assert.equal(consumable(g.master), 2, 'E consumable at once');
    g.proxy3.thaw();
    await waitUntil(() => g.sss.confirmedMembers().length === 3, 5000, () => `sync state set ${g.sss.confirmedMembers().join(',')}`);
    await waitUntil(() => consumable(g.slave3) === 2, 3000, () => `slave 3 consumable ${consumable(g.slave3)}`);
  });

  it('allAckInSyncStateSet=false (Apache default): the master alone acknowledges and the message is consumable at once', async () => {
    const g = await group({ allAckInSyncStateSet: false });
    g.proxy3.freeze();
    const d = put(g.master, 'D');
    assert.equal((await d.done).status, 'PUT_OK');
    assert.equal(consumable(g.master), 1);
    await waitUntil(() => consumable(g.slave2) === 1, 3000, () => `slave 2 consumable ${consumable(g.slave2)}`);
  });

  it('readUnCommitted=true: consumable at once even when a member has not acked', async () => {
    const g = await group({ allAckInSyncStateSet: true, masterExtra: { readUnCommitted: true } });
    g.proxy3.freeze();
    const e = put(g.master, 'E');
    await waitUntil(() => consumable(g.master) === 1, 2000, () => `master consumable ${consumable(g.master)}`);
    assert.equal(e.result(), null, 'the producer still waits for every member');
    g.proxy3.thaw();
    assert.equal((await e.done).status, 'PUT_OK');
  });
});
