/**
 * Pop state replication (src/broker/pop/pop-state-sync.ts): a replica's PopStateStore adopts its
 * master's table over GET_ALL_POP_STATE (real RemotingServer / RemotingClient on loopback, real
 * stores on disk).
 *
 * - the first round adopts the whole table (ack offset, in-flight entry with attempts,
 *   invisible-until and version); versions the replica issues later stay above the master's;
 * - an unchanged master answers notModified (no body) and nothing is replaced;
 * - a change on the master is adopted by the next round, and so is an unchanged master's table
 *   when the replica's own table changed since (it popped as master meanwhile);
 * - the adopted table is durable: a reopened replica store has it;
 * - a replica that pops itself (master) adopts nothing;
 * - a master without the code (an older tsmq) is not an error.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { buildPopStateSyncHandler, PopSlaveSync } from '../../../src/broker/pop/pop-state-sync.js';
import { PopStateStore } from '../../../src/broker/pop/pop-state-store.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { RemotingServer } from '../../../src/remoting/transport/remoting-server.js';
import { removeDir, tempDir } from '../../support/store-fixtures.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const clock = new ManualClock(1_700_000_000_000);

function openState(dir: string): PopStateStore {
  return PopStateStore.open({ dir, fs: new NodeFileSystem(), clock, flushIntervalMs: 1000, syncFlush: false, compactLogBytes: 1 << 20 });
}

async function setup(serve = true): Promise<{ master: PopStateStore; replicaDir: string; replica: PopStateStore; addr: string; client: RemotingClient }> {
  const masterDir = tempDir('tsmq-pop-sync-m-');
  const replicaDir = tempDir('tsmq-pop-sync-s-');
  const master = openState(masterDir);
  const replica = openState(replicaDir);
  const server = new RemotingServer({ listenPort: 0, host: '127.0.0.1' });
  if (serve) server.registerProcessor(...buildPopStateSyncHandler(master));
  await server.start();
  const client = new RemotingClient({ logger: silentLogger });
  cleanups.push(async () => {
    await client.close();
    await server.shutdown();
    await master.close();
    await replica.close().catch(() => undefined);
    removeDir(masterDir);
    removeDir(replicaDir);
  });
  return { master, replicaDir, replica, addr: `127.0.0.1:${server.port}`, client };
}

const q = { group: 'G', topic: 'T', queueId: 0 };

describe('pop state sync (GET_ALL_POP_STATE)', () => {
  it("adopts the master's table, skips unchanged rounds, follows changes and keeps it on disk", async () => {
    const { master, replicaDir, replica, addr, client } = await setup();
    const v1 = master.nextVersion();
    await master.record({ type: 'MOVE', ...q, offset: 5 }, { type: 'POP', ...q, offset: 5, attempts: 1, invisibleUntilMs: 1_700_000_060_000, version: v1 });
    const sync = new PopSlaveSync(replica, () => false, silentLogger);

    assert.equal(await sync.sync(client, addr), true);
    const st = replica.table.get('G', 'T', 0)!;
    assert.equal(st.ackOffset, 5);
    assert.deepEqual(st.entries.get(5), { attempts: 1, invisibleUntilMs: 1_700_000_060_000, version: v1, acked: false });
    assert.ok(replica.nextVersion() > v1, 'later versions stay above the master');

    assert.equal(await sync.sync(client, addr), false);
    assert.deepEqual(sync.stats(), { replaced: 1, unchanged: 1, lastQueues: 1 });

    await master.record({ type: 'ACK', ...q, offset: 5, version: v1 });
    assert.equal(await sync.sync(client, addr), true);
    assert.equal(replica.table.get('G', 'T', 0)!.ackOffset, 6);
    assert.equal(replica.table.get('G', 'T', 0)!.entries.size, 0);

    // the replica popped itself meanwhile (a master for a while): the unchanged master's table comes back in full
    await replica.record({ type: 'MOVE', ...q, offset: 9 });
    assert.equal(await sync.sync(client, addr), true);
    assert.equal(replica.table.get('G', 'T', 0)!.ackOffset, 6);

    await replica.close();
    const reopened = openState(replicaDir);
    cleanups.push(() => reopened.close());
    assert.equal(reopened.table.get('G', 'T', 0)?.ackOffset, 6, 'the adopted table survived the restart');
  });

  it('a replica that pops itself adopts nothing; a master without the code is no error', async () => {
    const { master, replica, addr, client } = await setup();
    await master.record({ type: 'MOVE', ...q, offset: 3 });
    assert.equal(await new PopSlaveSync(replica, () => true, silentLogger).sync(client, addr), false);
    assert.equal(replica.table.size, 0);

    const old = await setup(false);
    assert.equal(await new PopSlaveSync(old.replica, () => false, silentLogger).sync(old.client, old.addr), false);
    assert.equal(old.replica.table.size, 0);
  });
  it('a RESET on the master (backwards, entries dropped) reaches the replica and its disk', async () => {
    const { master, replicaDir, replica, addr, client } = await setup();
    const v = master.nextVersion();
    await master.record({ type: 'MOVE', ...q, offset: 7 }, { type: 'POP', ...q, offset: 7, attempts: 2, invisibleUntilMs: 1_700_000_060_000, version: v });
    const sync = new PopSlaveSync(replica, () => false, silentLogger);
    assert.equal(await sync.sync(client, addr), true);
    assert.equal(replica.table.get('G', 'T', 0)!.entries.size, 1);
    await master.record({ type: 'RESET', ...q, offset: 2 });
    assert.equal(await sync.sync(client, addr), true, 'a reset changes the stamp');
    assert.deepEqual([replica.table.get('G', 'T', 0)!.ackOffset, replica.table.get('G', 'T', 0)!.entries.size], [2, 0]);
    await replica.close();
    const reopened = openState(replicaDir);
    cleanups.push(() => reopened.close());
    assert.deepEqual([reopened.table.get('G', 'T', 0)!.ackOffset, reopened.table.get('G', 'T', 0)!.entries.size], [2, 0]);
  });
});
