import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import { SimulatedFileSystem } from '../../support/simulated-file-system.js';
import { makeMessage, openStore, smallConfig } from '../../support/store-fixtures.js';

const ROOT = '/sim/store';

/** Every ConsumeQueue entry of T/q0 points at a readable record with that queue offset. */
async function assertQueueConsistent(store: DefaultMessageStore): Promise<number> {
  const max = store.getMaxOffsetInQueue('T', 0);
  for (let q = store.getMinOffsetInQueue('T', 0); q < max; q++) {
    const phy = store.getCommitLogOffsetInQueue('T', 0, q);
    const m = await store.lookMessageByOffset(phy);
    assert.ok(m, `entry ${q} points at a record`);
    assert.equal(m.queueOffset, q);
  }
  return max;
}

test('power loss under SYNC_FLUSH: every acknowledged message survives, ConsumeQueues are rebuilt', async () => {
  const fs = new SimulatedFileSystem();
  const cfg = smallConfig(ROOT, { flushDiskType: 'SYNC_FLUSH', flushIntervalConsumeQueue: 60_000 });
  const store = await openStore(cfg, { fs });
  const acked: string[] = [];
  for (let i = 0; i < 30; i++) {
    const r = await store.putMessage(makeMessage({ body: Buffer.from(`acked-${i}-`.padEnd(300, '.')) }));
    assert.equal(r.status, 'PUT_OK');
    acked.push(`acked-${i}-`);
  }
  fs.syncDelayMs = 60_000; // nothing else reaches the device
  for (let i = 0; i < 3; i++) assert.equal((await store.putMessage(makeMessage({ properties: { WAIT: 'false' } }))).status, 'PUT_OK');
  store.closeAbruptly({ commitPending: false });
  fs.powerLoss();
  fs.syncDelayMs = 0;
  const again = await openStore(cfg, { fs });
  assert.equal(again.recoveryReport.mode, 'abnormal');
  const max = await assertQueueConsistent(again);
  assert.equal(max, 30, 'exactly the acknowledged messages (the unflushed WAIT=false ones are gone)');
  const g = await again.getMessage('g', 'T', 0, 25, 32);
  assert.ok(decodeRecord(g.messages[0]!).body.toString().startsWith('acked-25-'));
  const r = await again.putMessage(makeMessage());
  assert.equal(r.appendResult!.queueOffset, 30);
  await again.shutdown();
});

test('power loss under ASYNC_FLUSH: the store comes back at the last flushed record, consistent', async () => {
  const fs = new SimulatedFileSystem();
  const cfg = smallConfig(ROOT, { flushIntervalCommitLog: 60_000, flushIntervalConsumeQueue: 60_000 });
  const store = await openStore(cfg, { fs });
  for (let i = 0; i < 20; i++) await store.putMessage(makeMessage({ body: Buffer.alloc(300, i) }));
  await store.commitLog.mfq.flush(0);
  await store.consumeQueueStore.flushAll(0); // the CQ is durable ahead of the tail below
  const flushedEnd = store.getMaxPhyOffset();
  for (let i = 20; i < 30; i++) await store.putMessage(makeMessage({ body: Buffer.alloc(300, i) }));
  await store.consumeQueueStore.flushAll(0); // CQ entries 20..29 durable, their CL records not
  store.closeAbruptly({ commitPending: false });
  fs.powerLoss();
  const again = await openStore(cfg, { fs });
  assert.equal(again.getMaxPhyOffset(), flushedEnd);
  assert.equal(await assertQueueConsistent(again), 20, 'CQ entries beyond the surviving CommitLog were truncated');
  await again.shutdown();
});
