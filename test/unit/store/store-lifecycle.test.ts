import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DispatchRequest } from '../../../src/common/message/record-codec.js';
import type { StorePlugin } from '../../../src/store/dispatch/commit-log-dispatcher.js';
import { StoreLockedError } from '../../../src/store/recovery/store-files.js';
import { CHECKPOINT_FILE_SIZE } from '../../../src/store/recovery/store-checkpoint.js';
import { resolveStoreConfig } from '../../../src/store/store-config.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir, dispatched } from '../../support/store-fixtures.js';

class RecordingPlugin implements StorePlugin {
  readonly name = 'recording';
  seen: number[] = [];
  calls: string[] = [];
  constructor(private readonly rebuildFrom: number | null) {}
  load(lastExitOK: boolean) {
    this.calls.push(`load:${lastExitOK}`);
    return { rebuildFromPhyOffset: this.rebuildFrom };
  }
  dispatch(r: DispatchRequest): void {
    this.seen.push(r.commitLogOffset);
  }
  async flush() {
    this.calls.push('flush');
  }
  async shutdown() {
    this.calls.push('shutdown');
  }
}

test('store plugins: loaded before recovery, records re-dispatched from their rebuild offset, flushed at shutdown', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    const offsets: number[] = [];
    for (let i = 0; i < 12; i++) offsets.push((await store.putMessage(makeMessage({ body: Buffer.alloc(400) }))).appendResult!.wroteOffset);
    await store.shutdown();
    const plugin = new RecordingPlugin(offsets[3]!);
    const again = await openStore(smallConfig(root), { plugins: [() => plugin] });
    assert.deepEqual(plugin.seen, offsets.slice(3), 'records from the rebuild offset on');
    assert.equal(again.getMaxOffsetInQueue('T', 0), 12, 'ConsumeQueue unaffected by the repeat');
    const r = await again.putMessage(makeMessage());
    assert.equal(plugin.seen.at(-1), r.appendResult!.wroteOffset, 'live records reach the plugin too');
    await again.shutdown();
    assert.deepEqual(plugin.calls, ['load:true', 'flush', 'shutdown']);
  } finally {
    removeDir(root);
  }
});

test('lock: a store root cannot be opened twice; checkpoint is 4096 bytes with the confirm offset at 32', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    await assert.rejects(openStore(smallConfig(root)), StoreLockedError);
    await store.putMessage(makeMessage());
    const max = store.getMaxPhyOffset();
    await store.shutdown();
    const cp = fs.readFileSync(path.join(root, 'checkpoint'));
    assert.equal(cp.length, CHECKPOINT_FILE_SIZE);
    assert.equal(Number(cp.readBigInt64BE(32)), max);
    assert.equal(Number(cp.readBigInt64BE(0)), 1_700_000_000_000, 'physicMsgTimestamp');
    assert.equal(Number(cp.readBigInt64BE(8)), 1_700_000_000_000, 'logicsMsgTimestamp');
    const again = await openStore(smallConfig(root));
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('a store marked not writable refuses puts with SERVICE_NOT_AVAILABLE and the reason', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    store.setWritable(false, 'disk usage 91% above diskSpaceWarningLevelRatio');
    const r = await store.putMessage(makeMessage());
    assert.equal(r.status, 'SERVICE_NOT_AVAILABLE');
    assert.match(r.remark!, /91%/);
    store.setWritable(true);
    assert.equal((await store.putMessage(makeMessage())).status, 'PUT_OK');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('store config: RocketMQ key names with Appendix A defaults; CQ size rounded up to a multiple of 20', () => {
  const c = resolveStoreConfig({ storePathRootDir: '/x', mappedFileSizeConsumeQueue: '1001' });
  assert.equal(c.mappedFileSizeCommitLog, 1_073_741_824);
  assert.equal(c.mappedFileSizeConsumeQueue, 1020);
  assert.equal(c.maxMessageSize, 4_194_304);
  assert.equal(c.flushDiskType, 'ASYNC_FLUSH');
  assert.equal(c.flushIntervalCommitLog, 500);
  assert.equal(c.flushCommitLogLeastPages, 4);
  assert.equal(c.flushCommitLogThoroughInterval, 10_000);
  assert.equal(c.flushIntervalConsumeQueue, 1000);
  assert.equal(c.flushConsumeQueueLeastPages, 2);
  assert.equal(c.flushConsumeQueueThoroughInterval, 60_000);
  assert.equal(c.syncFlushTimeout, 5000);
  assert.equal(c.checkCRCOnRecover, true);
  assert.equal(c.maxTransferBytesOnMessageInMemory, 262_144);
  assert.equal(c.maxTransferCountOnMessageInMemory, 32);
  assert.equal(c.maxTransferBytesOnMessageInDisk, 65_536);
  assert.equal(c.maxTransferCountOnMessageInDisk, 8);
  assert.equal(c.accessMessageInMemoryMaxRatio, 40);
  assert.equal(c.maxFilterMessageSize, 16_000);
  assert.equal(c.brokerRole, 'ASYNC_MASTER');
  assert.throws(() => resolveStoreConfig({ flushDiskType: 'SOMETIMES' }), /flushDiskType/);
});

test('deleteTopics while dispatch lags (SYNC_FLUSH before the flush) drops the pending entries; the topic restarts at 0', async () => {
  const { FaultyFileSystem } = await import('../../support/faulty-file-system.js');
  const root = tempDir();
  try {
    const fs2 = new FaultyFileSystem();
    const store = await openStore(smallConfig(root, { flushDiskType: 'SYNC_FLUSH' }), { fs: fs2 });
    for (let i = 0; i < 5; i++) await store.putMessage(makeMessage());
    fs2.fdatasyncDelayMs = 100;
    await store.putMessage(makeMessage({ properties: { WAIT: 'false' } }));
    await store.putMessage(makeMessage({ topic: 'Other', properties: { WAIT: 'false' } }));
    await store.deleteTopics(['T']);
    assert.equal(store.getMaxOffsetInQueue('T', 0), 0);
    const r = await store.putMessage(makeMessage({ body: 'fresh' }));
    await dispatched(store);
    assert.equal(r.appendResult!.queueOffset, 0);
    assert.equal(store.getMaxOffsetInQueue('T', 0), 1);
    assert.equal(store.getMaxOffsetInQueue('Other', 0), 1, 'other topics unaffected');
    const g = await store.getMessage('g', 'T', 0, 0, 32);
    assert.equal(g.messages.length, 1);
    fs2.fdatasyncDelayMs = 0;
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('open fails with a clear error on a segment of the wrong size and releases the root', async () => {
  const { SegmentLoadError } = await import('../../../src/store/mapped-file/mapped-file-queue.js');
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    await store.putMessage(makeMessage());
    await store.shutdown();
    await assert.rejects(openStore(smallConfig(root, { mappedFileSizeCommitLog: 8192 })), (e: unknown) => {
      assert.ok(e instanceof SegmentLoadError);
      assert.match((e as Error).message, /has length 4096 but the configured segment size is 8192/);
      return true;
    });
    const again = await openStore(smallConfig(root));
    assert.equal(again.getMaxOffsetInQueue('T', 0), 1);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});
