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
 * append (`stampDequeueTime`).
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
import type { MessageStore, PreparedMessage } from '../../store/message-store.js';
import type { TimerStore } from '../../store/timer/timer-store.js';
import { needDelete, needRoll, type TimerUnit } from '../../store/timer/timer-unit.js';
import { TIMER_TOPIC } from './timer-put-hook.js';
import { convert } from './timer-conversion.js';

/** Units handled between two yields to the event loop. */
const CHUNK_UNITS = 2048;
/** Largest single CommitLog read (bytes). */
const READ_RUN_BYTES = 4 * 1024 * 1024;
/** Heap estimate per unit kept (TimerUnit + bookkeeping) and per prepared record beyond its bytes (properties map, strings). */
const UNIT_OVERHEAD_BYTES = 96;
const PREPARED_OVERHEAD_BYTES = 480;
/** Prepared records are carved out of blocks this large (one ArrayBuffer per block, not per record). */
const SLAB_BYTES = 4 * 1024 * 1024;
const DEQUEUE_NEEDLE = Buffer.from(`${MessageConst.TIMER_DEQUEUE_MS}\u0001`, 'latin1');

/** One normal (non-deletion) unit of a prefetched slot. */
export interface PrefetchedItem {
  unit: TimerUnit;
  /** The record to append, or null: deliver the usual way. */
  prepared: PreparedMessage | null;
  /** REAL_TOPIC of a prepared roll (its record stays on the timer topic), for its recall key; else null. */
  rollRealTopic: string | null;
  /** Position of the TIMER_DEQUEUE_MS digits in `prepared.record`, and their count. */
  stampAt: number;
  stampLen: number;
}

/** What `take` hands over: the slot's units as walked, oldest first. */
export interface PrefetchedSlot {
  slotTimeMs: number;
  /** The slot's lastPos at the walk; units above it were added later. */
  lastPos: number;
  items: PrefetchedItem[];
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
  /** Items examined so far (prepared or given up). */
  done: number;
  taken: boolean;
  /** Prepared at due time (prepareNow): outside the budget, nothing held afterwards. */
  atDue: boolean;
}

export class TimerPrefetch {
  private readonly slots = new Map<number, SlotState>();
  private heldBytes = 0;
  private readonly precisionMs: number;
  /** Counters for stats and tests. */
  readonly counters = { slots: 0, prepared: 0, overBudget: 0, busyMs: 0, preparedAtDue: 0 };

  private slab: Buffer | null = null;
  private slabUsed = 0;
  /** Hands out `size` bytes of the current slab (a new one when it is full); 8-byte aligned. */
  private readonly alloc = (size: number): Buffer => {
    if (size > SLAB_BYTES / 4) return Buffer.allocUnsafeSlow(size);
    if (!this.slab || this.slabUsed + size > this.slab.length) {
      this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      this.slabUsed = 0;
    }
    const b = this.slab.subarray(this.slabUsed, this.slabUsed + size);
    this.slabUsed += size; // records prepared one after the other lie back to back
    return b;
  };

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
    for (let s = first; s <= last; s += p) {
      if (this.heldBytes >= this.opts.maxBytes) return 50;
      let st = this.slots.get(s);
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
        return 0;
      }
      const t0 = performance.now();
      await this.prepareChunk(st);
      this.counters.busyMs += performance.now() - t0;
      return 0;
    }
    return Math.min(200, Math.max(1, p - (now % p)));
  }

  /**
   * Hands the slot over to delivery (null when it was not prefetched) and forgets it; an
   * unfinished preparation stops there (the rest of the items stay unprepared).
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
   * Prepares `items` of a slot being delivered now (units not prepared ahead: over the budget,
   * added after the walk, or a slot that was not prefetched), with the same large reads; not
   * bounded by the budget: the caller passes a block at a time and appends it before the next.
   * Items whose message cannot be read or converted stay unprepared.
   */
  async prepareNow(slotTimeMs: number, items: PrefetchedItem[]): Promise<void> {
    if (typeof this.opts.store.prepareMessage !== 'function') return;
    const st: SlotState = { slotTimeMs, lastPos: -1, items, deleteKeys: new Set(), pendingMarkers: [], prepared: 0, bytes: 0, done: 0, taken: false, atDue: true };
    while (st.done < items.length) await this.prepareChunk(st);
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

  /** Walks the slot's units (synchronous: the timerlog is read in blocks) and sorts out deletion markers. */
  private walk(slotTimeMs: number, abovePos = -1): SlotState {
    const lastPos = this.opts.timerStore.wheel.getSlot(slotTimeMs).lastPos;
    const units = this.opts.timerStore.unitsOfSlot(slotTimeMs, abovePos);
    const items: PrefetchedItem[] = [];
    const markers: TimerUnit[] = [];
    for (const u of units) {
      if (needDelete(u.magic) && !needRoll(u.magic)) markers.push(u);
      else items.push({ unit: u, prepared: null, rollRealTopic: null, stampAt: -1, stampLen: 0 });
    }
    const bytes = units.length * UNIT_OVERHEAD_BYTES;
    this.heldBytes += bytes;
    return { slotTimeMs, lastPos, items, deleteKeys: new Set(), prepared: 0, bytes, done: 0, taken: false, atDue: false, pendingMarkers: markers };
  }

  /** Adds the units linked into the slot after the last walk (positions above `lastPos`). */
  private extend(st: SlotState): void {
    const more = this.walk(st.slotTimeMs, st.lastPos);
    st.lastPos = more.lastPos;
    for (const it of more.items) st.items.push(it);
    for (const u of more.pendingMarkers) st.pendingMarkers.push(u);
    st.bytes += more.bytes;
  }

  /** Reads the slot's deletion markers (first step), then prepares the next CHUNK_UNITS items. */
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
    const end = Math.min(st.items.length, st.done + CHUNK_UNITS);
    let i = st.done;
    while (i < end) {
      if (!st.atDue && this.heldBytes >= this.opts.maxBytes) {
        this.counters.overBudget += st.items.length - i;
        st.done = st.items.length; // the rest is delivered the usual way
        return;
      }
      // one read for a run of contiguous messages
      let j = i + 1;
      let runBytes = st.items[i]!.unit.sizePy;
      while (j < end) {
        const prev = st.items[j - 1]!.unit;
        const u = st.items[j]!.unit;
        if (u.offsetPy !== prev.offsetPy + prev.sizePy || runBytes + u.sizePy > READ_RUN_BYTES) break;
        runBytes += u.sizePy;
        j++;
      }
      const startPy = st.items[i]!.unit.offsetPy;
      const run = j - i > 1 ? await this.opts.store.selectOneMessageByOffset(startPy, runBytes) : null;
      if (st.taken) return;
      for (let k = i; k < j; k++) {
        const item = st.items[k]!;
        if (!st.atDue && this.heldBytes >= this.opts.maxBytes) {
          this.counters.overBudget += st.items.length - k;
          st.done = st.items.length; // the rest is delivered the usual way
          return;
        }
        let m: MessageExt | null = null;
        try {
          m = run ? decodeRecord(run, item.unit.offsetPy - startPy, { views: true }) /* copied once, into the prepared record */ : await this.opts.store.lookMessageByOffset(item.unit.offsetPy);
        } catch {
          m = null;
        }
        if (st.taken) return;
        if (m && m.topic === TIMER_TOPIC) this.prepareItem(st, item, m);
      }
      i = j;
    }
    st.done = end;
    if (end < st.items.length && !st.atDue) await new Promise((r) => setImmediate(r));
  }

  private prepareItem(st: SlotState, item: PrefetchedItem, m: MessageExt): void {
    const placeholder = String(st.slotTimeMs + this.precisionMs);
    const roll = needRoll(item.unit.magic);
    const msg = convert(m, String(item.unit.writeTimeMs), roll, Number(placeholder));
    if (!msg) return;
    const prepared = this.opts.store.prepareMessage!(msg, this.alloc);
    if (!('record' in prepared)) return;
    const rec = prepared.record;
    const at = rec.lastIndexOf(DEQUEUE_NEEDLE);
    const digitsAt = at + DEQUEUE_NEEDLE.length;
    if (at < 0 || rec.toString('latin1', digitsAt, digitsAt + placeholder.length) !== placeholder) return;
    item.prepared = prepared;
    item.stampAt = digitsAt;
    item.stampLen = placeholder.length;
    if (roll) item.rollRealTopic = m.properties.get(MessageConst.REAL_TOPIC) ?? '';
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

/** "<REAL_TOPIC>+<UNIQ_KEY>" of a prepared item (what a deletion marker's TIMER_DEL_UNIQKEY names), null without UNIQ_KEY. */
export function recallKeyOf(item: PrefetchedItem): string | null {
  const p = item.prepared;
  if (!p || p.uniqKey === null) return null;
  return `${item.rollRealTopic ?? p.topic}+${p.uniqKey}`;
}

/**
 * Writes `nowMs` over the TIMER_DEQUEUE_MS placeholder of a prepared item; false when its digit
 * count differs (then the item must be delivered the usual way).
 */
export function stampDequeueTime(item: PrefetchedItem, nowText: string): boolean {
  if (!item.prepared || nowText.length !== item.stampLen) return false;
  item.prepared.record.write(nowText, item.stampAt, item.stampLen, 'latin1');
  return true;
}
