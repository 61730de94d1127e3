import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeMessage, openStore, removeDir, smallConfig, tempDir, dispatched } from '../../support/store-fixtures.js';

test('B40 deleting topic T (4 queues) while its dispatch backlog is pending: no crash, no write into a released file, other topics unaffected', async () => {
  const { FaultyFileSystem } = await import('../../support/faulty-file-system.js');
  const root = tempDir();
  try {
    const fs2 = new FaultyFileSystem();
    const cfg = smallConfig(root, { flushDiskType: 'SYNC_FLUSH', mappedFileSizeCommitLog: 64 * 1024 });
    const store = await openStore(cfg, { fs: fs2 });
    for (let i = 0; i < 1000; i++) {
      const r = await store.putMessage(makeMessage({ topic: 'T', queueId: i % 4, properties: { WAIT: 'false' } }));
      assert.equal(r.status, 'PUT_OK');
    }
    // A dispatch backlog: slow flushes hold SYNC_FLUSH dispatch behind the written offset.
    fs2.fdatasyncDelayMs = 50;
    const producing: Promise<unknown>[] = [];
    for (let i = 0; i < 200; i++) {
      producing.push(store.putMessage(makeMessage({ topic: 'T', queueId: i % 4, properties: { WAIT: 'false' } })));
      producing.push(store.putMessage(makeMessage({ topic: 'U', queueId: 0, properties: { WAIT: 'false' } })));
    }
    assert.ok(store.dispatchBehindBytes() > 0, 'dispatch is behind when the topic is deleted');
    await store.deleteTopics(['T']);
    // Keep producing to both topics after the delete.
    for (let i = 0; i < 100; i++) {
      producing.push(store.putMessage(makeMessage({ topic: 'T', queueId: i % 4, body: `after-${i}`, properties: { WAIT: 'false' } })));
      producing.push(store.putMessage(makeMessage({ topic: 'U', queueId: 0, properties: { WAIT: 'false' } })));
    }
    const results = (await Promise.all(producing)) as Array<{ status: string }>;
    assert.ok(results.every((r) => r.status === 'PUT_OK'));
    fs2.fdatasyncDelayMs = 0;
    await store.putMessage(makeMessage({ topic: 'U', queueId: 0 })); // waits for a flush
    await dispatched(store); // dispatched one turn after the answer
    assert.equal(store.getMaxOffsetInQueue('U', 0), 301, 'U keeps every message');
    // T was recreated cleanly: only post-delete entries may be there, gap-free from 0, each pullable.
    for (let q = 0; q < 4; q++) {
      const max = store.getMaxOffsetInQueue('T', q);
      assert.ok(max <= 300 / 4 + 25, `T/${q} holds no pre-delete backlog (${max})`);
      let read = 0;
      for (let offset = 0; offset < max; ) {
        const g = await store.getMessage('g', 'T', q, offset, 32);
        assert.equal(g.status, 'FOUND', `T/${q}@${offset}`);
        read += g.messages.length;
        offset = g.nextBeginOffset;
      }
      assert.equal(read, max, `T/${q} every entry readable`);
    }
    await store.shutdown();
    const again = await openStore(cfg);
    assert.equal(again.getMaxOffsetInQueue('U', 0), 301);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});
