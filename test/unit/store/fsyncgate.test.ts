/**
 * fsyncgate (issue 19 item 5): after a failed fdatasync Linux may mark the dirty pages clean, so
 * a retry "succeeds" without the bytes on disk. A failed sync is therefore final until restart:
 * the segment keeps the error (flush/force rethrow it, its flushed position never moves), the
 * store refuses puts naming the file, the error and "restart the broker", SYNC_FLUSH waiters are
 * answered FLUSH_DISK_TIMEOUT at once (never PUT_OK), shutdown keeps the abort file and the next
 * start's abnormal recovery finds what really is on disk.
 *
 * Faults: FaultyFileSystem (real files; fdatasync fails once with EIO, then would work) and
 * SimulatedFileSystem.failNextSync (device model: the pages dirty at the failure are dropped, as
 * Linux does, so a power loss shows what a "successful" retry would have left).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { MappedFile } from '../../../src/store/mapped-file/mapped-file.js';
import { SyncFailedError } from '../../../src/store/mapped-file/sync-failed-error.js';
import type { PutMessageResult } from '../../../src/store/message-store.js';
import { FaultyFileSystem } from '../../support/faulty-file-system.js';
import { SimulatedFileSystem } from '../../support/simulated-file-system.js';
import { capturingLogger, makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

const restartRemark = 'restart the broker: recovery re-checks the data';

test('MappedFile: a failed fdatasync is sticky — flush and force rethrow it, flushedPosition stays, onSyncFailed told once', async () => {
  const dir = tempDir();
  try {
    const faulty = new FaultyFileSystem();
    const told: SyncFailedError[] = [];
    const mf = MappedFile.create(path.join(dir, 'seg'), 0, 64 * 1024, { fs: faulty, onSyncFailed: (e) => told.push(e) });
    mf.append(Buffer.alloc(100, 1));
    assert.equal(await mf.flush(0), 100);
    mf.append(Buffer.alloc(50, 2));
    let calls = 0;
    faulty.pathFault = (op) => (op === 'fdatasync' && calls++ === 0 ? 'EIO' : null); // fails once, then would work
    const first = await mf.flush(0).catch((e: unknown) => e);
    assert.ok(first instanceof SyncFailedError);
    assert.equal(first.message, `fdatasync of ${path.join(dir, 'seg')} failed with EIO (injected EIO)`);
    assert.deepEqual([first.code, first.flushedPosition, first.targetPosition], ['EIO', 100, 150]);
    mf.append(Buffer.alloc(10, 3));
    assert.equal(await mf.flush(0).catch((e: unknown) => e), first, 'the same error again, no new fdatasync');
    assert.equal(await mf.force().catch((e: unknown) => e), first);
    assert.equal(calls, 1);
    assert.equal(mf.getFlushedPosition(), 100);
    assert.deepEqual(told, [first]);
    assert.deepEqual(mf.read(100, 60), Buffer.concat([Buffer.alloc(50, 2), Buffer.alloc(10, 3)]), 'reads keep working');
    mf.close();
  } finally {
    removeDir(dir);
  }
});

test('SYNC_FLUSH, fdatasync fails once with EIO: no waiter gets PUT_OK, puts are refused for good, abnormal recovery on restart finds every record', async () => {
  const root = tempDir();
  try {
    const faulty = new FaultyFileSystem();
    const logger = capturingLogger();
    const cfg = smallConfig(root, { flushDiskType: 'SYNC_FLUSH', warmMapedFileEnable: false, mappedFileSizeCommitLog: 64 * 1024 });
    const store = await openStore(cfg, { fs: faulty, logger });
    const clDir = path.join(root, 'commitlog');
    for (let i = 0; i < 5; i++) assert.equal((await store.putMessage(makeMessage({ body: `ok-${i}` }))).status, 'PUT_OK');
    const flushedBefore = store.commitLog.mfq.getFlushedWhere();
    assert.equal(flushedBefore, store.getMaxPhyOffset());

    let failures = 0;
    faulty.pathFault = (op, p) => (op === 'fdatasync' && p.startsWith(clDir) && failures++ === 0 ? 'EIO' : null);
    const t0 = Date.now();
    const results: PutMessageResult[] = await Promise.all(Array.from({ length: 10 }, (_, i) => store.putMessage(makeMessage({ body: `lost-${i}` }))));
    const answeredMs = Date.now() - t0;
    const segment = path.join(clDir, '00000000000000000000');
    const reason = `fdatasync of ${segment} failed with EIO (injected EIO); data written since the last successful flush may not be on disk, writes are refused: ${restartRemark}`;
    assert.deepEqual(
      results.map((r) => [r.status, r.remark]),
      results.map(() => ['FLUSH_DISK_TIMEOUT', `sync flush failed: ${reason}`]),
    );
    assert.ok(answeredMs < 2000, `answered after ${answeredMs} ms, not after syncFlushTimeout (5 s)`);
    assert.equal(failures, 1);

    const refused = await store.putMessage(makeMessage({ body: 'refused' }));
    assert.deepEqual(refused, { status: 'SERVICE_NOT_AVAILABLE', remark: `message store is not writable: ${reason}` });
    await new Promise((r) => setTimeout(r, 200)); // fdatasync would work now: nothing may clear the flag
    assert.equal(store.isWritable(), false);
    assert.equal(store.commitLog.mfq.getFlushedWhere(), flushedBefore, 'flushed offset never moves past the failure');
    assert.equal((await store.putMessage(makeMessage())).status, 'SERVICE_NOT_AVAILABLE');
    // reads keep working; consumers see only what was flushed (SYNC_FLUSH dispatches up to it)
    const g = await store.getMessage('g', 'T', 0, 0, 32);
    assert.equal(g.status, 'FOUND');
    assert.deepEqual(g.messages.map((m) => decodeRecord(m).body.toString()), ['ok-0', 'ok-1', 'ok-2', 'ok-3', 'ok-4']);
    assert.equal(await store.lookMessageByOffset(results[9]!.appendResult!.wroteOffset).then((m) => m?.body.toString()), 'lost-9');
    const errors = logger.lines.filter((l) => l.level === 'error');
    assert.deepEqual(errors.map((l) => l.msg), [reason], 'one clear error line');
    const checkpointBefore = store.checkpoint.physicMsgTimestamp;

    await store.shutdown();
    assert.equal(fs.existsSync(path.join(root, 'abort')), true, 'the abort file stays');
    const again = await openStore(cfg);
    assert.equal(again.recoveryReport.mode, 'abnormal');
    assert.equal(again.isWritable(), true);
    // on a real file system the bytes are still in the page cache: recovery CRC-checks and keeps them
    assert.equal(again.getMaxOffsetInQueue('T', 0), 15);
    const bodies: string[] = [];
    for (let q = 0; q < 15; q++) bodies.push((await again.lookMessageByOffset(again.getCommitLogOffsetInQueue('T', 0, q)))!.body.toString());
    assert.deepEqual(
      bodies,
      [...Array.from({ length: 5 }, (_, i) => `ok-${i}`), ...Array.from({ length: 10 }, (_, i) => `lost-${i}`)],
    );
    assert.ok(again.checkpoint.physicMsgTimestamp >= checkpointBefore);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('fsyncgate with dropped pages (device model): every PUT_OK message survives a power loss after the failure; the store never claimed the dropped ones', async () => {
  const sim = new SimulatedFileSystem();
  const root = '/sim/fsyncgate';
  const cfg = smallConfig(root, { flushDiskType: 'SYNC_FLUSH', warmMapedFileEnable: false, mappedFileSizeCommitLog: 64 * 1024, flushIntervalConsumeQueue: 20 });
  const store = await openStore(cfg, { fs: sim });
  const acked: string[] = [];
  const put = async (body: string): Promise<PutMessageResult> => {
    const r = await store.putMessage(makeMessage({ body: body.padEnd(200, '.') }));
    if (r.status === 'PUT_OK') acked.push(body);
    return r;
  };
  for (let i = 0; i < 5; i++) assert.equal((await put(`ok-${i}`)).status, 'PUT_OK');
  sim.failNextSync((p) => p.includes('/commitlog/'));
  const during = await Promise.all(Array.from({ length: 4 }, (_, i) => put(`dropped-${i}`)));
  assert.deepEqual(during.map((r) => r.status), ['FLUSH_DISK_TIMEOUT', 'FLUSH_DISK_TIMEOUT', 'FLUSH_DISK_TIMEOUT', 'FLUSH_DISK_TIMEOUT']);
  assert.deepEqual(sim.failedSyncs, [`${root}/commitlog/00000000000000000000`]);
  // the pre-fix behaviour retried here, "succeeded" and answered PUT_OK for pages the kernel had dropped
  for (let i = 0; i < 3; i++) assert.equal((await put(`later-${i}`)).status, 'SERVICE_NOT_AVAILABLE');
  await store.shutdown();
  assert.equal(sim.exists(`${root}/abort`), true);
  sim.powerLoss();

  const again = await openStore(cfg, { fs: sim });
  assert.equal(again.recoveryReport.mode, 'abnormal');
  const max = again.getMaxOffsetInQueue('T', 0);
  const found: string[] = [];
  for (let q = 0; q < max; q++) {
    const m = await again.lookMessageByOffset(again.getCommitLogOffsetInQueue('T', 0, q));
    found.push(m!.body.toString().replace(/\.+$/, ''));
  }
  assert.deepEqual(found, acked, 'exactly the acknowledged messages: the dropped pages are gone, nothing acknowledged is');
  assert.deepEqual(acked, ['ok-0', 'ok-1', 'ok-2', 'ok-3', 'ok-4']);
  assert.equal((await again.putMessage(makeMessage())).appendResult!.queueOffset, 5);
  await again.shutdown();
});

test('ASYNC_FLUSH, fdatasync fails once: puts refused until restart, the checkpoint does not move past what was flushed', async () => {
  const root = tempDir();
  try {
    const faulty = new FaultyFileSystem();
    const cfg = smallConfig(root, { flushIntervalCommitLog: 10, flushCommitLogThoroughInterval: 10, warmMapedFileEnable: false, mappedFileSizeCommitLog: 64 * 1024 });
    const clock = new ManualClock(1_700_000_000_000);
    const store = await openStore(cfg, { fs: faulty, clock });
    assert.equal((await store.putMessage(makeMessage({ body: 'a' }))).status, 'PUT_OK');
    const mfq = store.commitLog.mfq;
    while (mfq.getFlushedWhere() < store.getMaxPhyOffset()) await new Promise((r) => setTimeout(r, 5));
    const flushed = mfq.getFlushedWhere();
    const checkpointTs = store.checkpoint.physicMsgTimestamp;
    assert.equal(checkpointTs, 1_700_000_000_000);
    clock.advance(60_000); // 'b' is stored a minute later
    let failures = 0;
    faulty.pathFault = (op, p) => (op === 'fdatasync' && p.includes(`${path.sep}commitlog${path.sep}`) && failures++ === 0 ? 'EIO' : null);
    assert.equal((await store.putMessage(makeMessage({ body: 'b' }))).status, 'PUT_OK', 'ASYNC_FLUSH answers before the flush');
    while (store.isWritable()) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 100)); // ~10 more flush ticks; fdatasync would work now
    assert.equal(failures, 1, 'the failed segment is never synced again');
    assert.equal(mfq.getFlushedWhere(), flushed);
    assert.equal(store.checkpoint.physicMsgTimestamp, checkpointTs);
    const r = await store.putMessage(makeMessage({ body: 'c' }));
    assert.equal(r.status, 'SERVICE_NOT_AVAILABLE');
    assert.ok(r.remark!.endsWith(restartRemark), r.remark);
    await store.shutdown();
    assert.equal(fs.existsSync(path.join(root, 'abort')), true);
    const again = await openStore(cfg);
    assert.equal(again.recoveryReport.mode, 'abnormal');
    assert.equal(again.getMaxOffsetInQueue('T', 0), 2);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});
