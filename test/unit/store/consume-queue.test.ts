import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { NodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { ConsumeQueue } from '../../../src/store/consumequeue/consume-queue.js';
import type { StoreTimeLookup } from '../../../src/store/consumequeue/consume-queue-time-search.js';
import type { FileSystem } from '../../../src/common/fs/file-system.js';
import { FaultyFileSystem } from '../../support/faulty-file-system.js';
import { capturingLogger, makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

function newQueue(root: string, fileSize = 200, fsPort: FileSystem = new NodeFileSystem(), logger = silentLogger): ConsumeQueue {
  return new ConsumeQueue({ topic: 'T', queueId: 0, rootDir: root, fileSize, fs: fsPort, clock: new ManualClock(0), logger });
}

test('ConsumeQueue: 20-byte entries, idempotent puts, min/max, files of 10 entries', () => {
  const root = tempDir();
  try {
    const cq = newQueue(root);
    for (let q = 0; q < 25; q++) assert.equal(cq.putMessagePositionInfo(q * 100, 100, 7, q), true);
    assert.equal(cq.getMaxOffsetInQueue(), 25);
    assert.equal(cq.getMinOffsetInQueue(), 0);
    assert.equal(cq.getMaxPhysicOffset(), 2500);
    // rebuilding the same entries is a no-op
    for (let q = 0; q < 25; q++) cq.putMessagePositionInfo(q * 100, 100, 7, q);
    assert.equal(cq.getMaxOffsetInQueue(), 25);
    assert.deepEqual(cq.getEntry(13), { phyOffset: 1300, size: 100, tagsCode: 7 });
    const slice = cq.readEntries(7, 100)!;
    assert.equal(slice.count, 3, 'up to the end of the CQ file');
    assert.equal(cq.rollNextFile(7), 10);
    cq.shutdown();
    const files = fs.readdirSync(path.join(root, 'T', '0')).sort();
    assert.deepEqual(files, ['00000000000000000000', '00000000000000000200', '00000000000000000400']);
    const raw = fs.readFileSync(path.join(root, 'T', '0', files[1]!));
    assert.equal(raw.length, 200);
    assert.equal(raw.readBigInt64BE(0), 1000n);
    assert.equal(raw.readInt32BE(8), 100);
    assert.equal(raw.readBigInt64BE(12), 7n);
  } finally {
    removeDir(root);
  }
});

test('ConsumeQueue: a queue starting at offset 13 pre-blank fills its first file and starts its min there', () => {
  const root = tempDir();
  try {
    const cq = newQueue(root);
    cq.putMessagePositionInfo(5000, 100, 1, 13);
    assert.equal(cq.getMinOffsetInQueue(), 13);
    assert.equal(cq.getMaxOffsetInQueue(), 14);
    assert.equal(cq.getEntry(12), null, 'pre-blank entries are not data');
    cq.shutdown();
    const raw = fs.readFileSync(path.join(root, 'T', '0', '00000000000000000200'));
    assert.equal(raw.readInt32BE(8), 0x7fffffff, 'pre-blank entry (0, Integer.MAX_VALUE, 0)');
    const again = newQueue(root);
    again.load();
    again.recover();
    again.correctMinOffset(0);
    assert.equal(again.getMinOffsetInQueue(), 13, 'pre-blanks never become the min');
    assert.equal(again.getMaxPhysicOffset(), 5100);
    again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('ConsumeQueue.correctMinOffset: 10,000 entries of 100-byte records, commit-log min 2000 ⇒ min 20; all older ⇒ min = max', () => {
  const root = tempDir();
  try {
    const cq = newQueue(root, 6000);
    for (let q = 0; q < 10_000; q++) cq.putMessagePositionInfo(q * 100, 100, 0, q);
    cq.correctMinOffset(2000);
    assert.equal(cq.getMinOffsetInQueue(), 20);
    cq.correctMinOffset(10_000 * 100);
    assert.equal(cq.getMinOffsetInQueue(), 10_000);
    assert.equal(cq.getMaxOffsetInQueue(), 10_000);
    cq.shutdown();
  } finally {
    removeDir(root);
  }
});

test('ConsumeQueue.truncateDirtyLogicFiles removes entries at/after the physical offset and empty files', () => {
  const root = tempDir();
  try {
    const cq = newQueue(root);
    for (let q = 0; q < 25; q++) cq.putMessagePositionInfo(q * 100, 100, 0, q);
    assert.equal(cq.truncateDirtyLogicFiles(1250), 12);
    assert.equal(cq.getMaxOffsetInQueue(), 13);
    assert.equal(cq.getMaxPhysicOffset(), 1300);
    assert.equal(cq.truncateDirtyLogicFiles(1000), 3);
    assert.equal(cq.getMaxOffsetInQueue(), 10);
    assert.deepEqual(fs.readdirSync(path.join(root, 'T', '0')), ['00000000000000000000'], 'the emptied second file is deleted');
    cq.putMessagePositionInfo(1000, 100, 0, 10);
    assert.equal(cq.getMaxOffsetInQueue(), 11);
    cq.shutdown();
  } finally {
    removeDir(root);
  }
});

function lookupFor(times: Map<number, number>, minPhy = 0): StoreTimeLookup {
  return { getStoreTimestamp: (o) => times.get(o) ?? -1, getMinPhyOffset: () => minPhy };
}

test('B15 getOffsetInQueueByTime after the newest message returns max (5), before the oldest returns min (0)', async () => {
  const root = tempDir();
  try {
    const clock = new ManualClock(0);
    const store = await openStore(smallConfig(root), { clock });
    for (const t of [1000, 2000, 3000, 4000, 5000]) {
      clock.set(t);
      await store.putMessage(makeMessage());
    }
    assert.equal(await store.getOffsetInQueueByTime('T', 0, 9999), 5);
    assert.equal(await store.getOffsetInQueueByTime('T', 0, 500), 0);
    assert.equal(await store.getOffsetInQueueByTime('T', 0, 3000), 2);
    assert.equal(await store.getOffsetInQueueByTime('T', 0, 9999, 'UPPER'), 4);
    assert.equal(await store.getOffsetInQueueByTime('T', 0, 500, 'UPPER'), 0);
    assert.equal(await store.getOffsetInQueueByTime('T', 0, 3500, 'UPPER'), 2);
    assert.equal(await store.getEarliestMessageTime('T', 0), 1000);
    assert.equal(await store.getMessageStoreTimeStamp('T', 0, 3), 4000);
    assert.equal(await store.getOffsetInQueueByTime('nope', 0, 1), 0);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('B17 timestamps 2,4,6,8: LOWER gives the earliest offset with time >= t (2→0 … 9→4)', async () => {
  const root = tempDir();
  try {
    const clock = new ManualClock(0);
    const store = await openStore(smallConfig(root), { clock });
    for (const t of [2, 4, 6, 8]) {
      clock.set(t);
      await store.putMessage(makeMessage());
    }
    const got: Record<number, number> = {};
    for (let t = 2; t <= 9; t++) got[t] = await store.getOffsetInQueueByTime('T', 0, t, 'LOWER');
    assert.deepEqual(got, { 2: 0, 3: 1, 4: 1, 5: 2, 6: 2, 7: 3, 8: 3, 9: 4 });
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('time search across several CQ files matches a brute-force LOWER/UPPER, with equal timestamps', () => {
  const root = tempDir();
  try {
    const cq = newQueue(root);
    const times = new Map<number, number>();
    const tsOf: number[] = [];
    for (let q = 0; q < 37; q++) {
      const t = 1000 + Math.floor(q / 3) * 10; // runs of 3 equal timestamps
      tsOf.push(t);
      times.set(q * 100, t);
      cq.putMessagePositionInfo(q * 100, 100, 0, q);
    }
    const lookup = lookupFor(times);
    for (let t = 990; t <= 1130; t += 5) {
      const lower = tsOf.findIndex((x) => x >= t);
      const expectLower = lower < 0 ? 37 : lower;
      let upper = -1;
      tsOf.forEach((x, i) => {
        if (x <= t) upper = i;
      });
      const expectUpper = upper < 0 ? 0 : upper;
      assert.equal(cq.getOffsetInQueueByTime(t, 'LOWER', lookup), expectLower, `LOWER t=${t}`);
      assert.equal(cq.getOffsetInQueueByTime(t, 'UPPER', lookup), expectUpper, `UPPER t=${t}`);
    }
    // entries below the commit-log min offset count as too old, result clamped to [min, max]
    cq.correctMinOffset(1500);
    assert.equal(cq.getOffsetInQueueByTime(0, 'LOWER', lookupFor(times, 1500)), 15);
    // RocketMQ corner cases: UPPER before every entry answers 0, LOWER after every entry one past the last; both clamped
    assert.equal(cq.getOffsetInQueueByTime(0, 'UPPER', lookupFor(times, 1500)), 15);
    assert.equal(cq.getOffsetInQueueByTime(5000, 'LOWER', lookupFor(times, 1500)), 37);
    assert.equal(cq.getOffsetInQueueByTime(5000, 'UPPER', lookupFor(times, 1500)), 36);
    cq.shutdown();
  } finally {
    removeDir(root);
  }
});

/**
 * Pre-blank fill interrupted by a failed write. Files of 3000 units (60,000 bytes) buffer 16 KiB:
 * the queue's write buffer holds 819 units, so filling 2500 pre-blanks commits (pwrites) after
 * units 819, 1638 and 2457. `failPwrites` decides, per pwrite of the queue file (1-based), whether
 * it fails with EIO.
 */
const PRE_BLANK_FILE = 60_000;
const FIRST_Q = 2500;
const CQ_FILE = path.join('T', '0', '00000000000000000000');

/** The file a run without faults writes: 2500 pre-blanks, then entries 2500 and 2501. */
function referencePreBlankFile(): Buffer {
  const root = tempDir();
  try {
    const cq = newQueue(root, PRE_BLANK_FILE);
    cq.putMessagePositionInfo(5000, 100, 7, FIRST_Q);
    cq.putMessagePositionInfo(5100, 100, 8, FIRST_Q + 1);
    cq.shutdown();
    return fs.readFileSync(path.join(root, CQ_FILE));
  } finally {
    removeDir(root);
  }
}

function failingPwrites(failOn: (n: number) => boolean): FaultyFileSystem {
  const fsPort = new FaultyFileSystem();
  let n = 0;
  fsPort.pathFault = (op, p) => (op === 'pwrite' && p.endsWith(CQ_FILE) && failOn(++n) ? 'EIO' : null);
  return fsPort;
}

test('pre-blank fill interrupted by a failed pwrite: the retry resumes it and writes byte for byte what a run without the fault writes', () => {
  const expected = referencePreBlankFile();
  assert.equal(expected.length, PRE_BLANK_FILE);
  assert.equal(expected.readInt32BE((FIRST_Q - 1) * 20 + 8), 0x7fffffff, 'last pre-blank');
  assert.equal(expected.readBigInt64BE(FIRST_Q * 20), 5000n, 'entry 2500 right after the pre-blanks');
  const root = tempDir();
  try {
    const fsPort = failingPwrites((n) => n === 1);
    const logger = capturingLogger();
    const cq = newQueue(root, PRE_BLANK_FILE, fsPort, logger);
    assert.throws(() => cq.putMessagePositionInfo(5000, 100, 7, FIRST_Q), { code: 'EIO' });
    assert.equal(cq.getMaxOffsetInQueue(), 819, 'the fill stopped where the full write buffer could not be written');
    assert.equal(cq.getMaxPhysicOffset(), -1);
    fsPort.pathFault = null;
    assert.equal(cq.putMessagePositionInfo(5000, 100, 7, FIRST_Q), true); // the dispatch retry
    assert.equal(cq.getMinOffsetInQueue(), FIRST_Q);
    assert.equal(cq.getMaxOffsetInQueue(), FIRST_Q + 1);
    assert.equal(cq.putMessagePositionInfo(5100, 100, 8, FIRST_Q + 1), true);
    assert.deepEqual(cq.getEntry(FIRST_Q), { phyOffset: 5000, size: 100, tagsCode: 7 });
    cq.shutdown();
    assert.equal(Buffer.compare(fs.readFileSync(path.join(root, CQ_FILE)), expected), 0, 'same bytes as without the fault');
    assert.deepEqual(
      logger.lines.filter((l) => l.level === 'error' || l.level === 'warn').map((l) => l.msg),
      [],
      'no "[BUG] logic queue order" line: the entry went where it belongs',
    );
  } finally {
    removeDir(root);
  }
});

test('pre-blank fill interrupted, then a crash: after recovery the re-dispatched entry resumes the fill, byte for byte', () => {
  const expected = referencePreBlankFile();
  const root = tempDir();
  try {
    const fsPort = failingPwrites((n) => n === 2); // units 0..818 reach the file, the next commit fails
    const cq = newQueue(root, PRE_BLANK_FILE, fsPort);
    assert.throws(() => cq.putMessagePositionInfo(5000, 100, 7, FIRST_Q), { code: 'EIO' });
    assert.equal(cq.getMaxOffsetInQueue(), 1638);
    cq.shutdownAbruptly(false); // the buffered pre-blanks 819..1637 are lost

    const again = newQueue(root, PRE_BLANK_FILE);
    again.load();
    assert.deepEqual(again.recover(), { validEntries: 0, removedEntries: 0 });
    assert.equal(again.getMaxOffsetInQueue(), 819, 'only the committed pre-blanks survived');
    assert.equal(again.getMaxPhysicOffset(), -1);
    assert.equal(again.putMessagePositionInfo(5000, 100, 7, FIRST_Q), true); // recovery re-dispatches the record
    assert.equal(again.putMessagePositionInfo(5100, 100, 8, FIRST_Q + 1), true);
    assert.equal(again.getMinOffsetInQueue(), FIRST_Q);
    assert.equal(again.getMaxOffsetInQueue(), FIRST_Q + 2);
    again.shutdown();
    assert.equal(Buffer.compare(fs.readFileSync(path.join(root, CQ_FILE)), expected), 0);
  } finally {
    removeDir(root);
  }
});

/** Counts the bytes read through pread. */
class CountingFileSystem extends NodeFileSystem {
  bytesRead = 0;
  override pread(fd: number, buf: Buffer, bufOffset: number, length: number, position: number): number {
    const n = super.pread(fd, buf, bufOffset, length, position);
    this.bytesRead += n;
    return n;
  }
}

test('ConsumeQueue recovery reads what the queue holds, not its 6 MB file (issue 19: 5,818 queues read 94 GB)', () => {
  const root = tempDir();
  try {
    const fileSize = 300_000 * 20; // RocketMQ's default ConsumeQueue file
    const cq = newQueue(root, fileSize);
    for (let q = 0; q < 5; q++) cq.putMessagePositionInfo(q * 100, 100, 7, q);
    cq.shutdown();
    const counting = new CountingFileSystem();
    const again = newQueue(root, fileSize, counting);
    again.load();
    assert.deepEqual(again.recover(), { validEntries: 5, removedEntries: 0 });
    assert.equal(again.getMaxOffsetInQueue(), 5);
    assert.equal(again.getMaxPhysicOffset(), 500);
    assert.ok(counting.bytesRead <= 20_480 + 16 * 1024, `read ${counting.bytesRead} bytes of a ${fileSize}-byte file`);
    // the queue keeps working where it ended
    assert.equal(again.putMessagePositionInfo(500, 100, 7, 5), true);
    assert.deepEqual(again.getEntry(5), { phyOffset: 500, size: 100, tagsCode: 7 });
    again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('ConsumeQueue recovery: torn bytes right behind the last entry are counted and zeroed on disk', () => {
  const root = tempDir();
  try {
    const cq = newQueue(root, 200);
    for (let q = 0; q < 3; q++) cq.putMessagePositionInfo(q * 100, 100, 7, q);
    cq.shutdown();
    const file = path.join(root, 'T', '0', '00000000000000000000');
    const fd = fs.openSync(file, 'r+');
    // entry 3: a torn write (offset written, size not), entry 4 zero, entry 5 garbage
    const torn = Buffer.alloc(20);
    torn.writeBigInt64BE(300n, 0);
    fs.writeSync(fd, torn, 0, 20, 60);
    fs.writeSync(fd, Buffer.from([9, 9, 9]), 0, 3, 100);
    fs.closeSync(fd);
    const again = newQueue(root, 200);
    again.load();
    assert.deepEqual(again.recover(), { validEntries: 3, removedEntries: 2 });
    assert.equal(again.getMaxOffsetInQueue(), 3);
    again.shutdown();
    const raw = fs.readFileSync(file);
    assert.equal(raw.length, 200);
    assert.equal(raw.subarray(60).every((b) => b === 0), true, 'tail zeroed');
    assert.equal(raw.readBigInt64BE(40), 200n, 'entries before the end kept');
  } finally {
    removeDir(root);
  }
});

test('ConsumeQueue read-ahead: entries appended after a read are seen; after truncateDirtyLogicFiles the rewritten entries are returned, never the old ones', () => {
  const root = tempDir();
  try {
    const cq = newQueue(root, 20 * 1000);
    for (let q = 0; q < 50; q++) cq.putMessagePositionInfo(q * 100, 100, 1, q);
    const entry = (slice: { buf: Buffer }, i: number) => ({ phy: Number(slice.buf.readBigInt64BE(i * 20)), size: slice.buf.readInt32BE(i * 20 + 8), tags: Number(slice.buf.readBigInt64BE(i * 20 + 12)) });
    assert.deepEqual(entry(cq.readEntries(0, 32)!, 31), { phy: 3100, size: 100, tags: 1 });
    assert.equal(cq.readEntries(32, 32)!.count, 18, 'the read-ahead holds what was written, no more');
    for (let q = 50; q < 60; q++) cq.putMessagePositionInfo(q * 100, 100, 1, q);
    const later = cq.readEntries(48, 32)!;
    assert.equal(later.count, 12, 'entries appended after the read-ahead are read');
    assert.deepEqual(entry(later, 11), { phy: 5900, size: 100, tags: 1 });
    assert.deepEqual(entry(cq.readEntries(40, 32)!, 0), { phy: 4000, size: 100, tags: 1 }); // read-ahead now holds 40..59
    // truncate back to 40 entries (records from CommitLog offset 4000 on are gone), then other entries at the same queue offsets
    cq.truncateDirtyLogicFiles(4000);
    assert.equal(cq.getMaxOffsetInQueue(), 40);
    for (let q = 40; q < 60; q++) cq.putMessagePositionInfo(10_000 + q * 200, 200, 2, q);
    const again = cq.readEntries(40, 32)!;
    assert.equal(again.count, 20);
    assert.deepEqual(entry(again, 0), { phy: 18_000, size: 200, tags: 2 });
    assert.deepEqual(entry(cq.readEntries(30, 32)!, 9), { phy: 3900, size: 100, tags: 1 });
    assert.deepEqual(entry(cq.readEntries(30, 32)!, 10), { phy: 18_000, size: 200, tags: 2 });
    cq.shutdown();
  } finally {
    removeDir(root);
  }
});
