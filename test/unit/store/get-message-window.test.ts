/**
 * An unfiltered pull reads maxMsgNums ConsumeQueue entries first and the whole scan window only
 * when those did not fill the batch: its answer must be the one a scan of the whole window gives
 * (compared with a filter that accepts everything, which always reads the whole window), also
 * when the first entries point into a removed CommitLog file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MessageFilter } from '../../../src/store/message-store.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

const ACCEPT_ALL: MessageFilter = { isMatchedByConsumeQueue: () => true };

test('unfiltered pull: same answer as a whole-window scan, with a removed CommitLog file in the middle', async () => {
  const root = tempDir();
  try {
    // 4 KiB CommitLog segments: four 1000-byte records per file (4000 + the 8-byte filler)
    const store = await openStore(smallConfig(root, { mappedFileSizeConsumeQueue: 20 * 100 }));
    for (let i = 0; i < 30; i++) assert.equal((await store.putMessage(makeMessage({ body: Buffer.alloc(1000 - 92, 0x61 + (i % 26)) }))).status, 'PUT_OK');
    const files = store.commitLog.mfq.getFiles();
    assert.equal(files.length, 8);
    const removed = [files[2]!, files[3]!];
    for (const f of removed) f.destroy(0);
    store.commitLog.mfq.removeFiles(removed);
    const summary = (r: Awaited<ReturnType<typeof store.getMessage>>) => ({
      status: r.status,
      next: r.nextBeginOffset,
      offsets: r.messageQueueOffsets,
      bodies: r.messages.map((m) => m.toString('latin1')),
    });
    let sawRemoved = false;
    for (const maxMsgNums of [1, 2, 4, 32]) {
      for (let offset = 0; offset < 30; offset++) {
        const plain = summary(await store.getMessage('g', 'T', 0, offset, maxMsgNums));
        const whole = summary(await store.getMessage('g', 'T', 0, offset, maxMsgNums, ACCEPT_ALL));
        assert.deepEqual(plain, whole, `offset ${offset} maxMsgNums ${maxMsgNums}`);
        if (offset >= 8 && offset < 16) {
          // entries 8..15 point into the removed files: the scan skips them and goes on
          assert.equal(plain.status, 'FOUND', `offset ${offset}`);
          assert.ok(plain.offsets[0]! >= 16, `offset ${offset}: first message ${plain.offsets[0]}`);
          sawRemoved = true;
        }
      }
    }
    assert.ok(sawRemoved);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});
