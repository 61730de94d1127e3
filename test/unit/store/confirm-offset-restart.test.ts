/**
 * Controller mode: the confirm offset survives a restart (Apache 5.3.3 keeps it in the
 * StoreCheckpoint at byte 32 and recovers with it; docs/failover.md "What consumers see").
 * A replica (real store) confirmed 3 of its 6 messages when it stopped (cleanly, or crashed):
 *
 * - the checkpoint file holds the confirm offset at byte 32 (Apache's confirmPhyOffset);
 * - after the restart only the 3 confirmed messages are consumable (ConsumeQueue max offset 3,
 *   getMessage returns 3 bodies) although the CommitLog keeps all 6, also after waiting;
 * - the tail becomes consumable once the replica is elected master (its data is the group's),
 *   as in Apache;
 * - the same files opened in classic mode dispatch everything (classic meaning unchanged).
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import { resolveStoreConfig, type StoreConfig } from '../../../src/store/store-config.js';
import { waitUntil } from '../../support/ha-cluster.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const TOPIC = 'ConfirmRestart';

async function open(dir: string, extra: Partial<StoreConfig>): Promise<DefaultMessageStore> {
  const store = await openStore(smallConfig(dir, { mappedFileSizeCommitLog: 64 * 1024, ...extra }));
  cleanups.push(() => store.shutdown());
  return store;
}

/** A controller-mode master store that confirmed its first 3 of 6 messages; returns the confirm offset. */
async function writeUnconfirmedTail(dir: string): Promise<{ store: DefaultMessageStore; confirm: number }> {
  const store = await open(dir, { enableControllerMode: true, brokerRole: 'SLAVE' });
  await store.switchReplication('MASTER', { listenPort: 0, host: '127.0.0.1' });
  let confirm = 0;
  store.setControllerHooks({ fence: () => null, ack: null, confirm: { confirmOffset: () => confirm } });
  for (let i = 0; i < 6; i++) {
    const r = await store.putMessage(makeMessage({ topic: TOPIC, queueId: 0, body: `m${i}`, properties: { WAIT: 'false' } }));
    assert.equal(r.status, 'PUT_OK');
    if (i === 2) {
      confirm = store.getMaxPhyOffset();
      store.confirmOffsetChanged();
    }
  }
  assert.equal(store.getMaxOffsetInQueue(TOPIC, 0), 3, 'the unconfirmed tail is not consumable while running');
  return { store, confirm };
}

async function consumable(store: DefaultMessageStore): Promise<string[]> {
  const got = await store.getMessage('G', TOPIC, 0, 0, 32);
  return got.messages.map((b) => decodeRecord(b, 0).body.toString());
}

const checkpointConfirm = (dir: string): number => Number(fs.readFileSync(path.join(dir, 'checkpoint')).readBigInt64BE(32));

describe('controller mode: the confirm offset is persisted and bounds start-up dispatch', () => {
  for (const stop of ['clean shutdown', 'crash'] as const) {
    it(`after a ${stop}, a replica's unconfirmed tail stays unconsumable until it is elected`, async () => {
      const dir = tempDir('tsmq-confirm-restart-');
      cleanups.push(() => removeDir(dir));
      const { store, confirm } = await writeUnconfirmedTail(dir);
      const max = store.getMaxPhyOffset();
      if (stop === 'clean shutdown') {
        await store.shutdown();
      } else {
        await store.checkpoint.flush(); // what the checkpoint timer does every second
        store.closeAbruptly({ commitPending: true }); // a process crash: the page cache keeps the CommitLog
      }
      assert.equal(checkpointConfirm(dir), confirm, 'checkpoint byte 32 = confirm offset');

      const again = await open(dir, { enableControllerMode: true, brokerRole: 'SLAVE' });
      assert.equal(again.recoveryReport.confirmOffset, confirm);
      assert.equal(again.getMaxPhyOffset(), max, 'the CommitLog keeps the tail');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(again.getMaxOffsetInQueue(TOPIC, 0), 3);
      assert.deepEqual(await consumable(again), ['m0', 'm1', 'm2']);
      assert.equal(again.getConfirmOffset(), confirm);

      await again.switchReplication('MASTER', { listenPort: 0, host: '127.0.0.1' }); // elected: its data is the group's
      await again.prepareReplicaForWrites();
      await waitUntil(() => again.getMaxOffsetInQueue(TOPIC, 0) === 6, 5000, () => `queue max ${again.getMaxOffsetInQueue(TOPIC, 0)}`);
      assert.deepEqual(await consumable(again), ['m0', 'm1', 'm2', 'm3', 'm4', 'm5']);
    });
  }

  it("the store takes the mode from broker.conf's enableControllerMode (the broker opens it with resolveStoreConfig)", () => {
    assert.equal(resolveStoreConfig({ enableControllerMode: 'true' }).enableControllerMode, true);
    assert.equal(resolveStoreConfig({}).enableControllerMode, false);
  });

  it('the same files opened in classic mode dispatch the whole CommitLog', async () => {
    const dir = tempDir('tsmq-confirm-restart-');
    cleanups.push(() => removeDir(dir));
    const { store } = await writeUnconfirmedTail(dir);
    await store.shutdown();
    const classic = await open(dir, { brokerRole: 'ASYNC_MASTER' });
    assert.equal(classic.recoveryReport.confirmOffset, null);
    assert.deepEqual(await consumable(classic), ['m0', 'm1', 'm2', 'm3', 'm4', 'm5']);
  });
});
