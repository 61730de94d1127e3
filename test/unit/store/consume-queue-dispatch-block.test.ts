/**
 * ConsumeQueueDispatcher.dispatchBlock (a batch or a prepared block dispatched as one) writes
 * exactly the ConsumeQueue files that dispatching the same records one by one writes: a block of
 * one queue (every batch) goes straight to the queue, a block crossing a CQ file boundary and a
 * mixed block (several topics and queues, a PREPARED record that owns no entry) too. The store
 * time is reported once per queue, with the block's last record's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { NodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { ConsumeQueueStore } from '../../../src/store/consumequeue/consume-queue-store.js';
import { ConsumeQueueDispatcher } from '../../../src/store/dispatch/consume-queue-dispatcher.js';
import type { DispatchRequest } from '../../../src/common/message/record-codec.js';
import { MessageSysFlag } from '../../../src/common/message/sysflag.js';
import { removeDir, tempDir } from '../../support/store-fixtures.js';

/** 6 entries per CQ file, so a block of 8 crosses a file boundary. */
const CQ_FILE_SIZE = 6 * 20;

function req(topic: string, queueId: number, queueOffset: number, phy: number, storeTimestamp: number, sysFlag = 0): DispatchRequest {
  return {
    topic,
    queueId,
    commitLogOffset: phy,
    msgSize: 100,
    tagsCode: 1000 + queueOffset,
    storeTimestamp,
    consumeQueueOffset: queueOffset,
    keys: '',
    uniqKey: null,
    sysFlag,
    preparedTransactionOffset: 0,
    properties: new Map(),
    bornTimestamp: 1,
  };
}

/** Every CQ file under `root` (relative path → bytes). */
function cqFiles(root: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (dir: string): void => {
    for (const name of fs.readdirSync(dir).sort()) {
      const p = path.join(dir, name);
      if (fs.statSync(p).isDirectory()) walk(p);
      else out.set(path.relative(root, p), fs.readFileSync(p));
    }
  };
  walk(root);
  return out;
}

test('dispatchBlock writes the same ConsumeQueue bytes as dispatch per record (one-queue blocks, a block over a file boundary, a mixed block)', () => {
  const rootA = tempDir();
  const rootB = tempDir();
  try {
    const open = (root: string): { cqs: ConsumeQueueStore; d: ConsumeQueueDispatcher; times: number[] } => {
      const cqs = new ConsumeQueueStore({ rootDir: root, fileSize: CQ_FILE_SIZE, fs: new NodeFileSystem(), clock: new ManualClock(0), logger: silentLogger });
      const times: number[] = [];
      return { cqs, d: new ConsumeQueueDispatcher(cqs, (t) => times.push(t)), times };
    };
    const perRecord = open(rootA);
    const asBlocks = open(rootB);
    let phy = 0;
    const block = (reqs: Array<[string, number, number, number?]>, storeTimestamp: number): DispatchRequest[] =>
      reqs.map(([topic, queueId, queueOffset, sysFlag]) => {
        const r = req(topic, queueId, queueOffset, phy, storeTimestamp, sysFlag ?? 0);
        phy += 100;
        return r;
      });
    const blocks = [
      block([['T', 0, 0]], 10), // a single record first
      block([['T', 0, 1], ['T', 0, 2], ['T', 0, 3]], 20), // one queue, straight
      block(Array.from({ length: 8 }, (_, k): [string, number, number] => ['T', 0, 4 + k]), 30), // one queue over a file boundary (entries 4–11, files of 6)
      block([['T', 1, 0], ['U', 0, 0], ['T', 1, 1], ['T', 0, 12, MessageSysFlag.TRANSACTION_PREPARED_TYPE], ['U', 0, 1]], 40), // mixed; the PREPARED one owns no entry
      block([['T', 0, 12], ['T', 0, 13]], 50),
    ];
    for (const b of blocks) {
      for (const r of b) perRecord.d.dispatch(r);
      asBlocks.d.dispatchBlock(b);
    }
    assert.ok(perRecord.cqs.commitAll());
    assert.ok(asBlocks.cqs.commitAll());
    const a = cqFiles(rootA);
    const b = cqFiles(rootB);
    assert.deepEqual([...b.keys()], [...a.keys()]);
    for (const [name, bytes] of a) assert.ok(b.get(name)!.equals(bytes), `${name} differs`);
    // the entries are real: T-0 has 14 (0–13) over three files of 6, its 13th entry points at the last block's first record
    assert.deepEqual([...a.keys()].filter((k) => k.startsWith(`T${path.sep}0${path.sep}`)).length, 3);
    const t0 = asBlocks.cqs.find('T', 0)!;
    assert.equal(t0.getMaxOffsetInQueue(), 14);
    assert.equal(asBlocks.cqs.find('U', 0)!.getMaxOffsetInQueue(), 2);
    assert.equal(asBlocks.cqs.find('T', 1)!.getMaxOffsetInQueue(), 2);
    // store time: per record there, once per block of one queue, once per queue of the mixed block
    assert.deepEqual(asBlocks.times, [10, 20, 30, 40, 40, 50]);
    assert.equal(perRecord.times.length, 1 + 3 + 8 + 4 + 2);
    perRecord.cqs.shutdown();
    asBlocks.cqs.shutdown();
  } finally {
    removeDir(rootA);
    removeDir(rootB);
  }
});
