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
 * A slot too large to be prepared within the window starts earlier: when it is due within
 * windowMs + EARLY_START_SAFETY × its units × the time per prepared unit, at most
 * MAX_EARLY_LEAD_MS ahead. The time per unit is measured (busy time of the prefetch loop per
 * unit prepared, once 10,000 were; `TimerPrefetch.defaultUnitMs` before) but held within
 * [UNIT_MS_MIN, UNIT_MS_MAX]: the busy time includes the awaited CommitLog reads, during which
 * the puts run, so on a busy broker it overstates the prefetch's own cost several times (70 µs
 * per unit measured at load 20 against ~13 µs on a quieter machine) and would start the prefetch
 * of a burst while its timers are still being put, slowing the puts down.
 */
const EARLY_START_SAFETY = 2;
const MAX_EARLY_LEAD_MS = 5 * 60_000;
const UNIT_MS_MIN = 0.01;
const UNIT_MS_MAX = 0.03;

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
}

export class TimerPrefetch {
  private readonly slots = new Map<number, SlotState>();
  private heldBytes = 0;
  private readonly precisionMs: number;
  /** Counters for stats and tests. */
  readonly counters = { slots: 0, prepared: 0, overBudget: 0, busyMs: 0, preparedAtDue: 0, startedEarly: 0 };
  private readonly space = new PreparedRecordBlocks();
  /** Time to prepare one unit (ms) assumed until 10,000 were measured (early start of large slots); tests raise it. */
  defaultUnitMs = 0.02;

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
    const first = Math.max(readTimeMs, Math.floor(now / p) * p); // the slot ending after now (not due yet)
    const last = now + this.opts.windowMs - p; // a slot is due at its start + p
    const lastEarly = now + this.opts.windowMs + MAX_EARLY_LEAD_MS - p;
    for (let s = first; s <= lastEarly; s += p) {
      if (this.heldBytes >= this.opts.maxBytes) return 50;
      let st = this.slots.get(s);
      if (s > last && st === undefined && !this.startsEarly(s, now)) continue;
      if (st && !st.taken && st.done >= st.items.length && st.pendingMarkers.length === 0 && this.opts.timerStore.wheel.getSlot(s).lastPos > st.lastPos) {
        this.extend(st); // units added since the walk
      }
      if (st && (st.taken || (st.done >= st.items.length && st.pendingMarkers.length === 0))) continue;
      if (!st) {
        if (!this.opts.timerStore.wheel.hasSlot(s)) continue;
        const t0 = performance.now();
        st = this.walk(s);
        this.counters.busyMs += performance.now() - t0;
        this.slots.set(s, st);
        this.counters.slots++;
        if (s > last) this.counters.startedEarly++;
        return 0;
      }
      const t0 = performance.now();
      await this.prepareChunk(st);
      this.counters.busyMs += performance.now() - t0;
      return 0;
    }
    return Math.min(200, Math.max(1, p - (now % p)));
  }

  /** Whether slot `s`, beyond the window, is large enough to start now (see EARLY_START_SAFETY). */
  private startsEarly(s: number, now: number): boolean {
    if (!this.opts.timerStore.wheel.hasSlot(s)) return false;
    const units = this.opts.timerStore.wheel.getSlot(s).num;
    const c = this.counters;
    const unitMs = c.prepared >= 10_000 ? Math.min(UNIT_MS_MAX, Math.max(UNIT_MS_MIN, c.busyMs / c.prepared)) : this.defaultUnitMs;
    return s + this.precisionMs - now <= this.opts.windowMs + EARLY_START_SAFETY * units * unitMs;
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
    const st: SlotState = { slotTimeMs, lastPos: -1, items, deleteKeys: new Set(), pendingMarkers: [], prepared: 0, bytes: 0, done: i, limit: to, taken: false, atDue: true };
    while (st.done < to) await this.prepareChunk(st);
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
    return { slotTimeMs, lastPos, items, deleteKeys: new Set(), prepared: 0, bytes, done: 0, limit: Infinity, taken: false, atDue: false, pendingMarkers: markers };
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
    this.counters.prepared++;
  }
}
