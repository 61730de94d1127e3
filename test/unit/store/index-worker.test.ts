/**
 * indexBuildInWorker: the IndexFile built on a worker thread must be the in-thread index, byte for
 * byte; a crash while the worker indexes must recover every key; a worker that cannot start or dies
 * must never drop keys silently.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { ManualClock, systemClock } from '../../../src/common/time/clock.js';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { MessageSysFlag } from '../../../src/common/message/sysflag.js';
import { IndexService, type IndexCheckpoint } from '../../../src/store/index/index-service.js';
import { IndexWorkerClient, IndexWorkerFailedError } from '../../../src/store/index/index-worker-client.js';
import type { IndexRecord } from '../../../src/store/index/index-record-batch.js';
import type { IndexPlugin } from '../../../src/store/index/index-plugin.js';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

const ALL = [0, Number.MAX_SAFE_INTEGER] as const;

class MemoryCheckpoint implements IndexCheckpoint {
  indexMsgTimestamp = 0;
  flushes = 0;
  setIndexMsgTimestamp(ts: number): void {
    this.indexMsgTimestamp = ts;
  }
  async flush(): Promise<void> {
    this.flushes++;
  }
}

/** Records with every key shape buildIndex treats specially. */
function records(n: number): IndexRecord[] {
  const out: IndexRecord[] = [];
  let offset = 0;
  for (let i = 0; i < n; i++) {
    const kind = i % 7;
    out.push({
      commitLogOffset: offset,
      storeTimestamp: 1_700_000_000_000 + i * 250,
      sysFlag: kind === 5 ? MessageSysFlag.TRANSACTION_ROLLBACK_TYPE : 0,
      topic: kind === 6 ? '主题-T' : `T${i % 3}`,
      keys: kind === 0 ? '' : kind === 1 ? `k${i} k${i}` : kind === 2 ? `订单-${i}  u${i % 5}` : kind === 3 ? `lone\ud800${i}` : `k${i}`,
      uniqKey: kind === 4 ? null : `UNIQ${String(i).padStart(8, '0')}`,
    });
    offset += 100 + (i % 13);
  }
  return out;
}

function filesOf(dir: string): Buffer[] {
  return readdirSync(dir).filter((n) => /^\d{17}$/.test(n)).sort().map((n) => readFileSync(join(dir, n)));
}

const pluginOf = (store: DefaultMessageStore): IndexPlugin => (store as unknown as { c: { indexPlugin: IndexPlugin } }).c.indexPlugin;

test('the worker writes index files byte-equal to the store-thread IndexService for the same records (rolls, rollbacks, duplicate, non-ASCII and lone-surrogate keys)', async () => {
  const root = tempDir();
  try {
    const geometry = { maxHashSlotNum: 16, maxIndexNum: 40, messageIndexEnable: true };
    const recs = records(300);
    const threadDir = join(root, 'thread');
    const threadCp = new MemoryCheckpoint();
    const service = new IndexService(nodeFileSystem, { indexDir: threadDir, ...geometry }, systemClock, threadCp, silentLogger);
    service.load(true, 0);
    for (const r of recs) service.buildIndex(r);
    await service.shutdown();

    const workerDir = join(root, 'worker');
    mkdirSync(workerDir);
    const workerCp = new MemoryCheckpoint();
    const client = await IndexWorkerClient.start({ indexDir: workerDir, ...geometry, indexMsgTimestamp: 0, flushIntervalMs: 60_000 }, silentLogger, workerCp);
    for (const r of recs) client.dispatch(r);
    const stats = await client.stats();
    assert.equal(stats.recordsApplied, recs.length);
    assert.equal(stats.lastAppliedOffset, recs[recs.length - 1]!.commitLogOffset);
    // a query is answered after every record dispatched before it (read-your-writes)
    const q = await client.queryOffset('T1', 'k295', 32, ...ALL);
    assert.ok(q.phyOffsets.includes(recs[295]!.commitLogOffset), JSON.stringify(q));
    await client.shutdown();

    const a = filesOf(threadDir);
    const b = filesOf(workerDir);
    assert.ok(a.length >= 10, `expected many rolled files, got ${a.length}`);
    assert.equal(b.length, a.length);
    for (let i = 0; i < a.length; i++) assert.ok(a[i]!.equals(b[i]!), `index file ${i} differs`);
    assert.equal(workerCp.indexMsgTimestamp, threadCp.indexMsgTimestamp);
    assert.ok(workerCp.flushes > 0, 'the worker moved the checkpoint through the store thread');
  } finally {
    removeDir(root);
  }
});

test('a crash while the worker indexes: after recovery every key finds exactly its message (worker mode and store-thread mode read the same files)', async () => {
  const root = tempDir();
  try {
    const cfg = smallConfig(root, { indexBuildInWorker: true, maxHashSlotNum: 64, maxIndexNum: 50 });
    // the index's crash rule compares store timestamps with the checkpoint: time must move
    const clock = new ManualClock(1_700_000_000_000);
    const store = await openStore(cfg, { clock });
    assert.equal(pluginOf(store).inWorker, true);
    const offsets: number[] = [];
    for (let i = 0; i < 120; i++) {
      clock.advance(1000);
      const r = await store.putMessage(makeMessage({ keys: `k${i} shared`, properties: { UNIQ_KEY: `U${i}` } }));
      offsets.push(r.appendResult!.wroteOffset);
      if (i === 60) await pluginOf(store).flush(); // part of the index durable, the rest not
    }
    // read-your-writes before the crash
    assert.deepEqual((await store.queryMessage('T', 'k119', 32, ...ALL)).messages.map((m) => decodeRecord(m).commitLogOffset), [offsets[119]]);
    store.closeAbruptly();
    await pluginOf(store).workerClosed;
    for (const inWorker of [true, false]) {
      const again = await openStore({ ...cfg, indexBuildInWorker: inWorker }, { clock });
      assert.equal(pluginOf(again).inWorker, inWorker);
      for (let i = 0; i < 120; i++) {
        for (const key of [`k${i}`, `U${i}`]) {
          const q = await again.queryMessage('T', key, 32, ...ALL);
          assert.deepEqual(q.messages.map((m) => decodeRecord(m).commitLogOffset), [offsets[i]], `${key} (worker ${inWorker})`);
        }
      }
      await again.shutdown();
    }
  } finally {
    removeDir(root);
  }
});

test('a worker that cannot open the index directory fails to start with a clear error', async () => {
  const root = tempDir();
  try {
    const notADir = join(root, 'index');
    writeFileSync(notADir, 'x');
    await assert.rejects(
      IndexWorkerClient.start({ indexDir: notADir, maxHashSlotNum: 16, maxIndexNum: 40, messageIndexEnable: true, indexMsgTimestamp: 0, flushIntervalMs: 60_000 }, silentLogger, new MemoryCheckpoint()),
      (e: unknown) => e instanceof IndexWorkerFailedError && e.message.includes(notADir),
    );
  } finally {
    removeDir(root);
  }
});

test('a worker that dies: puts go on, index dispatch failures are counted and queries refused, and the next start indexes the keys it missed', async () => {
  const root = tempDir();
  try {
    const cfg = smallConfig(root, { indexBuildInWorker: true });
    const store = await openStore(cfg);
    const offsets: number[] = [];
    for (let i = 0; i < 5; i++) offsets.push((await store.putMessage(makeMessage({ keys: `k${i}` }))).appendResult!.wroteOffset);
    assert.equal((await store.queryMessage('T', 'k4', 32, ...ALL)).messages.length, 1);
    const client = pluginOf(store).workerClient!;
    await (client as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate(); // as if the thread crashed
    for (let i = 5; i < 10; i++) {
      const r = await store.putMessage(makeMessage({ keys: `k${i}` }));
      assert.equal(r.status, 'PUT_OK');
      offsets.push(r.appendResult!.wroteOffset);
    }
    assert.equal(store.getDispatchStats().pluginFailures.index, 5);
    await assert.rejects(store.queryMessage('T', 'k1', 32, ...ALL), IndexWorkerFailedError);
    await store.shutdown();
    const again = await openStore(cfg);
    for (let i = 0; i < 10; i++) {
      const q = await again.queryMessage('T', `k${i}`, 32, ...ALL);
      assert.deepEqual(q.messages.map((m) => decodeRecord(m).commitLogOffset), [offsets[i]], `k${i}`);
    }
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});
