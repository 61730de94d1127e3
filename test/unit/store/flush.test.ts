import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeMessage, openStore, removeDir, smallConfig, tempDir, dispatched } from '../../support/store-fixtures.js';
import { FaultyFileSystem } from '../../support/faulty-file-system.js';
import { silentLogger } from '../../../src/common/logging/logger.js';

test('SYNC_FLUSH group commit: concurrent waiters are resolved by shared fdatasyncs', async () => {
  const root = tempDir();
  try {
    const fs = new FaultyFileSystem();
    const store = await openStore(smallConfig(root, { flushDiskType: 'SYNC_FLUSH', mappedFileSizeCommitLog: 1 << 20 }), { fs });
    fs.fdatasyncDelayMs = 20;
    const before = fs.fdatasyncCalls;
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => store.putMessage(makeMessage({ body: `m${i}` }))));
    assert.ok(results.every((r) => r.status === 'PUT_OK'));
    const syncs = fs.fdatasyncCalls - before;
    assert.ok(syncs >= 1 && syncs < 10, `50 waiters shared ${syncs} fdatasync calls`);
    assert.equal(store.getFlushedPhyOffset(), store.getMaxPhyOffset());
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('SYNC_FLUSH: a slow fdatasync gives FLUSH_DISK_TIMEOUT but the message is stored', async () => {
  const root = tempDir();
  try {
    const fs = new FaultyFileSystem();
    const store = await openStore(smallConfig(root, { flushDiskType: 'SYNC_FLUSH', syncFlushTimeout: 100 }), { fs });
    fs.fdatasyncDelayMs = 400;
    const r = await store.putMessage(makeMessage({ body: 'slow' }));
    assert.equal(r.status, 'FLUSH_DISK_TIMEOUT');
    assert.match(r.remark!, /syncFlushTimeout/);
    assert.equal(r.appendResult!.wroteOffset, 0);
    fs.fdatasyncDelayMs = 0;
    await store.shutdown();
    const again = await openStore(smallConfig(root, { flushDiskType: 'SYNC_FLUSH' }));
    assert.equal(again.getMaxOffsetInQueue('T', 0), 1);
    assert.equal((await again.lookMessageByOffset(0))!.body.toString(), 'slow');
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('SYNC_FLUSH: WAIT=false does not wait for the flush; consumers only see flushed data', async () => {
  const root = tempDir();
  try {
    const fs = new FaultyFileSystem();
    const store = await openStore(smallConfig(root, { flushDiskType: 'SYNC_FLUSH' }), { fs });
    fs.fdatasyncDelayMs = 200;
    const arrived: number[] = [];
    store.setMessageArrivingListener((_t, _q, logicOffset) => arrived.push(logicOffset));
    const r = await store.putMessage(makeMessage({ properties: { WAIT: 'false' } }));
    assert.equal(r.status, 'PUT_OK');
    assert.ok(store.getFlushedPhyOffset() < store.getMaxPhyOffset(), 'answered before the flush');
    assert.equal(store.getMaxOffsetInQueue('T', 0), 0, 'not dispatched before the flush (5.x SYNC_FLUSH visibility)');
    assert.equal((await store.getMessage('g', 'T', 0, 0, 32)).status, 'NO_MESSAGE_IN_QUEUE');
    const waited = await store.putMessage(makeMessage());
    assert.equal(waited.status, 'PUT_OK');
    await dispatched(store);
    assert.equal(store.getMaxOffsetInQueue('T', 0), 2, 'dispatched once flushed');
    assert.deepEqual(arrived, [1, 2], 'listener gets the new max offset after each CQ write');
    fs.fdatasyncDelayMs = 0;
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('ASYNC_FLUSH: put answers at once, the message is visible at once, the flush service catches up', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root, { flushIntervalCommitLog: 10, flushCommitLogLeastPages: 0 }));
    const r = await store.putMessage(makeMessage());
    assert.equal(r.status, 'PUT_OK');
    assert.equal(store.getMaxOffsetInQueue('T', 0), 1);
    for (let i = 0; i < 100 && store.getFlushedPhyOffset() < store.getMaxPhyOffset(); i++) await new Promise((res) => setTimeout(res, 10));
    assert.equal(store.getFlushedPhyOffset(), store.getMaxPhyOffset());
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('a shut-down store refuses puts and pulls with SERVICE_NOT_AVAILABLE', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    await store.shutdown();
    assert.equal((await store.putMessage(makeMessage())).status, 'SERVICE_NOT_AVAILABLE');
    await assert.rejects(store.getMessage('g', 'T', 0, 0, 1), /shut down/);
  } finally {
    removeDir(root);
  }
});

test('GroupCommitService: a flush is reported (dispatch) only after the producers it answered appended and the next fdatasync was issued', async () => {
  const { GroupCommitService } = await import('../../../src/store/commitlog/flush-services.js');
  const events: string[] = [];
  let max = 0;
  let flushed = 0;
  let release: (() => void) | null = null;
  const fakeQueue = {
    getFlushedWhere: () => flushed,
    getMaxOffset: () => max,
    getStoreTimestamp: () => 1_700_000_000_000 + flushed,
    flush: (_leastPages: number): Promise<number> => {
      const target = max;
      events.push(`fdatasync issued covering ${target}`);
      return new Promise<number>((resolve) => {
        release = () => {
          flushed = target;
          resolve(target);
        };
      });
    },
  };
  const gcs = new GroupCommitService(fakeQueue as never, 5000, (where) => events.push(`reported ${where}`), silentLogger);
  gcs.start();
  const put = (size: number): Promise<string> => {
    max += size;
    const r = gcs.handleDiskFlush(max, true);
    return Promise.resolve(r).then((status) => {
      events.push(`answered ${status}`);
      return status;
    });
  };
  const settle = async (): Promise<void> => {
    while (!release) await new Promise((r) => setImmediate(r));
  };
  const first = [put(100), put(100)];
  await settle();
  let third: Promise<string> | null = null;
  const answered = Promise.all(first).then(() => {
    third = put(50); // the producer appends again as soon as it is answered
  });
  const r1 = release!;
  release = null;
  r1();
  await answered;
  await settle();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(events, [
    'fdatasync issued covering 200',
    'answered PUT_OK',
    'answered PUT_OK',
    'fdatasync issued covering 250',
    'reported 200',
  ]);
  const r2 = release!;
  release = null;
  r2();
  assert.equal(await third!, 'PUT_OK');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(events.slice(5), ['answered PUT_OK', 'reported 250']);
  await gcs.shutdown();
});

test('ASYNC_FLUSH: a put is answered only once its record is in the CommitLog file (pwrite), so a process crash (SIGKILL) loses no acknowledged message', async () => {
  const { openSync, readSync, closeSync } = await import('node:fs');
  const { join } = await import('node:path');
  const root = tempDir();
  try {
    // 64 KiB segments: 30 small records stay in the first file; the write buffer is not full, so
    // only the per-turn commit can hand them to the OS
    const store = await openStore(smallConfig(root, { flushDiskType: 'ASYNC_FLUSH', mappedFileSizeCommitLog: 64 * 1024 }));
    const fd = openSync(join(root, 'commitlog', '00000000000000000000'), 'r');
    try {
      const onDisk = (wroteOffset: number, wroteBytes: number): boolean => {
        const size = Buffer.alloc(4);
        readSync(fd, size, 0, 4, wroteOffset); // the file, not the store: what survives the process
        return size.readInt32BE(0) === wroteBytes;
      };
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) =>
        store.putMessage(makeMessage({ body: `m${i}` })).then((r) => ({ status: r.status, inFile: onDisk(r.appendResult!.wroteOffset, r.appendResult!.wroteBytes) }))));
      assert.deepEqual(answers.filter((a) => a.status !== 'PUT_OK' || !a.inFile), [], 'every PUT_OK record is in the file when answered');
      // a single put in a quiet turn too
      const one = await store.putMessage(makeMessage({ body: 'alone' }));
      assert.equal(onDisk(one.appendResult!.wroteOffset, one.appendResult!.wroteBytes), true);
    } finally {
      closeSync(fd);
    }
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('ASYNC_FLUSH: when the per-turn commit into the page cache fails (ENOSPC), the puts of that turn are answered FLUSH_DISK_TIMEOUT, never PUT_OK, and later puts are refused', async () => {
  const root = tempDir();
  const fs = new FaultyFileSystem();
  try {
    const store = await openStore(smallConfig(root, { flushDiskType: 'ASYNC_FLUSH', mappedFileSizeCommitLog: 64 * 1024 }), { fs });
    assert.equal((await store.putMessage(makeMessage({ body: 'before' }))).status, 'PUT_OK');
    fs.pathFault = (op, p) => (op === 'pwrite' && p.includes('/commitlog/') ? 'ENOSPC' : null);
    const answers = await Promise.all([0, 1, 2].map((i) => store.putMessage(makeMessage({ body: `during${i}` }))));
    assert.deepEqual(answers.map((a) => a.status), ['FLUSH_DISK_TIMEOUT', 'FLUSH_DISK_TIMEOUT', 'FLUSH_DISK_TIMEOUT']);
    assert.match(answers[0]!.remark ?? '', /page cache failed .*ENOSPC/);
    const later = await store.putMessage(makeMessage({ body: 'after' }));
    assert.equal(later.status, 'SERVICE_NOT_AVAILABLE');
    assert.match(later.remark ?? '', /not writable/);
    fs.pathFault = null;
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});
