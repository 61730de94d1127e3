/**
 * DefaultMessageStore.putMessageWithCallback (the single put without a promise) and the commit
 * waiter groups under it (MappedFile.notifyWhenCommitted): every put is answered exactly once,
 * with the outcome putMessage gives, the records are the bytes encodeRecord makes, no answer goes
 * out before the record is in the file, and a failed commit answers the puts of its turn
 * FLUSH_DISK_TIMEOUT.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';
import { FaultyFileSystem } from '../../support/faulty-file-system.js';
import { encodeRecord, patchRecord } from '../../../src/common/message/record-codec.js';
import type { MessageInner } from '../../../src/common/message/message.js';
import type { PutMessageResult } from '../../../src/store/message-store.js';

const SEGMENT = 64 * 1024;

for (const asyncCommit of [false, true]) {
  test(`putMessageWithCallback (commitCommitLogAsync=${asyncCommit}): each put answered once, after its bytes are in the file, with consecutive offsets; records byte-equal to encodeRecord; mixed with putMessage`, async () => {
    const root = tempDir();
    try {
      const store = await openStore(smallConfig(root, { flushDiskType: 'ASYNC_FLUSH', mappedFileSizeCommitLog: SEGMENT, commitCommitLogAsync: asyncCommit }));
      const file = join(root, 'commitlog', '00000000000000000000');
      const answers = new Map<MessageInner, PutMessageResult[]>();
      const inFileWhenAnswered: boolean[] = [];
      const msgs: MessageInner[] = [];
      const promises: Promise<PutMessageResult>[] = [];
      for (let i = 0; i < 40; i++) {
        // multi-byte property text and a key set after creation: the Map is written straight into the record
        const m = makeMessage({ body: `body-${i}`, tags: i % 2 ? 'TagA' : 'Tag ä', keys: `k${i} 鍵` });
        m.properties.set('UNIQ_KEY', `UNIQ-${i}`);
        msgs.push(m);
        if (i % 4 === 3) promises.push(store.putMessage(m));
        else
          store.putMessageWithCallback(m, (r, back) => {
            assert.equal(back, m);
            const list = answers.get(back) ?? [];
            list.push(r);
            answers.set(back, list);
            const end = r.appendResult!.wroteOffset + r.appendResult!.wroteBytes;
            inFileWhenAnswered.push(readFileSync(file).length >= end && readFileSync(file).subarray(end - 4, end).some((b) => b !== 0));
          });
      }
      assert.equal(answers.size, 0, 'no answer before the commit');
      const viaPromise = await Promise.all(promises);
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(answers.size, 30);
      for (const list of answers.values()) assert.equal(list.length, 1, 'answered exactly once');
      assert.ok(inFileWhenAnswered.every((x) => x), 'every callback came after its record was written');
      let expectOffset = 0;
      const bytes = readFileSync(file);
      for (let i = 0; i < msgs.length; i++) {
        const m = msgs[i]!;
        const r = i % 4 === 3 ? viaPromise[(i - 3) / 4]! : answers.get(m)![0]!;
        assert.equal(r.status, 'PUT_OK');
        const a = r.appendResult!;
        assert.equal(a.queueOffset, i);
        assert.equal(a.wroteOffset, expectOffset);
        const expected = encodeRecord(m);
        patchRecord(expected, 0, i, a.wroteOffset, a.storeTimestamp);
        assert.equal(a.wroteBytes, expected.length);
        assert.deepEqual(bytes.subarray(a.wroteOffset, a.wroteOffset + a.wroteBytes), expected, `record ${i}`);
        expectOffset += a.wroteBytes;
      }
      await store.shutdown();
    } finally {
      removeDir(root);
    }
  });
}

test('putMessageWithCallback: a failed commit (ENOSPC) answers the turn FLUSH_DISK_TIMEOUT; a refusal is answered synchronously', async () => {
  const root = tempDir();
  const fs = new FaultyFileSystem({ asyncWrites: false });
  try {
    const store = await openStore(smallConfig(root, { flushDiskType: 'ASYNC_FLUSH', mappedFileSizeCommitLog: SEGMENT }), { fs });
    const ok = await new Promise<PutMessageResult>((resolve) => store.putMessageWithCallback(makeMessage({ body: 'before' }), resolve));
    assert.equal(ok.status, 'PUT_OK');
    fs.pathFault = (op, p) => (op === 'pwrite' && p.includes('/commitlog/') ? 'ENOSPC' : null);
    const during = await Promise.all(
      [0, 1, 2].map((i) => new Promise<PutMessageResult>((resolve) => store.putMessageWithCallback(makeMessage({ body: `during${i}` }), resolve))),
    );
    assert.deepEqual(during.map((a) => a.status), ['FLUSH_DISK_TIMEOUT', 'FLUSH_DISK_TIMEOUT', 'FLUSH_DISK_TIMEOUT']);
    assert.match(during[2]!.remark ?? '', /page cache failed .*ENOSPC/);
    let refused: PutMessageResult | null = null;
    store.putMessageWithCallback(makeMessage({ body: 'after' }), (r) => (refused = r));
    assert.ok(refused, 'answered before putMessageWithCallback returned');
    assert.equal((refused as PutMessageResult).status, 'SERVICE_NOT_AVAILABLE');
    fs.pathFault = null;
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

for (const asyncCommit of [false, true]) {
  test(`putMessageWithCallback (commitCommitLogAsync=${asyncCommit}): shutdown with puts still waiting for their commit, segments rolling mid-turn: every put answered exactly once, PUT_OK`, async () => {
    const root = tempDir();
    try {
      const store = await openStore(smallConfig(root, { flushDiskType: 'ASYNC_FLUSH', mappedFileSizeCommitLog: 4096, commitCommitLogAsync: asyncCommit }));
      const answers: PutMessageResult[][] = [];
      const promises: Promise<unknown>[] = [];
      for (let i = 0; i < 60; i++) {
        const list: PutMessageResult[] = [];
        answers.push(list);
        const m = makeMessage({ body: `${'x'.repeat(200)}${i}` });
        if (i % 3 === 0) promises.push(store.putMessage(m).then((r) => list.push(r)));
        else store.putMessageWithCallback(m, (r) => list.push(r));
        // a commit (in flight with commitCommitLogAsync) starts between some of the puts
        if (i % 7 === 6) await new Promise((r) => setImmediate(r));
      }
      assert.ok(answers.some((l) => l.length === 0), 'some puts still wait when shutdown starts');
      await store.shutdown();
      await Promise.all(promises);
      await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(answers.map((l) => l.length), answers.map(() => 1), 'each put answered exactly once');
      assert.deepEqual(new Set(answers.map((l) => l[0]!.status)), new Set(['PUT_OK']));
    } finally {
      removeDir(root);
    }
  });
}
