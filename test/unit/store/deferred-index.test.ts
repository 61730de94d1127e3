/**
 * The index entries of a prepared block (putPreparedMessages: a timer burst) are written after the
 * block's ConsumeQueue entries (dispatcher-chain.ts, deferred-dispatch-queue.ts): the messages are
 * consumable at once, the index follows once no block came for a moment, a query by key sees
 * every message dispatched before it, later single puts are indexed after the block (CommitLog
 * order), and after a crash with index work still queued recovery indexes what was missing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import type { PreparedMessage } from '../../../src/store/message-store.js';

const BIG_SEGMENT = 1024 * 1024;
const ALL = [0, Number.MAX_SAFE_INTEGER] as const;

function cfg(root: string) {
  return smallConfig(root, { mappedFileSizeCommitLog: BIG_SEGMENT, mappedFileSizeConsumeQueue: 20 * 1000, maxIndexNum: 40_000 });
}

/** `n` records on T1 queues 0..3, keys `K<i> shared`, UNIQ_KEY `U<i>`, prepared ahead. */
function prepare(store: DefaultMessageStore, n: number, from = 0): PreparedMessage[] {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    const p = store.prepareMessage(makeMessage({ topic: 'T1', queueId: i % 4, body: Buffer.alloc(200, 0x41), keys: `K${i} shared`, properties: { UNIQ_KEY: `U${i}` } }));
    assert.ok('record' in p);
    return p as PreparedMessage;
  });
}

async function found(store: DefaultMessageStore, key: string): Promise<number> {
  return (await store.queryMessage('T1', key, 64, ...ALL)).messages.length;
}

function queued(store: DefaultMessageStore): number {
  return store.getDispatchStats().deferredRecords;
}

test('a prepared block is consumable at once, its index entries follow once quiet, in CommitLog order with later single puts', async () => {
  const root = tempDir();
  try {
    const store = await openStore(cfg(root));
    // the block, and a single put right behind it (no turn of the event loop in between)
    const block = store.putPreparedMessages(prepare(store, 20));
    const single = store.putMessage(makeMessage({ topic: 'T1', queueId: 0, body: 'after', keys: 'AFTER', properties: { UNIQ_KEY: 'U-after' } }));
    // consumable: every ConsumeQueue entry is written; the index entries wait, the single put's behind the block's
    let entries = 0;
    for (let q = 0; q < 4; q++) entries += store.getMaxOffsetInQueue('T1', q);
    assert.equal(entries, 21);
    assert.equal(queued(store), 21);
    assert.equal((await block).appended, 20);
    assert.equal((await single).status, 'PUT_OK');
    // worked off by itself once no block came for a while
    const deadline = Date.now() + 5000;
    while (queued(store) > 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 10));
    assert.equal(queued(store), 0);
    assert.equal(await found(store, 'U7'), 1);
    assert.equal(await found(store, 'shared'), 20);
    assert.equal(await found(store, 'AFTER'), 1);
    assert.equal(await found(store, 'U-after'), 1);
    // nothing after the queue emptied is deferred
    assert.equal((await store.putMessage(makeMessage({ topic: 'T1', queueId: 1, body: 'later', keys: 'LATER' }))).status, 'PUT_OK');
    assert.equal(queued(store), 0);
    assert.equal(await found(store, 'LATER'), 1);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('a query by key right after a block sees all of it (the queued index work is done first)', async () => {
  const root = tempDir();
  try {
    const store = await openStore(cfg(root));
    await store.putPreparedMessages(prepare(store, 30));
    assert.equal(queued(store), 30);
    assert.equal(await found(store, 'U29'), 1);
    assert.equal(await found(store, 'shared'), 30);
    assert.equal(queued(store), 0);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('a clean shutdown writes the queued index entries; a crash loses them and recovery indexes them again', async () => {
  const root = tempDir();
  const root2 = tempDir();
  try {
    // clean shutdown with work queued
    let store = await openStore(cfg(root));
    await store.putPreparedMessages(prepare(store, 25));
    assert.equal(queued(store), 25);
    await store.shutdown();
    store = await openStore(cfg(root));
    assert.equal(await found(store, 'shared'), 25);
    await store.shutdown();

    // crash with work queued: the index is behind the ConsumeQueue, recovery dispatches the rest again
    store = await openStore(cfg(root2));
    assert.equal((await store.putMessage(makeMessage({ topic: 'T1', queueId: 0, body: 'before', keys: 'BEFORE' }))).status, 'PUT_OK');
    await store.putPreparedMessages(prepare(store, 25));
    assert.equal(queued(store), 25);
    store.closeAbruptly();
    store = await openStore(cfg(root2));
    assert.equal(queued(store), 0);
    assert.equal(await found(store, 'BEFORE'), 1);
    assert.equal(await found(store, 'shared'), 25, 'every record of the block is indexed after recovery');
    for (const i of [0, 12, 24]) assert.equal(await found(store, `U${i}`), 1);
    let entries = 0;
    for (let q = 0; q < 4; q++) entries += store.getMaxOffsetInQueue('T1', q);
    assert.equal(entries, 26, 'ConsumeQueue entries neither lost nor doubled');
    await store.shutdown();
  } finally {
    removeDir(root);
    removeDir(root2);
  }
});

test('indexBuildInWorker=true: the queued index entries go to the worker before a query, and at shutdown', async () => {
  const root = tempDir();
  try {
    let store = await openStore({ ...cfg(root), indexBuildInWorker: true });
    await store.putPreparedMessages(prepare(store, 40));
    assert.equal(queued(store), 40);
    assert.equal(await found(store, 'shared'), 40);
    await store.putPreparedMessages(prepare(store, 10, 40));
    assert.equal(queued(store), 10);
    await store.shutdown();
    store = await openStore({ ...cfg(root), indexBuildInWorker: true });
    assert.equal(await found(store, 'shared'), 50);
    assert.equal(await found(store, 'U45'), 1);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});
