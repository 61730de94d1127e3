/**
 * The timer wheel file `<storePathRootDir>/timerwheel` (Apache `TimerWheel`, byte-compatible).
 *
 * `slotsTotal × 2` slots of 32 bytes (big-endian), slot index = (timeMs / precisionMs) mod
 * (slotsTotal × 2):
 *   0  8  timeMs / precisionMs   (which time the slot currently holds; Apache stores the quotient)
 *   8  8  firstPos               timerlog position of the slot's first unit (-1 none)
 *  16  8  lastPos                timerlog position of the slot's last unit: the list head, walked
 *                                backwards through each unit's prevPos
 *  24  4  num                    pending timers (deletion markers count −1)
 *  28  4  magic                  unused, kept
 * With Apache's slotsTotal = 7 days in seconds the file is 38,707,200 bytes whatever the precision.
 *
 * The whole wheel lives in memory (one Buffer); `flush()` writes the dirty byte range back and
 * fdatasyncs it. A slot whose stored time is not the asked time reads as empty (timeMs −1),
 * as in Apache. The wheel is a cache of the timerlog: recovery rebuilds the slots of units
 * written after the last checkpoint (TimerStore), so a torn wheel write loses nothing.
 */
import type { FileSystem } from '../../common/fs/file-system.js';

export const SLOT_SIZE_BYTES = 32;

export interface Slot {
  /** Start of the slot's time (ms), −1 when the slot is empty for the asked time. */
  timeMs: number;
  firstPos: number;
  lastPos: number;
  num: number;
  magic: number;
}

const EMPTY: Slot = Object.freeze({ timeMs: -1, firstPos: -1, lastPos: -1, num: 0, magic: 0 });

/** Thrown when an existing wheel file has another length than slotsTotal × 2 × 32 (Apache refuses it too). */
export class TimerWheelLengthError extends Error {
  constructor(path: string, actual: number, expected: number) {
    super(`timer wheel ${path} is ${actual} bytes, expected ${expected} (slotsTotal × 2 × 32); was it written with another slotsTotal?`);
    this.name = 'TimerWheelLengthError';
  }
}

/**
 * Thrown when the wheel holds pending timers written under another `timerPrecisionMs`: slot
 * index and slot time are `timeMs / precisionMs`, so under the new precision none of them would
 * ever be found again (Apache's TimerWheel has the same property and strands them silently).
 */
export class TimerPrecisionChangedError extends Error {
  constructor(path: string, readonly writtenPrecisionMs: number, readonly precisionMs: number, readonly pendingTimers: number) {
    super(
      `timer wheel ${path} was written with timerPrecisionMs=${writtenPrecisionMs} and holds ${pendingTimers} pending timer(s); ` +
        `this start has timerPrecisionMs=${precisionMs}, under which they would never be delivered. ` +
        `Start with timerPrecisionMs=${writtenPrecisionMs} until they are delivered (the wheel is rewritten for a new precision once none is pending)`,
    );
    this.name = 'TimerPrecisionChangedError';
  }
}

/** The largest timerPrecisionMs looked for when telling which precision a wheel was written with. */
const MAX_PRECISION_SEARCH_MS = 60_000;

export class TimerWheel {
  readonly lengthBytes: number;
  private readonly buf: Buffer;
  private dirtyFrom = Number.POSITIVE_INFINITY;
  private dirtyTo = 0;

  private constructor(
    readonly path: string,
    readonly slotsTotal: number,
    readonly precisionMs: number,
    private readonly fs: FileSystem,
    private readonly fd: number,
    buf: Buffer,
  ) {
    this.lengthBytes = buf.length;
    this.buf = buf;
  }

  /** Opens or creates the wheel file. @throws TimerWheelLengthError for a file of another size. */
  static open(path: string, slotsTotal: number, precisionMs: number, fs: FileSystem): TimerWheel {
    const lengthBytes = slotsTotal * 2 * SLOT_SIZE_BYTES;
    const exists = fs.exists(path);
    const fd = fs.open(path, exists ? 'r+' : 'w+');
    try {
      const size = fs.fstatSize(fd);
      if (size !== 0 && size !== lengthBytes) throw new TimerWheelLengthError(path, size, lengthBytes);
      const buf = Buffer.alloc(lengthBytes);
      if (size === 0) fs.ftruncate(fd, lengthBytes);
      else for (let at = 0; at < lengthBytes; ) at += fs.pread(fd, buf, at, Math.min(8 << 20, lengthBytes - at), at) || lengthBytes;
      return new TimerWheel(path, slotsTotal, precisionMs, fs, fd, buf);
    } catch (e) {
      fs.close(fd);
      throw e;
    }
  }

  slotIndex(timeMs: number): number {
    return Math.floor(timeMs / this.precisionMs) % (this.slotsTotal * 2);
  }

  /** The slot for `timeMs`, or an empty slot (timeMs −1) when it holds another time. */
  getSlot(timeMs: number): Slot {
    const at = this.slotIndex(timeMs) * SLOT_SIZE_BYTES;
    const q = Math.floor(timeMs / this.precisionMs);
    if (Number(this.buf.readBigInt64BE(at)) !== q) return EMPTY;
    return {
      timeMs: q * this.precisionMs,
      firstPos: Number(this.buf.readBigInt64BE(at + 8)),
      lastPos: Number(this.buf.readBigInt64BE(at + 16)),
      num: this.buf.readInt32BE(at + 24),
      magic: this.buf.readInt32BE(at + 28),
    };
  }

  /** True when the slot of `timeMs` holds that time (cheaper than getSlot). */
  hasSlot(timeMs: number): boolean {
    const at = this.slotIndex(timeMs) * SLOT_SIZE_BYTES;
    return Number(this.buf.readBigInt64BE(at)) === Math.floor(timeMs / this.precisionMs);
  }

  putSlot(timeMs: number, firstPos: number, lastPos: number, num: number, magic: number): void {
    const at = this.slotIndex(timeMs) * SLOT_SIZE_BYTES;
    this.buf.writeBigInt64BE(BigInt(Math.floor(timeMs / this.precisionMs)), at);
    this.buf.writeBigInt64BE(BigInt(firstPos), at + 8);
    this.buf.writeBigInt64BE(BigInt(lastPos), at + 16);
    this.buf.writeInt32BE(num | 0, at + 24);
    this.buf.writeInt32BE(magic | 0, at + 28);
    this.markDirty(at);
  }

  /**
   * Recovery: the unit at `lastPos` (delayed to `timeMs`) is the newest of its slot. When the slot
   * holds another time it is taken over (firstPos = lastPos, num 1), else lastPos is set and num
   * raised by `numDelta` (Apache `reviseSlot(.., IGNORE, lastPos, true)`; Apache leaves num as is).
   */
  reviseSlot(timeMs: number, lastPos: number, numDelta: number): void {
    const s = this.getSlot(timeMs);
    if (s.timeMs === -1) this.putSlot(timeMs, lastPos, lastPos, Math.max(0, numDelta), 0);
    else this.putSlot(timeMs, s.firstPos, lastPos, s.num + numDelta, s.magic);
  }

  /**
   * Sum of `num` over the slots of [fromMs, toMs) (at most one full turn; Apache's
   * rocketmq_timer_message_snapshot walks these per bound).
   */
  countBetween(fromMs: number, toMs: number): number {
    let n = 0;
    const total = this.slotsTotal * 2;
    const start = Math.floor(fromMs / this.precisionMs);
    const end = Math.min(Math.floor(toMs / this.precisionMs), start + total);
    for (let q = start; q < end; q++) {
      const at = (q % total) * SLOT_SIZE_BYTES;
      if (Number(this.buf.readBigInt64BE(at)) === q) n += this.buf.readInt32BE(at + 24);
    }
    return n;
  }

  /** Sum of `num` over the slots from `fromMs` on (one full turn): timers pending in the wheel. */
  countFrom(fromMs: number): number {
    let n = 0;
    const total = this.slotsTotal * 2;
    const start = Math.floor(fromMs / this.precisionMs);
    for (let i = 0; i < total; i++) {
      const q = start + i;
      const at = (q % total) * SLOT_SIZE_BYTES;
      if (Number(this.buf.readBigInt64BE(at)) === q) n += this.buf.readInt32BE(at + 24);
    }
    return n;
  }

  /**
   * Which precision the slot of `timeMs` (the delayed time of a unit the wheel is known to hold)
   * was written with: `precisionMs` when it is found under it, another value in
   * 1..60000 ms under which it is found, or null (not found under any: e.g. a fresh wheel file).
   */
  writtenPrecisionMs(timeMs: number): number | null {
    if (this.hasSlot(timeMs)) return this.precisionMs;
    const total = this.slotsTotal * 2;
    for (let p = 1; p <= MAX_PRECISION_SEARCH_MS; p++) {
      const q = Math.floor(timeMs / p);
      if (q > 0 && Number(this.buf.readBigInt64BE((q % total) * SLOT_SIZE_BYTES)) === q) return p;
    }
    return null;
  }

  /** Timers pending from `fromMs` on (one full turn) as a wheel of `precisionMs` would count them. */
  countFromAs(fromMs: number, precisionMs: number): number {
    let n = 0;
    const total = this.slotsTotal * 2;
    const start = Math.floor(fromMs / precisionMs);
    for (let i = 0; i < total; i++) {
      const q = start + i;
      const at = (q % total) * SLOT_SIZE_BYTES;
      if (Number(this.buf.readBigInt64BE(at)) === q) n += this.buf.readInt32BE(at + 24);
    }
    return n;
  }

  /** Empties every slot (a wheel written under another precision with nothing pending). */
  clear(): void {
    this.buf.fill(0);
    this.markDirty(0);
    this.markDirty(this.buf.length - SLOT_SIZE_BYTES);
  }

  /** Writes the changed bytes back and forces them to the device. */
  async flush(): Promise<void> {
    this.writeDirty();
    await this.sync();
  }

  /** Writes the changed bytes to the page cache (synchronously). */
  writeDirty(): void {
    if (this.dirtyFrom < this.dirtyTo) {
      const from = this.dirtyFrom;
      const to = this.dirtyTo;
      this.dirtyFrom = Number.POSITIVE_INFINITY;
      this.dirtyTo = 0;
      this.fs.pwrite(this.fd, this.buf, from, to - from, from);
    }
  }

  /** Forces the wheel file to the device. */
  sync(): Promise<void> {
    return this.fs.fdatasync(this.fd);
  }

  /** The slots (any time) whose lastPos is at or beyond `endPos`: links into log data that was lost. */
  slotsPointingAtOrBeyond(endPos: number): Array<{ timeMs: number; firstPos: number }> {
    const out: Array<{ timeMs: number; firstPos: number }> = [];
    const total = this.slotsTotal * 2;
    for (let i = 0; i < total; i++) {
      const at = i * SLOT_SIZE_BYTES;
      const q = Number(this.buf.readBigInt64BE(at));
      if (q === 0) continue; // never used
      if (Number(this.buf.readBigInt64BE(at + 16)) >= endPos) out.push({ timeMs: q * this.precisionMs, firstPos: Number(this.buf.readBigInt64BE(at + 8)) });
    }
    return out;
  }


  close(): void {
    this.fs.close(this.fd);
  }

  private markDirty(at: number): void {
    if (at < this.dirtyFrom) this.dirtyFrom = at;
    if (at + SLOT_SIZE_BYTES > this.dirtyTo) this.dirtyTo = at + SLOT_SIZE_BYTES;
  }
}
