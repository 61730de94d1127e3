/**
 * ConsumeQueue and index cleaning after the CommitLog min moves (spec §6.2), and deletion under
 * continuous pulls. A 100-byte body with KEYS makes a ~200-byte record: 20 per 4 KiB CL file; CQ files hold
 * 10 entries; index files 9 keys (maxIndexNum 10).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pullResponseCode } from '../../../src/broker/processors/pull-message-processor.js';
import type { GetMessageStatus } from '../../../src/store/message-store.js';
import { offsetToFileName } from '../../../src/store/mapped-file/file-names.js';
import { makeMessage, openStore, removeDir, tempDir } from '../../support/store-fixtures.js';
import { HOUR_MS, cqDir, fillCommitLogFiles, localTime, openRetentionStore, retentionConfig, segmentNames, seqBody, seqOf, setAge } from './retention-support.js';

const FILE = 4096;

test('CQ files entirely below the new CommitLog min and old index files are deleted; every queue min corrected', async () => {
  const root = tempDir();
  try {
    const cfg = retentionConfig(root, { maxHashSlotNum: 8, maxIndexNum: 10 });
    const { store } = await openRetentionStore(cfg, { nowMs: localTime(4) });
    const n = await fillCommitLogFiles(store, 3, 100); // T/q0: 20 per file
    // a second queue whose entries all live in f0 (emptied by retention, stays positioned)
    const u: number[] = [];
    for (let i = 0; i < 3; i++) u.push((await store.putMessage(makeMessage({ topic: 'U', body: 'u' }))).appendResult!.wroteOffset);
    assert.ok(u.every((o) => o >= 2 * FILE), 'U lives in f2');
    const indexDir = path.join(root, 'index');
    const indexBefore = fs.readdirSync(indexDir).length;
    assert.ok(indexBefore >= 5, `several index files (${indexBefore})`);
    setAge(store, store.commitLog.mfq.getFiles()[0]!, localTime(4), 80 * HOUR_MS);

    const r = await store.cleanService!.runPass();
    assert.equal(r.commitLog!.deleted.length, 1);
    assert.equal(store.getMinPhyOffset(), FILE);
    assert.equal(store.getCommitLogOffsetInQueue('T', 0, 20), FILE, 'T/q0 offsets 0..19 were in f0');
    // CQ files [0,10) and [10,20) go; [20,30) is the first one kept
    assert.deepEqual(segmentNames(cqDir(root)).slice(0, 1), [offsetToFileName(400)]);
    assert.equal(r.consumeQueues!.cqFilesDeleted, 2);
    assert.equal(store.getMinOffsetInQueue('T', 0), 20);
    assert.equal(store.getMaxOffsetInQueue('T', 0), n);
    // index: files whose last message is in f0 are gone, never the newest
    assert.ok(r.consumeQueues!.indexFilesDeleted >= 2, `index files deleted: ${r.consumeQueues!.indexFilesDeleted}`);
    assert.equal(fs.readdirSync(indexDir).length, indexBefore - r.consumeQueues!.indexFilesDeleted);
    assert.equal((await store.queryMessage('T', 'k0', 32, 0, Number.MAX_SAFE_INTEGER)).messages.length, 0);
    assert.equal((await store.queryMessage('T', 'k30', 32, 0, Number.MAX_SAFE_INTEGER)).messages.length, 1);
    // pulls below the new min: OFFSET_TOO_SMALL → PULL_OFFSET_MOVED with nextBeginOffset = min
    for (const offset of [0, 9, 10, 19]) {
      const g = await store.getMessage('g', 'T', 0, offset, 32);
      assert.deepEqual([g.status, g.nextBeginOffset, pullResponseCode(g.status, offset)], ['OFFSET_TOO_SMALL', 20, 21], `offset ${offset}`);
    }
    const first = await store.getMessage('g', 'T', 0, 20, 4);
    assert.deepEqual(first.messages.map(seqOf), [20, 21, 22, 23]);
    await store.shutdown();

    // restart: what was deleted stays deleted, mins are the same
    const again = await openStore(cfg);
    assert.equal(again.getMinPhyOffset(), FILE);
    assert.equal(again.getMinOffsetInQueue('T', 0), 20);
    assert.deepEqual([again.getMinOffsetInQueue('U', 0), again.getMaxOffsetInQueue('U', 0)], [0, 3]);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('a queue whose every entry is below the new min stays positioned (min = max) and keeps its last CQ file', async () => {
  const root = tempDir();
  try {
    const { store } = await openRetentionStore(retentionConfig(root), { nowMs: localTime(4) });
    for (let i = 0; i < 25; i++) await store.putMessage(makeMessage({ topic: 'E', body: seqBody(i, 50) }));
    while (store.commitLog.mfq.getFiles().length < 3) await store.putMessage(makeMessage({ topic: 'T', body: seqBody(0, 1000) }));
    for (const f of store.commitLog.mfq.getFiles().slice(0, 2)) setAge(store, f, localTime(4), 80 * HOUR_MS);
    await store.cleanService!.runPass();
    assert.equal(store.getMinPhyOffset(), 2 * FILE);
    assert.deepEqual([store.getMinOffsetInQueue('E', 0), store.getMaxOffsetInQueue('E', 0)], [25, 25]);
    assert.deepEqual(segmentNames(cqDir(root, 'E')), [offsetToFileName(400)], 'only the last CQ file is kept');
    const g = await store.getMessage('g', 'E', 0, 3, 32);
    assert.deepEqual([g.status, g.nextBeginOffset], ['OFFSET_TOO_SMALL', 25]);
    const r = await store.putMessage(makeMessage({ topic: 'E', body: seqBody(25, 50) }));
    assert.equal(r.appendResult!.queueOffset, 25);
    assert.deepEqual((await store.getMessage('g', 'E', 0, 25, 32)).messages.map(seqOf), [25]);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('files deleted under continuous pulls and puts: no error, no wrong data, old offsets answer OFFSET_TOO_SMALL', async () => {
  const root = tempDir();
  try {
    // 86% forever: every pass forcibly deletes all files but the active one, every 5 ms
    const { store, probe } = await openRetentionStore(retentionConfig(root, { cleanResourceInterval: 5, deleteCommitLogFilesInterval: 1, deleteConsumeQueueFilesInterval: 1 }));
    probe.setPercent(86);
    const total = 1500;
    let produced = 0;
    const errors: string[] = [];
    const producer = (async () => {
      for (; produced < total; produced++) {
        const r = await store.putMessage(makeMessage({ body: seqBody(produced, 120) }));
        if (r.status !== 'PUT_OK' || r.appendResult!.queueOffset !== produced) errors.push(`put ${produced}: ${r.status}`);
        if (produced % 7 === 0) await new Promise((res) => setImmediate(res));
      }
    })();
    const allowed = new Set<GetMessageStatus>(['FOUND', 'OFFSET_TOO_SMALL', 'OFFSET_OVERFLOW_ONE', 'NO_MESSAGE_IN_QUEUE']);
    const consumer = async (delayMs: number): Promise<{ got: number; moved: number }> => {
      let next = 0;
      let got = 0;
      let moved = 0;
      while (next < total) {
        let g;
        try {
          g = await store.getMessage('g', 'T', 0, next, 16);
        } catch (e) {
          errors.push(`pull threw at ${next}: ${(e as Error).message}`);
          break;
        }
        if (!allowed.has(g.status)) errors.push(`pull at ${next}: ${g.status}`);
        if (g.status === 'OFFSET_TOO_SMALL') {
          if (g.nextBeginOffset <= next || g.nextBeginOffset !== store.getMinOffsetInQueue('T', 0)) errors.push(`bad nextBeginOffset ${g.nextBeginOffset} at ${next}`);
          moved++;
        }
        g.messages.forEach((m, i) => {
          const q = g.messageQueueOffsets[i]!;
          if (seqOf(m) !== q || q < next) errors.push(`wrong data at ${q}: seq ${seqOf(m)}`);
        });
        got += g.messages.length;
        if (g.status === 'FOUND' || g.status === 'OFFSET_TOO_SMALL') next = g.nextBeginOffset;
        await new Promise((res) => (delayMs > 0 ? setTimeout(res, delayMs) : setImmediate(res)));
      }
      return { got, moved };
    };
    const [, fast, slow] = await Promise.all([producer, consumer(0), consumer(3)]);
    assert.deepEqual(errors, []);
    assert.ok(store.getMinPhyOffset() > 10 * FILE, `files were deleted (min ${store.getMinPhyOffset()})`);
    assert.ok(slow.moved > 0, 'the slow consumer was overtaken by retention');
    assert.ok(fast.got > 0 && slow.got > 0);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});
