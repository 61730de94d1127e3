/**
 * Disk full and failed writes: puts fail fast with SERVICE_NOT_AVAILABLE and a clear remark,
 * reads keep working, nothing acknowledged is lost, writes resume by themselves once space
 * returns. Faults come from the fs port (ENOSPC on pwrite) and, when the test may mount one,
 * from a real tmpfs of a few MiB.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { PutMessageResult } from '../../../src/store/message-store.js';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import type { StoreConfig } from '../../../src/store/store-config.js';
import { FaultyFileSystem } from '../../support/faulty-file-system.js';
import { makeMessage, openStore, removeDir, tempDir, dispatched } from '../../support/store-fixtures.js';
import { openRetentionStore, retentionConfig, seqBody, seqOf, waitFor } from './retention-support.js';

class CountingFs extends FaultyFileSystem {
  pwrites = 0;
  override pwrite(fd: number, buf: Buffer, off: number, len: number, pos: number): number {
    this.pwrites++;
    return super.pwrite(fd, buf, off, len, pos);
  }
}

/** Every acknowledged sequence number is readable in order at queue offsets 0..n-1 (and nothing else). */
async function assertExactly(store: DefaultMessageStore, acked: number[]): Promise<void> {
  await dispatched(store);
  const seen: number[] = [];
  let next = 0;
  for (;;) {
    const g = await store.getMessage('g', 'T', 0, next, 32);
    if (g.status !== 'FOUND') break;
    g.messages.forEach((m, i) => {
      assert.equal(g.messageQueueOffsets[i], seen.length, 'queue offsets contiguous');
      seen.push(seqOf(m));
    });
    next = g.nextBeginOffset;
  }
  assert.deepEqual(seen, acked);
}

const stored = (r: PutMessageResult): boolean => r.status === 'PUT_OK' || r.status === 'FLUSH_DISK_TIMEOUT';

test('ENOSPC on a write: puts fail fast with SERVICE_NOT_AVAILABLE, reads work, writes resume by themselves, no acknowledged message lost', async () => {
  const root = tempDir();
  try {
    const fsPort = new CountingFs();
    const cfg = retentionConfig(root, { cleanResourceInterval: 20 });
    const { store } = await openRetentionStore(cfg, { deps: { fs: fsPort } });
    const acked: number[] = [];
    let seq = 0;
    const put = async (): Promise<PutMessageResult> => {
      const s = seq++;
      const r = await store.putMessage(makeMessage({ body: seqBody(s, 300) }));
      if (stored(r)) acked.push(s);
      return r;
    };
    for (let i = 0; i < 15; i++) assert.equal((await put()).status, 'PUT_OK'); // 392-byte records: f1 holds 5
    fsPort.pwriteErrorCode = 'ENOSPC';
    const buffered = await put();
    assert.equal(buffered.status, 'FLUSH_DISK_TIMEOUT', 'appended to the write buffer, but its commit into the page cache failed: not PUT_OK');
    assert.match(buffered.remark ?? '', /page cache failed .*ENOSPC/);
    await new Promise((r) => setImmediate(r));
    const before = fsPort.pwrites;
    const refused = await put();
    assert.equal(refused.status, 'SERVICE_NOT_AVAILABLE');
    assert.equal(refused.remark, 'message store is not writable: disk full: write failed with ENOSPC (injected ENOSPC)');
    for (let i = 0; i < 5; i++) assert.equal((await put()).status, 'SERVICE_NOT_AVAILABLE');
    assert.equal(fsPort.pwrites, before, 'refused puts do not touch the disk');
    assert.equal(store.isWritable(), false);
    await assertExactly(store, acked); // reads keep working, including the buffered message
    fsPort.pwriteErrorCode = null; // space returns
    await waitFor(() => store.isWritable());
    for (let i = 0; i < 5; i++) assert.equal((await put()).status, 'PUT_OK');
    assert.equal(acked.length, 21);
    await store.shutdown();
    const again = await openStore(cfg);
    assert.equal(again.recoveryReport.mode, 'normal');
    await assertExactly(again, acked);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

for (const [fileSize, burstSize, where] of [
  [4096, 30, 'the end-of-file filler of a roll'],
  [65536, 200, 'the write buffer filling up'],
] as const) {
  test(`ENOSPC during a burst hits ${where}: failed puts consume no queue offset, stored ones survive a crash`, async () => {
    const root = tempDir();
    try {
      const fsPort = new FaultyFileSystem();
      const cfg = retentionConfig(root, { mappedFileSizeCommitLog: fileSize });
      const { store } = await openRetentionStore(cfg, { deps: { fs: fsPort } });
      for (let i = 0; i < 5; i++) await store.putMessage(makeMessage({ body: seqBody(i, 300) }));
      fsPort.pwriteErrorCode = 'ENOSPC';
      // no await between puts: no background write runs in between, so the buffer fills or the file rolls
      const burst = await Promise.all(Array.from({ length: burstSize }, (_, i) => store.putMessage(makeMessage({ body: seqBody(5 + i, 300) }))));
      const okIdx = burst.flatMap((r, i) => (stored(r) ? [5 + i] : []));
      assert.ok(okIdx.length > 0 && okIdx.length < burstSize, `some stored (${okIdx.length}), then refused`);
      assert.deepEqual(okIdx, Array.from({ length: okIdx.length }, (_, i) => 5 + i), 'a prefix is stored');
      for (const r of burst.filter((x) => !stored(x))) {
        assert.equal(r.status, 'SERVICE_NOT_AVAILABLE');
        assert.match(r.remark!, /disk full: write failed with ENOSPC/);
      }
      fsPort.pwriteErrorCode = null;
      store.cleanService!.checkDisk();
      const after = await store.putMessage(makeMessage({ body: seqBody(99, 300) }));
      assert.equal(after.appendResult!.queueOffset, 5 + okIdx.length, 'refused puts consumed no queue offset');
      await new Promise((r) => setImmediate(r));
      store.closeAbruptly(); // process crash (page cache survives)
      const again = await openStore(cfg);
      await assertExactly(again, [0, 1, 2, 3, 4, ...okIdx, 99]);
      await again.shutdown();
    } finally {
      removeDir(root);
    }
  });
}

test('SYNC_FLUSH with ENOSPC: the waiting put gets FLUSH_DISK_TIMEOUT, later puts fail fast, and every stored message survives', async (t) => {
  const root = tempDir();
  try {
    const fsPort = new FaultyFileSystem();
    const cfg = retentionConfig(root, { flushDiskType: 'SYNC_FLUSH', syncFlushTimeout: 200, cleanResourceInterval: 20 });
    const { store } = await openRetentionStore(cfg, { deps: { fs: fsPort } });
    const keepAlive = setInterval(() => undefined, 1000); // the store's timers are unref'd
    t.after(() => clearInterval(keepAlive));
    const acked: number[] = [];
    for (let i = 0; i < 3; i++) {
      assert.equal((await store.putMessage(makeMessage({ body: seqBody(i, 100) }))).status, 'PUT_OK');
      acked.push(i);
    }
    fsPort.pwriteErrorCode = 'ENOSPC';
    const timedOut = await store.putMessage(makeMessage({ body: seqBody(3, 100) }));
    assert.equal(timedOut.status, 'FLUSH_DISK_TIMEOUT');
    acked.push(3);
    const refused = await store.putMessage(makeMessage({ body: seqBody(4, 100) }));
    assert.deepEqual([refused.status, refused.remark], ['SERVICE_NOT_AVAILABLE', 'message store is not writable: disk full: write failed with ENOSPC (injected ENOSPC)']);
    fsPort.pwriteErrorCode = null;
    await waitFor(() => store.isWritable());
    const ok = await store.putMessage(makeMessage({ body: seqBody(5, 100) }));
    assert.deepEqual([ok.status, ok.appendResult!.queueOffset], ['PUT_OK', 4]);
    acked.push(5);
    await assertExactly(store, acked);
    store.closeAbruptly();
    const again = await openStore(cfg);
    await assertExactly(again, acked);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('while writes fail with ENOSPC and usage is 91%, forced cleaning still frees space; writes resume afterwards', async () => {
  const root = tempDir();
  try {
    const fsPort = new FaultyFileSystem();
    const { store, probe } = await openRetentionStore(retentionConfig(root), { deps: { fs: fsPort } });
    while (store.commitLog.mfq.getFiles().length < 4) await store.putMessage(makeMessage({ body: seqBody(0, 1000) }));
    fsPort.pwriteErrorCode = 'ENOSPC';
    await store.putMessage(makeMessage({ body: seqBody(1, 10) })); // buffered; its write fails
    await new Promise((r) => setImmediate(r));
    assert.equal((await store.putMessage(makeMessage())).status, 'SERVICE_NOT_AVAILABLE');
    probe.set(() => (79 + 3 * store.commitLog.mfq.getFiles().length) / 100); // 4 files: 91%
    const r = await store.cleanService!.runPass();
    assert.equal(r.disk.diskFullReason, 'disk full: usage 91% > diskSpaceWarningLevelRatio 90% (commitlog partition)');
    assert.equal(r.commitLog!.deleted.length, 2, 'deleted until 85%: 4 → 2 files');
    assert.equal(store.getMinPhyOffset(), 2 * 4096);
    fsPort.pwriteErrorCode = null; // the freed space is usable again
    store.cleanService!.checkDisk();
    assert.equal((await store.putMessage(makeMessage())).status, 'PUT_OK');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

/** Mounts a tmpfs of `sizeMiB` at a new directory; null when mounting is not permitted. */
function mountTmpfs(sizeMiB: number): string | null {
  if (process.platform !== 'linux') return null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    fs.rmdirSync(dir);
    return null;
  }
}

function unmount(dir: string): void {
  try {
    execFileSync('umount', [dir], { stdio: 'ignore' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('a real 4 MiB tmpfs fills up: puts refused, acknowledged data intact, writes resume when space is freed', async (t) => {
  const mnt = mountTmpfs(4);
  if (!mnt) {
    t.skip('mounting a tmpfs is not permitted here');
    return;
  }
  try {
    const root = path.join(mnt, 'store');
    const ballast = path.join(mnt, 'ballast');
    fs.writeFileSync(ballast, Buffer.alloc(1024 * 1024, 1));
    const cfg: Partial<StoreConfig> = {
      ...retentionConfig(root, { mappedFileSizeCommitLog: 64 * 1024, messageIndexEnable: false, cleanFileForciblyEnable: false, cleanResourceInterval: 50 }),
    };
    const store = await openStore(cfg); // real statfs probe
    const acked: number[] = [];
    let refused: PutMessageResult | null = null;
    for (let s = 0; s < 10_000 && !refused; s++) {
      const r = await store.putMessage(makeMessage({ body: seqBody(s, 1024) }));
      if (stored(r)) acked.push(s);
      else refused = r;
    }
    assert.ok(refused, 'the disk filled up');
    assert.equal(refused.status, 'SERVICE_NOT_AVAILABLE');
    assert.match(refused.remark!, /^message store is not writable: disk full: /);
    assert.ok(acked.length > 1000, `stored ${acked.length} messages first`);
    await assertExactly(store, acked);
    fs.unlinkSync(ballast); // free 1 MiB
    await waitFor(async () => {
      const r = await store.putMessage(makeMessage({ body: seqBody(acked.length, 1024) }));
      if (stored(r)) acked.push(acked.length);
      return stored(r);
    }, 5000, 50);
    for (let i = 0; i < 20; i++) {
      const s = acked.length;
      assert.equal((await store.putMessage(makeMessage({ body: seqBody(s, 1024) }))).status, 'PUT_OK');
      acked.push(s);
    }
    await store.shutdown();
    const again = await openStore(cfg);
    await assertExactly(again, acked);
    await again.shutdown();
  } finally {
    unmount(mnt);
  }
});
