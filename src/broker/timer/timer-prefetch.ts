/**
 * TimerPrefetch: prepares the deliveries of wheel slots that come due soon, before they are due
 * (tsmq addition; Apache reads and converts a slot's messages only once it has passed). For each
 * slot due within `windowMs` of now (timerPrefetchWindowMs) it walks the slot's units, reads
 * their messages from the CommitLog in large sequential reads (timers put together are
 * contiguous there), converts each with `convert` and encodes it with the store's
 * `prepareMessage`, within `maxBytes` held at once (timerPrefetchMaxBytes). Units beyond the
 * budget, whose message cannot be read or converted, stay unprepared: the timer service delivers
 * those the usual way when the slot is due.
 *
 * The time in TIMER_DEQUEUE_MS is not known ahead: each prepared record holds a placeholder of
 * the slot's due time (same number of decimal digits as the real one for any clock after 2001)
 * whose position is kept, and the service writes the delivery time over it right before the
 * append (`PrefetchedItems.preparedMessage`).
 *
 * Memory: the slot's units and prepared records are held as a struct of arrays
 * (prefetched-items.ts), records packed in shared 4 MiB blocks, so a prepared timer costs its
 * record plus ~290 bytes (row columns, its Buffer view and UNIQ_KEY string); a deletion marker is a TimerUnit.
 *
 * What the prefetch cannot see is settled by the service at due time with `take`: units added
 * to the slot after the walk (positions above `lastPos`, deletion markers included), so a late
 * timer is delivered and a late recall still wins. Nothing here writes to the store or the wheel.
 */
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import type { MessageExt } from '../../common/message/message.js';
import { MessageConst } from '../../common/message/message-const.js';
import { decodeRecord } from '../../common/message/record-codec.js';
import type { MessageStore } from '../../store/message-store.js';
import type { TimerStore } from '../../store/timer/timer-store.js';
import { needDelete, needRoll, type TimerUnit } from '../../store/timer/timer-unit.js';
import { TIMER_TOPIC } from './timer-put-hook.js';
import { convert } from './timer-conversion.js';
import { PrefetchedItems, PreparedRecordBlocks, ROW_BYTES } from './prefetched-items.js';

/** Units handled between two yields to the event loop. */
const CHUNK_UNITS = 2048;
/** Largest single CommitLog read (bytes). */
const READ_RUN_BYTES = 4 * 1024 * 1024;
/** Heap estimate per deletion marker kept (a TimerUnit) and per prepared record beyond its bytes (its Buffer view, UNIQ_KEY and KEYS strings). */
const MARKER_BYTES = 96;
const PREPARED_OVERHEAD_BYTES = 170;
const DEQUEUE_NEEDLE = Buffer.from(`${MessageConst.TIMER_DEQUEUE_MS}\u0001`, 'latin1');
/**
 * Pacing by work (not by wall time alone): slot s, beyond the window, starts when the time left
 * until it is due is at most windowMs + EARLY_START_SAFETY × the preparation backlog up to it
 * (the unprepared units of every slot from now to s, at most what the memory budget can hold)
 * × the time one unit takes to prepare on this machine now, and at most MAX_EARLY_LEAD_MS
 * ahead. The time per unit is measured: wall time of each chunk prepared (its CommitLog reads,
 * decoding, conversion and encoding, and the yield after it, during which the rest of the broker
 * runs) per unit it prepared, smoothed over recent chunks, so a loaded machine (a smaller share
 * of a core for the event loop) starts a large slot earlier instead of delivering it late. A
 * slot of at least PROBE_MIN_UNITS beyond the window when no estimate was measured for
 * PROBE_EVERY_MS is probed: one chunk of it is prepared to measure the time per unit (the slot
 * then waits for its start like any other); `defaultUnitMs` is used before any chunk was measured.
 * A probe taken while a burst's timers are still being put measures high (25–70 µs per unit
 * against 5–12 µs once they are in), so such a burst starts while its last puts arrive: in the
 * session-11 runs (bench/results/timer-burst-2026-12-02-s11.md) 67–89 s ahead, puts not slowed.
 */
const EARLY_START_SAFETY = 2;
const MAX_EARLY_LEAD_MS = 5 * 60_000;
const UNIT_MS_MIN = 0.002;
const PROBE_MIN_UNITS = 4 * CHUNK_UNITS;
const PROBE_EVERY_MS = 10_000;
/** Chunks preparing fewer units than this are not measured (their time is mostly fixed costs). */
const MEASURE_MIN_UNITS = 256;
/** Weight of the newest chunk in the smoothed time per unit. */
const UNIT_MS_EWMA = 0.25;
/** Bytes held per prepared unit assumed before any was prepared (a 1 KiB timer: record + row + overhead). */
const DEFAULT_PREPARED_UNIT_BYTES = 1600;

/** What `take` hands over: the slot's units as walked, oldest first. */
export interface PrefetchedSlot {
  slotTimeMs: number;
  /** The slot's lastPos at the walk; units above it were added later. */
  lastPos: number;
  /** The normal units, prepared or not (a row's record is absent: deliver it the usual way). */
  items: PrefetchedItems;
  /** Recall keys of the deletion markers seen in the walk whose message was read... */
  deleteKeys: Set<string>;
  /** ...and the deletion markers whose message was not read yet (the taker reads them). */
  pendingMarkers: TimerUnit[];
  prepared: number;
}

export interface TimerPrefetchOptions {
  timerStore: TimerStore;
  store: Pick<MessageStore, 'lookMessageByOffset' | 'selectOneMessageByOffset'> & Partial<Pick<MessageStore, 'prepareMessage'>>;
  clock: Clock;
  logger: Logger;
  /** Prepare slots due within this many ms (timerPrefetchWindowMs); 0 disables. */
  windowMs: number;
  /** Bytes held by prepared slots at most (timerPrefetchMaxBytes). */
  maxBytes: number;
}

interface SlotState extends PrefetchedSlot {
  bytes: number;
  /** Rows examined so far (prepared or given up). */
  done: number;
  /** Rows below this are examined by prepareChunk (the whole table unless prepareNow bounds it). */
  limit: number;
  taken: boolean;
  /** Prepared at due time (prepareNow): outside the budget, nothing held afterwards. */
  atDue: boolean;
  /** Walked (and probed) beyond the window, waiting for its start (see EARLY_START_SAFETY). */
  waiting: boolean;
}

export class TimerPrefetch {
  private readonly slots = new Map<number, SlotState>();
  private heldBytes = 0;
  private readonly precisionMs: number;
  /** Counters for stats and tests. */
  readonly counters = { slots: 0, prepared: 0, overBudget: 0, busyMs: 0, preparedAtDue: 0, startedEarly: 0, probes: 0, unitUs: 0, lastEarlyLeadMs: 0 };
  private readonly space = new PreparedRecordBlocks();
  /** Time to prepare one unit (ms) assumed until a chunk was measured (early start of large slots); tests raise it. */
  defaultUnitMs = 0.02;
  /** Smallest slot beyond the window that is probed (PROBE_MIN_UNITS); tests lower it. */
  probeMinUnits = PROBE_MIN_UNITS;
  /** Smoothed wall ms per prepared unit (NaN: none measured yet), when it was last measured or probed (clock ms). */
  private unitMs = Number.NaN;
  private measuredAtMs = Number.NEGATIVE_INFINITY;
  /** Bytes counted against the budget by the records prepared ahead so far (the budget's size in units). */
  private preparedBytesTotal = 0;

  constructor(private readonly opts: TimerPrefetchOptions) {
    this.precisionMs = opts.timerStore.precisionMs;
  }

  get enabled(): boolean {
    return this.opts.windowMs > 0 && this.opts.maxBytes > 0 && typeof this.opts.store.prepareMessage === 'function';
  }

  /** Bytes held by slots prepared and not taken yet. */
  get bytesHeld(): number {
    return this.heldBytes;
  }

  /**
   * One step of the prefetch loop: prepares (part of) the first slot from `readTimeMs` on that
   * is not due yet, is due within the window and not fully prepared. Returns the ms to wait
   * before the next step (0 = at once).
   */
  async round(readTimeMs: number): Promise<number> {
    if (!this.enabled) return 1000;
    const p = this.precisionMs;
    const now = this.opts.clock.nowMs();
    const wheel = this.opts.timerStore.wheel;
    const first = Math.max(readTimeMs, Math.floor(now / p) * p); // the slot ending after now (not due yet)
    const last = now + this.opts.windowMs - p; // a slot is due at its start + p
    const lastEarly = now + this.opts.windowMs + MAX_EARLY_LEAD_MS - p;
    const unitMs = Number.isNaN(this.unitMs) ? this.defaultUnitMs : this.unitMs;
    const budgetUnits = this.opts.maxBytes / (this.counters.prepared >= 1000 ? this.preparedBytesTotal / this.counters.prepared : DEFAULT_PREPARED_UNIT_BYTES);
    const stale = now - this.measuredAtMs >= PROBE_EVERY_MS;
    let backlog = 0; // units not prepared yet of the slots from `first` to s
    for (let s = first; s <= lastEarly; s += p) {
      if (this.heldBytes >= this.opts.maxBytes) return 50;
      let st = this.slots.get(s);
      if (st === undefined && !wheel.hasSlot(s)) continue;
      if (st?.taken) continue;
      const num = wheel.getSlot(s).num;
      backlog += Math.max(0, num - (st?.done ?? 0));
      if (s > last && (st === undefined || st.waiting)) {
        const starts = s + p - now <= this.opts.windowMs + EARLY_START_SAFETY * Math.min(backlog, budgetUnits) * unitMs;
        if (st === undefined) {
          if (!starts && !(stale && num >= this.probeMinUnits)) continue;
          st = this.walkTimed(s);
          if (starts) this.countEarlyStart(s + p - now);
          else {
            st.waiting = true; // probe: one chunk (next round) measures the time per unit
            this.counters.probes++;
          }
          return 0;
        }
        if (starts) {
          st.waiting = false;
          this.countEarlyStart(s + p - now);
        } else if (stale && st.done < st.items.length) {
          this.measuredAtMs = now; // one probe per PROBE_EVERY_MS even if the chunk prepares too few to be measured
          await this.prepareChunkTimed(st);
          return 0;
        } else continue;
      }
      if (st?.waiting) st.waiting = false; // in the window now
      if (st && st.done >= st.items.length && st.pendingMarkers.length === 0 && wheel.getSlot(s).lastPos > st.lastPos) {
        this.extend(st); // units added since the walk
      }
      if (st && st.done >= st.items.length && st.pendingMarkers.length === 0) continue;
      if (!st) {
        this.walkTimed(s);
        return 0;
      }
      await this.prepareChunkTimed(st);
      return 0;
    }
    return Math.min(200, Math.max(1, p - (now % p)));
  }

  /** Counts a slot started beyond the window, `leadMs` before it is due. */
  private countEarlyStart(leadMs: number): void {
    this.counters.startedEarly++;
    this.counters.lastEarlyLeadMs = leadMs;
  }

  /** Walks slot `s` into a new state (timed as busy). */
  private walkTimed(s: number): SlotState {
    const t0 = performance.now();
    const st = this.walk(s);
    this.counters.busyMs += performance.now() - t0;
    this.slots.set(s, st);
    this.counters.slots++;
    return st;
  }

  /**
   * One chunk of `st`, timed: its wall time (reads, preparation and the yield after it) per unit
   * it prepared feeds the smoothed time per unit when it prepared at least MEASURE_MIN_UNITS.
   */
  private async prepareChunkTimed(st: SlotState): Promise<void> {
    const t0 = performance.now();
    const before = st.prepared;
    await this.prepareChunk(st);
    const ms = performance.now() - t0;
    if (!st.atDue) this.counters.busyMs += ms;
    const n = st.prepared - before;
    if (n < MEASURE_MIN_UNITS) return;
    const perUnit = Math.max(UNIT_MS_MIN, ms / n);
    this.unitMs = Number.isNaN(this.unitMs) ? perUnit : this.unitMs + UNIT_MS_EWMA * (perUnit - this.unitMs);
    this.measuredAtMs = this.opts.clock.nowMs();
    this.counters.unitUs = Math.round(this.unitMs * 1000 * 10) / 10;
  }

  /**
   * Hands the slot over to delivery (null when it was not prefetched) and forgets it; an
   * unfinished preparation stops there (the rest of the rows stay unprepared).
   */
  take(slotTimeMs: number): PrefetchedSlot | null {
    for (const [s, st] of this.slots) {
      if (s < slotTimeMs) this.drop(s, st); // passed without being taken (service restarted its read time)
    }
    const st = this.slots.get(slotTimeMs);
    if (!st) return null;
    this.drop(slotTimeMs, st);
    st.taken = true;
    return st;
  }

  /**
   * Prepares the unprepared rows in [from, to) of `items` for a slot being delivered now (units
   * not prepared ahead: over the budget, added after the walk, or a slot that was not
   * prefetched), with the same large reads; not bounded by the budget: the caller passes a block
   * at a time and appends it before the next. Rows whose message cannot be read or converted
   * stay unprepared.
   */
  async prepareNow(slotTimeMs: number, items: PrefetchedItems, from: number, to: number): Promise<void> {
    if (typeof this.opts.store.prepareMessage !== 'function') return;
    let i = from;
    while (i < to && items.isPrepared(i)) i++;
    if (i >= to) return;
    const st: SlotState = { slotTimeMs, lastPos: -1, items, deleteKeys: new Set(), pendingMarkers: [], prepared: 0, bytes: 0, done: i, limit: to, taken: false, atDue: true, waiting: false };
    while (st.done < to) await this.prepareChunkTimed(st);
  }

  /** Forgets everything (shutdown). */
  clear(): void {
    for (const [s, st] of this.slots) this.drop(s, st);
  }

  private drop(s: number, st: SlotState): void {
    this.slots.delete(s);
    this.heldBytes -= st.bytes;
    st.bytes = 0;
  }

  /** The slot's units above `abovePos` (synchronous: the timerlog is read in blocks), deletion markers apart. */
  private unitsAbove(slotTimeMs: number, abovePos: number): { lastPos: number; normal: TimerUnit[]; markers: TimerUnit[] } {
    const lastPos = this.opts.timerStore.wheel.getSlot(slotTimeMs).lastPos;
    const units = this.opts.timerStore.unitsOfSlot(slotTimeMs, abovePos);
    const normal: TimerUnit[] = [];
    const markers: TimerUnit[] = [];
    for (const u of units) {
      if (needDelete(u.magic) && !needRoll(u.magic)) markers.push(u);
      else normal.push(u);
    }
    return { lastPos, normal, markers };
  }

  /** Walks the slot's units into a new state. */
  private walk(slotTimeMs: number): SlotState {
    const { lastPos, normal, markers } = this.unitsAbove(slotTimeMs, -1);
    const bytes = normal.length * ROW_BYTES + markers.length * MARKER_BYTES;
    this.heldBytes += bytes;
    const items = PrefetchedItems.ofUnits(normal);
    return { slotTimeMs, lastPos, items, deleteKeys: new Set(), prepared: 0, bytes, done: 0, limit: Infinity, taken: false, atDue: false, waiting: false, pendingMarkers: markers };
  }

  /** Adds the units linked into the slot after the last walk (positions above `lastPos`). */
  private extend(st: SlotState): void {
    const { lastPos, normal, markers } = this.unitsAbove(st.slotTimeMs, st.lastPos);
    st.lastPos = lastPos;
    st.items.appendUnits(normal);
    for (const u of markers) st.pendingMarkers.push(u);
    const bytes = normal.length * ROW_BYTES + markers.length * MARKER_BYTES;
    st.bytes += bytes;
    this.heldBytes += bytes;
  }

  /** Reads the slot's deletion markers (first step), then prepares the next CHUNK_UNITS rows. */
  private async prepareChunk(st: SlotState): Promise<void> {
    const markers = st.pendingMarkers;
    if (markers.length > 0) {
      for (const u of markers) {
        const marker = await this.opts.store.lookMessageByOffset(u.offsetPy);
        if (st.taken) return; // the taker reads pendingMarkers again
        const key = marker?.properties.get(MessageConst.TIMER_DEL_UNIQKEY);
        if (key) st.deleteKeys.add(key);
      }
      st.pendingMarkers = [];
      return;
    }
    const t = st.items;
    const end = Math.min(t.length, st.limit, st.done + CHUNK_UNITS);
    let i = st.done;
    while (i < end) {
      if (t.isPrepared(i)) {
        i++;
        continue;
      }
      if (!st.atDue && this.heldBytes >= this.opts.maxBytes) {
        this.counters.overBudget += t.length - i;
        st.done = t.length; // the rest is delivered the usual way
        return;
      }
      // one read for a run of contiguous unprepared messages
      let j = i + 1;
      let runBytes = t.sizePy[i]!;
      while (j < end && !t.isPrepared(j) && t.offsetPy[j] === t.offsetPy[j - 1]! + t.sizePy[j - 1]! && runBytes + t.sizePy[j]! <= READ_RUN_BYTES) {
        runBytes += t.sizePy[j]!;
        j++;
      }
      const startPy = t.offsetPy[i]!;
      const run = j - i > 1 ? await this.opts.store.selectOneMessageByOffset(startPy, runBytes) : null;
      if (st.taken) return;
      for (let k = i; k < j; k++) {
        if (!st.atDue && this.heldBytes >= this.opts.maxBytes) {
          this.counters.overBudget += t.length - k;
          st.done = t.length; // the rest is delivered the usual way
          return;
        }
        let m: MessageExt | null = null;
        try {
          m = run ? decodeRecord(run, t.offsetPy[k]! - startPy, { views: true }) /* copied once, into the prepared record */ : await this.opts.store.lookMessageByOffset(t.offsetPy[k]!);
        } catch {
          m = null;
        }
        if (st.taken) return;
        if (m && m.topic === TIMER_TOPIC) this.prepareRow(st, k, m);
      }
      i = j;
    }
    st.done = end;
    if (end < t.length && !st.atDue) await new Promise((r) => setImmediate(r));
  }

  private prepareRow(st: SlotState, i: number, m: MessageExt): void {
    const t = st.items;
    const placeholder = String(st.slotTimeMs + this.precisionMs);
    const roll = needRoll(t.magic[i]!);
    const msg = convert(m, String(t.writeTimeMs[i]!), roll, Number(placeholder));
    if (!msg) return;
    const space = this.space;
    space.lastBlock = null;
    const prepared = this.opts.store.prepareMessage!(msg, space.alloc);
    // refused, or a schedule-topic record (its tags code needs its properties at append): the usual way
    if (!('record' in prepared) || prepared.properties !== undefined || space.lastBlock === null) return;
    const rec = prepared.record;
    const at = rec.lastIndexOf(DEQUEUE_NEEDLE);
    const digitsAt = at + DEQUEUE_NEEDLE.length;
    if (at < 0 || rec.toString('latin1', digitsAt, digitsAt + placeholder.length) !== placeholder) return;
    t.setPrepared(i, prepared, space, digitsAt, placeholder.length);
    if (roll) t.rollRealTopic.set(i, m.properties.get(MessageConst.REAL_TOPIC) ?? '');
    st.prepared++;
    if (st.atDue) {
      this.counters.preparedAtDue++;
      return;
    }
    const bytes = rec.length + PREPARED_OVERHEAD_BYTES;
    st.bytes += bytes;
    this.heldBytes += bytes;
    this.preparedBytesTotal += bytes;
    this.counters.prepared++;
  }
}
