/**
 * Found by the store simulation (test/sim, seed 299: a zero entry inside [min, max) of a
 * ConsumeQueue after a power loss, pulls answered MESSAGE_WAS_REMOVING). The entries of one
 * queue live in several files, and the kernel writes dirty pages back in no particular order:
 * a power loss can keep the newer files of a queue and lose a page of an older one (the seed got
 * there through a failed flush of the older file; with fsyncgate that path now stops at the
 * failure, but plain writeback still gets there). ConsumeQueue recovery, like RocketMQ's
 * `ConsumeQueue.recover`, checks only the last three files, and the re-dispatch of the record
 * was skipped as already written ("record ends at or below the queue's max physical offset").
 * Now a re-dispatched entry below the checked files is compared with its slot; a zero slot (a
 * hole) is written in place, and the recovery's force makes it durable.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { SimulatedFileSystem } from '../../support/simulated-file-system.js';
import { makeMessage, openStore, smallConfig } from '../../support/store-fixtures.js';

const ROOT = '/sim/queue-hole-older-file';

for (const [name, reached] of [
  ['newer files reached the device', [0, 2, 3, 4]],
  ['the newest files were lost too (recovery truncates the queue, the hole lies below the files it checked)', [0, 2]],
] as const) {
  test(`a ConsumeQueue page lost in an older file, ${name}: recovery fills the hole`, async () => {
    const fs = new SimulatedFileSystem();
    // 4 entries per ConsumeQueue file (80 bytes), nothing flushed by the services
    const cfg = smallConfig(ROOT, { mappedFileSizeCommitLog: 64 * 1024, mappedFileSizeConsumeQueue: 80, flushIntervalCommitLog: 600_000, flushIntervalConsumeQueue: 600_000 });
    const store = await openStore(cfg, { fs });
    for (let i = 0; i < 20; i++) assert.equal((await store.putMessage(makeMessage({ body: `m${i}` }))).status, 'PUT_OK');
    await store.commitLog.mfq.flush(0); // every record on the device
    const cqFiles = store.consumeQueueStore.find('T', 0)!.getMappedFileQueue().getFiles();
    assert.equal(cqFiles.length, 5);
    // writeback reached these ConsumeQueue files, not the second one (entries 4..7)
    for (const i of reached) await cqFiles[i]!.flush(0);
    store.closeAbruptly({ commitPending: false });
    fs.powerLoss();

    const again = await openStore(cfg, { fs });
    assert.equal(again.recoveryReport.mode, 'abnormal');
    assert.equal(again.getMinOffsetInQueue('T', 0), 0);
    assert.equal(again.getMaxOffsetInQueue('T', 0), 20);
    const got: string[] = [];
    for (let offset = 0; offset < 20; ) {
      const r = await again.getMessage('g', 'T', 0, offset, 32); // stops at each 4-entry file
      assert.equal(r.status, 'FOUND', `pull at ${offset}`);
      assert.equal(r.messageQueueOffsets[0], offset);
      for (const raw of r.messages) got.push(decodeRecord(raw).body.toString());
      offset = r.nextBeginOffset;
    }
    assert.deepEqual(got, Array.from({ length: 20 }, (_, i) => `m${i}`));
    // the filled entries are durable: another power loss right away keeps them
    again.closeAbruptly({ commitPending: false });
    fs.powerLoss();
    const third = await openStore(cfg, { fs });
    const r = await third.getMessage('g', 'T', 0, 4, 4);
    assert.deepEqual(r.messages.map((raw) => decodeRecord(raw).body.toString()), ['m4', 'm5', 'm6', 'm7']);
    await third.shutdown();
  });
}
