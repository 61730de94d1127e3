/**
 * The durable timer store (src/store/timer): Apache's byte layouts (timerlog unit, wheel slot,
 * timercheck), segment roll-over with a blank, and recovery after a crash that lost the wheel
 * and the checkpoint of the last units.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { nodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { TimerStore } from '../../../src/store/timer/timer-store.js';
import { TimerLog } from '../../../src/store/timer/timer-log.js';
import { TimerPrecisionChangedError, TimerWheel, TimerWheelLengthError } from '../../../src/store/timer/timer-wheel.js';
import { decodeTimerCheckpoint, encodeTimerCheckpoint } from '../../../src/store/timer/timer-checkpoint.js';
import { MAGIC_DEFAULT, MAGIC_DELETE, TIMER_BLANK_MAGIC_CODE, TIMER_UNIT_SIZE_BYTES } from '../../../src/store/timer/timer-unit.js';
import { tempDir, removeDir } from '../../support/store-fixtures.js';

const P = 1000;
const T0 = 1_700_000_000_000;

describe('timer store files', () => {
  let root: string;
  beforeEach(() => (root = tempDir('tsmq-timer-')));
  afterEach(() => removeDir(root));

  it('writes Apache timerlog units byte for byte', () => {
    const log = TimerLog.open(path.join(root, 'timerlog'), 1024, nodeFileSystem);
    const pos = log.append({ prevPos: -1, magic: MAGIC_DEFAULT, writeTimeMs: T0, delayedTimeMs: T0 + 5000, offsetPy: 123456789, sizePy: 321, topicHash: -1784167150 });
    log.close();
    assert.equal(pos, 0);
    const bytes = fs.readFileSync(path.join(root, 'timerlog', '00000000000000000000'));
    assert.equal(bytes.length, 1024);
    const want = Buffer.alloc(52);
    want.writeInt32BE(52, 0);
    want.writeBigInt64BE(-1n, 4);
    want.writeInt32BE(1, 12);
    want.writeBigInt64BE(BigInt(T0), 16);
    want.writeInt32BE(5000, 24);
    want.writeBigInt64BE(123456789n, 28);
    want.writeInt32BE(321, 36);
    want.writeInt32BE(-1784167150, 40); // "TopicA".hashCode()
    assert.deepEqual(bytes.subarray(0, 52), want);
    assert.ok(bytes.subarray(52).every((b) => b === 0));
  });

  it('closes a full segment with Apache blank and continues in the next file', () => {
    assert.equal(TIMER_BLANK_MAGIC_CODE, -875286124); // 0xBBCCDDEE ^ 1880681586 + 8 in Java
    const size = 52 * 3 + 10; // room for 2 units + blank (a 3rd would leave < 16 bytes after it)
    const log = TimerLog.open(path.join(root, 'timerlog'), size, nodeFileSystem);
    const positions = [0, 1, 2].map((i) => log.append({ prevPos: -1, magic: 1, writeTimeMs: T0, delayedTimeMs: T0, offsetPy: i, sizePy: 10, topicHash: 0 }));
    log.close();
    assert.deepEqual(positions, [0, 52, size]);
    const first = fs.readFileSync(path.join(root, 'timerlog', '00000000000000000000'));
    assert.equal(first.readInt32BE(104), size - 104);
    assert.equal(first.readInt32BE(116), TIMER_BLANK_MAGIC_CODE);
    assert.ok(fs.existsSync(path.join(root, 'timerlog', String(size).padStart(20, '0'))));
  });

  it('keeps wheel slots in Apache layout (time / precision, first, last, num, magic)', async () => {
    const wheel = TimerWheel.open(path.join(root, 'timerwheel'), 100, P, nodeFileSystem);
    assert.equal(fs.statSync(path.join(root, 'timerwheel')).size, 100 * 2 * 32);
    wheel.putSlot(T0 + 3000, 52, 104, 2, 0);
    await wheel.flush();
    wheel.close();
    const bytes = fs.readFileSync(path.join(root, 'timerwheel'));
    const idx = ((T0 + 3000) / P) % 200;
    assert.equal(Number(bytes.readBigInt64BE(idx * 32)), (T0 + 3000) / P);
    assert.equal(Number(bytes.readBigInt64BE(idx * 32 + 8)), 52);
    assert.equal(Number(bytes.readBigInt64BE(idx * 32 + 16)), 104);
    assert.equal(bytes.readInt32BE(idx * 32 + 24), 2);
    const again = TimerWheel.open(path.join(root, 'timerwheel'), 100, P, nodeFileSystem);
    assert.deepEqual(again.getSlot(T0 + 3999), { timeMs: T0 + 3000, firstPos: 52, lastPos: 104, num: 2, magic: 0 });
    assert.equal(again.getSlot(T0 + 3000 + 200 * P).timeMs, -1, 'same index one turn later is another time: empty');
    again.close();
    assert.throws(() => TimerWheel.open(path.join(root, 'timerwheel'), 50, P, nodeFileSystem), TimerWheelLengthError);
  });

  it('timerPrecisionMs changed between starts: refused while timers are pending (they would never be found), the wheel is emptied for the new precision once none is', async () => {
    const opts = { storePathRootDir: root, fs: nodeFileSystem, timerLogFileSizeBytes: 52 * 20, slotsTotal: 100 };
    const cp = (readMs: number) => ({ lastReadTimeMs: readMs, lastTimerQueueOffset: 3, masterTimerQueueOffset: 3, stateVersion: 0, dataVersionTimestampMs: T0, dataVersionCounter: 1 });
    const ts = TimerStore.open({ ...opts, precisionMs: 1000 });
    for (let i = 0; i < 3; i++) ts.enqueue(T0 + 5000 + i * 1000, T0, MAGIC_DEFAULT, 1000 + i, 10, 0);
    await ts.checkpoint(cp(T0));
    ts.close();
    assert.throws(() => TimerStore.open({ ...opts, precisionMs: 500 }), (e: unknown) => {
      assert.ok(e instanceof TimerPrecisionChangedError);
      assert.deepEqual([e.writtenPrecisionMs, e.precisionMs, e.pendingTimers], [1000, 500, 3]);
      assert.match(e.message, /was written with timerPrecisionMs=1000 and holds 3 pending timer\(s\); this start has timerPrecisionMs=500/);
      return true;
    });
    const same = TimerStore.open({ ...opts, precisionMs: 1000 });
    assert.equal(same.recovery.precisionChangedFromMs, null);
    assert.equal(same.pendingFrom(T0), 3, 'refusing changed nothing');
    await same.checkpoint(cp(T0 + 10_000)); // all three delivered
    same.close();
    const changed = TimerStore.open({ ...opts, precisionMs: 500 });
    assert.equal(changed.recovery.precisionChangedFromMs, 1000);
    assert.equal(changed.pendingFrom(T0), 0);
    changed.enqueue(T0 + 20_500, T0 + 10_000, MAGIC_DEFAULT, 2000, 10, 0);
    assert.deepEqual(changed.unitsOfSlot(T0 + 20_500).map((u) => u.offsetPy), [2000]);
    await changed.checkpoint(cp(T0 + 10_000));
    changed.close();
    const again = TimerStore.open({ ...opts, precisionMs: 500 });
    assert.equal(again.recovery.precisionChangedFromMs, null);
    assert.equal(again.pendingFrom(T0 + 10_000), 1);
    again.close();
  });

  it('encodes timercheck as Apache (4096 bytes, 7 longs)', () => {
    const b = encodeTimerCheckpoint({ lastReadTimeMs: T0, lastTimerLogFlushPos: 520, lastTimerQueueOffset: 9, masterTimerQueueOffset: 9, stateVersion: 0, dataVersionTimestampMs: T0, dataVersionCounter: 3 });
    assert.equal(b.length, 4096);
    assert.equal(Number(b.readBigInt64BE(0)), T0);
    assert.equal(Number(b.readBigInt64BE(8)), 520);
    assert.equal(Number(b.readBigInt64BE(16)), 9);
    assert.equal(Number(b.readBigInt64BE(48)), 3);
    assert.equal(decodeTimerCheckpoint(b).lastTimerQueueOffset, 9);
  });

  it('links units of a slot and walks them oldest first; deletion markers lower the count', () => {
    const ts = TimerStore.open({ storePathRootDir: root, fs: nodeFileSystem, precisionMs: P, timerLogFileSizeBytes: 4096, slotsTotal: 100 });
    ts.enqueue(T0 + 5000, T0, MAGIC_DEFAULT, 100, 10, 0);
    ts.enqueue(T0 + 6000, T0, MAGIC_DEFAULT, 200, 10, 0);
    ts.enqueue(T0 + 5000, T0, MAGIC_DEFAULT, 300, 10, 0);
    ts.enqueue(T0 + 5000, T0, MAGIC_DEFAULT | MAGIC_DELETE, 400, 10, 0);
    assert.deepEqual(ts.unitsOfSlot(T0 + 5000).map((u) => u.offsetPy), [100, 300, 400]);
    assert.deepEqual(ts.unitsOfSlot(T0 + 6000).map((u) => u.offsetPy), [200]);
    assert.equal(ts.wheel.getSlot(T0 + 5000).num, 1);
    assert.equal(ts.pendingFrom(T0), 2);
    ts.close();
  });

  it('recovers units written after the checkpoint when the wheel was not flushed (crash)', async () => {
    const opts = { storePathRootDir: root, fs: nodeFileSystem, precisionMs: P, timerLogFileSizeBytes: 52 * 10 + 20, slotsTotal: 100 };
    const ts = TimerStore.open(opts);
    for (let i = 0; i < 3; i++) ts.enqueue(T0 + 5000, T0, MAGIC_DEFAULT, 1000 + i, 10, 0);
    await ts.checkpoint({ lastReadTimeMs: T0, lastTimerQueueOffset: 3, masterTimerQueueOffset: 3, stateVersion: 0, dataVersionTimestampMs: T0, dataVersionCounter: 1 });
    // After the checkpoint: 12 more units (crossing into a second segment), wheel never flushed.
    for (let i = 3; i < 15; i++) ts.enqueue(i % 2 ? T0 + 5000 : T0 + 7000, T0, MAGIC_DEFAULT, 1000 + i, 10, 0);
    ts.close(); // no flush: the wheel file still holds the checkpoint's 3 units
    // a torn unit at the end of the log
    const segs = fs.readdirSync(path.join(root, 'timerlog')).sort();
    const last = path.join(root, 'timerlog', segs[segs.length - 1]!);
    const fd = fs.openSync(last, 'r+');
    const torn = Buffer.alloc(20, 0x7f);
    torn.writeInt32BE(TIMER_UNIT_SIZE_BYTES, 0);
    fs.writeSync(fd, torn, 0, 20, 5 * 52);
    fs.closeSync(fd);

    const re = TimerStore.open(opts);
    assert.equal(re.recovery.unitsReplayed, 12);
    assert.equal(re.recovery.lastUnit?.offsetPy, 1014);
    const at5 = re.unitsOfSlot(T0 + 5000).map((u) => u.offsetPy);
    const at7 = re.unitsOfSlot(T0 + 7000).map((u) => u.offsetPy);
    assert.deepEqual(at5, [1000, 1001, 1002, 1003, 1005, 1007, 1009, 1011, 1013]);
    assert.deepEqual(at7, [1004, 1006, 1008, 1010, 1012, 1014]);
    assert.equal(re.wheel.getSlot(T0 + 5000).num, 9);
    // the torn bytes are gone: the next unit goes right after the last valid one
    const pos = re.enqueue(T0 + 7000, T0, MAGIC_DEFAULT, 2000, 10, 0);
    assert.equal(pos, re.recovery.logEndPos);
    assert.deepEqual(re.unitsOfSlot(T0 + 7000).map((u) => u.offsetPy).slice(-1), [2000]);
    re.close();
  });

  it('rebuilds slots whose links point at units the log lost (wheel written, buffered units not), never walks into another slot', async () => {
    const opts = { storePathRootDir: root, fs: nodeFileSystem, precisionMs: P, timerLogFileSizeBytes: 52 * 100 + 20, slotsTotal: 100 };
    const ts = TimerStore.open(opts);
    for (let i = 0; i < 5; i++) ts.enqueue(T0 + 5000, T0, MAGIC_DEFAULT, 100 + i, 10, 0);
    await ts.checkpoint({ lastReadTimeMs: T0, lastTimerQueueOffset: 5, masterTimerQueueOffset: 5, stateVersion: 0, dataVersionTimestampMs: T0, dataVersionCounter: 1 });
    for (let i = 5; i < 8; i++) ts.enqueue(T0 + 5000, T0, MAGIC_DEFAULT, 100 + i, 10, 0); // buffered only
    await ts.wheel.flush(); // the wheel file now links to units the log file does not have
    (ts.log as unknown as { pendingLen: number }).pendingLen = 0; // crash: the buffer is lost
    ts.close();
    const re = TimerStore.open(opts);
    assert.equal(re.recovery.slotsRelinked, 1);
    assert.deepEqual(re.unitsOfSlot(T0 + 5000).map((u) => u.offsetPy), [100, 101, 102, 103, 104]);
    assert.equal(re.wheel.getSlot(T0 + 5000).num, 5);
    // new units reuse the lost positions; slot T0+5000 must never see them
    for (let i = 0; i < 3; i++) re.enqueue(T0 + 9000, T0, MAGIC_DEFAULT, 900 + i, 10, 0);
    assert.deepEqual(re.unitsOfSlot(T0 + 5000).map((u) => u.offsetPy), [100, 101, 102, 103, 104]);
    assert.deepEqual(re.unitsOfSlot(T0 + 9000).map((u) => u.offsetPy), [900, 901, 902]);
    // a link into another slot's unit ends the walk
    re.wheel.putSlot(T0 + 6000, 0, re.wheel.getSlot(T0 + 9000).lastPos, 1, 0);
    assert.deepEqual(re.unitsOfSlot(T0 + 6000), []);
    assert.equal(re.brokenLinks, 1);
    re.close();
  });
});
