/**
 * Found by the store simulation (test/sim, seed 96 of a 100-seed run): when a put needs a new
 * CommitLog segment, the 8-byte end-of-file filler is appended to the full segment and
 * committed. If that write failed (EIO, ENOSPC) the filler stayed in the segment's buffer with
 * the write position moved past it, but the segment was not marked full: once writes worked
 * again, the next records were appended AFTER the filler in the same segment. Dispatch and
 * recovery treat the filler as "rest of the segment is empty" and skip to the next one, so those
 * acknowledged messages never reached their ConsumeQueue (the next one took their queue offset:
 * "[BUG] logic queue order maybe wrong") and were gone after a restart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import { FaultyFileSystem } from '../../support/faulty-file-system.js';
import { dispatched, makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

async function bodiesInQueue(store: DefaultMessageStore): Promise<string[]> {
  const out: string[] = [];
  const max = store.getMaxOffsetInQueue('T', 0);
  for (let offset = 0; offset < max; ) {
    const r = await store.getMessage('g', 'T', 0, offset, 32);
    assert.equal(r.status, 'FOUND', `pull at ${offset} of ${max}`);
    r.messages.forEach((raw, i) => {
      const m = decodeRecord(raw);
      assert.equal(m.queueOffset, r.messageQueueOffsets[i], 'the entry points at the record with its queue offset');
      out.push(m.body.toString().replace(/\.+$/, ''));
    });
    offset = r.nextBeginOffset;
  }
  return out;
}

test('a failed write of the end-of-file filler leaves the segment unchanged: later records go to the next segment and stay reachable', async () => {
  const root = tempDir();
  const fs = new FaultyFileSystem();
  const cfg = smallConfig(root, { flushDiskType: 'SYNC_FLUSH' });
  try {
    const store = await openStore(cfg, { fs });
    const expected: string[] = [];
    // ~400-byte records: the 4 KiB segment is nearly full after 9 of them
    for (let i = 0; i < 9; i++) {
      assert.equal((await store.putMessage(makeMessage({ body: `m${i}-`.padEnd(300, '.') }))).status, 'PUT_OK');
      expected.push(`m${i}-`);
    }
    assert.equal(store.commitLog.mfq.getFiles().length, 1);
    fs.pwriteErrorCode = 'EIO';
    const refused = await store.putMessage(makeMessage({ body: 'needs-a-roll-'.padEnd(700, '.') }));
    assert.equal(refused.status, 'SERVICE_NOT_AVAILABLE', refused.remark);
    assert.equal(refused.appendResult, undefined);
    fs.pwriteErrorCode = null;
    const deadline = Date.now() + 5000;
    while (!store.isWritable() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20)); // the disk check clears the write error
    assert.ok(store.isWritable(), 'writable again once writes work');
    for (let i = 9; i < 12; i++) {
      const r = await store.putMessage(makeMessage({ body: `m${i}-`.padEnd(300, '.') }));
      assert.equal(r.status, 'PUT_OK');
      assert.equal(r.appendResult!.queueOffset, i);
      expected.push(`m${i}-`);
    }
    assert.ok(store.commitLog.mfq.getFiles().length >= 2, 'the roll happened');
    await dispatched(store);
    assert.deepEqual(await bodiesInQueue(store), expected, 'every acknowledged message is pulled at its queue offset');
    store.closeAbruptly();
    const again = await openStore(cfg, { fs });
    assert.deepEqual(await bodiesInQueue(again), expected, 'and recovered after a crash');
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

// Found by the store simulation once it put batches (seeds 72, 94, 121, … of 300): a batch that
// needed a roll whose filler write failed answered CREATE_MAPPED_FILE_FAILED and left the store
// writable, while a single put in the same place answers SERVICE_NOT_AVAILABLE and refuses puts
// until the disk check clears the write error. The batch path now treats it the same way.
test('a batch whose roll filler fails is refused like a single put (SERVICE_NOT_AVAILABLE, write error set), nothing of it stored', async () => {
  const root = tempDir();
  const fs = new FaultyFileSystem();
  const cfg = smallConfig(root, { flushDiskType: 'SYNC_FLUSH' });
  try {
    const store = await openStore(cfg, { fs });
    for (let i = 0; i < 9; i++) assert.equal((await store.putMessage(makeMessage({ body: `m${i}-`.padEnd(300, '.') }))).status, 'PUT_OK');
    fs.pwriteErrorCode = 'EIO';
    const batch = [0, 1, 2].map((i) => makeMessage({ body: `b${i}-`.padEnd(300, '.') }));
    const refused = await store.putMessages(batch);
    assert.equal(refused.status, 'SERVICE_NOT_AVAILABLE', refused.remark);
    assert.equal(refused.appendResults, undefined);
    assert.equal(store.isWritable(), false, 'puts are refused until the disk check clears the write error');
    fs.pwriteErrorCode = null;
    const deadline = Date.now() + 5000;
    while (!store.isWritable() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const ok = await store.putMessages(batch);
    assert.equal(ok.status, 'PUT_OK');
    assert.deepEqual(ok.appendResults!.map((a) => a.queueOffset), [9, 10, 11]);
    await dispatched(store);
    assert.deepEqual((await bodiesInQueue(store)).slice(9), ['b0-', 'b1-', 'b2-']);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});
