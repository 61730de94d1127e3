/**
 * One timerlog unit: the 52-byte record Apache RocketMQ 5.x writes for every pending timer
 * (`TimerLog.UNIT_SIZE`, `TimerMessageStore.doEnqueue`). All integers big-endian.
 *
 *   off  size  field
 *     0     4  size            always 52
 *     4     8  prevPos         timerlog position of the previous unit of the same slot, -1 for the first
 *    12     4  magic           bit 0 MAGIC_DEFAULT, bit 1 MAGIC_ROLL, bit 2 MAGIC_DELETE
 *    16     8  writeTimeMs     the wheel's write time when the unit was appended (ms, multiple of the precision)
 *    24     4  delayMs         delayed time − writeTimeMs (ms, int32): delayed time = writeTimeMs + delayMs
 *    28     8  offsetPy        CommitLog offset of the message in rmq_sys_wheel_timer
 *    36     4  sizePy          its record size in bytes
 *    40     4  topicHash       Java String.hashCode of REAL_TOPIC (0 when absent)
 *    44     8  reserved        0
 *
 * A segment ends with a blank of 16+ bytes: size = bytes left in the file, prevPos 0,
 * magic BLANK_MAGIC_CODE (Apache `TimerLog.BLANK_MAGIC_CODE`).
 */

export const TIMER_UNIT_SIZE_BYTES = 52;
/** Offset of offsetPy inside a unit (Apache `UNIT_PRE_SIZE_FOR_MSG`). */
export const TIMER_UNIT_PRE_SIZE_FOR_MSG = 28;
/** Smallest blank written at the end of a segment (Apache `MIN_BLANK_LEN`). */
export const TIMER_MIN_BLANK_BYTES = 4 + 8 + 4;
/** Apache: `0xBBCCDDEE ^ 1880681586 + 8` (Java precedence: the sum is taken first). */
export const TIMER_BLANK_MAGIC_CODE = (0xbbccddee ^ (1880681586 + 8)) | 0;

export const MAGIC_DEFAULT = 1;
export const MAGIC_ROLL = 1 << 1;
export const MAGIC_DELETE = 1 << 2;

export interface TimerUnit {
  /** Position of this unit in the timerlog (absolute logical offset). */
  pos: number;
  prevPos: number;
  magic: number;
  writeTimeMs: number;
  /** Absolute delayed time (writeTimeMs + stored delay), ms. */
  delayedTimeMs: number;
  offsetPy: number;
  sizePy: number;
  topicHash: number;
}

/** Apache `isMagicOK`: only the low four bits may be set. */
export function isMagicOk(magic: number): boolean {
  return (magic | 0xf) === 0xf;
}

export function needRoll(magic: number): boolean {
  return (magic & MAGIC_ROLL) !== 0;
}

export function needDelete(magic: number): boolean {
  return (magic & MAGIC_DELETE) !== 0;
}

/** Writes a unit at `buf[at..at+52)`. @throws RangeError when the delay does not fit an int32. */
export function encodeTimerUnit(buf: Buffer, at: number, u: Omit<TimerUnit, 'pos'>): void {
  const delay = u.delayedTimeMs - u.writeTimeMs;
  if (delay > 0x7fffffff || delay < -0x80000000) throw new RangeError(`timer delay ${delay} ms does not fit the unit's int32`);
  buf.writeInt32BE(TIMER_UNIT_SIZE_BYTES, at);
  buf.writeBigInt64BE(BigInt(u.prevPos), at + 4);
  buf.writeInt32BE(u.magic, at + 12);
  buf.writeBigInt64BE(BigInt(u.writeTimeMs), at + 16);
  buf.writeInt32BE(delay, at + 24);
  buf.writeBigInt64BE(BigInt(u.offsetPy), at + 28);
  buf.writeInt32BE(u.sizePy, at + 36);
  buf.writeInt32BE(u.topicHash | 0, at + 40);
  buf.writeBigInt64BE(0n, at + 44);
}

/** Reads the unit at `buf[at..]`; `pos` is its timerlog position. No validation (see isValidUnitAt). */
export function decodeTimerUnit(buf: Buffer, at: number, pos: number): TimerUnit {
  const writeTimeMs = Number(buf.readBigInt64BE(at + 16));
  return {
    pos,
    prevPos: Number(buf.readBigInt64BE(at + 4)),
    magic: buf.readInt32BE(at + 12),
    writeTimeMs,
    delayedTimeMs: writeTimeMs + buf.readInt32BE(at + 24),
    offsetPy: Number(buf.readBigInt64BE(at + 28)),
    sizePy: buf.readInt32BE(at + 36),
    topicHash: buf.readInt32BE(at + 40),
  };
}
