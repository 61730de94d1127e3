/**
 * Dispatch failures are not silent (RocketMQ LOGICS_QUEUE_ERROR; logged index-build errors):
 * a ConsumeQueue write that fails blocks dispatch at that record, puts are refused with
 * SERVICE_NOT_AVAILABLE naming the cause, the record is retried (never skipped) and the flag
 * clears once it is dispatched; index failures are counted, logged rate-limited, and never stop
 * ConsumeQueue dispatch. Faults come from the fs port (open of one queue's or the index's files).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ManualClock } from '../../../src/common/time/clock.js';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import { DispatchBlockedError } from '../../../src/store/dispatch/dispatcher-chain.js';
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

/** Fails `open` of files under `<root>/<sub>` with `code`. */
function failOpenUnder(fsPort: FaultyFileSystem, root: string, sub: string, code = 'EIO'): void {
  const dir = path.join(root, sub) + path.sep;
  fsPort.pathFault = (op, p) => (op === 'open' && p.startsWith(dir) ? code : null);
}

async function put(store: DefaultMessageStore, topic = 'T', keys?: string): Promise<AppendResult> {
  const r = await store.putMessage(makeMessage({ topic, ...(keys !== undefined ? { keys } : {}) }));
  assert.equal(r.status, 'PUT_OK', r.remark);
  return r.appendResult!;
}

/** ConsumeQueue offsets 0..n-1 of topic/0 exist, in order, pointing at `wrote`, readable by a pull. */
async function assertQueueIs(store: DefaultMessageStore, topic: string, wrote: number[]): Promise<void> {
  assert.equal(store.getMinOffsetInQueue(topic, 0), 0);
  assert.equal(store.getMaxOffsetInQueue(topic, 0), wrote.length);
  assert.deepEqual(
    wrote.map((_, q) => store.getCommitLogOffsetInQueue(topic, 0, q)),
    wrote,
  );
  const pulled: number[] = [];
  for (let next = 0; next < wrote.length; ) {
    const g = await store.getMessage('g', topic, 0, next, 32);
    assert.equal(g.status, 'FOUND');
    pulled.push(...g.messageQueueOffsets);
    next = g.nextBeginOffset;
  }
  assert.deepEqual(pulled, wrote.map((_, q) => q));
}

const errors = (lines: LogLine[], prefix: string): LogLine[] => lines.filter((l) => l.level === 'error' && l.msg.startsWith(prefix));

test('ConsumeQueue write fails (ASYNC_FLUSH): puts get SERVICE_NOT_AVAILABLE naming the cause, the record is retried, queue offsets stay contiguous', async () => {
  const root = tempDir();
  try {
    const fsPort = new FaultyFileSystem();
    const logger = capturingLogger();
    const cfg = smallConfig(root);
    const store = await openStore(cfg, { fs: fsPort, logger });
    const wrote: number[] = [];
    for (let i = 0; i < 10; i++) wrote.push((await put(store)).wroteOffset); // fills the first 10-entry CQ file
    failOpenUnder(fsPort, root, path.join('consumequeue', 'T', '0'));
    const r10 = await put(store); // stored in the CommitLog; its CQ entry needs a second file, which cannot be created
    assert.equal(r10.queueOffset, 10);
    wrote.push(r10.wroteOffset);
    assert.equal(store.getMaxOffsetInQueue('T', 0), 10);
    assert.equal(store.isWritable(), false);
    const reason = `consume-queue dispatch failed at CommitLog offset ${r10.wroteOffset} (topic T, queue 0, queue offset 10): write failed: EIO injected EIO`;
    const maxBefore = store.getMaxPhyOffset();
    const refused = await store.putMessage(makeMessage());
    assert.deepEqual(refused, { status: 'SERVICE_NOT_AVAILABLE', remark: `message store is not writable: logics queue error: ${reason}` });
    assert.equal(store.getMaxPhyOffset(), maxBefore, 'a refused put appends nothing');
    const blocked = store.getDispatchStats().blocked!;
    assert.equal(blocked.offset, r10.wroteOffset);
    assert.equal(blocked.reason, reason);
    await waitFor(() => store.getDispatchStats().blocked!.attempts >= 3); // the retry timer keeps trying
    assert.equal(store.getMaxOffsetInQueue('T', 0), 10, 'nothing dispatched past the failed record');

    fsPort.pathFault = null; // the queue file can be created again
    await waitFor(() => store.isWritable()); // no put needed: the retry timer dispatches it
    assert.equal(store.getDispatchStats().blocked, null);
    assert.equal(store.runningFlags.hasLogicsQueueError(), false);
    assert.equal(store.getMaxOffsetInQueue('T', 0), 11);
    for (let i = 11; i < 15; i++) {
      const r = await put(store);
      assert.equal(r.queueOffset, i);
      wrote.push(r.wroteOffset);
    }
    await assertQueueIs(store, 'T', wrote);
    // the ManualClock never moves: the failure is logged once however often it is retried
    assert.equal(errors(logger.lines, 'dispatch blocked: ').length, 1);
    assert.equal(errors(logger.lines, 'dispatch blocked: ')[0]!.msg, `dispatch blocked: ${reason}; retried until it succeeds, puts are refused meanwhile`);
    assert.equal(errors(logger.lines, 'dispatch still blocked').length, 0);
    assert.equal(logger.lines.filter((l) => l.msg === 'dispatch resumed').length, 1);
    await store.shutdown();

    const again = await openStore(cfg);
    assert.equal(again.recoveryReport.mode, 'normal');
    await assertQueueIs(again, 'T', wrote);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('ConsumeQueue write fails (SYNC_FLUSH, new queue): flag set by the group-commit dispatch, cleared by the retry timer without further puts', async () => {
  const root = tempDir();
  try {
    const fsPort = new FaultyFileSystem();
    const store = await openStore(smallConfig(root, { flushDiskType: 'SYNC_FLUSH' }), { fs: fsPort });
    const t0 = await put(store, 'T');
    failOpenUnder(fsPort, root, path.join('consumequeue', 'S'), 'ENOSPC');
    const s0 = await put(store, 'S'); // flushed; the dispatch the group commit runs after the flush cannot create S/0's first file
    assert.equal(s0.queueOffset, 0);
    await waitFor(() => !store.isWritable()); // dispatch may run an event-loop turn after the producer was answered
    const refused = await store.putMessage(makeMessage({ topic: 'T' }));
    assert.deepEqual(refused, {
      status: 'SERVICE_NOT_AVAILABLE',
      remark:
        `message store is not writable: logics queue error: consume-queue dispatch failed at CommitLog offset ${s0.wroteOffset} ` +
        '(topic S, queue 0, queue offset 0): disk full: write failed with ENOSPC (injected ENOSPC)',
    });
    assert.equal(store.getMaxOffsetInQueue('S', 0), 0);
    fsPort.pathFault = null;
    await waitFor(() => store.isWritable());
    await assertQueueIs(store, 'S', [s0.wroteOffset]);
    const t1 = await put(store, 'T');
    assert.equal(t1.queueOffset, 1);
    await waitFor(() => store.getMaxOffsetInQueue('T', 0) === 2);
    await assertQueueIs(store, 'T', [t0.wroteOffset, t1.wroteOffset]);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('index failures: counted per record, logged rate-limited, ConsumeQueue dispatch and puts unaffected', async () => {
  const root = tempDir();
  try {
    const fsPort = new FaultyFileSystem();
    const clock = new ManualClock(1_700_000_000_000);
    const logger = capturingLogger();
    const store = await openStore(smallConfig(root), { fs: fsPort, clock, logger });
    failOpenUnder(fsPort, root, 'index'); // no index file can be created
    const wrote: number[] = [];
    for (let i = 0; i < 5; i++) wrote.push((await put(store, 'T', `k${i}`)).wroteOffset);
    assert.deepEqual(store.getDispatchStats().pluginFailures, { index: 5 });
    assert.equal(store.getDispatchStats().blocked, null);
    assert.equal(store.isWritable(), true);
    const lines = (): LogLine[] => errors(logger.lines, 'index dispatch failed');
    assert.deepEqual(
      lines().map((l) => l.msg),
      ['index dispatch failed: write failed: EIO injected EIO; ConsumeQueue dispatch goes on (failures so far: 1, lines suppressed since the last one: 0)'],
    );
    clock.advance(10_000); // one log interval later the next failure is logged again, with the count
    wrote.push((await put(store, 'T', 'k5')).wroteOffset);
    assert.deepEqual(store.getDispatchStats().pluginFailures, { index: 6 });
    assert.equal(lines().length, 2);
    assert.equal(lines()[1]!.msg, 'index dispatch failed: write failed: EIO injected EIO; ConsumeQueue dispatch goes on (failures so far: 6, lines suppressed since the last one: 4)');
    fsPort.pathFault = null;
    wrote.push((await put(store, 'T', 'k6')).wroteOffset);
    assert.deepEqual(store.getDispatchStats().pluginFailures, { index: 6 }, 'no new failure once the index file can be created');
    await assertQueueIs(store, 'T', wrote);
    const found = await store.queryMessage('T', 'k6', 10, 0, Number.MAX_SAFE_INTEGER);
    assert.equal(found.messages.length, 1);
    const lost = await store.queryMessage('T', 'k0', 10, 0, Number.MAX_SAFE_INTEGER);
    assert.equal(lost.messages.length, 0, 'records whose index build failed are not in the index');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('recovery cannot write a ConsumeQueue: open fails with DispatchBlockedError and releases the root; a later open rebuilds the queue', async () => {
  const root = tempDir();
  try {
    const cfg = smallConfig(root);
    const first = await openStore(cfg);
    const wrote = [(await put(first)).wroteOffset, (await put(first)).wroteOffset, (await put(first)).wroteOffset];
    await first.shutdown();
    fs.rmSync(path.join(root, 'consumequeue'), { recursive: true, force: true });
    const fsPort = new FaultyFileSystem();
    failOpenUnder(fsPort, root, 'consumequeue');
    await assert.rejects(openStore(cfg, { fs: fsPort }), (e: unknown) => {
      assert.ok(e instanceof DispatchBlockedError);
      assert.equal(e.message, 'consume-queue dispatch failed at CommitLog offset 0 (topic T, queue 0, queue offset 0): write failed: EIO injected EIO');
      return true;
    });
    const again = await openStore(cfg);
    assert.equal(again.recoveryReport.mode, 'normal');
    await assertQueueIs(again, 'T', wrote);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('a prepared block whose ConsumeQueue write fails midway: dispatch blocks at that record as for single puts, the retry completes the queue, nothing twice', async () => {
  const root = tempDir();
  try {
    const fsPort = new FaultyFileSystem();
    const logger = capturingLogger();
    const cfg = smallConfig(root, { mappedFileSizeCommitLog: 1024 * 1024 });
    const store = await openStore(cfg, { fs: fsPort, logger });
    const wrote: number[] = [];
    for (let i = 0; i < 7; i++) wrote.push((await put(store)).wroteOffset); // 7 of the first 10-entry CQ file
    // a block of 6 for T/0 (queue offsets 7..12) and 2 for U/0: T's entries 10.. need a second file
    const block = Array.from({ length: 8 }, (_, i) => {
      const p = store.prepareMessage(makeMessage({ topic: i % 4 === 3 ? 'U' : 'T', body: `b${i}` }));
      assert.ok('record' in p);
      return p;
    });
    failOpenUnder(fsPort, root, path.join('consumequeue', 'T', '0'));
    const r = await store.putPreparedMessages(block);
    assert.equal(r.appended, 8, 'all appended; the failure is in dispatch');
    const offsets: number[] = [];
    for (let at = r.wroteOffset, k = 0; k < 8; k++) {
      offsets.push(at);
      at += block[k]!.record.length;
    }
    const tOffsets = offsets.filter((_, k) => k % 4 !== 3);
    const blocked = store.getDispatchStats().blocked!;
    assert.equal(blocked.offset, tOffsets[3], 'blocked at the record with queue offset 10, as single puts would be');
    assert.equal(blocked.reason, `consume-queue dispatch failed at CommitLog offset ${tOffsets[3]} (topic T, queue 0, queue offset 10): write failed: EIO injected EIO`);
    assert.equal(store.getMaxOffsetInQueue('T', 0), 10, 'entries before the failed record are written');
    assert.equal(store.getMaxOffsetInQueue('U', 0), 1, 'U\'s record before the failed one is dispatched, the one after is not');
    assert.equal(store.isWritable(), false);

    fsPort.pathFault = null;
    await waitFor(() => store.isWritable());
    wrote.push(...tOffsets);
    await assertQueueIs(store, 'T', wrote);
    await assertQueueIs(store, 'U', [offsets[3]!, offsets[7]!]);
    assert.equal(logger.lines.filter((l) => l.level === 'warn' && l.msg.includes('written before')).length, 0, 'no entry written twice');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});
