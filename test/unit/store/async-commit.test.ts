/**
 * Asynchronous CommitLog commits (MappedFile `asyncCommit`): the write buffer goes to the file
 * with positional writes on the libuv pool. Pins the ownership rules: readers see bytes still in
 * flight (from the buffer), appends go on during a write without touching the bytes it reads,
 * a failed write is reported to its waiters and written again later, flush forces only completed
 * writes, truncation refuses a write in flight, a roll (end-of-file filler) with a write in flight
 * completes, and under ASYNC_FLUSH a put is answered only once its bytes are in the file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { offsetToFileName } from '../../../src/store/mapped-file/file-names.js';
import { MappedFile } from '../../../src/store/mapped-file/mapped-file.js';
import { completeStoreConfig, resolveStoreConfig } from '../../../src/store/store-config.js';
import { FaultyFileSystem } from '../../support/faulty-file-system.js';
import { RawHAPeer, waitUntil } from '../../support/ha-cluster.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

/** What the file itself holds (not the MappedFile's buffers). */
function onDisk(p: string, position: number, len: number): Buffer {
  const fd = fs.openSync(p, 'r');
  try {
    const b = Buffer.alloc(len);
    fs.readSync(fd, b, 0, len, position);
    return b;
  } finally {
    fs.closeSync(fd);
  }
}

const bytes = (len: number, seed: number): Buffer => {
  const b = Buffer.allocUnsafe(len);
  for (let i = 0; i < len; i++) b[i] = (seed * 31 + i * 7) & 0xff;
  return b;
};

test('async commit: bytes in flight are read from the buffer, appends go on meanwhile (new buffer when full), the file gets exactly what was appended', async () => {
  const dir = tempDir();
  try {
    const faulty = new FaultyFileSystem();
    faulty.pwriteAsyncDelayMs = 40;
    const p = path.join(dir, offsetToFileName(0));
    const mf = MappedFile.create(p, 0, 64 * 1024, { fs: faulty, writeBufferBytes: 1024, commitThresholdBytes: 512, asyncCommit: true });
    const expected: Buffer[] = [];
    const put = (len: number): void => {
      const b = bytes(len, expected.length);
      expected.push(b);
      mf.append(b);
    };
    put(300);
    put(300); // 600 ≥ threshold: an asynchronous write of [0, 600) starts
    assert.equal(mf.isWriteInFlight(), true);
    assert.equal(mf.getCommittedPosition(), 0, 'not committed before the write completes');
    assert.deepEqual(onDisk(p, 0, 600), Buffer.alloc(600), 'the file does not have them yet');
    assert.deepEqual(mf.read(0, 600), Buffer.concat(expected), 'readers get them from the buffer in flight');
    for (let i = 0; i < 6; i++) put(200); // fills the in-flight buffer's rest and needs a new one
    assert.equal(mf.getWrotePosition(), 1800);
    assert.equal(mf.getCommittedPosition(), 0, 'still only the first write, now in flight');
    const all = Buffer.concat(expected);
    assert.deepEqual(mf.read(0, 1800), all, 'a read across the buffer in flight, bytes written ahead and the active buffer');
    const waited = mf.whenCommitted(1800);
    assert.ok(waited instanceof Promise);
    assert.equal(await waited, null);
    assert.equal(mf.getCommittedPosition(), 1800);
    assert.deepEqual(onDisk(p, 0, 1800), all, 'the file holds exactly the appended bytes (none changed while in flight)');
    assert.equal(mf.whenCommitted(1800), null, 'already committed: answered synchronously');
    mf.close();
  } finally {
    removeDir(dir);
  }
});

test('async commit: a failed write tells its waiters and keeps commitError; the next commit writes the bytes again', async () => {
  const dir = tempDir();
  try {
    const faulty = new FaultyFileSystem();
    const p = path.join(dir, offsetToFileName(0));
    const mf = MappedFile.create(p, 0, 64 * 1024, { fs: faulty, writeBufferBytes: 4096, commitThresholdBytes: 2048, asyncCommit: true });
    const data = bytes(500, 1);
    faulty.pwriteErrorCode = 'ENOSPC';
    mf.append(data);
    const err = await mf.whenCommitted(500);
    assert.equal((err as NodeJS.ErrnoException | null)?.code, 'ENOSPC');
    assert.equal(mf.commitError?.message, 'injected ENOSPC');
    assert.equal(mf.getCommittedPosition(), 0);
    assert.deepEqual(mf.read(0, 500), data, 'still readable from the buffer');
    faulty.pwriteErrorCode = null;
    assert.equal(mf.commit(0), 500, 'the synchronous retry (disk check) writes the failed range');
    assert.equal(mf.commitError, null);
    assert.deepEqual(onDisk(p, 0, 500), data);
    mf.close();
  } finally {
    removeDir(dir);
  }
});

test('async commit: flush waits for the write before its fdatasync; truncateTo refuses a write in flight; a roll with a write in flight completes', async () => {
  const dir = tempDir();
  try {
    const faulty = new FaultyFileSystem();
    faulty.pwriteAsyncDelayMs = 30;
    const p = path.join(dir, offsetToFileName(0));
    const mf = MappedFile.create(p, 0, 8192, { fs: faulty, writeBufferBytes: 4096, commitThresholdBytes: 1024, asyncCommit: true });
    const a = bytes(1500, 2);
    mf.append(a); // past the threshold: in flight
    assert.equal(mf.isWriteInFlight(), true);
    assert.throws(() => mf.truncateTo(100), /while a write is in flight/);
    let fileAtSync: Buffer | null = null;
    const realSync = faulty.fdatasync.bind(faulty);
    faulty.fdatasync = async (fd: number) => {
      fileAtSync ??= onDisk(p, 0, 1500);
      return realSync(fd);
    };
    assert.equal(await mf.flush(0), 1500);
    assert.deepEqual(fileAtSync, a, 'the fdatasync ran after the write completed');
    const b = bytes(1200, 3);
    mf.append(b); // in flight again
    assert.equal(mf.isWriteInFlight(), true);
    const filler = Buffer.from([0, 0, 0, 8, 1, 2, 3, 4]);
    mf.appendAndFillToEnd(filler);
    assert.equal(mf.isFull(), true);
    assert.equal(mf.getCommittedPosition(), 1500, 'the write in flight completes later');
    assert.deepEqual(mf.read(1500, 1200), b);
    assert.equal(await mf.whenCommitted(8192), null);
    assert.equal(mf.getCommittedPosition(), 8192);
    assert.deepEqual(onDisk(p, 1500, 1208), Buffer.concat([b, filler]));
    assert.equal(await mf.flush(0), 8192);
    mf.truncateTo(1500); // nothing in flight now
    assert.deepEqual(onDisk(p, 1500, 1208), Buffer.alloc(1208), 'the tail is zeroed');
    mf.close();
  } finally {
    removeDir(dir);
  }
});

test('ASYNC_FLUSH put with commitCommitLogAsync=true: PUT_OK only once the record is in the file; a failed write answers FLUSH_DISK_TIMEOUT', async () => {
  const root = tempDir();
  try {
    const faulty = new FaultyFileSystem();
    const store = await openStore(smallConfig(root, { flushDiskType: 'ASYNC_FLUSH', messageIndexEnable: false, commitCommitLogAsync: true }), { fs: faulty });
    faulty.pwriteAsyncDelayMs = 40;
    const calls = faulty.pwriteAsyncCalls;
    const t0 = Date.now();
    const results = await Promise.all([0, 1, 2].map((i) => store.putMessage(makeMessage({ body: `m-${i}` }))));
    assert.ok(Date.now() - t0 >= 35, 'answered after the delayed write');
    assert.deepEqual(
      results.map((r) => r.status),
      ['PUT_OK', 'PUT_OK', 'PUT_OK'],
    );
    assert.equal(faulty.pwriteAsyncCalls - calls, 1, 'one write for the three puts of the turn');
    const last = results[2]!.appendResult!;
    const seg = store.commitLog.mfq.findMappedFileByOffset(last.wroteOffset)!;
    const rec = onDisk(seg.filePath, last.wroteOffset - seg.fileFromOffset, last.wroteBytes);
    assert.equal(rec.readInt32BE(0), last.wroteBytes, 'the record is in the file when its producer is answered');
    faulty.pwriteAsyncDelayMs = 0;
    faulty.pwriteErrorCode = 'EIO';
    const failed = await store.putMessage(makeMessage({ body: 'x' }));
    assert.equal(failed.status, 'FLUSH_DISK_TIMEOUT');
    assert.match(failed.remark ?? '', /page cache failed/);
    faulty.pwriteErrorCode = null;
    store.closeAbruptly();
  } finally {
    removeDir(root);
  }
});

test('config: commitCommitLogAsync defaults to false and is read from broker.conf text', () => {
  assert.equal(completeStoreConfig({}).commitCommitLogAsync, false);
  assert.equal(resolveStoreConfig({ commitCommitLogAsync: 'true' }).commitCommitLogAsync, true);
  assert.throws(() => resolveStoreConfig({ commitCommitLogAsync: 'maybe' }), /commitCommitLogAsync/);
});

test('commitCommitLogAsync: the HA master sends a slave only bytes whose write into the page cache completed', async () => {
  const root = tempDir();
  const faulty = new FaultyFileSystem();
  const store = await openStore(smallConfig(root, { brokerRole: 'ASYNC_MASTER', messageIndexEnable: false, commitCommitLogAsync: true }), { fs: faulty });
  const ha = await store.startHA({ listenPort: 0, host: '127.0.0.1' });
  const peer = await RawHAPeer.connect(ha.master!.port);
  try {
    faulty.pwriteAsyncDelayMs = 400;
    const puts = [0, 1, 2, 3].map((i) => store.putMessage(makeMessage({ body: `ha-${i}-${'x'.repeat(200)}` })));
    peer.report(0);
    await new Promise((r) => setTimeout(r, 150));
    const max = store.getMaxPhyOffset();
    assert.ok(max > 0);
    assert.equal(store.commitLog.mfq.getLastMappedFile()!.getCommittedPosition(), 0, 'the write is still in flight');
    assert.equal(peer.dataBytes(), 0, 'nothing sent before the master has the bytes in its page cache');
    assert.deepEqual(
      (await Promise.all(puts)).map((r) => r.status),
      ['PUT_OK', 'PUT_OK', 'PUT_OK', 'PUT_OK'],
    );
    await waitUntil(() => peer.dataBytes() >= max, 5000, () => `${peer.dataBytes()} of ${max}`);
    assert.ok(Buffer.concat(peer.frames.map((f) => f.body)).subarray(0, max).equals(store.commitLog.getData(0, max)!));
  } finally {
    faulty.pwriteAsyncDelayMs = 0;
    peer.destroy();
    await store.shutdown();
    removeDir(root);
  }
});
