/**
 * ConsumeQueue entries that cannot reach their file (a background commit = pwrite, or a flush =
 * fdatasync, fails with EIO) raise LOGICS_QUEUE_ERROR: puts answer SERVICE_NOT_AVAILABLE naming
 * the queue and the error, the entries stay buffered (still readable) and are retried, the flag
 * clears once they are written, and nothing is lost — also across a restart, and across a
 * shutdown while the disk still refuses them (the abort file stays; recovery rebuilds them).
 * A failed flush (fdatasync) is different (fsyncgate): the flag stays until restart, whose
 * abnormal recovery rebuilds the queue from the CommitLog.
 * Faults come from the fs port (`pathFault` on one ConsumeQueue file).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { ConsumeQueueStore } from '../../../src/store/consumequeue/consume-queue-store.js';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import type { AppendResult } from '../../../src/store/message-store.js';
import { FaultyFileSystem } from '../../support/faulty-file-system.js';
import { capturingLogger, makeMessage, openStore, removeDir, smallConfig, tempDir, type LogLine } from '../../support/store-fixtures.js';

async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function put(store: DefaultMessageStore): Promise<AppendResult> {
  const r = await store.putMessage(makeMessage({ topic: 'T' }));
  assert.equal(r.status, 'PUT_OK', r.remark);
  return r.appendResult!;
}

/** Queue offsets 0..n-1 of T/0 exist, in order, pointing at `wrote`, and a pull returns them all. */
async function assertQueueIs(store: DefaultMessageStore, wrote: number[]): Promise<void> {
  assert.equal(store.getMinOffsetInQueue('T', 0), 0);
  assert.equal(store.getMaxOffsetInQueue('T', 0), wrote.length);
  assert.deepEqual(
    wrote.map((_, q) => store.getCommitLogOffsetInQueue('T', 0, q)),
    wrote,
  );
  const pulled: number[] = [];
  for (let next = 0; next < wrote.length; ) {
    const g = await store.getMessage('g', 'T', 0, next, 32);
    assert.equal(g.status, 'FOUND');
    pulled.push(...g.messageQueueOffsets);
    next = g.nextBeginOffset;
  }
  assert.deepEqual(pulled, wrote.map((_, q) => q));
}

/** The commit-log offset stored on disk in entry `q` of T/0's first file (0 for a slot never written). */
function onDisk(root: string, q: number): number {
  const raw = fs.readFileSync(path.join(root, 'consumequeue', 'T', '0', '00000000000000000000'));
  return Number(raw.readBigInt64BE(q * 20));
}

const cqFile0 = (root: string): string => path.join(root, 'consumequeue', 'T', '0', '00000000000000000000');
const lines = (logger: { lines: LogLine[] }, level: LogLine['level'], prefix: string): string[] =>
  logger.lines.filter((l) => l.level === level && l.msg.startsWith(prefix)).map((l) => l.msg);

const COMMIT_REASON =
  'ConsumeQueue commit failed (topic T, queue 0, entries from queue offset 3 not written): write failed: EIO injected EIO';

/** Puts 3 messages (written to the CQ file), then makes pwrite of T/0's first file fail and puts a 4th. */
async function failAfterThree(store: DefaultMessageStore, fsPort: FaultyFileSystem, root: string): Promise<number[]> {
  const wrote: number[] = [];
  for (let i = 0; i < 3; i++) wrote.push((await put(store)).wroteOffset);
  await waitFor(() => onDisk(root, 2) !== 0); // the periodic commit of entries 0..2 (ConsumeQueueStore.commitIntervalMs)
  assert.deepEqual([0, 1, 2].map((q) => onDisk(root, q)), wrote);
  fsPort.pathFault = (op, p) => (op === 'pwrite' && p === cqFile0(root) ? 'EIO' : null);
  const r3 = await put(store); // stored and acknowledged; its CQ entry is buffered, the commit fails a turn later
  assert.equal(r3.queueOffset, 3);
  wrote.push(r3.wroteOffset);
  await waitFor(() => !store.isWritable());
  return wrote;
}

test('ConsumeQueue commit (pwrite) fails: puts refused naming the queue and error, entries kept and retried, flag cleared once written, all entries present after a restart', async () => {
  const root = tempDir();
  try {
    const fsPort = new FaultyFileSystem();
    const logger = capturingLogger();
    const cfg = smallConfig(root);
    const store = await openStore(cfg, { fs: fsPort, logger });
    const wrote = await failAfterThree(store, fsPort, root);

    const maxPhy = store.getMaxPhyOffset();
    const refused = await store.putMessage(makeMessage({ topic: 'T' }));
    assert.deepEqual(refused, { status: 'SERVICE_NOT_AVAILABLE', remark: `message store is not writable: logics queue error: ${COMMIT_REASON}` });
    assert.equal(store.getMaxPhyOffset(), maxPhy, 'a refused put appends nothing');
    assert.equal(store.runningFlags.hasLogicsQueueError('consume-queue-write'), true);
    assert.equal(store.runningFlags.hasLogicsQueueError('dispatch'), false);
    assert.equal(store.getDispatchStats().blocked, null, 'dispatch itself went through');
    const failed = store.consumeQueueStore.failedWrites();
    assert.deepEqual(
      failed.map(({ topic, queueId, op, reason }) => ({ topic, queueId, op, reason })),
      [{ topic: 'T', queueId: 0, op: 'commit', reason: COMMIT_REASON }],
    );
    // the entry stays buffered: readable by consumers, not on disk
    await assertQueueIs(store, wrote);
    assert.equal(onDisk(root, 3), 0);
    await waitFor(() => store.consumeQueueStore.failedWrites()[0]!.attempts >= 3); // the retry timer keeps trying
    assert.equal(store.isWritable(), false);

    fsPort.pathFault = null;
    await waitFor(() => store.isWritable()); // no put needed: the retry writes it
    assert.deepEqual(store.consumeQueueStore.failedWrites(), []);
    assert.equal(store.runningFlags.hasLogicsQueueError(), false);
    assert.equal(onDisk(root, 3), wrote[3], 'the buffered entry reached the file');
    for (let i = 4; i < 15; i++) {
      const r = await put(store); // into the second and third CQ files
      assert.equal(r.queueOffset, i);
      wrote.push(r.wroteOffset);
    }
    await assertQueueIs(store, wrote);
    // the ManualClock never moves: the failure is logged once however often it is retried
    assert.deepEqual(lines(logger, 'error', 'ConsumeQueue'), [
      `${COMMIT_REASON}; the entries stay buffered and are retried, puts are refused until they are written`,
    ]);
    assert.equal(lines(logger, 'info', 'ConsumeQueue written again').length, 1);
    await store.shutdown();

    const again = await openStore(cfg);
    assert.equal(again.recoveryReport.mode, 'normal');
    assert.equal(again.recoveryReport.cqEntriesRebuilt, 0, 'every entry was in the files');
    await assertQueueIs(again, wrote);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('shutdown while a ConsumeQueue commit still fails: the abort file stays and the next open rebuilds the lost entry', async () => {
  const root = tempDir();
  try {
    const fsPort = new FaultyFileSystem();
    const cfg = smallConfig(root);
    const store = await openStore(cfg, { fs: fsPort });
    const wrote = await failAfterThree(store, fsPort, root);
    await store.shutdown(); // the final flush cannot write entry 3 either
    assert.equal(fs.existsSync(path.join(root, 'abort')), true);
    assert.equal(onDisk(root, 3), 0);

    const again = await openStore(cfg); // the disk works again
    assert.equal(again.recoveryReport.mode, 'abnormal');
    assert.equal(again.recoveryReport.cqEntriesRebuilt, 1);
    assert.equal(again.isWritable(), true);
    await assertQueueIs(again, wrote);
    wrote.push((await put(again)).wroteOffset);
    await assertQueueIs(again, wrote);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('ConsumeQueue flush (fdatasync) fails once (fsyncgate): puts refused until restart, the flag stays when fdatasync works again, the next open rebuilds the queue', async () => {
  const root = tempDir();
  try {
    const fsPort = new FaultyFileSystem();
    const logger = capturingLogger();
    const cfg = smallConfig(root, { flushIntervalConsumeQueue: 20, flushConsumeQueueLeastPages: 0 });
    const store = await openStore(cfg, { fs: fsPort, logger });
    const cqDir = path.join(root, 'consumequeue', 'T') + path.sep;
    let failures = 0;
    fsPort.pathFault = (op, p) => (op === 'fdatasync' && p.startsWith(cqDir) && failures++ === 0 ? 'EIO' : null); // once, then it would work
    // the three puts start in one turn: awaited one by one, a 20 ms flush round could fail between them on a loaded machine and refuse the rest
    const wrote: number[] = (await Promise.all([put(store), put(store), put(store)])).map((r) => r.wroteOffset);
    await waitFor(() => !store.isWritable()); // the next flush round
    const syncReason =
      `fdatasync of ${cqFile0(root)} failed with EIO (injected EIO); data written since the last successful flush may not be on disk, ` +
      'writes are refused: restart the broker: recovery re-checks the data';
    assert.deepEqual(await store.putMessage(makeMessage({ topic: 'T' })), {
      status: 'SERVICE_NOT_AVAILABLE',
      remark: `message store is not writable: ${syncReason}`,
    });
    const failed = store.consumeQueueStore.failedWrites();
    assert.deepEqual(
      failed.map(({ topic, op, untilRestart }) => ({ topic, op, untilRestart })),
      [{ topic: 'T', op: 'flush', untilRestart: true }],
    );
    assert.match(failed[0]!.reason, /^ConsumeQueue flush failed \(topic T, queue 0, entries from queue offset 0 not flushed\): .*fdatasync of .* failed with EIO/);
    const mfq = store.consumeQueueStore.find('T', 0)!.getMappedFileQueue();
    assert.equal(mfq.getFlushedWhere(), 0);
    assert.deepEqual([0, 1, 2].map((q) => onDisk(root, q)), wrote, 'written (page cache), not forced');

    // fdatasync works again: nothing may clear the failure (a "successful" retry proves nothing)
    const callsBefore = fsPort.fdatasyncCalls;
    await new Promise((r) => setTimeout(r, 300)); // > 10 CQ flush rounds, > 1 retry interval
    assert.equal(store.isWritable(), false);
    assert.equal(store.runningFlags.isSyncFailed(), true);
    assert.equal(mfq.getFlushedWhere(), 0, 'the flushed position never moves past the failure');
    assert.ok(
      fsPort.fdatasyncCalls - callsBefore < 10,
      `the failed ConsumeQueue file is not synced again (${fsPort.fdatasyncCalls - callsBefore} fdatasyncs, CommitLog and checkpoint included)`,
    );
    store.setWritable(true); // not even by hand
    assert.equal(store.isWritable(), false);
    // reads keep working
    await assertQueueIs(store, wrote);
    assert.equal(lines(logger, 'error', 'fdatasync of').length, 1, 'one error line');
    await store.shutdown();
    assert.equal(fs.existsSync(path.join(root, 'abort')), true, 'the abort file stays: the next start runs abnormal recovery');

    // what a power loss leaves of the dropped pages: the entries were never forced
    const raw = fs.readFileSync(cqFile0(root));
    raw.fill(0, 0, 60);
    fs.writeFileSync(cqFile0(root), raw);
    const again = await openStore(cfg);
    assert.equal(again.recoveryReport.mode, 'abnormal');
    assert.equal(again.recoveryReport.cqEntriesRebuilt, 3, 'rebuilt from the CommitLog');
    assert.equal(again.isWritable(), true);
    await assertQueueIs(again, wrote);
    wrote.push((await put(again)).wroteOffset);
    await assertQueueIs(again, wrote);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('ConsumeQueueStore: two failing queues — the first one is reported, then the other, cleared once both are written; a failed flush does not stop the others and is kept until restart', async () => {
  const root = tempDir();
  try {
    const fsPort = new FaultyFileSystem();
    const changes: Array<string | null> = [];
    const cqs = new ConsumeQueueStore({
      rootDir: root,
      fileSize: 200,
      fs: fsPort,
      clock: new ManualClock(0),
      logger: silentLogger,
      onWriteErrorChange: (r) => changes.push(r),
      writeRetryIntervalMs: 10,
    });
    const failing = new Set(['A', 'B']);
    fsPort.pathFault = (op, p) => (op === 'pwrite' && failing.has(path.basename(path.dirname(path.dirname(p)))) ? 'ENOSPC' : null);
    cqs.putMessagePositionInfo('A', 0, 0, 100, 0, 0);
    cqs.putMessagePositionInfo('B', 0, 100, 100, 0, 0);
    cqs.putMessagePositionInfo('C', 0, 200, 100, 0, 0);
    await waitFor(() => cqs.failedWrites().length === 2); // the periodic commit (commitIntervalMs)
    const reasonOf = (t: string): string =>
      `ConsumeQueue commit failed (topic ${t}, queue 0, entries from queue offset 0 not written): disk full: write failed with ENOSPC (injected ENOSPC)`;
    assert.deepEqual(cqs.failedWrites().map((f) => [f.topic, f.op]), [['A', 'commit'], ['B', 'commit']]);
    assert.deepEqual(changes, [reasonOf('A')]);
    failing.delete('A');
    await waitFor(() => changes.length === 2);
    assert.deepEqual(changes, [reasonOf('A'), reasonOf('B')]);
    failing.delete('B');
    await waitFor(() => changes.length === 3);
    assert.deepEqual(changes.slice(2), [null]);
    assert.deepEqual(cqs.failedWrites(), []);

    fsPort.pathFault = (op, p) => (op === 'fdatasync' && p.includes(`${path.sep}A${path.sep}`) ? 'EIO' : null);
    assert.equal(await cqs.flushAll(0), false);
    assert.deepEqual(cqs.failedWrites().map((f) => [f.topic, f.op]), [['A', 'flush']]);
    assert.deepEqual(
      ['A', 'B', 'C'].map((t) => cqs.find(t, 0)!.getMappedFileQueue().getFlushedWhere()),
      [0, 20, 20],
      'B and C flushed although A failed',
    );
    fsPort.pathFault = null;
    // a failed fdatasync stays (fsyncgate): A is neither retried nor cleared, B and C keep flushing
    await new Promise((r) => setTimeout(r, 50)); // > 4 retry intervals
    assert.deepEqual(cqs.failedWrites().map((f) => [f.topic, f.op, f.untilRestart]), [['A', 'flush', true]]);
    cqs.putMessagePositionInfo('C', 0, 300, 100, 0, 1);
    assert.equal(await cqs.flushAll(0), false);
    assert.deepEqual(
      ['A', 'B', 'C'].map((t) => cqs.find(t, 0)!.getMappedFileQueue().getFlushedWhere()),
      [0, 20, 40],
    );
    assert.match(changes[changes.length - 1]!, /^ConsumeQueue flush failed \(topic A, queue 0, entries from queue offset 0 not flushed\): .*fdatasync of .* failed with EIO/);
    cqs.shutdown();
  } finally {
    removeDir(root);
  }
});

test('ConsumeQueueStore commits periodically: entries of many turns are readable at once, on disk after commitIntervalMs with one pwrite per written queue; commitIntervalMs 0 commits on the next turn', async () => {
  const root = tempDir();
  try {
    const fsPort = new FaultyFileSystem();
    const pwrites: string[] = [];
    fsPort.pathFault = (op, p) => {
      if (op === 'pwrite') pwrites.push(path.basename(path.dirname(path.dirname(p))));
      return null;
    };
    const cqs = new ConsumeQueueStore({ rootDir: root, fileSize: 2000, fs: fsPort, clock: new ManualClock(0), logger: silentLogger, commitIntervalMs: 40 });
    const t0 = performance.now();
    for (let i = 0; i < 10; i++) {
      cqs.putMessagePositionInfo('A', 0, i * 200, 100, 0, i);
      cqs.putMessagePositionInfo('B', 0, i * 200 + 100, 100, 0, i);
      await new Promise((r) => setImmediate(r)); // ten event-loop turns
    }
    const file = (t: string): string => path.join(root, t, '0', '00000000000000000000');
    if (performance.now() - t0 < 40) {
      assert.deepEqual(pwrites, [], 'nothing written before the interval');
      assert.equal(fs.readFileSync(file('A')).readBigInt64BE(0), 0n);
    }
    assert.equal(cqs.find('A', 0)!.getMaxOffsetInQueue(), 10);
    assert.deepEqual(cqs.find('B', 0)!.readEntries(0, 32)?.count, 10, 'buffered entries are readable');
    await waitFor(() => pwrites.length >= 2);
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual(pwrites.sort(), ['A', 'B'], 'one pwrite per written queue');
    assert.deepEqual([0, 9].map((q) => Number(fs.readFileSync(file('B')).readBigInt64BE(q * 20))), [100, 1900]);
    cqs.shutdown();

    const root0 = tempDir();
    try {
      const eager = new ConsumeQueueStore({ rootDir: root0, fileSize: 2000, fs: fsPort, clock: new ManualClock(0), logger: silentLogger, commitIntervalMs: 0 });
      eager.putMessagePositionInfo('C', 0, 700, 100, 0, 0);
      await new Promise((r) => setImmediate(r));
      assert.equal(fs.readFileSync(path.join(root0, 'C', '0', '00000000000000000000')).readBigInt64BE(0), 700n, 'commitIntervalMs 0: written on the next turn');
      eager.shutdown();
    } finally {
      fs.rmSync(root0, { recursive: true, force: true });
    }
    assert.throws(() => new ConsumeQueueStore({ rootDir: root, fileSize: 2000, fs: fsPort, clock: new ManualClock(0), logger: silentLogger, commitIntervalMs: -1 }), /commitIntervalMs must be a number >= 0/);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
