/**
 * Found by the store simulation with Linux fsync-error semantics (`TSMQ_SIM_FSYNC=dropped`,
 * seeds 7, 16, 29, … — 16 of 300): after a failed fdatasync Linux may mark the dirty pages clean
 * without writing them. fsyncgate makes the store refuse puts and keep the abort file, but a
 * restart on the same boot reads those pages back from the page cache: the abnormal recovery
 * counted them as data and its force (fdatasync) wrote nothing, since the kernel thinks they are
 * clean. A message acknowledged after the restart (SYNC_FLUSH) then reached the device behind
 * a hole, and a power loss cut the CommitLog at the hole, losing it. The abnormal recovery now
 * writes the recovered data again (same bytes: the pages become dirty) before forcing it,
 * unless the lock proves a reboot since the last process.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { SimulatedFileSystem } from '../../support/simulated-file-system.js';
import { makeMessage, openStore, smallConfig } from '../../support/store-fixtures.js';

const ROOT = '/sim/fsync-dropped-restart';

test('restart after a failed fdatasync (pages dropped by the kernel): the recovered data is written again, a later acknowledged message survives a power loss', async () => {
  const fs = new SimulatedFileSystem();
  const base = { mappedFileSizeCommitLog: 64 * 1024, flushIntervalCommitLog: 600_000, flushIntervalConsumeQueue: 600_000 };
  const first = await openStore(smallConfig(ROOT, base), { fs });
  for (let i = 0; i < 3; i++) assert.equal((await first.putMessage(makeMessage({ body: `synced-${i}` }))).status, 'PUT_OK');
  await first.commitLog.mfq.flush(0);
  for (let i = 0; i < 8; i++) assert.equal((await first.putMessage(makeMessage({ body: `dropped-${i}-`.padEnd(1500, '.') }))).status, 'PUT_OK');
  const droppedEnd = first.getMaxPhyOffset();
  assert.ok(droppedEnd > 3 * 4096, 'the unsynced data spans several pages');
  fs.failNextSync((p) => p.includes('/commitlog/'));
  await assert.rejects(first.commitLog.mfq.flush(0), /fdatasync/);
  await first.shutdown(); // keeps the abort file (fsyncgate)

  const second = await openStore(smallConfig(ROOT, { ...base, flushDiskType: 'SYNC_FLUSH' }), { fs });
  assert.equal(second.recoveryReport.mode, 'abnormal');
  assert.equal(second.getMaxPhyOffset(), droppedEnd, 'the page cache still serves the dropped pages');
  const acked = await second.putMessage(makeMessage({ body: 'acked-after-restart' }));
  assert.equal(acked.status, 'PUT_OK');
  second.closeAbruptly({ commitPending: false });
  fs.powerLoss();

  const third = await openStore(smallConfig(ROOT, base), { fs });
  assert.equal(third.getMaxOffsetInQueue('T', 0), 12);
  const bodies: string[] = [];
  for (let offset = 0; offset < 12; ) {
    const r = await third.getMessage('g', 'T', 0, offset, 32);
    assert.equal(r.status, 'FOUND', `pull at ${offset}`);
    for (const raw of r.messages) bodies.push(decodeRecord(raw).body.toString().replace(/-\.+$/, ''));
    offset = r.nextBeginOffset;
  }
  assert.deepEqual(bodies, [...[0, 1, 2].map((i) => `synced-${i}`), ...Array.from({ length: 8 }, (_, i) => `dropped-${i}`), 'acked-after-restart']);
  await third.shutdown();
});
