import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/common/time/clock.js';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import type { StoreConfig } from '../../../src/store/store-config.js';
import { firstCommitLogDifference, RawHAPeer, readCommitLog, waitUntil } from '../../support/ha-cluster.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function open(role: StoreConfig['brokerRole'], extra: Partial<StoreConfig> = {}, root = tempDir('tsmq-ha-')): Promise<{ store: DefaultMessageStore; root: string }> {
  const store = await openStore(smallConfig(root, { brokerRole: role, ...extra }), { clock: new ManualClock(1_700_000_000_000) });
  cleanups.push(async () => {
    await store.shutdown();
    removeDir(root);
  });
  return { store, root };
}

async function putN(store: DefaultMessageStore, n: number, prefix = 'm', extra: Parameters<typeof makeMessage>[0] = {}): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await store.putMessage(makeMessage({ body: `${prefix}-${i}-${'x'.repeat(100 + (i % 50))}`, queueId: i % 2, keys: `k${i}`, properties: { WAIT: 'false' }, ...extra }));
    assert.equal(r.status, 'PUT_OK');
  }
}

async function startMaster(store: DefaultMessageStore): Promise<number> {
  const ha = await store.startHA({ listenPort: 0, host: '127.0.0.1' });
  return ha.master!.port;
}

describe('classic replication, master and slave stores in one process', () => {
  it('an empty slave catches up a backlog: CommitLog byte-equal, ConsumeQueues and index rebuilt', async () => {
    const m = await open('ASYNC_MASTER');
    await putN(m.store, 120);
    const port = await startMaster(m.store);
    const s = await open('SLAVE', { haMasterAddress: `127.0.0.1:${port}` });
    await s.store.startHA({ listenPort: 0 });
    await waitUntil(() => s.store.getMaxPhyOffset() === m.store.getMaxPhyOffset(), 10_000, () => `slave ${s.store.getMaxPhyOffset()} / master ${m.store.getMaxPhyOffset()}`);
    await waitUntil(() => s.store.dispatchBehindBytes() === 0, 5000, () => 'dispatch');
    // live tail too
    await putN(m.store, 30, 'live');
    await waitUntil(() => s.store.getMaxPhyOffset() === m.store.getMaxPhyOffset(), 10_000, () => 'live tail');
    assert.ok(m.store.commitLog.mfq.getFiles().length > 3, 'several segments');
    for (const q of [0, 1]) assert.equal(s.store.getMaxOffsetInQueue('T', q), m.store.getMaxOffsetInQueue('T', q));
    const a = await m.store.getMessage('G', 'T', 1, 40, 32);
    const b = await s.store.getMessage('G', 'T', 1, 40, 32);
    assert.equal(b.status, 'FOUND');
    assert.deepEqual(b.messages, a.messages);
    const q = await s.store.queryMessage('T', 'k77', 10, 0, Number.MAX_SAFE_INTEGER);
    assert.equal(q.messages.length, 1);
    const max = m.store.getMaxPhyOffset();
    await m.store.commitLog.mfq.flush(0);
    await s.store.commitLog.mfq.flush(0);
    assert.equal(firstCommitLogDifference(m.root, s.root, 0, max), -1);
    const stats = m.store.getReplication()!.stats();
    assert.equal(stats.role === 'master' && stats.master.push2SlaveMaxOffset, max);
  });

  it('frames are at most haTransferBatchSize and never span a segment end; bodies are the raw CommitLog', async () => {
    const m = await open('ASYNC_MASTER', { haTransferBatchSize: 1000 });
    await putN(m.store, 60);
    const port = await startMaster(m.store);
    const peer = await RawHAPeer.connect(port);
    cleanups.push(() => peer.destroy());
    peer.report(0);
    const max = m.store.getMaxPhyOffset();
    await waitUntil(() => peer.dataBytes() >= max, 5000, () => `${peer.dataBytes()} of ${max}`);
    let expected = 0;
    for (const f of peer.frames.filter((x) => x.body.length > 0)) {
      assert.equal(f.offset, expected);
      assert.ok(f.body.length <= 1000);
      assert.ok((f.offset % 4096) + f.body.length <= 4096, `frame at ${f.offset} (+${f.body.length}) crosses a segment end`);
      expected += f.body.length;
    }
    assert.equal(expected, max);
    await m.store.commitLog.mfq.flush(0);
    assert.ok(Buffer.concat(peer.frames.map((f) => f.body)).equals(readCommitLog(m.root, 0, max)));
  });

  it('an empty slave starts at the master min offset (not the last segment) when old segments are gone', async () => {
    const m = await open('ASYNC_MASTER');
    await putN(m.store, 80);
    const mfq = m.store.commitLog.mfq;
    const first = mfq.getFirstMappedFile()!;
    first.destroy(0);
    mfq.removeFiles([first]);
    const min = m.store.getMinPhyOffset();
    assert.equal(min, 4096);
    assert.ok(mfq.getFiles().length >= 3, 'the min segment is not the last one');
    const port = await startMaster(m.store);
    const s = await open('SLAVE', { haMasterAddress: `127.0.0.1:${port}` });
    await s.store.startHA({ listenPort: 0 });
    await waitUntil(() => s.store.getMaxPhyOffset() === m.store.getMaxPhyOffset(), 10_000, () => 'catch-up');
    assert.equal(s.store.getMinPhyOffset(), 4096);
    await waitUntil(() => s.store.dispatchBehindBytes() === 0, 5000, () => 'dispatch');
    assert.equal(s.store.getMaxOffsetInQueue('T', 0), m.store.getMaxOffsetInQueue('T', 0));
    const from = s.store.getMinOffsetInQueue('T', 0);
    assert.ok(from > 0, 'queue entries of the deleted segment are not on the slave');
    const mm = await m.store.getMessage('G', 'T', 0, from, 8);
    const ss = await s.store.getMessage('G', 'T', 0, from, 8);
    assert.equal(ss.status, 'FOUND');
    assert.deepEqual(ss.messages, mm.messages);
  });

  it('a slave that is behind resumes from its own max offset after a restart', async () => {
    const m = await open('ASYNC_MASTER');
    await putN(m.store, 40);
    const port = await startMaster(m.store);
    const sroot = tempDir('tsmq-ha-s-');
    cleanups.push(() => removeDir(sroot));
    let slave = await openStore(smallConfig(sroot, { brokerRole: 'SLAVE', haMasterAddress: `127.0.0.1:${port}` }));
    await slave.startHA({ listenPort: 0 });
    await waitUntil(() => slave.getMaxPhyOffset() === m.store.getMaxPhyOffset(), 10_000, () => 'first catch-up');
    const resumeAt = slave.getMaxPhyOffset();
    await slave.shutdown();
    await putN(m.store, 40, 'later');
    slave = await openStore(smallConfig(sroot, { brokerRole: 'SLAVE', haMasterAddress: `127.0.0.1:${port}` }));
    const s2 = slave;
    cleanups.push(() => s2.shutdown());
    await slave.startHA({ listenPort: 0 });
    await waitUntil(() => slave.getMaxPhyOffset() === m.store.getMaxPhyOffset(), 10_000, () => 'second catch-up');
    const st = m.store.getReplication()!.stats();
    assert.ok(st.role === 'master');
    assert.deepEqual(st.master.connections.map((c) => c.requestOffset), [resumeAt]);
    await waitUntil(() => slave.dispatchBehindBytes() === 0, 5000, () => 'dispatch');
    assert.equal(slave.getMaxOffsetInQueue('T', 0), m.store.getMaxOffsetInQueue('T', 0));
  });

  it('heartbeats: the master sends an empty frame at the next offset; a silent peer is dropped after haHousekeepingInterval', async () => {
    const m = await open('ASYNC_MASTER', { haSendHeartbeatInterval: 100, haHousekeepingInterval: 600 });
    await putN(m.store, 5);
    const port = await startMaster(m.store);
    const max = m.store.getMaxPhyOffset();
    const peer = await RawHAPeer.connect(port);
    cleanups.push(() => peer.destroy());
    peer.report(max);
    await waitUntil(() => peer.frames.some((f) => f.body.length === 0), 3000, () => 'heartbeat');
    assert.deepEqual(peer.frames.filter((f) => f.body.length === 0).map((f) => f.offset)[0], max);
    const started = Date.now();
    await peer.closedPromise; // nothing reported after the first report
    assert.ok(Date.now() - started >= 300);
  });
});

describe('SYNC_MASTER (RocketMQ 4.x semantics)', () => {
  it('PUT_OK only after a slave holds the message; SLAVE_NOT_AVAILABLE without a slave; WAIT=false does not wait', async () => {
    const m = await open('SYNC_MASTER', { slaveTimeout: 2000 });
    const port = await startMaster(m.store);
    const none = await m.store.putMessage(makeMessage({ body: 'alone' }));
    assert.equal(none.status, 'SLAVE_NOT_AVAILABLE');
    assert.ok(none.appendResult, 'the message is stored');
    assert.equal((await m.store.putMessage(makeMessage({ body: 'nowait', properties: { WAIT: 'false' } }))).status, 'PUT_OK');
    const s = await open('SLAVE', { haMasterAddress: `127.0.0.1:${port}` });
    await s.store.startHA({ listenPort: 0 });
    await waitUntil(() => s.store.getMaxPhyOffset() === m.store.getMaxPhyOffset(), 10_000, () => 'connect');
    for (let i = 0; i < 20; i++) {
      const r = await m.store.putMessage(makeMessage({ body: `sync-${i}` }));
      assert.equal(r.status, 'PUT_OK');
      assert.ok(s.store.getMaxPhyOffset() >= r.appendResult!.wroteOffset + r.appendResult!.wroteBytes, 'slave holds it when the put returns');
    }
  });

  it('FLUSH_SLAVE_TIMEOUT when the connected slave does not ack within slaveTimeout; SLAVE_NOT_AVAILABLE when it is haMaxGapNotInSync behind', async () => {
    const m = await open('SYNC_MASTER', { slaveTimeout: 300, haMaxGapNotInSync: 2000 });
    const port = await startMaster(m.store);
    const peer = await RawHAPeer.connect(port);
    cleanups.push(() => peer.destroy());
    peer.report(0);
    await waitUntil(() => m.store.getReplication()!.master!.slaveCount() === 1, 2000, () => 'slave counted');
    const t0 = Date.now();
    const r = await m.store.putMessage(makeMessage({ body: 'never acked' }));
    assert.equal(r.status, 'FLUSH_SLAVE_TIMEOUT');
    assert.ok(Date.now() - t0 >= 250);
    await putN(m.store, 20); // now > 2000 bytes beyond the last ack (0)
    const far = await m.store.putMessage(makeMessage({ body: 'far behind' }));
    assert.equal(far.status, 'SLAVE_NOT_AVAILABLE');
    assert.match(far.remark ?? '', /behind/);
  });
});
