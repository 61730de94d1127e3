/**
 * Found by the store simulation (test/sim, seed 285: "queryMessage(T1, K11) misses surviving
 * messages 158", after a process crash followed by power losses during recovery). After a power
 * loss cut the CommitLog below the index file's end offset, recovery moved the index end back
 * (`StorePlugin.recovered`, index-ahead-of-commitlog.test.ts) but only handed the new header to
 * the page cache. New messages were stored at the cut offsets and reached the device; a second
 * power loss brought the old header back, the CommitLog now reached past it, so nothing told
 * recovery to clamp again and every new message below the old end was skipped as "already
 * indexed". The moved-back end is now made durable (fdatasync) before the store takes puts,
 * also in a full index file (opened read-only: its header is written through a read-write fd).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { IndexFile } from '../../../src/store/index/index-file.js';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import { SimulatedFileSystem } from '../../support/simulated-file-system.js';
import { makeMessage, openStore, smallConfig } from '../../support/store-fixtures.js';

const ROOT = '/sim/index-clamp-durable';

async function keysFound(store: DefaultMessageStore, key: string): Promise<string[]> {
  const r = await store.queryMessage('T', key, 32, 0, Number.MAX_SAFE_INTEGER);
  return r.messages.map((raw) => decodeRecord(raw).body.toString());
}

test('the index end moved back after a power loss is durable before new messages are stored below the old end', async () => {
  const fs = new SimulatedFileSystem();
  const cfg = smallConfig(ROOT, { flushIntervalCommitLog: 600_000, flushIntervalConsumeQueue: 600_000 });
  const store = await openStore(cfg, { fs });
  for (let i = 0; i < 2; i++) assert.equal((await store.putMessage(makeMessage({ keys: `k${i}`, body: `flushed-${i}` }))).status, 'PUT_OK');
  await store.commitLog.mfq.flush(0);
  const durableEnd = store.getMaxPhyOffset();
  for (let i = 2; i < 6; i++) assert.equal((await store.putMessage(makeMessage({ keys: `k${i}`, body: `lost-${i}` }))).status, 'PUT_OK');
  const indexEnd = store.getMaxPhyOffset();
  // the index file (and the checkpoint) reach the device, the CommitLog tail does not
  const index = (store as unknown as { c: { indexPlugin: { flush(): Promise<void> } } }).c.indexPlugin;
  await index.flush();
  store.closeAbruptly({ commitPending: false });
  fs.powerLoss();

  const again = await openStore(cfg, { fs });
  assert.equal(again.getMaxPhyOffset(), durableEnd, 'the unflushed CommitLog tail is gone');
  const r = await again.putMessage(makeMessage({ keys: 'fresh', body: 'after-power-loss' }));
  assert.equal(r.status, 'PUT_OK');
  assert.ok(r.appendResult!.wroteOffset < indexEnd, 'stored below the end the index had on the device');
  // the new record reaches the device (a CommitLog flush), the index's later state does not
  await again.commitLog.mfq.flush(0);
  again.closeAbruptly({ commitPending: false });
  fs.powerLoss();

  const third = await openStore(cfg, { fs });
  assert.ok(third.getMaxPhyOffset() > r.appendResult!.wroteOffset, 'the new record survived');
  assert.deepEqual(await keysFound(third, 'fresh'), ['after-power-loss'], 'its key is indexed again');
  assert.deepEqual(await keysFound(third, 'k1'), ['flushed-1']);
  assert.deepEqual(await keysFound(third, 'k3'), [], 'a lost message is not found');
  await third.shutdown();
});

test('a full (read-only) index file ahead of the recovered CommitLog gets its end moved back on disk (real file system)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tsmq-index-clamp-'));
  try {
    const nfs = new NodeFileSystem();
    const path = join(dir, '20231114221320000');
    const w = IndexFile.create(nfs, path, 8, 4);
    for (let i = 0; i < 3; i++) assert.ok(w.putKey(`T#k${i}`, 1000 * (i + 1), 1_700_000_000_000 + i));
    assert.ok(w.isFull());
    w.close();
    const ro = IndexFile.open(nfs, path, 8, 4, false); // opened read-only, as every file but the newest
    await ro.clampEndDurably(2499);
    ro.close();
    const again = IndexFile.open(nfs, path, 8, 4, false);
    assert.equal(again.header.endPhyOffset, 2499);
    assert.equal(again.header.indexCount, 4, 'the rest of the header is unchanged');
    again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Found by the simulation with dropped fsync semantics (seed 195): the power loss took the whole
// CommitLog, the index file (on the device) kept entries; its end moved back to 0, but the end
// names the start of the last indexed message, so the first new message (at offset 0) was
// skipped as indexed. Index files with entries over an empty CommitLog are now deleted.
test('a power loss that leaves the CommitLog empty while the index file has entries: the first new message is indexed', async () => {
  const fs = new SimulatedFileSystem();
  const cfg = smallConfig(`${ROOT}-empty`, { flushIntervalCommitLog: 600_000, flushIntervalConsumeQueue: 600_000 });
  const store = await openStore(cfg, { fs });
  for (let i = 0; i < 3; i++) assert.equal((await store.putMessage(makeMessage({ keys: `k${i}`, body: `lost-${i}` }))).status, 'PUT_OK');
  const index = (store as unknown as { c: { indexPlugin: { flush(): Promise<void> } } }).c.indexPlugin;
  await index.flush(); // the index reaches the device, no CommitLog byte does
  store.closeAbruptly({ commitPending: false });
  fs.powerLoss();

  const again = await openStore(cfg, { fs });
  assert.equal(again.getMaxPhyOffset(), 0);
  const r = await again.putMessage(makeMessage({ keys: 'fresh', body: 'first-after-power-loss' }));
  assert.equal(r.appendResult!.wroteOffset, 0);
  assert.deepEqual(await keysFound(again, 'fresh'), ['first-after-power-loss']);
  assert.deepEqual(await keysFound(again, 'k0'), []);
  await again.shutdown();
});

test('a failed fdatasync of an index file is sticky and reported like one of a CommitLog file (puts refused until restart)', async () => {
  const fs = new SimulatedFileSystem();
  const cfg = smallConfig(`${ROOT}-fsyncgate`, { flushIntervalCommitLog: 600_000, flushIntervalConsumeQueue: 600_000 });
  const store = await openStore(cfg, { fs });
  assert.equal((await store.putMessage(makeMessage({ keys: 'k', body: 'b' }))).status, 'PUT_OK');
  const index = (store as unknown as { c: { indexPlugin: { flush(): Promise<void> } } }).c.indexPlugin;
  fs.failNextSync((p) => p.includes('/index/'));
  const first = await index.flush().catch((e: unknown) => e);
  assert.match(String(first), /fdatasync of .*\/index\/\d{17} failed/);
  assert.equal(await index.flush().catch((e: unknown) => e), first, 'the same error again: a later fdatasync proves nothing');
  assert.equal(store.isWritable(), false);
  const refused = await store.putMessage(makeMessage({ keys: 'k2', body: 'b2' }));
  assert.equal(refused.status, 'SERVICE_NOT_AVAILABLE');
  assert.match(refused.remark ?? '', /restart the broker/);
  await store.shutdown();
});
