/**
 * PrefetchedItems: the normal (non-deletion) units of one wheel slot and the deliveries prepared
 * for them (timer-prefetch.ts), as a struct of arrays: typed-array columns; per timer only its
 * record's Buffer view and UNIQ_KEY string are objects. A burst of a million timers due in one
 * slot is a million rows; one object per row (the unit, the item, the prepared message) cost ~670
 * bytes of heap per timer on top of its record and made every major GC walk millions of objects.
 * The view is kept (`view`) because making it at due time cost more in the delivery window (GC
 * 25 % of it instead of 9 %, 1 M burst) than the ~100 bytes of heap it holds before.
 *
 * A prepared row's record lies in a block shared with its neighbours (`PreparedRecordBlocks`,
 * 4 MiB each): the row keeps the block's local index, the record's position and size. The strings
 * dispatch needs (topic, TAGS, KEYS, UNIQ_KEY) are kept per row; topic and TAGS are interned, an
 * absent KEYS is the shared ''. `release(i)` forgets a row's record; a block no row of this table
 * uses any more is dropped from it (the GC frees it when no other table holds it either).
 *
 * Rows are built by `appendUnits` (a walk of the slot) and prepared by `setPrepared`; at due
 * time `stamp(i)` writes the delivery time into a row's record and `columns(rows)` hands a block
 * of rows to the store (MessageStore.putPreparedMessages with PreparedColumns: no object per row).
 */
import type { PreparedColumns, PreparedMessage } from '../../store/message-store.js';
import type { TimerUnit } from '../../store/timer/timer-unit.js';

/** Heap held per row (the typed-array columns and string slots), bytes; for the prefetch budget. */
export const ROW_BYTES = 120;

/** Records are carved out of blocks this large (one ArrayBuffer per block, not per record). */
export const RECORD_BLOCK_BYTES = 4 * 1024 * 1024;

/** Hands out the space of records, carved out of shared blocks (see PreparedRecordBlocks). */
export interface RecordSpace {
  /** The block the last `alloc` carved from, and the record's position in it. */
  readonly lastBlock: Buffer | null;
  readonly lastAt: number;
}

/**
 * The `alloc` given to MessageStore.prepareMessage: records back to back in RECORD_BLOCK_BYTES
 * blocks (a record larger than a quarter block gets a block of its own). Keeps no reference to
 * full blocks: the tables whose rows use a block hold it.
 */
export class PreparedRecordBlocks implements RecordSpace {
  lastBlock: Buffer | null = null;
  lastAt = 0;
  private current: Buffer | null = null;
  private used = 0;

  readonly alloc = (size: number): Buffer => {
    if (size > RECORD_BLOCK_BYTES / 4) {
      this.lastBlock = Buffer.allocUnsafeSlow(size);
      this.lastAt = 0;
      return this.lastBlock;
    }
    if (this.current === null || this.used + size > this.current.length) {
      this.current = Buffer.allocUnsafeSlow(RECORD_BLOCK_BYTES);
      this.used = 0;
    }
    this.lastBlock = this.current;
    this.lastAt = this.used;
    this.used += size;
    return this.current.subarray(this.lastAt, this.used);
  };
}

const EMPTY_F64 = new Float64Array(0);
const EMPTY_I32 = new Int32Array(0);
const EMPTY_U8 = new Uint8Array(0);

export class PrefetchedItems {
  length = 0;
  /** Digits of the TIMER_DEQUEUE_MS placeholder of every prepared row (0: none prepared yet). */
  stampLen = 0;
  // the unit (TimerUnit)
  pos = EMPTY_F64;
  prevPos = EMPTY_F64;
  writeTimeMs = EMPTY_F64;
  delayedTimeMs = EMPTY_F64;
  offsetPy = EMPTY_F64;
  sizePy = EMPTY_I32;
  topicHash = EMPTY_I32;
  magic = EMPTY_U8;
  // the prepared record: block −1 = not prepared
  block = EMPTY_I32;
  at = EMPTY_I32;
  size = EMPTY_I32;
  /** Position of the TIMER_DEQUEUE_MS digits within the record. */
  stampAt = EMPTY_I32;
  queueId = EMPTY_I32;
  sysFlag = EMPTY_I32;
  bornTimestamp = EMPTY_F64;
  /** 1 unless the WAIT property is "false". */
  wait = EMPTY_U8;
  topic: string[] = [];
  tags: (string | undefined)[] = [];
  keys: string[] = [];
  uniqKey: (string | null)[] = [];
  /**
   * The record's Buffer view as `prepareMessage` returned it (kept: making a view per record at
   * due time cost ~130 ns and young-generation garbage in the delivery window).
   */
  view: (Buffer | null)[] = [];
  /** REAL_TOPIC of prepared rolls (their record stays on the timer topic), for the recall key. */
  readonly rollRealTopic = new Map<number, string>();

  /** Blocks holding this table's records (null once none of its rows uses it) and their live rows. */
  private readonly blocks: (Buffer | null)[] = [];
  private readonly blockRows: number[] = [];
  private readonly interned = new Map<string, string>();

  static ofUnits(units: readonly TimerUnit[]): PrefetchedItems {
    const t = new PrefetchedItems();
    t.appendUnits(units);
    return t;
  }

  /** Adds unprepared rows for `units`, in order. */
  appendUnits(units: readonly TimerUnit[]): void {
    const base = this.length;
    this.grow(base + units.length);
    for (let k = 0; k < units.length; k++) {
      const u = units[k]!;
      const i = base + k;
      this.pos[i] = u.pos;
      this.prevPos[i] = u.prevPos;
      this.writeTimeMs[i] = u.writeTimeMs;
      this.delayedTimeMs[i] = u.delayedTimeMs;
      this.offsetPy[i] = u.offsetPy;
      this.sizePy[i] = u.sizePy;
      this.topicHash[i] = u.topicHash;
      this.magic[i] = u.magic;
      this.block[i] = -1;
      this.topic.push('');
      this.tags.push(undefined);
      this.keys.push('');
      this.uniqKey.push(null);
      this.view.push(null);
    }
    this.length = base + units.length;
  }

  /** The unit of row `i` (a new object: for the one-by-one path). */
  unit(i: number): TimerUnit {
    return {
      pos: this.pos[i]!,
      prevPos: this.prevPos[i]!,
      magic: this.magic[i]!,
      writeTimeMs: this.writeTimeMs[i]!,
      delayedTimeMs: this.delayedTimeMs[i]!,
      offsetPy: this.offsetPy[i]!,
      sizePy: this.sizePy[i]!,
      topicHash: this.topicHash[i]!,
    };
  }

  isPrepared(i: number): boolean {
    return this.block[i]! >= 0;
  }

  /**
   * Row `i` is prepared: `p` (its record carved by `space` at `space.lastBlock` / `lastAt`) with
   * the TIMER_DEQUEUE_MS digits at `stampAt` within the record, `stampLen` of them.
   */
  setPrepared(i: number, p: PreparedMessage, space: RecordSpace, stampAt: number, stampLen: number): void {
    const buf = space.lastBlock!;
    let b = this.blocks.length - 1;
    if (b < 0 || this.blocks[b] !== buf) {
      b = this.blocks.indexOf(buf); // records of one table are carved mostly in order: rarely searched
      if (b < 0) {
        b = this.blocks.length;
        this.blocks.push(buf);
        this.blockRows.push(0);
      }
    }
    this.blockRows[b]!++;
    this.block[i] = b;
    this.at[i] = space.lastAt;
    this.size[i] = p.record.length;
    this.stampAt[i] = stampAt;
    this.stampLen = stampLen;
    this.queueId[i] = p.queueId;
    this.sysFlag[i] = p.sysFlag;
    this.bornTimestamp[i] = p.bornTimestamp;
    this.wait[i] = p.waitStoreMsgOK ? 1 : 0;
    this.topic[i] = this.intern(p.topic);
    this.tags[i] = p.tags === undefined ? undefined : this.intern(p.tags);
    this.keys[i] = p.keys === '' ? '' : p.keys;
    this.uniqKey[i] = p.uniqKey;
    this.view[i] = p.record;
  }

  /**
   * Writes `nowDigits` (the delivery time's decimal digits, latin1) over the TIMER_DEQUEUE_MS
   * placeholder of prepared row `i`; false when the digit count differs or the row has no
   * record (deliver it the usual way). The row is then appended as it is, straight from the
   * columns (`columns`).
   */
  stamp(i: number, nowDigits: Uint8Array): boolean {
    const b = this.block[i]!;
    const buf = b < 0 ? null : this.blocks[b];
    const n = nowDigits.length;
    if (!buf || n !== this.stampLen || this.view[i] === null) return false;
    const d = this.at[i]! + this.stampAt[i]!;
    for (let k = 0; k < n; k++) buf[d + k] = nowDigits[k]!;
    return true;
  }

  /**
   * Rows `rows[0..count)` (stamped, with their record) as the store's PreparedColumns: no object
   * per row (read by putPreparedMessages during its call only).
   */
  columns(rows: Int32Array, count: number): PreparedColumns {
    return {
      count,
      rows,
      view: this.view,
      topic: this.topic,
      queueId: this.queueId,
      sysFlag: this.sysFlag,
      bornTimestamp: this.bornTimestamp,
      tags: this.tags,
      keys: this.keys,
      uniqKey: this.uniqKey,
      wait: this.wait,
    };
  }

  /** preparedMessage of stamped row `i` (tests and diagnostics; delivery uses `columns`). */
  preparedMessage(i: number, nowDigits: Uint8Array): PreparedMessage | null {
    if (!this.stamp(i, nowDigits)) return null;
    const buf = this.blocks[this.block[i]!]!;
    const at = this.at[i]!;
    return {
      record: this.view[i] ?? buf.subarray(at, at + this.size[i]!),
      topic: this.topic[i]!,
      queueId: this.queueId[i]!,
      sysFlag: this.sysFlag[i]!,
      bornTimestamp: this.bornTimestamp[i]!,
      tags: this.tags[i],
      keys: this.keys[i]!,
      uniqKey: this.uniqKey[i]!,
      waitStoreMsgOK: this.wait[i] === 1,
    };
  }

  /** The record of prepared row `i` (a view; tests and diagnostics). */
  record(i: number): Buffer | null {
    const buf = this.isPrepared(i) ? this.blocks[this.block[i]!] : null;
    return buf ? buf.subarray(this.at[i]!, this.at[i]! + this.size[i]!) : null;
  }

  /** "<REAL_TOPIC>+<UNIQ_KEY>" of prepared row `i` (what a deletion marker's TIMER_DEL_UNIQKEY names), null without UNIQ_KEY. */
  recallKey(i: number): string | null {
    const uniq = this.uniqKey[i];
    if (!this.isPrepared(i) || uniq === null || uniq === undefined) return null;
    return `${this.rollRealTopic.get(i) ?? this.topic[i]}+${uniq}`;
  }

  /** Forgets the record of row `i` (delivered, recalled or handed to the one-by-one path). */
  release(i: number): void {
    const b = this.block[i]!;
    if (b < 0) return;
    this.block[i] = -1;
    this.uniqKey[i] = null;
    this.keys[i] = '';
    this.view[i] = null;
    if (--this.blockRows[b]! === 0) this.blocks[b] = null;
  }

  private intern(s: string): string {
    const known = this.interned.get(s);
    if (known !== undefined) return known;
    if (this.interned.size < 4096) this.interned.set(s, s);
    return s;
  }

  private grow(n: number): void {
    if (n <= this.pos.length) return;
    const cap = Math.max(n, this.pos.length * 2, 16);
    const f64 = (a: Float64Array) => {
      const b = new Float64Array(cap);
      b.set(a.subarray(0, this.length));
      return b;
    };
    const i32 = (a: Int32Array) => {
      const b = new Int32Array(cap);
      b.set(a.subarray(0, this.length));
      return b;
    };
    const u8 = (a: Uint8Array) => {
      const b = new Uint8Array(cap);
      b.set(a.subarray(0, this.length));
      return b;
    };
    this.pos = f64(this.pos);
    this.prevPos = f64(this.prevPos);
    this.writeTimeMs = f64(this.writeTimeMs);
    this.delayedTimeMs = f64(this.delayedTimeMs);
    this.offsetPy = f64(this.offsetPy);
    this.sizePy = i32(this.sizePy);
    this.topicHash = i32(this.topicHash);
    this.magic = u8(this.magic);
    this.block = i32(this.block);
    this.at = i32(this.at);
    this.size = i32(this.size);
    this.stampAt = i32(this.stampAt);
    this.queueId = i32(this.queueId);
    this.sysFlag = i32(this.sysFlag);
    this.bornTimestamp = f64(this.bornTimestamp);
    this.wait = u8(this.wait);
  }
}
