/**
 * TimerStore: the durable part of timer messages (Apache `TimerMessageStore`'s files, no
 * delivery logic): the wheel (`timerwheel`), the log (`timerlog/`) and the checkpoint
 * (`config/timercheck`) under the store root, with Apache's layouts (timer-wheel.ts,
 * timer-log.ts, timer-checkpoint.ts, timer-unit.ts).
 *
 *   enqueue(...)          appends a unit and links it as the newest of its slot
 *   unitsOfSlot(timeMs)   the slot's units, oldest first (walks prevPos from the slot's lastPos)
 *   checkpoint(progress)  log fdatasync → wheel write + fdatasync → checkpoint written durably;
 *                         the order makes every unit and slot the checkpoint counts durable first
 *
 * Recovery (open): units after the checkpoint's lastTimerLogFlushPos are re-read and linked into
 * their slots again (a unit already linked, slot lastPos ≥ its position, is not counted twice);
 * the log is cut after its last valid unit. The cost is the unchecked tail only, never the number
 * of pending timers: the wheel is loaded as one 38.7 MB read.
 */
import * as path from 'node:path';
import type { FileSystem } from '../../common/fs/file-system.js';
import { TimerCheckpoint, type TimerCheckpointState } from './timer-checkpoint.js';
import { TimerLog } from './timer-log.js';
import { MAGIC_DELETE, TIMER_MIN_BLANK_BYTES, TIMER_UNIT_SIZE_BYTES, needDelete, type TimerUnit } from './timer-unit.js';
import { TimerPrecisionChangedError, TimerWheel } from './timer-wheel.js';

/** Apache `TimerMessageStore.TIMER_WHEEL_TTL_DAY × DAY_SECS`: slots per half wheel, whatever the precision. */
export const DEFAULT_TIMER_SLOTS_TOTAL = 7 * 24 * 3600;

export interface TimerStoreOptions {
  storePathRootDir: string;
  fs: FileSystem;
  precisionMs: number;
  /** Segment size of timerlog/ (Apache mappedFileSizeTimerLog, 100 MiB). */
  timerLogFileSizeBytes: number;
  /** Slots per half wheel; default DEFAULT_TIMER_SLOTS_TOTAL (Apache's fixed value; tests use fewer). */
  slotsTotal?: number;
}

export interface TimerRecoveryReport {
  /** Units re-read after the checkpoint's flush position. */
  unitsReplayed: number;
  /** End of valid data in the timerlog. */
  logEndPos: number;
  /** The newest unit in the log after recovery (null for an empty log). */
  lastUnit: TimerUnit | null;
  /** Whether config/timercheck existed. */
  checkpointExisted: boolean;
  /** Slots rebuilt because they linked beyond the end of the log. */
  slotsRelinked: number;
  /** The timerPrecisionMs the wheel had been written with when it differed (it was emptied: no timer was pending), else null. */
  precisionChangedFromMs: number | null;
  /** Time spent opening the three files and recovering (ms). */
  openMs: number;
  /** Of which: reading the wheel file, and re-reading the timerlog tail (ms). */
  wheelLoadMs: number;
  tailScanMs: number;
}

export class TimerStore {
  readonly wheel: TimerWheel;
  readonly log: TimerLog;
  readonly checkpointFile: TimerCheckpoint;
  readonly recovery: TimerRecoveryReport;

  private constructor(wheel: TimerWheel, log: TimerLog, cp: TimerCheckpoint, startedMs: number, wheelLoadMs: number) {
    this.wheel = wheel;
    this.log = log;
    this.checkpointFile = cp;
    const t = performance.now();
    const r = this.recover();
    this.recovery = { ...r, openMs: performance.now() - startedMs, wheelLoadMs, tailScanMs: performance.now() - t };
  }

  static wheelPath(root: string): string {
    return path.join(root, 'timerwheel');
  }

  static logDir(root: string): string {
    return path.join(root, 'timerlog');
  }

  static checkpointPath(root: string): string {
    return path.join(root, 'config', 'timercheck');
  }

  /** Opens (or creates) the three files and recovers. @throws TimerWheelLengthError, TimerPrecisionChangedError, Error for bad segments. */
  static open(opts: TimerStoreOptions): TimerStore {
    const startedMs = performance.now();
    const root = opts.storePathRootDir;
    opts.fs.mkdirp(path.join(root, 'config'));
    const wheel = TimerWheel.open(TimerStore.wheelPath(root), opts.slotsTotal ?? DEFAULT_TIMER_SLOTS_TOTAL, opts.precisionMs, opts.fs);
    const wheelLoadMs = performance.now() - startedMs;
    let log: TimerLog | null = null;
    try {
      log = TimerLog.open(TimerStore.logDir(root), opts.timerLogFileSizeBytes, opts.fs);
      return new TimerStore(wheel, log, TimerCheckpoint.open(TimerStore.checkpointPath(root), opts.fs), startedMs, wheelLoadMs);
    } catch (e) {
      wheel.close();
      log?.close();
      throw e;
    }
  }

  get precisionMs(): number {
    return this.wheel.precisionMs;
  }

  /**
   * Appends a unit for a timer due at `delayedTimeMs` (a multiple of the precision) and links it
   * into its slot (Apache `doEnqueue`). A deletion marker (MAGIC_DELETE) lowers the slot's count.
   * Returns the unit's position.
   */
  enqueue(delayedTimeMs: number, writeTimeMs: number, magic: number, offsetPy: number, sizePy: number, topicHash: number): number {
    const slot = this.wheel.getSlot(delayedTimeMs);
    const pos = this.log.append({ prevPos: slot.lastPos, magic, writeTimeMs, delayedTimeMs, offsetPy, sizePy, topicHash });
    const isDelete = (magic & MAGIC_DELETE) !== 0;
    this.wheel.putSlot(delayedTimeMs, slot.firstPos === -1 ? pos : slot.firstPos, pos, slot.num + (isDelete ? -1 : 1), slot.magic);
    return pos;
  }

  /**
   * The units of the slot holding `timeMs`, oldest first; [] when the slot is empty. A broken link
   * ends the walk. With `abovePos`, only the units linked after the one at `abovePos` (units are
   * appended, so they lie above it): those added since a walk that ended at `abovePos`.
   */
  unitsOfSlot(timeMs: number, abovePos = -1): TimerUnit[] {
    const slot = this.wheel.getSlot(timeMs);
    if (slot.timeMs === -1) return [];
    const units: TimerUnit[] = [];
    const p = this.wheel.precisionMs;
    let pos = slot.lastPos;
    while (pos !== -1 && pos > abovePos) {
      const u = this.log.read(pos);
      if (!u) break;
      // A unit of this slot is due within it; anything else is a link into log data that was lost
      // and rewritten (crash): never deliver such a unit here (it would be early or late).
      if (Math.floor(u.delayedTimeMs / p) * p !== slot.timeMs) {
        this.brokenLinks++;
        break;
      }
      units.push(u);
      if (u.prevPos >= pos) break; // links only go backwards; anything else is damage
      pos = u.prevPos;
    }
    return units.reverse();
  }

  /** Slot walks ended at a unit of another slot (see unitsOfSlot). */
  brokenLinks = 0;

  /** Timers counted in the wheel from `fromMs` on (one full turn). */
  pendingFrom(fromMs: number): number {
    return this.wheel.countFrom(fromMs);
  }

  /**
   * Makes the log and the wheel durable, then writes the checkpoint with `progress`
   * (lastTimerLogFlushPos is set here to what was flushed).
   */
  async checkpoint(progress: Omit<TimerCheckpointState, 'lastTimerLogFlushPos'>): Promise<void> {
    // One synchronous snapshot: the wheel written is exactly the one of the units written (no
    // enqueue can run in between), so the wheel file never links to units the log file lacks.
    const flushedPos = this.log.writeBuffered();
    this.wheel.writeDirty();
    await this.log.sync(flushedPos);
    await this.wheel.sync();
    await this.checkpointFile.write({ ...progress, lastTimerLogFlushPos: flushedPos });
  }

  close(): void {
    this.wheel.close();
    this.log.close();
  }

  private recover(): Omit<TimerRecoveryReport, 'openMs' | 'wheelLoadMs' | 'tailScanMs'> {
    const cp = this.checkpointFile.get();
    let unitsReplayed = 0;
    let lastUnit: TimerUnit | null = null;
    const logEndPos = this.log.recover(cp.lastTimerLogFlushPos, (u) => {
      unitsReplayed++;
      lastUnit = u;
      const slot = this.wheel.getSlot(u.delayedTimeMs);
      if (slot.timeMs !== -1 && slot.lastPos >= u.pos) return; // already linked before the crash
      this.wheel.reviseSlot(u.delayedTimeMs, u.pos, needDelete(u.magic) ? -1 : 1);
    });
    const precisionChangedFromMs = this.checkPrecision(Math.min(cp.lastTimerLogFlushPos, logEndPos), cp.lastReadTimeMs);
    if (precisionChangedFromMs !== null) {
      // the emptied wheel gets the units after the checkpoint again, under the new precision
      this.log.scan(cp.lastTimerLogFlushPos, logEndPos, (u) => this.wheel.reviseSlot(u.delayedTimeMs, u.pos, needDelete(u.magic) ? -1 : 1));
    }
    if (!lastUnit && logEndPos >= TIMER_UNIT_SIZE_BYTES) lastUnit = this.findLastUnit(logEndPos);
    const slotsRelinked = this.relinkSlotsBeyond(logEndPos);
    return { unitsReplayed, logEndPos, lastUnit, checkpointExisted: this.checkpointFile.existed, slotsRelinked, precisionChangedFromMs };
  }

  /**
   * A wheel written under another timerPrecisionMs (told by the slot of the newest unit the
   * checkpoint covers): with timers pending from the read time on, TimerPrecisionChangedError;
   * with none, the wheel is emptied for the new precision. Returns the old precision, or null.
   */
  private checkPrecision(flushPos: number, readTimeMs: number): number | null {
    if (flushPos < TIMER_UNIT_SIZE_BYTES) return null;
    const unit = this.findLastUnit(flushPos);
    if (!unit) return null;
    const written = this.wheel.writtenPrecisionMs(unit.delayedTimeMs);
    if (written === null || written === this.wheel.precisionMs) return null;
    const pending = this.wheel.countFromAs(readTimeMs, written);
    if (pending > 0) throw new TimerPrecisionChangedError(this.wheel.path, written, this.wheel.precisionMs, pending);
    this.wheel.clear();
    return written;
  }

  /**
   * Slots whose newest link is at or beyond the end of the recovered log (the wheel file was
   * written before log data it links to reached the disk: power loss) are rebuilt from the log
   * (Apache `checkPhyPos` + `recoverAndRevise`): emptied, then every unit from the smallest of
   * their first positions is linked again into them. Returns how many slots were rebuilt.
   */
  private relinkSlotsBeyond(logEndPos: number): number {
    const broken = this.wheel.slotsPointingAtOrBeyond(logEndPos);
    if (broken.length === 0) return 0;
    const times = new Set(broken.map((b) => b.timeMs));
    let from = Number.POSITIVE_INFINITY;
    for (const b of broken) {
      this.wheel.putSlot(b.timeMs, -1, -1, 0, 0);
      if (b.firstPos >= 0) from = Math.min(from, b.firstPos);
    }
    if (from < logEndPos) {
      const p = this.wheel.precisionMs;
      this.log.scan(from, logEndPos, (u) => {
        const t = Math.floor(u.delayedTimeMs / p) * p;
        if (!times.has(t)) return;
        const s = this.wheel.getSlot(t);
        this.wheel.putSlot(t, s.firstPos === -1 ? u.pos : s.firstPos, u.pos, s.num + (needDelete(u.magic) ? -1 : 1), 0);
      });
    }
    return broken.length;
  }

  /** The newest unit before `end`: the last slot of the last segment, or of the one before when the last is empty. */
  private findLastUnit(end: number): TimerUnit | null {
    const size = this.log.fileSizeBytes;
    const inFile = end % size;
    if (inFile >= TIMER_UNIT_SIZE_BYTES) return this.log.read(end - TIMER_UNIT_SIZE_BYTES - ((inFile - TIMER_UNIT_SIZE_BYTES) % TIMER_UNIT_SIZE_BYTES));
    const lastIndex = Math.floor((size - TIMER_UNIT_SIZE_BYTES - TIMER_MIN_BLANK_BYTES) / TIMER_UNIT_SIZE_BYTES);
    return this.log.read(end - inFile - size + lastIndex * TIMER_UNIT_SIZE_BYTES);
  }
}
