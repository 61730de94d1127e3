/**
 * CommitLog retention (spec §6.1): time/space/forced triggers (B29), hanged files (B31),
 * never losing the high-water mark (B30), emptied queues staying positioned (B04).
 * CL files 4 KiB; a 1000-byte body makes a 1092-byte record, 3 per file (file k holds T/q0
 * offsets 3k..3k+2).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeBlankRecord } from '../../../src/common/message/record-codec.js';
import { offsetToFileName } from '../../../src/store/mapped-file/file-names.js';
import { pullResponseCode } from '../../../src/broker/processors/pull-message-processor.js';
import { makeMessage, openStore, removeDir, tempDir } from '../../support/store-fixtures.js';
import {
  HOUR_MS,
  clDir,
  cqDir,
  fillCommitLogFiles,
  localTime,
  openRetentionStore,
  problems,
  retentionConfig,
  segmentNames,
  seqBody,
  seqOf,
  setAge,
  waitFor,
} from './retention-support.js';

const FILE = 4096;

test('B29 82%: only files older than fileReservedTime are eligible; nothing deleted, no error', async () => {
  const root = tempDir();
  try {
    const { store, probe, logs } = await openRetentionStore(retentionConfig(root), { usedPercent: 82 });
    await fillCommitLogFiles(store, 5);
    const now = localTime(10);
    for (const f of store.commitLog.mfq.getFiles()) setAge(store, f, now, 10 * HOUR_MS);
    const r = await store.cleanService!.runPass();
    assert.deepEqual(r.trigger, { time: false, space: true, manual: false });
    assert.equal(r.disk.cleanImmediately, false);
    assert.deepEqual(r.commitLog!.deleted, []);
    assert.equal(store.commitLog.mfq.getFiles().length, 5);
    assert.equal(store.getMinPhyOffset(), 0);
    assert.equal(store.getMinOffsetInQueue('T', 0), 0);
    assert.deepEqual(problems(logs), [], 'no warning or error at 82%');
    assert.equal((await store.putMessage(makeMessage())).status, 'PUT_OK');
    // at 82% an EXPIRED file is deleted at any hour (space trigger above diskMaxUsedSpaceRatio 75%)
    setAge(store, store.commitLog.mfq.getFiles()[0]!, now, 73 * HOUR_MS);
    probe.setPercent(70);
    assert.equal((await store.cleanService!.runPass()).commitLog, null, '70%, 10:30: no trigger');
    probe.setPercent(82);
    const r2 = await store.cleanService!.runPass();
    assert.equal(r2.commitLog!.deleted.length, 1);
    assert.equal(r2.commitLog!.forcedCount, 0);
    assert.equal(store.getMinPhyOffset(), FILE);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('B29 86%: the oldest unexpired files are deleted until usage is under diskSpaceCleanForciblyRatio, keeping the active file', async () => {
  const root = tempDir();
  try {
    const { store, probe } = await openRetentionStore(retentionConfig(root));
    await fillCommitLogFiles(store, 5);
    const now = localTime(10);
    for (const f of store.commitLog.mfq.getFiles()) setAge(store, f, now, HOUR_MS); // all young
    // usage 76% + 2% per CommitLog file: 5 files = 86%; one deletion brings it to 84%
    probe.set(() => (76 + 2 * store.commitLog.mfq.getFiles().length) / 100);
    const r = await store.cleanService!.runPass();
    assert.equal(r.disk.cleanImmediately, true);
    assert.deepEqual(r.commitLog!.deleted.map((p) => path.basename(p)), [offsetToFileName(0)]);
    assert.equal(r.commitLog!.forcedCount, 1);
    assert.equal(store.getMinPhyOffset(), FILE);
    assert.equal(store.getMinOffsetInQueue('T', 0), 3);
    const old = await store.getMessage('g', 'T', 0, 0, 32);
    assert.deepEqual([old.status, old.nextBeginOffset], ['OFFSET_TOO_SMALL', 3]);
    assert.equal(pullResponseCode(old.status, 0), 21, 'PULL_OFFSET_MOVED');
    assert.equal((await store.putMessage(makeMessage())).status, 'PUT_OK', '86% is below the warning level: puts accepted');

    // a usage that does not drop: every file but the active one goes (deleteFileBatchMax 10)
    probe.setPercent(86);
    const r2 = await store.cleanService!.runPass();
    assert.equal(r2.commitLog!.deleted.length, 3);
    assert.equal(r2.commitLog!.stopReason, 'only the file being written is left');
    assert.equal(store.commitLog.mfq.getFiles().length, 1);
    assert.equal(store.getMinPhyOffset(), 4 * FILE);
    assert.equal(store.getMinOffsetInQueue('T', 0), 12);
    assert.equal(store.getMaxOffsetInQueue('T', 0), 14);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('B29 91%: puts rejected with a disk-full SERVICE_NOT_AVAILABLE; 40%: accepted again; reads keep working', async () => {
  const root = tempDir();
  try {
    const { store, probe } = await openRetentionStore(retentionConfig(root, { cleanFileForciblyEnable: false }));
    const n = await fillCommitLogFiles(store, 2);
    probe.setPercent(91);
    store.cleanService!.checkDisk();
    const refused = await store.putMessage(makeMessage());
    assert.equal(refused.status, 'SERVICE_NOT_AVAILABLE');
    assert.equal(refused.remark, 'message store is not writable: disk full: usage 91% > diskSpaceWarningLevelRatio 90% (commitlog partition)');
    assert.equal(store.isWritable(), false);
    const read = await store.getMessage('g', 'T', 0, 0, 32);
    assert.equal(read.status, 'FOUND');
    assert.deepEqual(read.messages.map(seqOf), [...Array(read.messages.length).keys()]);
    probe.setPercent(88); // hysteresis: still refused until at or below 85%
    store.cleanService!.checkDisk();
    assert.match((await store.putMessage(makeMessage())).remark!, /disk full: usage 88% still > diskSpaceCleanForciblyRatio 85%/);
    probe.setPercent(40);
    store.cleanService!.checkDisk();
    const ok = await store.putMessage(makeMessage());
    assert.equal(ok.status, 'PUT_OK');
    assert.equal(ok.appendResult!.queueOffset, n, 'refused puts consumed no queue offset');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('B29 disk full and recovery happen by themselves on the disk-check timer', async () => {
  const root = tempDir();
  try {
    const { store, probe } = await openRetentionStore(retentionConfig(root, { cleanResourceInterval: 30, cleanFileForciblyEnable: false }));
    assert.equal((await store.putMessage(makeMessage())).status, 'PUT_OK');
    probe.setPercent(91);
    await waitFor(async () => (await store.putMessage(makeMessage())).status === 'SERVICE_NOT_AVAILABLE');
    probe.setPercent(40);
    await waitFor(async () => (await store.putMessage(makeMessage())).status === 'PUT_OK');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('B29 at 04:00 with low usage only files older than 72 h are deleted; at 10:00 none', async () => {
  const root = tempDir();
  try {
    const { store, clock, logs } = await openRetentionStore(retentionConfig(root), { nowMs: localTime(10), usedPercent: 40 });
    await fillCommitLogFiles(store, 5);
    const files = store.commitLog.mfq.getFiles();
    const at4 = localTime(4);
    const ages = [100, 73, 71, 1, 0];
    files.forEach((f, i) => setAge(store, f, at4, ages[i]! * HOUR_MS));
    clock.set(localTime(10));
    const none = await store.cleanService!.runPass();
    assert.deepEqual(none.trigger, { time: false, space: false, manual: false });
    assert.equal(store.commitLog.mfq.getFiles().length, 5);
    clock.set(at4);
    const r = await store.cleanService!.runPass();
    assert.deepEqual(r.trigger, { time: true, space: false, manual: false });
    assert.deepEqual(r.commitLog!.deleted.map((p) => path.basename(p)), [offsetToFileName(0), offsetToFileName(FILE)]);
    assert.equal(r.commitLog!.forcedCount, 0);
    assert.equal(r.commitLog!.stopReason, `oldest file ${offsetToFileName(2 * FILE)} is not expired`);
    assert.equal(store.getMinPhyOffset(), 2 * FILE);
    assert.equal(store.getMinOffsetInQueue('T', 0), 6);
    assert.deepEqual(segmentNames(clDir(root)).slice(0, 3), [offsetToFileName(2 * FILE), offsetToFileName(3 * FILE), offsetToFileName(4 * FILE)]);
    assert.deepEqual(problems(logs), []);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('deleteWhen "02;04" and deleteFileBatchMax limit one pass; the next pass continues', async () => {
  const root = tempDir();
  try {
    const { store } = await openRetentionStore(retentionConfig(root, { deleteWhen: '02; 04', deleteFileBatchMax: 2 }), { nowMs: localTime(2) });
    await fillCommitLogFiles(store, 5);
    for (const f of store.commitLog.mfq.getFiles()) setAge(store, f, localTime(2), 80 * HOUR_MS);
    const r1 = await store.cleanService!.runPass();
    assert.equal(r1.commitLog!.deleted.length, 2);
    assert.equal(r1.commitLog!.stopReason, 'deleteFileBatchMax (2) files deleted');
    const r2 = await store.cleanService!.runPass();
    assert.equal(r2.commitLog!.deleted.length, 2);
    assert.equal(store.getMinPhyOffset(), 4 * FILE, 'the active file is never deleted, however old');
    const r3 = await store.cleanService!.runPass();
    assert.deepEqual(r3.commitLog!.deleted, []);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('manual trigger (DELETE_EXPIRED_COMMITLOG) deletes expired files now at any hour, never unexpired ones', async () => {
  const root = tempDir();
  try {
    const { store } = await openRetentionStore(retentionConfig(root), { nowMs: localTime(15) });
    await fillCommitLogFiles(store, 4);
    const files = store.commitLog.mfq.getFiles();
    [80, 75, 2, 0].forEach((h, i) => setAge(store, files[i]!, localTime(15), h * HOUR_MS));
    const r = await store.executeDeleteFilesManually();
    assert.deepEqual(r.trigger, { time: false, space: false, manual: true });
    assert.equal(r.commitLog!.deleted.length, 2);
    assert.equal(store.getMinPhyOffset(), 2 * FILE);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('records not dispatched yet are never deleted, even forcibly', async () => {
  const root = tempDir();
  try {
    const { store, probe } = await openRetentionStore(retentionConfig(root));
    await fillCommitLogFiles(store, 3);
    probe.setPercent(95);
    store.reput.setReputFromOffset(FILE - 10); // pretend dispatch lags inside f0
    const r = await store.cleanService!.runPass();
    assert.deepEqual(r.commitLog!.deleted, []);
    assert.match(r.commitLog!.stopReason, /not dispatched yet/);
    store.reput.setReputFromOffset(store.getMaxPhyOffset());
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('B31 an expired file held by a reader is marked unavailable, and the next pass deletes it once released', async () => {
  const root = tempDir();
  try {
    const { store, clock } = await openRetentionStore(retentionConfig(root), { nowMs: localTime(4) });
    await fillCommitLogFiles(store, 3);
    const [f0, f1] = store.commitLog.mfq.getFiles();
    setAge(store, f0!, localTime(4), 80 * HOUR_MS);
    setAge(store, f1!, localTime(4), 1 * HOUR_MS);
    assert.equal(f0!.hold(), true, 'a reader holds f0');
    const r1 = await store.cleanService!.runPass();
    assert.deepEqual(r1.commitLog!.deleted, []);
    assert.equal(r1.commitLog!.hanged, f0!.filePath);
    assert.equal(f0!.isAvailable(), false);
    assert.equal(fs.existsSync(f0!.filePath), true, 'not deleted while held');
    assert.equal(store.getMinPhyOffset(), FILE, 'the min already skips the unavailable file');
    // reads at f0 offsets: "too small / not found", never an error from a half-closed file
    const pulled = await store.getMessage('g', 'T', 0, 0, 32);
    assert.deepEqual([pulled.status, pulled.nextBeginOffset], ['OFFSET_TOO_SMALL', 3]);
    assert.equal(await store.lookMessageByOffset(0), null);
    assert.equal(f0!.read(0, 8), null, 'the holder reads nothing more');
    f0!.release();
    assert.equal(await store.lookMessageByOffset(0), null);
    // second pass: 10:30 (no time trigger), low usage, no new expiry
    clock.set(localTime(10));
    const r2 = await store.cleanService!.runPass();
    assert.equal(r2.commitLog, null, 'no trigger');
    assert.equal(r2.hanged.deleted, f0!.filePath);
    assert.equal(fs.existsSync(f0!.filePath), false);
    assert.equal(store.commitLog.mfq.getFiles()[0], f1);
    assert.equal(store.getMinPhyOffset(), FILE);
    assert.deepEqual(segmentNames(clDir(root)).slice(0, 2), [offsetToFileName(FILE), offsetToFileName(2 * FILE)]);
    const again = await store.getMessage('g', 'T', 0, 1, 32);
    assert.deepEqual([again.status, again.nextBeginOffset], ['OFFSET_TOO_SMALL', 3]);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('B31 variant: a file still held is released forcibly after destroyMapedFileIntervalForcibly by the hanged-file retry', async () => {
  const root = tempDir();
  try {
    const { store, clock } = await openRetentionStore(
      retentionConfig(root, { destroyMapedFileIntervalForcibly: 120_000, redeleteHangedFileInterval: 120_000 }),
      { nowMs: localTime(4, 0) },
    );
    await fillCommitLogFiles(store, 3);
    const f0 = store.commitLog.mfq.getFiles()[0]!;
    setAge(store, f0, localTime(4, 0), 80 * HOUR_MS);
    f0.hold();
    assert.equal((await store.cleanService!.runPass()).commitLog!.hanged, f0.filePath);
    clock.advance(60_000);
    const early = await store.cleanService!.runPass();
    assert.equal(fs.existsSync(f0.filePath), true, 'within the interval the holder is respected');
    assert.equal(early.hanged.stillHeld, f0.filePath);
    clock.advance(61_000);
    const late = await store.cleanService!.runPass();
    assert.equal(late.hanged.deleted ?? late.commitLog?.deleted[0], f0.filePath);
    assert.equal(fs.existsSync(f0.filePath), false);
    f0.release(); // the late holder lets go: no error, nothing left to clean
    assert.equal(f0.read(0, 8), null);
    assert.equal(store.getMinPhyOffset(), FILE);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

/** Makes f0 end with the blank filler and creates the empty f1 (a roll with no message yet), as dispatch sees it. */
function rollToEmptyNextFile(store: Awaited<ReturnType<typeof openStore>>, createNext: boolean): void {
  const mfq = store.commitLog.mfq;
  const last = mfq.getLastMappedFile()!;
  const blank = Buffer.alloc(8);
  writeBlankRecord(blank, 0, last.remaining());
  last.appendAndFillToEnd(blank);
  if (createNext) mfq.getLastMappedFileOrCreate(0);
  store.reput.drive(store.getMaxPhyOffset());
}

test('B30 retention deletes f0 then crash: CL min = max = 4096 and T/q0 max = 12 survive; next message at 4096 with queue offset 12', async () => {
  const root = tempDir();
  try {
    const { store } = await openRetentionStore(retentionConfig(root), { nowMs: localTime(4) });
    for (let i = 0; i < 12; i++) assert.equal((await store.putMessage(makeMessage({ body: seqBody(i, 238) }))).appendResult!.wroteOffset, i * 330);
    rollToEmptyNextFile(store, true);
    assert.deepEqual([store.getMinPhyOffset(), store.getMaxPhyOffset(), store.getMaxOffsetInQueue('T', 0)], [0, FILE, 12]);
    setAge(store, store.commitLog.mfq.getFiles()[0]!, localTime(4), 80 * HOUR_MS);
    const r = await store.cleanService!.runPass();
    assert.deepEqual(r.commitLog!.deleted.map((p) => path.basename(p)), [offsetToFileName(0)]);
    assert.deepEqual(segmentNames(cqDir(root)), [offsetToFileName(200)], 'CQ file [0,10) deleted, the last one kept');
    store.closeAbruptly(); // crash before anything else is persisted

    assert.equal(segmentNames(clDir(root))[0], offsetToFileName(FILE), 'never zero CommitLog files (the next one may be preallocated too)');
    const again = await openStore(retentionConfig(root));
    assert.equal(again.recoveryReport.mode, 'abnormal');
    assert.equal(again.getMinPhyOffset(), 4096);
    assert.equal(again.getMaxPhyOffset(), 4096);
    assert.equal(again.getMaxOffsetInQueue('T', 0), 12);
    assert.equal(again.getMinOffsetInQueue('T', 0), 12);
    const next = await again.putMessage(makeMessage({ body: seqBody(12, 238) }));
    assert.deepEqual([next.appendResult!.wroteOffset, next.appendResult!.queueOffset], [4096, 12]);
    const got = await again.getMessage('g', 'T', 0, 12, 32);
    assert.deepEqual([got.status, got.messages.map(seqOf)], ['FOUND', [12]]);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('B30 variant: crash between "old file full" and "new file created" during a roll: the full last file is kept, next message at 4096 with queue offset 12', async () => {
  const root = tempDir();
  try {
    const { store, probe } = await openRetentionStore(retentionConfig(root, { cleanFileForciblyEnable: true }), { nowMs: localTime(4) });
    for (let i = 0; i < 12; i++) await store.putMessage(makeMessage({ body: seqBody(i, 238) }));
    rollToEmptyNextFile(store, false); // the roll's new file was never created
    probe.setPercent(95);
    store.commitLog.mfq.getFiles().forEach((f) => setAge(store, f, localTime(4), 80 * HOUR_MS));
    const r = await store.cleanService!.runPass();
    assert.deepEqual(r.commitLog!.deleted, [], 'expired, forced, 95% full: the last file still stays');
    assert.equal(r.commitLog!.stopReason, 'only the file being written is left');
    store.closeAbruptly();
    const again = await openStore(retentionConfig(root));
    assert.deepEqual([again.getMinPhyOffset(), again.getMaxPhyOffset(), again.getMaxOffsetInQueue('T', 0)], [0, 4096, 12]);
    const next = await again.putMessage(makeMessage({ body: seqBody(12, 238) }));
    assert.deepEqual([next.appendResult!.wroteOffset, next.appendResult!.queueOffset], [4096, 12]);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('B30 the newest file and the directory are forced to disk before the first deletion', async () => {
  const root = tempDir();
  try {
    const { FaultyFileSystem } = await import('../../support/faulty-file-system.js');
    const events: string[] = [];
    const fdPaths = new Map<number, string>();
    class RecordingFs extends FaultyFileSystem {
      override open(p: string, mode: 'r' | 'r+' | 'w+' | 'wx+' | 'a+'): number {
        const fd = super.open(p, mode);
        fdPaths.set(fd, p);
        return fd;
      }
      override async fsync(fd: number): Promise<void> {
        events.push(`fsync ${path.relative(root, fdPaths.get(fd) ?? '?')}`);
        return super.fsync(fd);
      }
      override unlink(p: string): void {
        events.push(`unlink ${path.relative(root, p)}`);
        super.unlink(p);
      }
    }
    const { store } = await openRetentionStore(retentionConfig(root, { messageIndexEnable: false }), { nowMs: localTime(4), deps: { fs: new RecordingFs() } });
    await fillCommitLogFiles(store, 2);
    setAge(store, store.commitLog.mfq.getFiles()[0]!, localTime(4), 80 * HOUR_MS);
    events.length = 0;
    await store.cleanService!.runPass();
    const cl = events.filter((e) => e.includes('commitlog'));
    assert.deepEqual(cl.slice(0, 3), [`fsync commitlog/${offsetToFileName(FILE)}`, 'fsync commitlog', `unlink commitlog/${offsetToFileName(0)}`]);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('B04 after retention empties T/q0 and a crash: min = max = 10, the next message gets 10 and a consumer at 10 receives it', async () => {
  const root = tempDir();
  try {
    const { store } = await openRetentionStore(retentionConfig(root), { nowMs: localTime(4) });
    for (let i = 0; i < 10; i++) await store.putMessage(makeMessage({ body: seqBody(i, 200) }));
    while (store.commitLog.mfq.getFiles().length < 2) await store.putMessage(makeMessage({ topic: 'U', body: seqBody(0, 1000) }));
    setAge(store, store.commitLog.mfq.getFiles()[0]!, localTime(4), 80 * HOUR_MS);
    await store.cleanService!.runPass();
    assert.equal(store.getMinPhyOffset(), FILE);
    assert.deepEqual([store.getMinOffsetInQueue('T', 0), store.getMaxOffsetInQueue('T', 0)], [10, 10]);
    store.closeAbruptly();
    const again = await openStore(retentionConfig(root));
    assert.deepEqual([again.getMinOffsetInQueue('T', 0), again.getMaxOffsetInQueue('T', 0)], [10, 10]);
    const at10 = await again.getMessage('g', 'T', 0, 10, 32);
    assert.deepEqual([at10.status, at10.nextBeginOffset], ['OFFSET_OVERFLOW_ONE', 10]);
    const low = await again.getMessage('g', 'T', 0, 4, 32);
    assert.deepEqual([low.status, low.nextBeginOffset], ['OFFSET_TOO_SMALL', 10]);
    const r = await again.putMessage(makeMessage({ body: seqBody(10, 200) }));
    assert.equal(r.appendResult!.queueOffset, 10);
    const got = await again.getMessage('g', 'T', 0, 10, 32);
    assert.deepEqual([got.status, got.messages.map(seqOf), got.nextBeginOffset], ['FOUND', [10], 11]);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});
