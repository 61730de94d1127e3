/**
 * Found by the store simulation (test/sim, seed 702: "queryMessage(T0, K1) misses surviving
 * messages 134"): when an index file filled up, its flush ran in the background and a failure
 * (ENOSPC) was only logged. The next flush of the writable file then moved the checkpoint's
 * indexMsgTimestamp past the full file, whose tail was never written: after a crash recovery
 * trusted it and never re-indexed those keys. A full file whose flush failed is now flushed
 * again before the writable one, and the checkpoint does not move until it is on disk.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { silentLogger } from '../../../src/common/logging/logger.js';
import type { DispatchRequest } from '../../../src/common/message/record-codec.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { IndexService } from '../../../src/store/index/index-service.js';
import { FaultyFileSystem } from '../../support/faulty-file-system.js';
import { removeDir, tempDir } from '../../support/store-fixtures.js';

function dispatch(commitLogOffset: number, keys: string, storeTimestamp: number): DispatchRequest {
  return {
    topic: 'T',
    queueId: 0,
    commitLogOffset,
    msgSize: 100,
    tagsCode: 0,
    storeTimestamp,
    consumeQueueOffset: commitLogOffset / 100,
    keys,
    uniqKey: null,
    sysFlag: 0,
    preparedTransactionOffset: 0,
    properties: new Map(),
    bornTimestamp: storeTimestamp,
  };
}

test('a failed flush of a full index file is retried before the checkpoint moves past it', async () => {
  const dir = tempDir('tsmq-index-retry-');
  const fs = new FaultyFileSystem();
  try {
    const clock = new ManualClock(1_700_000_000_000);
    const ts = { v: 0 };
    const cp = { get indexMsgTimestamp() { return ts.v; }, setIndexMsgTimestamp: (t: number) => (ts.v = t), flush: async () => {} };
    const cfg = { indexDir: join(dir, 'index'), maxHashSlotNum: 8, maxIndexNum: 4, messageIndexEnable: true }; // 3 keys per file
    const svc = new IndexService(fs, cfg, clock, cp, silentLogger);
    svc.load(true, 0);
    for (const [i, key] of ['a', 'b', 'c'].entries()) {
      clock.advance(1000);
      svc.buildIndex(dispatch(i * 100, key, clock.nowMs()));
    }
    const [firstFile] = readdirSync(join(dir, 'index'));
    fs.pathFault = (op, p) => (op === 'pwrite' && p.endsWith(firstFile!) ? 'ENOSPC' : null); // the full file cannot be written
    clock.advance(1000);
    svc.buildIndex(dispatch(300, 'd', clock.nowMs())); // rolls: the full file's background flush fails
    await svc.flushWritable().catch(() => undefined);
    assert.equal(ts.v, 0, 'the full file is not on disk: the checkpoint did not move');
    fs.pathFault = null;
    await svc.flushWritable();
    assert.equal(ts.v, 1_700_000_004_000, 'the checkpoint covers the writable file');
    svc.closeAbruptly(); // crash: whatever is not on file now is gone

    const again = new IndexService(fs, cfg, clock, cp, silentLogger);
    assert.deepEqual(again.load(false, ts.v), { rebuildFromPhyOffset: null }, 'both files trusted');
    for (const [key, offset] of [['a', 0], ['b', 100], ['c', 200], ['d', 300]] as const) {
      assert.deepEqual(again.queryOffset('T', key, 32, 0, Number.MAX_SAFE_INTEGER).phyOffsets, [offset], `key ${key}`);
    }
    await again.shutdown();
  } finally {
    removeDir(dir);
  }
});
