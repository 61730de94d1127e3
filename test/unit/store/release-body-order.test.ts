/**
 * A pull result's two ways back to the store (GetMessageResult.release() and
 * MessageStore.releaseMessageBody(result.body)) are harmless together in either order, as the
 * interface says: once the result's body went back (and was lent to a later pull),
 * releaseMessageBody of the old result's body must not take the later pull's body away from it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

test('release() then releaseMessageBody(old body): the later pull keeps its body', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root, {}));
    try {
      for (let i = 0; i < 8; i++) assert.equal((await store.putMessage(makeMessage({ queueId: 0, body: Buffer.from(`body-${i}`.padEnd(600, 'x')) }))).status, 'PUT_OK');
      const a = await store.getMessage('G', 'T', 0, 0, 4, null);
      assert.equal(a.status, 'FOUND');
      const aBody = a.body!;
      a.release!();
      const b = await store.getMessage('G', 'T', 0, 4, 4, null);
      assert.equal(b.body!.buffer, aBody.buffer, 'the pool lent the released buffer again');
      const bBytes = Buffer.from(b.body!);
      store.releaseMessageBody!(aBody); // the old result's body, a second time
      const c = await store.getMessage('G', 'T', 0, 0, 4, null);
      assert.notEqual(c.body!.buffer, b.body!.buffer, 'b still reads its body: it must not be lent to c');
      assert.deepEqual(b.body, bBytes);
      b.release!();
      c.release!();
    } finally {
      await store.shutdown();
    }
  } finally {
    removeDir(root);
  }
});
