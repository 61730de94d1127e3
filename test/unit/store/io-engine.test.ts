/**
 * I/O engine: in-place record encoding, reference counting under deletion with concurrent
 * pulls and flushes (§5.1), group commit (§4.4), segment pre-writing (§5.3, warmMapedFileEnable)
 * and the flush/engine config keys.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { decodeRecord, encodeRecord, patchRecord } from '../../../src/common/message/record-codec.js';
import { CommitLog } from '../../../src/store/commitlog/commit-log.js';
import { QueueOffsetTable } from '../../../src/store/consumequeue/queue-offset-table.js';
import { offsetToFileName } from '../../../src/store/mapped-file/file-names.js';
import { MappedFile } from '../../../src/store/mapped-file/mapped-file.js';
import { MappedFileQueue } from '../../../src/store/mapped-file/mapped-file-queue.js';
import { completeStoreConfig, resolveStoreConfig } from '../../../src/store/store-config.js';
import type { GetMessageStatus } from '../../../src/store/message-store.js';
import { FaultyFileSystem } from '../../support/faulty-file-system.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir, dispatched } from '../../support/store-fixtures.js';

/**
 * Node file system that checks descriptor hygiene: every call must use an open fd, and no fd
 * may be closed while an fdatasync/pwriteAsync on it is still running. Optional delays make
 * those operations slow enough to race with deletion.
 */
class CheckingFileSystem extends NodeFileSystem {
  readonly violations: string[] = [];
  private readonly open_ = new Map<number, string>();
  private readonly pending = new Map<number, number>();
  fdatasyncDelayMs = 0;
  pwriteAsyncDelayMs = 0;
  fdatasyncCalls = 0;
  asyncZeroWrites: Array<{ path: string; position: number; length: number }> = [];

  override open(p: string, mode: Parameters<NodeFileSystem['open']>[1]): number {
    const fd = super.open(p, mode);
    this.open_.set(fd, p);
    return fd;
  }
  override close(fd: number): void {
    if (!this.open_.has(fd)) this.violations.push(`close of unknown fd ${fd}`);
    if ((this.pending.get(fd) ?? 0) > 0) this.violations.push(`close of fd ${fd} (${this.open_.get(fd)}) under a pending async op`);
    this.open_.delete(fd);
    super.close(fd);
  }
  private check(fd: number, op: string): void {
    if (!this.open_.has(fd)) this.violations.push(`${op} on closed fd ${fd}`);
  }
  override pread(fd: number, buf: Buffer, off: number, len: number, pos: number): number {
    this.check(fd, 'pread');
    return super.pread(fd, buf, off, len, pos);
  }
  override pwrite(fd: number, buf: Buffer, off: number, len: number, pos: number): number {
    this.check(fd, 'pwrite');
    return super.pwrite(fd, buf, off, len, pos);
  }
  private async tracked<T>(fd: number, op: string, delayMs: number, run: () => Promise<T>): Promise<T> {
    this.check(fd, op);
    this.pending.set(fd, (this.pending.get(fd) ?? 0) + 1);
    try {
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      return await run();
    } finally {
      this.pending.set(fd, this.pending.get(fd)! - 1);
    }
  }
  override fdatasync(fd: number): Promise<void> {
    this.fdatasyncCalls++;
    return this.tracked(fd, 'fdatasync', this.fdatasyncDelayMs, () => super.fdatasync(fd));
  }
  override pwriteAsync(fd: number, buf: Buffer, off: number, len: number, pos: number): Promise<number> {
    this.asyncZeroWrites.push({ path: this.open_.get(fd) ?? '?', position: pos, length: len });
    return this.tracked(fd, 'pwriteAsync', this.pwriteAsyncDelayMs, () => super.pwriteAsync(fd, buf, off, len, pos));
  }
  openFds(): number {
    return this.open_.size;
  }
}

const until = async (cond: () => boolean, what: string): Promise<void> => {
  for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), `timed out waiting for ${what}`);
};

test('in-place append: reserve/advance encode into the write buffer; readers see the bytes; -1 beyond the buffer', () => {
  const dir = tempDir();
  try {
    const mf = MappedFile.create(path.join(dir, offsetToFileName(0)), 0, 8192, { fs: new NodeFileSystem(), writeBufferBytes: 1024, commitThresholdBytes: 512 });
    const at = mf.reserve(300);
    assert.equal(at, 0);
    mf.writeBufferRef().fill(7, at, at + 300);
    assert.equal(mf.read(0, 1), null, 'nothing visible before advance');
    mf.advance(300);
    assert.equal(mf.getWrotePosition(), 300);
    assert.equal(mf.getCommittedPosition(), 0, 'below the commit threshold: still buffered');
    assert.deepEqual(mf.read(0, 300), Buffer.alloc(300, 7));
    const at2 = mf.reserve(300);
    assert.equal(at2, 300);
    mf.writeBufferRef().fill(8, at2, at2 + 300);
    mf.advance(300);
    assert.equal(mf.getCommittedPosition(), 600, 'threshold passed: committed');
    assert.equal(mf.reserve(2000), -1, 'larger than the write buffer');
    assert.throws(() => mf.advance(5000), RangeError);
    assert.deepEqual(mf.read(290, 20), Buffer.concat([Buffer.alloc(10, 7), Buffer.alloc(10, 8)]));
    mf.close();
  } finally {
    removeDir(dir);
  }
});

test('CommitLog encodes records in place byte for byte like encodeRecord + patchRecord, also past the write buffer', () => {
  const dir = tempDir();
  try {
    const clock = new ManualClock(1_700_000_000_123);
    const cl = new CommitLog({ dir, fileSize: 8 * 1024 * 1024, fs: new NodeFileSystem(), clock, logger: silentLogger, maxMessageSize: 4 * 1024 * 1024, delayLevelTableMs: [1000] });
    cl.load();
    const offsets = new QueueOffsetTable();
    offsets.set('T', 1, 41);
    const msgs = [
      makeMessage({ topic: 'T', queueId: 1, body: 'small', tags: 'TagA', keys: 'k1 k2', properties: { UNIQ_KEY: 'ABCDEF' } }),
      makeMessage({ topic: 'T2', queueId: 2, body: Buffer.alloc(70_000, 3), properties: { 'ключ': 'значение' } }),
      makeMessage({ topic: 'T', queueId: 1, body: Buffer.alloc(4 * 1024 * 1024, 9) }), // record > 4 MiB write buffer
    ];
    for (const msg of msgs) {
      const out = cl.append(msg, offsets);
      assert.equal(out.status, 'PUT_OK');
      if (out.status !== 'PUT_OK') continue;
      const r = out.appendResult;
      const expected = encodeRecord(msg);
      patchRecord(expected, 0, r.queueOffset, r.wroteOffset, r.storeTimestamp);
      assert.equal(r.wroteBytes, expected.length);
      assert.deepEqual(cl.getData(r.wroteOffset, r.wroteBytes), expected);
      assert.equal(out.dispatch.sysFlag, expected.readInt32BE(36));
      assert.equal(r.msgId, decodeRecord(expected).msgId);
    }
    assert.equal(offsets.get('T', 1), 43);
    assert.equal(offsets.get('T2', 2), 1);
    cl.mfq.shutdown();
  } finally {
    removeDir(dir);
  }
});

test('a forced release while an fdatasync is in flight closes the fd only after the fdatasync settles', async () => {
  const dir = tempDir();
  try {
    const checking = new CheckingFileSystem();
    checking.fdatasyncDelayMs = 30;
    const clock = new ManualClock(1000);
    const p = path.join(dir, offsetToFileName(0));
    const mf = MappedFile.create(p, 0, 4096, { fs: checking, clock });
    mf.append(Buffer.from('abc'));
    const flushing = mf.flush(0); // holds the file until the fdatasync returns
    assert.equal(mf.getRefCount(), 2);
    assert.equal(mf.destroy(120_000), false, 'held by the flush: shut down, not deleted');
    assert.equal(mf.read(0, 3), null, 'no new readers after shutdown');
    clock.advance(120_000);
    assert.equal(mf.destroy(120_000), true, 'forced after destroyMapedFileIntervalForcibly');
    assert.equal(fs.existsSync(p), false);
    assert.equal(await flushing, 3, 'the flush still completes on its fd');
    assert.deepEqual(checking.violations, []);
    assert.equal(checking.openFds(), 0, 'closed once the fdatasync settled');
  } finally {
    removeDir(dir);
  }
});

test('concurrent pulls while CommitLog files are destroyed never throw, never see a closed fd, never return foreign bytes', async () => {
  const root = tempDir();
  try {
    const checking = new CheckingFileSystem();
    const store = await openStore(smallConfig(root, { flushIntervalCommitLog: 5, flushCommitLogLeastPages: 0, messageIndexEnable: false }), { fs: checking });
    const queues = 3;
    const perQueue = 200;
    for (let i = 0; i < perQueue; i++) {
      for (let q = 0; q < queues; q++) {
        const r = await store.putMessage(makeMessage({ queueId: q, body: `m-${q}-${i}-${'x'.repeat(i % 50)}` }));
        assert.equal(r.status, 'PUT_OK');
      }
    }
    const mfq = store.commitLog.mfq;
    assert.ok(mfq.getFiles().length > 8, `many small segments (${mfq.getFiles().length})`);
    checking.fdatasyncDelayMs = 3; // flushes hold files across turns while they are destroyed
    const seen = new Map<GetMessageStatus, number>();
    let found = 0;
    let stop = false;
    const reader = async (seed: number): Promise<void> => {
      let n = seed;
      while (!stop) {
        const q = n % queues;
        const offset = (n * 7919) % perQueue;
        n++;
        const r = await store.getMessage('g', 'T', q, offset, 8);
        seen.set(r.status, (seen.get(r.status) ?? 0) + 1);
        r.messages.forEach((rec, i) => {
          const m = decodeRecord(rec, 0, { checkCrc: true });
          const qo = r.messageQueueOffsets[i]!;
          assert.equal(m.queueId, q);
          assert.equal(m.queueOffset, qo);
          assert.equal(m.body.toString(), `m-${q}-${qo}-${'x'.repeat(qo % 50)}`);
          found++;
        });
        await new Promise((res) => setImmediate(res));
      }
    };
    const deleter = async (): Promise<void> => {
      while (mfq.getFiles().length > 2) {
        const first = mfq.getFirstMappedFile()!;
        // the first call marks it unavailable; if a flush holds it, a later call forces the release
        if (!first.destroy(0)) {
          await new Promise((res) => setTimeout(res, 1));
          first.destroy(0); // forced: the fd closes when the flush's fdatasync settles
        }
        mfq.removeFiles([first]);
        // new writes keep flushes (which hold files) running during the deletions
        await store.putMessage(makeMessage({ queueId: 0, topic: 'Other', body: 'filler' }));
        await new Promise((res) => setTimeout(res, 2));
      }
    };
    const readers = [reader(1), reader(2), reader(3)];
    await deleter();
    stop = true;
    await Promise.all(readers);
    assert.ok(found > 0, 'some messages were read before their files went');
    assert.ok((seen.get('MESSAGE_WAS_REMOVING') ?? 0) + (seen.get('OFFSET_FOUND_NULL') ?? 0) + (seen.get('OFFSET_TOO_SMALL') ?? 0) > 0, `pulls saw the deletions: ${JSON.stringify([...seen])}`);
    checking.fdatasyncDelayMs = 0;
    await store.shutdown();
    assert.deepEqual(checking.violations, []);
  } finally {
    removeDir(root);
  }
});

test('MappedFileQueue.destroy while a flush holds a file: files and directory go, the fd closes after the flush', async () => {
  const dir = tempDir();
  try {
    const checking = new CheckingFileSystem();
    checking.fdatasyncDelayMs = 20;
    const mfq = new MappedFileQueue({ dir: path.join(dir, 'q'), fileSize: 1024, fs: checking });
    for (let i = 0; i < 5; i++) mfq.getLastMappedFileOrCreate(0).append(Buffer.alloc(1024, i));
    mfq.getLastMappedFileOrCreate(0).append(Buffer.alloc(10, 9));
    const flushing = mfq.flush(0);
    mfq.destroy();
    assert.equal(fs.existsSync(path.join(dir, 'q')), false);
    await flushing;
    assert.deepEqual(checking.violations, []);
    assert.equal(checking.openFds(), 0);
  } finally {
    removeDir(dir);
  }
});

test('SYNC_FLUSH group commit: waiters covered by one fdatasync resolve together; a failing fdatasync answers FLUSH_DISK_TIMEOUT at once and is not retried (fsyncgate)', async () => {
  const root = tempDir();
  try {
    const faulty = new FaultyFileSystem();
    const store = await openStore(smallConfig(root, { flushDiskType: 'SYNC_FLUSH', mappedFileSizeCommitLog: 1 << 20, warmMapedFileEnable: false }), { fs: faulty });
    faulty.fdatasyncDelayMs = 15;
    const first = store.putMessage(makeMessage({ body: 'first' }));
    await until(() => faulty.fdatasyncCalls > 0, 'the first flush');
    const before = faulty.fdatasyncCalls;
    // 40 puts while the first flush is in flight: one more fdatasync covers them all
    const group = await Promise.all(Array.from({ length: 40 }, (_, i) => store.putMessage(makeMessage({ body: `g${i}` }))));
    assert.equal((await first).status, 'PUT_OK');
    assert.ok(group.every((r) => r.status === 'PUT_OK'));
    assert.ok(faulty.fdatasyncCalls - before <= 2, `40 waiters took ${faulty.fdatasyncCalls - before} fdatasyncs`);
    await dispatched(store);
    assert.equal(store.getMaxOffsetInQueue('T', 0), 41, 'dispatched once flushed');

    faulty.fdatasyncDelayMs = 0;
    faulty.fdatasyncErrorCode = 'EIO';
    const callsAtError = faulty.fdatasyncCalls;
    const t0 = Date.now();
    const r = await store.putMessage(makeMessage({ body: 'not durable' }));
    assert.equal(r.status, 'FLUSH_DISK_TIMEOUT');
    assert.ok(Date.now() - t0 < 2000, `answered after ${Date.now() - t0} ms, not after syncFlushTimeout`);
    faulty.fdatasyncErrorCode = null; // the next fdatasync would "succeed": it must not be trusted
    await new Promise((res) => setTimeout(res, 50));
    assert.equal(faulty.fdatasyncCalls, callsAtError + 1, 'one fdatasync failed, none retried');
    assert.equal((await store.putMessage(makeMessage({ body: 'after' }))).status, 'SERVICE_NOT_AVAILABLE');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('warmMapedFileEnable: the first segment is pre-written at open, the next one in the background; data is never overwritten by zeros', async () => {
  const root = tempDir();
  try {
    const checking = new CheckingFileSystem();
    const seg = 256 * 1024;
    const store = await openStore(smallConfig(root, { flushDiskType: 'SYNC_FLUSH', mappedFileSizeCommitLog: seg, flushLeastPagesWhenWarmMapedFile: 16 }), { fs: checking });
    assert.equal(store.config.warmMapedFileEnable, true, 'on by default under SYNC_FLUSH');
    const alloc = store.commitLog.mfq.getAllocator()!;
    assert.equal(alloc.stats.prewritten, 1, 'first segment pre-written before open resolved');
    assert.ok(checking.asyncZeroWrites.length >= 1, 'zeros written on the libuv pool');
    assert.ok(checking.fdatasyncCalls >= 1, 'and forced');
    const bodies: string[] = [];
    for (let i = 0; i < 200; i++) {
      const body = `w-${i}-${'y'.repeat(2000)}`;
      bodies.push(body);
      assert.equal((await store.putMessage(makeMessage({ body }))).status, 'PUT_OK');
    }
    assert.ok(store.commitLog.mfq.getFiles().length >= 2, 'rolled into background-prepared segments');
    await store.shutdown();
    assert.deepEqual(checking.violations, []);
    const again = await openStore(smallConfig(root, { mappedFileSizeCommitLog: seg }));
    for (let i = 0; i < 200; i += 17) {
      const r = await again.getMessage('g', 'T', 0, i, 1);
      assert.equal(decodeRecord(r.messages[0]!, 0, { checkCrc: true }).body.toString(), bodies[i]);
    }
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('warm: a roll during a zero write abandons the file, a roll between writes takes it; appended bytes survive the late zero write', async () => {
  const dir = tempDir();
  try {
    const checking = new CheckingFileSystem();
    const seg = 64 * 1024;
    const mfq = new MappedFileQueue({ dir, fileSize: seg, fs: checking, preallocate: true, prewrite: { chunkBytes: 16 * 1024, syncEveryBytes: 0, maxBytesPerSec: 0 } });
    checking.pwriteAsyncDelayMs = 40;
    const f0 = mfq.getLastMappedFileOrCreate(0);
    f0.append(Buffer.alloc(seg - 100, 1));
    const alloc = mfq.getAllocator()!;
    await until(() => alloc.currentPrewrite()?.zeroWriteInFlight === true, 'a zero write in flight on the next segment');
    f0.appendAndFillToEnd(Buffer.alloc(8, 2));
    const f1 = mfq.getLastMappedFileOrCreate(0); // the roll: takes over the name of the file being pre-written
    assert.equal(alloc.stats.abandoned, 1);
    f1.append(Buffer.from('precious data'));
    f1.commitNow();
    await until(() => checking.openFds() <= 3, 'the abandoned file closed after its zero write');
    await new Promise((r) => setTimeout(r, 60)); // any late zero write has landed by now
    assert.equal(f1.read(0, 13)!.toString(), 'precious data');
    assert.equal(fs.readFileSync(f1.filePath).subarray(0, 13).toString(), 'precious data', 'the late zero write went to the orphaned inode');

    // next roll: pre-write of segment 2 waits between chunks when the roll comes
    checking.pwriteAsyncDelayMs = 0;
    f1.append(Buffer.alloc(seg - 13 - 100, 3));
    await until(() => {
      const pw = alloc.currentPrewrite();
      return pw === null || (pw.bytesWritten > 0 && !pw.zeroWriteInFlight);
    }, 'segment 2 pre-written or between two chunks');
    f1.appendAndFillToEnd(Buffer.alloc(8, 4));
    const f2 = mfq.getLastMappedFileOrCreate(0);
    assert.equal(alloc.stats.abandoned, 1, 'taken as it was (finished or between chunks), not abandoned');
    assert.equal(alloc.stats.created, 4, 'segments 0, 1 (abandoned), 1 again, 2 — and 3 in the background');
    f2.append(Buffer.from('more data'));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(f2.read(0, 9)!.toString(), 'more data');
    mfq.shutdown();
    await until(() => checking.openFds() === 0, 'every fd closed');
    assert.deepEqual(checking.violations, []);
    assert.deepEqual(fs.readdirSync(dir).sort(), [offsetToFileName(0), offsetToFileName(seg), offsetToFileName(2 * seg)], 'the unused prepared segment was deleted');
  } finally {
    removeDir(dir);
  }
});

test('config: warmMapedFileEnable follows flushDiskType unless set; transientStorePoolEnable and the flush keys are accepted', () => {
  assert.equal(completeStoreConfig({ flushDiskType: 'SYNC_FLUSH' }).warmMapedFileEnable, true);
  assert.equal(completeStoreConfig({ flushDiskType: 'ASYNC_FLUSH' }).warmMapedFileEnable, false);
  assert.equal(completeStoreConfig({ flushDiskType: 'SYNC_FLUSH', warmMapedFileEnable: false }).warmMapedFileEnable, false);
  const c = resolveStoreConfig({
    flushDiskType: 'ASYNC_FLUSH',
    warmMapedFileEnable: 'true',
    flushLeastPagesWhenWarmMapedFile: '1024',
    transientStorePoolEnable: 'true',
    flushIntervalCommitLog: '200',
    flushCommitLogLeastPages: '8',
    flushCommitLogThoroughInterval: '3000',
    syncFlushTimeout: '1500',
  });
  assert.equal(c.warmMapedFileEnable, true);
  assert.equal(c.flushLeastPagesWhenWarmMapedFile, 1024);
  assert.equal(c.transientStorePoolEnable, true);
  assert.deepEqual([c.flushIntervalCommitLog, c.flushCommitLogLeastPages, c.flushCommitLogThoroughInterval, c.syncFlushTimeout], [200, 8, 3000, 1500]);
  assert.throws(() => resolveStoreConfig({ warmMapedFileEnable: 'yes' }), /warmMapedFileEnable/);
});

test('ASYNC_FLUSH honours flushCommitLogLeastPages until the thorough interval', async () => {
  const root = tempDir();
  try {
    const faulty = new FaultyFileSystem();
    const store = await openStore(
      smallConfig(root, { mappedFileSizeCommitLog: 1 << 20, flushIntervalCommitLog: 2, flushCommitLogLeastPages: 4, flushCommitLogThoroughInterval: 3_600_000 }),
      { fs: faulty },
    );
    await store.putMessage(makeMessage({ body: Buffer.alloc(3 * 4096, 1) })); // 3 pages: below the threshold
    const calls = faulty.fdatasyncCalls;
    for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 3));
    assert.equal(store.getFlushedPhyOffset(), 0, 'fewer than 4 dirty pages: not flushed');
    assert.equal(faulty.fdatasyncCalls, calls);
    await store.putMessage(makeMessage({ body: Buffer.alloc(2 * 4096, 2) })); // now ≥ 4 pages
    await until(() => store.getFlushedPhyOffset() === store.getMaxPhyOffset(), 'the page-threshold flush');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('warm: background pre-writing yields while a flush of the queue is in flight or ended within yieldToFlushesWithinMs', async () => {
  const dir = tempDir();
  try {
    const checking = new CheckingFileSystem();
    const clock = new ManualClock(1_000_000);
    const seg = 256 * 1024;
    const mfq = new MappedFileQueue({
      dir,
      fileSize: seg,
      fs: checking,
      clock,
      preallocate: true,
      prewrite: { chunkBytes: 16 * 1024, syncEveryBytes: 64 * 1024, maxBytesPerSec: 0, yieldToFlushesWithinMs: 50, yieldPollMs: 2 },
    });
    const f0 = mfq.getLastMappedFileOrCreate(0);
    f0.append(Buffer.alloc(1000, 7));
    checking.fdatasyncDelayMs = 60;
    const flushed = mfq.flush(0); // in flight before the pre-write of segment 1 starts
    const alloc = mfq.getAllocator()!;
    await until(() => (alloc.currentPrewrite()?.yields ?? 0) >= 3, 'the pre-writer waiting'); // `until` polls with ref'd timers
    const pw = alloc.currentPrewrite()!;
    assert.equal(pw.bytesWritten, 0, 'no zero written while the flush runs');
    assert.equal(await flushed, 1000);
    checking.fdatasyncDelayMs = 0;
    const yieldsAfterFlush = pw.yields;
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(pw.bytesWritten, 0, 'still none: the flush ended less than 50 ms ago on the store clock');
    assert.ok(pw.yields > yieldsAfterFlush);
    clock.advance(50);
    const keepAlive = setInterval(() => {}, 10); // the pre-writer's own timers are unref'd
    try {
      assert.equal(await pw.done, 'done');
    } finally {
      clearInterval(keepAlive);
    }
    assert.equal(pw.bytesWritten, seg);
    assert.equal(alloc.stats.prewritten, 1);
    mfq.shutdown();
    await until(() => checking.openFds() === 0, 'every fd closed');
    assert.deepEqual(checking.violations, []);
  } finally {
    removeDir(dir);
  }
});
