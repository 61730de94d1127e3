/**
 * Found by the store simulation (test/sim, seed 23: "queryMessage(T4, K27) misses surviving
 * messages 106"): a message with two keys arrived when the writable index file had room for one.
 * Its first key went into the full file (whose header then ends at the message's offset), the
 * second into a new file. After a crash that new file was newer than the checkpoint and was
 * destroyed for rebuild; the rebuild rolled a fresh file that inherited the full file's end
 * offset, and the rule "a message at the end offset is already indexed" (B14) skipped the
 * message: its second key was gone for good.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import type { DispatchRequest } from '../../../src/common/message/record-codec.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { IndexService } from '../../../src/store/index/index-service.js';

const fs = new NodeFileSystem();

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

test('keys of one message split across an index-file roll are all found after the newer file is rebuilt', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tsmq-index-straddle-'));
  try {
    const clock = new ManualClock(1_700_000_000_000);
    const ts = { v: 0 };
    const cp = { get indexMsgTimestamp() { return ts.v; }, setIndexMsgTimestamp: (t: number) => (ts.v = t), flush: async () => {} };
    const cfg = { indexDir: join(dir, 'index'), maxHashSlotNum: 8, maxIndexNum: 4, messageIndexEnable: true }; // 3 keys per file
    const svc = new IndexService(fs, cfg, clock, cp, silentLogger);
    svc.load(true, 0);
    svc.buildIndex(dispatch(0, 'a', clock.nowMs()));
    svc.buildIndex(dispatch(100, 'b', clock.nowMs()));
    clock.advance(1000);
    svc.buildIndex(dispatch(200, 'c d', clock.nowMs())); // 'c' fills file 1, 'd' rolls into file 2
    await svc.flush(); // everything durable; the roll moved the checkpoint to file 1's end
    clock.advance(1000);
    svc.buildIndex(dispatch(300, 'e', clock.nowMs())); // file 2 is now newer than the checkpoint
    await svc.flush();
    ts.v = 1_700_000_001_000; // the checkpoint of file 1 (file 2's own flush did not reach it before the crash)
    svc.closeAbruptly();

    const again = new IndexService(fs, cfg, clock, cp, silentLogger);
    const { rebuildFromPhyOffset } = again.load(false, ts.v);
    assert.equal(rebuildFromPhyOffset, 200, 'file 2 destroyed; rebuild from its first message');
    for (const [offset, keys] of [[200, 'c d'], [300, 'e']] as const) again.buildIndex(dispatch(offset, keys, clock.nowMs()));
    for (const [key, offset] of [['a', 0], ['c', 200], ['d', 200], ['e', 300]] as const) {
      assert.deepEqual([...new Set(again.queryOffset('T', key, 32, 0, Number.MAX_SAFE_INTEGER).phyOffsets)], [offset], `key ${key}`);
    }
    await again.shutdown();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
