/**
 * Found by the store simulation (test/sim, seeds 1 and 10 of the first run): a process crash
 * (kill -9) leaves written-but-unflushed data in the page cache; the abnormal recovery at the
 * next start reads it back and counts it as flushed, so nothing ever forces it to the device.
 * A power loss later then punches holes into the middle of the CommitLog (and ConsumeQueues):
 * recovery stops at the hole or skips to the next segment, SYNC_FLUSH-acknowledged messages
 * written after the restart are lost or cut off, and ConsumeQueue entries point into zeros.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { SimulatedFileSystem } from '../../support/simulated-file-system.js';
import { makeMessage, openStore, smallConfig } from '../../support/store-fixtures.js';

const ROOT = '/sim/crash-then-power-loss';

test('power loss after a restart from a process crash: the recovered CommitLog and ConsumeQueues were forced, nothing is lost', async () => {
  const fs = new SimulatedFileSystem();
  // ASYNC_FLUSH with flushes far away: everything stays in the page cache
  const asyncCfg = smallConfig(ROOT, { flushIntervalCommitLog: 600_000, flushIntervalConsumeQueue: 600_000 });
  const first = await openStore(asyncCfg, { fs });
  for (let i = 0; i < 30; i++) assert.equal((await first.putMessage(makeMessage({ body: `before-${i}-`.padEnd(300, '.') }))).status, 'PUT_OK');
  assert.ok(first.getMaxPhyOffset() > 4096 * 2, 'spans several 4 KiB segments');
  first.closeAbruptly({ commitPending: true }); // kill -9: the page cache keeps every byte

  const syncCfg = smallConfig(ROOT, { flushDiskType: 'SYNC_FLUSH', flushIntervalConsumeQueue: 600_000 });
  const second = await openStore(syncCfg, { fs });
  assert.equal(second.recoveryReport.mode, 'abnormal');
  assert.equal(second.getMaxOffsetInQueue('T', 0), 30);
  const acked = await second.putMessage(makeMessage({ body: 'after-restart' }));
  assert.equal(acked.status, 'PUT_OK', 'SYNC_FLUSH: acknowledged once on the device');
  const endBefore = second.getMaxPhyOffset();
  second.closeAbruptly({ commitPending: false });
  fs.powerLoss();

  const third = await openStore(syncCfg, { fs });
  assert.equal(third.getMaxPhyOffset(), endBefore, 'the CommitLog comes back whole');
  assert.equal(third.getMaxOffsetInQueue('T', 0), 31);
  const bodies: string[] = [];
  for (let offset = 0; offset < 31; ) {
    const r = await third.getMessage('g', 'T', 0, offset, 32); // stops at each 10-entry ConsumeQueue file
    assert.equal(r.status, 'FOUND', `pull at ${offset}`);
    for (const raw of r.messages) bodies.push(decodeRecord(raw).body.toString().replace(/\.+$/, ''));
    offset = r.nextBeginOffset;
  }
  assert.deepEqual(bodies, [...Array.from({ length: 30 }, (_, i) => `before-${i}-`), 'after-restart']);
  await third.shutdown();
});
