import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ManualClock } from '../../../src/common/time/clock.js';
import { NodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { fileNameToOffset, isSegmentFileName, offsetToFileName } from '../../../src/store/mapped-file/file-names.js';
import { DIRECT_WRITE_PIECE_BYTES, MappedFile, OS_PAGE_SIZE, WRITE_THROUGH_PIECE_BYTES } from '../../../src/store/mapped-file/mapped-file.js';
import { FaultyFileSystem } from '../../support/faulty-file-system.js';
import { MappedFileQueue, SegmentLoadError } from '../../../src/store/mapped-file/mapped-file-queue.js';
import { removeDir, tempDir } from '../../support/store-fixtures.js';

const nodeFs = new NodeFileSystem();

test('file names are 20-digit zero-padded start offsets', () => {
  assert.equal(offsetToFileName(0), '00000000000000000000');
  assert.equal(offsetToFileName(6_000_000), '00000000000006000000');
  assert.equal(offsetToFileName(1_073_741_824), '00000000001073741824');
  assert.equal(fileNameToOffset('00000000002147483648'), 2_147_483_648);
  assert.equal(isSegmentFileName('0000000000000000000'), false);
  assert.equal(isSegmentFileName('00000000000000000000.tmp'), false);
  assert.throws(() => offsetToFileName(-1), RangeError);
  assert.throws(() => fileNameToOffset('abc'), RangeError);
});

test('reference counting: hold/release, shutdown waits for readers, forced release after the interval', () => {
  const dir = tempDir();
  try {
    const clock = new ManualClock(1000);
    const mf = MappedFile.create(path.join(dir, offsetToFileName(0)), 0, 1024, { fs: nodeFs, clock });
    assert.equal(mf.getRefCount(), 1);
    assert.equal(mf.hold(), true);
    assert.equal(mf.getRefCount(), 2);
    mf.shutdown(1000); // owner's reference dropped, reader still holds it
    assert.equal(mf.isAvailable(), false);
    assert.equal(mf.getRefCount(), 1);
    assert.equal(mf.isCleanupOver(), false);
    assert.equal(mf.hold(), false, 'no new holders after shutdown');
    clock.advance(999);
    mf.shutdown(1000);
    assert.equal(mf.isCleanupOver(), false, 'interval not elapsed yet');
    clock.advance(1);
    mf.shutdown(1000);
    assert.equal(mf.getRefCount(), -1002, 'refCount forced to -1000 - 1, then released');
    assert.equal(mf.isCleanupOver(), true, 'forced cleanup');
    mf.release(); // the late reader lets go: no second cleanup, no throw
    assert.equal(mf.isCleanupOver(), true);
    assert.equal(mf.read(0, 1), null, 'a released file is unreadable');
  } finally {
    removeDir(dir);
  }
});

test('reference counting: release of the last reader after shutdown runs cleanup; destroy deletes the file', () => {
  const dir = tempDir();
  try {
    const p = path.join(dir, offsetToFileName(0));
    const mf = MappedFile.create(p, 0, 1024, { fs: nodeFs });
    assert.equal(mf.hold(), true);
    assert.equal(mf.destroy(60_000), false, 'held: not deleted yet');
    assert.ok(fs.existsSync(p));
    mf.release();
    assert.equal(mf.isCleanupOver(), true);
    assert.equal(mf.destroy(60_000), true);
    assert.equal(fs.existsSync(p), false);
  } finally {
    removeDir(dir);
  }
});

test('mapped file: created at full size; reads see buffered and committed bytes; flush page rule', async () => {
  const dir = tempDir();
  try {
    const p = path.join(dir, offsetToFileName(8192));
    const mf = MappedFile.create(p, 8192, 8192, { fs: nodeFs, writeBufferBytes: 4096, commitThresholdBytes: 4096 });
    assert.equal(fs.statSync(p).size, 8192);
    mf.append(Buffer.from('abcdef'));
    assert.equal(mf.getWrotePosition(), 6);
    assert.equal(mf.getCommittedPosition(), 0, 'still in the write buffer');
    assert.equal(mf.read(2, 3)!.toString(), 'cde');
    assert.equal(mf.read(4, 3), null, 'beyond wrote');
    mf.commit(0);
    assert.equal(mf.getCommittedPosition(), 6);
    mf.append(Buffer.from('gh'));
    assert.equal(mf.read(4, 4)!.toString(), 'efgh', 'spans committed and buffered bytes');
    assert.equal(await mf.flush(1), 0, 'less than one page dirty: no flush with leastPages=1');
    assert.equal(await mf.flush(0), 8);
    assert.equal(fs.readFileSync(p).subarray(0, 8).toString(), 'abcdefgh');
    assert.equal(MappedFile.isAbleTo(OS_PAGE_SIZE * 4, 0, 1 << 20, 4), true);
    assert.equal(MappedFile.isAbleTo(OS_PAGE_SIZE * 4 - 1, 0, 1 << 20, 4), false);
    assert.equal(MappedFile.isAbleTo(100, 50, 100, 4), true, 'a full file always flushes');
    mf.close();
  } finally {
    removeDir(dir);
  }
});

test('mapped file: appends larger than the write buffer go straight to the file; commit on setImmediate', async () => {
  const dir = tempDir();
  try {
    const mf = MappedFile.create(path.join(dir, offsetToFileName(0)), 0, 8192, { fs: nodeFs, writeBufferBytes: 1024 });
    mf.append(Buffer.alloc(10, 1));
    mf.append(Buffer.alloc(2000, 2));
    assert.equal(mf.getCommittedPosition(), 2010);
    mf.append(Buffer.alloc(5, 3));
    assert.equal(mf.getCommittedPosition(), 2010);
    await new Promise((r) => setImmediate(r));
    assert.equal(mf.getCommittedPosition(), 2015, 'auto commit after the append turn');
    const all = mf.read(0, 2015)!;
    assert.equal(all[9], 1);
    assert.equal(all[10], 2);
    assert.equal(all[2014], 3);
    mf.close();
  } finally {
    removeDir(dir);
  }
});

test('mapped file: truncateTo zeroes the tail on disk and keeps the file size', () => {
  const dir = tempDir();
  try {
    const p = path.join(dir, offsetToFileName(0));
    const mf = MappedFile.create(p, 0, 4096, { fs: nodeFs });
    mf.append(Buffer.alloc(3000, 0xab));
    mf.commitNow();
    mf.truncateTo(1000);
    assert.equal(mf.getWrotePosition(), 1000);
    const disk = fs.readFileSync(p);
    assert.equal(disk.length, 4096);
    assert.equal(disk[999], 0xab);
    assert.ok(disk.subarray(1000).every((b) => b === 0));
    mf.close();
  } finally {
    removeDir(dir);
  }
});

test('mapped file queue: roll, find by offset, min/max, truncateDirtyFiles', () => {
  const dir = tempDir();
  try {
    const q = new MappedFileQueue({ dir, fileSize: 1024, fs: nodeFs });
    for (let i = 0; i < 5; i++) {
      const mf = q.getLastMappedFileOrCreate(0);
      mf.append(Buffer.alloc(mf.remaining() >= 600 ? 600 : mf.remaining(), i + 1));
    }
    // file 0: 600 + 424, file 1: 600 + 424, file 2: 600
    assert.deepEqual(q.getFiles().map((f) => f.fileFromOffset), [0, 1024, 2048]);
    assert.equal(q.getMinOffset(), 0);
    assert.equal(q.getMaxOffset(), 2048 + 600);
    assert.equal(q.findMappedFileByOffset(1500)!.fileFromOffset, 1024);
    assert.equal(q.findMappedFileByOffset(5000), null);
    assert.equal(q.findMappedFileByOffset(5000, true)!.fileFromOffset, 0);
    const r = q.truncateDirtyFiles(1100);
    assert.equal(r.destroyedFiles, 1);
    assert.deepEqual(q.getFiles().map((f) => f.fileFromOffset), [0, 1024]);
    assert.equal(q.getMaxOffset(), 1100);
    assert.equal(fs.existsSync(path.join(dir, offsetToFileName(2048))), false);
    q.shutdown();
  } finally {
    removeDir(dir);
  }
});

test('mapped file queue load: zero-length last file deleted, wrong size rejected with a clear error', () => {
  const dir = tempDir();
  try {
    fs.writeFileSync(path.join(dir, offsetToFileName(0)), Buffer.alloc(1024));
    fs.writeFileSync(path.join(dir, offsetToFileName(1024)), Buffer.alloc(0));
    const q = new MappedFileQueue({ dir, fileSize: 1024, fs: nodeFs });
    q.load();
    assert.equal(q.getFiles().length, 1);
    assert.equal(fs.existsSync(path.join(dir, offsetToFileName(1024))), false);
    q.shutdown();
    fs.writeFileSync(path.join(dir, offsetToFileName(1024)), Buffer.alloc(1000));
    const q2 = new MappedFileQueue({ dir, fileSize: 1024, fs: nodeFs });
    assert.throws(() => q2.load(), (e: unknown) => e instanceof SegmentLoadError && /length 1000 .*segment size is 1024/.test((e as Error).message));
  } finally {
    removeDir(dir);
  }
});

test('mapped file queue: the next segment is pre-allocated in the background', async () => {
  const dir = tempDir();
  try {
    const q = new MappedFileQueue({ dir, fileSize: 1024, fs: nodeFs, preallocate: true });
    q.getLastMappedFileOrCreate(0);
    await new Promise((r) => setImmediate(r));
    assert.ok(fs.existsSync(path.join(dir, offsetToFileName(1024))), 'next file ready before it is needed');
    assert.equal(q.getFiles().length, 1);
    q.getLastMappedFile()!.append(Buffer.alloc(1024));
    const next = q.getLastMappedFileOrCreate(0);
    assert.equal(next.fileFromOffset, 1024);
    q.shutdown();
    await new Promise((r) => setImmediate(r));
    assert.equal(fs.existsSync(path.join(dir, offsetToFileName(2048))), false, 'unused pre-allocated file removed at shutdown');
  } finally {
    removeDir(dir);
  }
});

test('appendDirect: buffered bytes are written first, then the source in pieces of at most WRITE_THROUGH_PIECE_BYTES; all committed and readable; a failed write appends nothing', () => {
  const dir = tempDir();
  try {
    const writes: Array<{ len: number; pos: number }> = [];
    let failAt = -1;
    const spyFs = Object.create(nodeFs) as NodeFileSystem;
    spyFs.pwrite = (fd, buf, off, len, pos) => {
      if (pos === failAt) throw Object.assign(new Error('injected EIO'), { code: 'EIO' });
      writes.push({ len, pos });
      return nodeFs.pwrite(fd, buf, off, len, pos);
    };
    const size = 4 * WRITE_THROUGH_PIECE_BYTES;
    const mf = MappedFile.create(path.join(dir, offsetToFileName(0)), 0, size, { fs: spyFs, writeBufferBytes: 64 * 1024, commitThresholdBytes: 64 * 1024 });
    const head = Buffer.alloc(100, 0x61);
    mf.append(head);
    assert.equal(mf.getCommittedPosition(), 0, 'the head is only buffered');
    const src = Buffer.alloc(WRITE_THROUGH_PIECE_BYTES + 5000);
    for (let i = 0; i < src.length; i++) src[i] = (i * 7) & 0xff;
    mf.appendDirect(src, 1000, src.length - 1000);
    const len = src.length - 1000;
    assert.deepEqual(writes, [{ len: 100, pos: 0 }, { len: WRITE_THROUGH_PIECE_BYTES, pos: 100 }, { len: len - WRITE_THROUGH_PIECE_BYTES, pos: 100 + WRITE_THROUGH_PIECE_BYTES }]);
    assert.equal(mf.getWrotePosition(), 100 + len);
    assert.equal(mf.getCommittedPosition(), 100 + len, 'committed when appendDirect returns');
    src.fill(0); // the source may change once appendDirect returned
    const back = mf.read(0, 100 + len)!;
    assert.ok(back.subarray(0, 100).equals(head));
    for (let i = 0; i < len; i++) if (back[100 + i] !== ((i + 1000) * 7 & 0xff)) assert.fail(`byte ${i} differs`);
    // an append after it goes on at the new position, through the buffer
    mf.append(Buffer.from('tail'));
    assert.equal(mf.read(100 + len, 4)!.toString(), 'tail');
    // a failed write: nothing appended, positions unchanged
    mf.commitNow();
    const at = mf.getWrotePosition();
    failAt = at + WRITE_THROUGH_PIECE_BYTES; // the second piece fails
    assert.throws(() => mf.appendDirect(Buffer.alloc(WRITE_THROUGH_PIECE_BYTES + 10, 1)), /EIO/);
    assert.equal(mf.getWrotePosition(), at);
    assert.equal(mf.getCommittedPosition(), at);
    assert.throws(() => mf.appendDirect(Buffer.alloc(size)), RangeError, 'more than the room left');
    mf.shutdown(0);
  } finally {
    removeDir(dir);
  }
});

test('appendDirect with asyncDirectWrites: the source is written on the pool in order, readable at once, committed only after its writes; never appended into; a failed write is written again by the next commit', async () => {
  const dir = tempDir();
  try {
    const ffs = new FaultyFileSystem();
    ffs.pwriteAsyncDelayMs = 30;
    const writes: Array<{ len: number; pos: number; async: boolean }> = [];
    const realAsync = ffs.pwriteAsync!;
    let running = 0;
    let maxRunning = 0;
    ffs.pwriteAsync = async (fd, buf, off, len, pos) => {
      writes.push({ len, pos, async: true });
      maxRunning = Math.max(maxRunning, ++running);
      try {
        return await realAsync(fd, buf, off, len, pos);
      } finally {
        running--;
      }
    };
    const realSync = ffs.pwrite.bind(ffs);
    ffs.pwrite = (fd, buf, off, len, pos) => {
      writes.push({ len, pos, async: false });
      return realSync(fd, buf, off, len, pos);
    };
    const file = path.join(dir, offsetToFileName(0));
    const size = 8 * DIRECT_WRITE_PIECE_BYTES;
    const mf = MappedFile.create(file, 0, size, { fs: ffs, asyncDirectWrites: true, writeBufferBytes: 64 * 1024, commitThresholdBytes: 64 * 1024 });
    const onDisk = (pos: number, len: number): Buffer => {
      const b = Buffer.alloc(len);
      const fd = fs.openSync(file, 'r');
      try {
        fs.readSync(fd, b, 0, len, pos);
      } finally {
        fs.closeSync(fd);
      }
      return b;
    };
    const head = Buffer.alloc(100, 0x61);
    mf.append(head);
    const block = Buffer.alloc(2 * DIRECT_WRITE_PIECE_BYTES + 5000);
    for (let i = 0; i < block.length; i++) block[i] = (i * 7 + 3) & 0xff;
    const blockCopy = Buffer.from(block);
    const len = block.length - 1000;
    mf.appendDirect(block, 1000, len);
    // appended, readable, not committed: the write runs on the pool
    assert.equal(mf.getWrotePosition(), 100 + len);
    assert.ok(mf.getCommittedPosition() < 100 + len, `committed ${mf.getCommittedPosition()}`);
    mf.append(Buffer.from('tail')); // after the foreign bytes, into a buffer of its own
    const end = 100 + len + 4;
    const back = mf.read(0, end)!;
    assert.ok(back.subarray(0, 100).equals(head));
    assert.ok(back.subarray(100, 100 + len).equals(blockCopy.subarray(1000)), 'the foreign bytes are read from the caller block');
    assert.equal(back.subarray(100 + len).toString(), 'tail');
    assert.ok(block.equals(blockCopy), 'nothing was appended into the caller block');
    assert.ok(onDisk(100, 16).equals(Buffer.alloc(16)), 'not in the file yet');
    const committed = mf.whenCommitted(end);
    assert.notEqual(committed, null);
    assert.equal(await committed, null);
    assert.equal(mf.getCommittedPosition(), end);
    assert.ok(onDisk(0, end).equals(back), 'the file holds the bytes once committed');
    // the head went first (on this thread), then the block in pieces, then the tail
    assert.deepEqual(
      writes.map((w) => [w.pos, w.len, w.async]),
      [
        [0, 100, false],
        [100, DIRECT_WRITE_PIECE_BYTES, true],
        [100 + DIRECT_WRITE_PIECE_BYTES, DIRECT_WRITE_PIECE_BYTES, true],
        [100 + 2 * DIRECT_WRITE_PIECE_BYTES, len - 2 * DIRECT_WRITE_PIECE_BYTES, true],
        [100 + len, 4, false],
      ],
    );
    block.fill(0); // handed over, but its bytes are in the file now: readers read the file
    assert.ok(mf.read(100, len)!.equals(blockCopy.subarray(1000)));

    // foreign chunks waiting behind a write in flight go to the pool together when it completes
    writes.length = 0;
    maxRunning = 0;
    const parts = [0x31, 0x32, 0x33].map((b) => Buffer.alloc(100_000, b));
    for (const part of parts) mf.appendDirect(part);
    const groupEnd = end + 300_000;
    assert.equal(await mf.whenCommitted(groupEnd), null);
    assert.deepEqual(
      writes.map((w) => [w.pos, w.len, w.async]),
      [
        [end, 100_000, true],
        [end + 100_000, 100_000, true],
        [end + 200_000, 100_000, true],
      ],
    );
    assert.equal(maxRunning, 2, 'the second and third chunk were written together, after the first');
    assert.ok(onDisk(end, 300_000).equals(Buffer.concat(parts)));
    const afterGroup = groupEnd;

    // a failed pool write: commit waiters get the error, the bytes stay readable, the next commit writes them
    writes.length = 0;
    ffs.pwriteErrorCode = 'EIO';
    const block2 = Buffer.alloc(70_000, 0x5a);
    mf.appendDirect(block2);
    const end2 = afterGroup + block2.length;
    const err = await mf.whenCommitted(end2);
    assert.match(String(err), /EIO/);
    assert.match(String(mf.commitError), /EIO/);
    assert.equal(mf.getCommittedPosition(), afterGroup);
    assert.ok(mf.read(afterGroup, block2.length)!.equals(Buffer.alloc(70_000, 0x5a)));
    ffs.pwriteErrorCode = null;
    assert.equal(await mf.flush(0), end2, 'the flush writes the failed range again, then forces it');
    assert.equal(mf.commitError, null);
    assert.ok(onDisk(afterGroup, block2.length).equals(Buffer.alloc(70_000, 0x5a)));
    mf.shutdown(0);
  } finally {
    removeDir(dir);
  }
});
