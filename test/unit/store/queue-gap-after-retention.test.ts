/**
 * Found by the store simulation (test/sim, seed 5010 at 2,000 operations: "[BUG] logic queue
 * order maybe wrong", then "queue T8/2 offset 8: record has queue offset 9"). A ConsumeQueue
 * entry was written but not yet flushed when retention deleted the (expired) CommitLog file
 * holding its record; then the power failed. The abnormal recovery could only re-dispatch from
 * the oldest CommitLog file left, so the queue came back one entry short, and the next
 * re-dispatched record (queue offset 9) was appended at offset 8: every later entry sat one
 * position too low (a pull at 8 returned the message of offset 9, offsets no longer matched the
 * records' QUEUEOFFSET). RocketMQ logs the same "[BUG]" line and appends at the wrong position.
 * tsmq now fills such a gap with pre-blank entries (RocketMQ's filler for offsets without a
 * record), so every entry lands at its own queue offset, and the min offset correction after
 * recovery moves the queue's min past the gap (its records are below the CommitLog min offset).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { SimulatedFileSystem } from '../../support/simulated-file-system.js';
import { makeMessage } from '../../support/store-fixtures.js';
import { HOUR_MS, openRetentionStore, retentionConfig } from './retention-support.js';

const ROOT = '/sim/queue-gap-after-retention';

test('a queue entry lost with its expired CommitLog file: later entries keep their queue offsets after the power loss', async () => {
  const fs = new SimulatedFileSystem();
  const cfg = retentionConfig(ROOT, { flushIntervalCommitLog: 600_000, flushIntervalConsumeQueue: 600_000, fileReservedTime: 1 });
  const { store, clock } = await openRetentionStore(cfg, { deps: { fs }, nowMs: Date.now() }); // file ages: the simulated disk stamps real time
  for (let i = 0; i < 8; i++) assert.equal((await store.putMessage(makeMessage({ body: `m${i}` }))).status, 'PUT_OK');
  await store.commitLog.mfq.flush(0);
  await store.consumeQueueStore.flushAll(0); // entries 0..7 on the device
  assert.equal((await store.putMessage(makeMessage({ body: 'm8' }))).status, 'PUT_OK'); // entry 8: never flushed
  while (store.commitLog.mfq.getFiles().length < 2) {
    assert.equal((await store.putMessage(makeMessage({ topic: 'F', body: 'x'.repeat(500) }))).status, 'PUT_OK');
  }
  for (let i = 9; i < 11; i++) {
    const r = await store.putMessage(makeMessage({ body: `m${i}` }));
    assert.equal(r.appendResult!.queueOffset, i);
    assert.ok(r.appendResult!.wroteOffset >= 4096, 'in the second CommitLog file');
  }
  await store.commitLog.mfq.flush(0);
  clock.advance(2 * HOUR_MS);
  await store.executeDeleteFilesManually();
  assert.equal(store.getMinPhyOffset(), 4096, 'the file holding the record of entry 8 expired and was deleted');
  store.closeAbruptly({ commitPending: false });
  fs.powerLoss();

  const { store: again } = await openRetentionStore(cfg, { deps: { fs }, nowMs: clock.nowMs() });
  assert.equal(again.recoveryReport.mode, 'abnormal');
  assert.equal(again.getMaxOffsetInQueue('T', 0), 11, 'entries 9 and 10 at their own offsets');
  assert.equal(again.getMinOffsetInQueue('T', 0), 9, 'the min is past the entries whose records are gone');
  const bodies: string[] = [];
  for (let offset = 9; offset < 11; ) {
    const r = await again.getMessage('g', 'T', 0, offset, 32); // stops at each 10-entry ConsumeQueue file
    assert.equal(r.status, 'FOUND', `pull at ${offset}`);
    assert.equal(r.messageQueueOffsets[0], offset);
    for (const raw of r.messages) bodies.push(`${decodeRecord(raw).queueOffset}:${decodeRecord(raw).body.toString()}`);
    offset = r.nextBeginOffset;
  }
  assert.deepEqual(bodies, ['9:m9', '10:m10']);
  const put = await again.putMessage(makeMessage({ body: 'm11' }));
  assert.equal(put.appendResult!.queueOffset, 11);
  await again.shutdown();
});
