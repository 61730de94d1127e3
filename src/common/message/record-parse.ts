/**
 * Structural parser shared by `decodeRecord` and `checkRecord` (spec §1.1, §3.7 steps 1–3, 7).
 * Never throws for bad bytes: returns a reason string instead.
 */
import { bodyCrc as computeBodyCrc } from '../bytes/crc32.js';
import { decodeProperties } from './properties.js';
import { MessageSysFlag } from './sysflag.js';
import {
  BLANK_MAGIC_CODE,
  END_FILE_MIN_BLANK_LENGTH,
  MESSAGE_MAGIC_CODE_V1,
  MESSAGE_MAGIC_CODE_V2,
  MIN_RECORD_SIZE_V1,
  MIN_RECORD_SIZE_V2,
} from './record-layout.js';

const TWO_POW_32 = 4294967296;

/** Reads a big-endian int64 as a JS number (exact up to 2^53). */
export function readLong(buf: Buffer, off: number): number {
  return buf.readInt32BE(off) * TWO_POW_32 + buf.readUInt32BE(off + 4);
}

/** Writes a JS integer as a big-endian int64 (hi/lo int32 pair; exact up to 2^53). */
export function writeLong(buf: Buffer, off: number, v: number): void {
  const hi = Math.floor(v / TWO_POW_32);
  buf.writeInt32BE(hi, off);
  buf.writeUInt32BE(v - hi * TWO_POW_32, off + 4);
}

/** Every field of a structurally valid record, plus where the variable parts are. */
export interface ParsedRecord {
  totalSize: number;
  magic: number;
  bodyCrc: number;
  queueId: number;
  flag: number;
  queueOffset: number;
  physicalOffset: number;
  sysFlag: number;
  bornTimestamp: number;
  /** 8 or 20; the born host starts at record + 48. */
  bornHostWidth: number;
  storeTimestamp: number;
  /** Absolute buffer position of STOREHOSTADDRESS. */
  storeHostPos: number;
  storeHostWidth: number;
  reconsumeTimes: number;
  preparedTransactionOffset: number;
  /** Absolute buffer position of the body bytes. */
  bodyPos: number;
  bodyLen: number;
  topic: string;
  properties: Map<string, string>;
}

function hex32(v: number): string {
  return '0x' + (v >>> 0).toString(16).toUpperCase().padStart(8, '0');
}

/**
 * Parses the record at `at` with `available` readable bytes from there.
 * Returns a reason string when invalid, a number (the filler's TOTALSIZE) for a blank record,
 * or the parsed record.
 */
export function parseRecord(
  buf: Buffer,
  at: number,
  available: number,
  checkCrc: boolean,
  expectedPhysicalOffset: number | undefined,
): ParsedRecord | number | string {
  if (!(at >= 0) || at > buf.length) return `record position ${at} is outside the buffer (${buf.length} bytes)`;
  if (available > buf.length - at) available = buf.length - at;
  if (!(available > 4)) return `torn record: only ${available} bytes left, no room for a TOTALSIZE field`;
  const totalSize = buf.readInt32BE(at);
  if (totalSize > available) return `torn record: TOTALSIZE ${totalSize} but only ${available} bytes available`;
  if (totalSize < END_FILE_MIN_BLANK_LENGTH) {
    return `TOTALSIZE ${totalSize} is below the minimum record size${totalSize === 0 ? ' (zero-filled space)' : ''}`;
  }
  const magic = buf.readInt32BE(at + 4);
  if (magic === BLANK_MAGIC_CODE) return totalSize;
  let tls: number;
  if (magic === MESSAGE_MAGIC_CODE_V1) tls = 1;
  else if (magic === MESSAGE_MAGIC_CODE_V2) tls = 2;
  else return `bad magic code ${hex32(magic)}`;
  if (totalSize < (tls === 1 ? MIN_RECORD_SIZE_V1 : MIN_RECORD_SIZE_V2)) {
    return `TOTALSIZE ${totalSize} is below the minimum record size ${tls === 1 ? MIN_RECORD_SIZE_V1 : MIN_RECORD_SIZE_V2}`;
  }
  const sysFlag = buf.readInt32BE(at + 36);
  const bh = (sysFlag & MessageSysFlag.BORNHOST_V6_FLAG) !== 0 ? 20 : 8;
  const sh = (sysFlag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG) !== 0 ? 20 : 8;
  const fixed = 74 + bh + sh + tls;
  if (totalSize < fixed) return `TOTALSIZE ${totalSize} is below the ${fixed}-byte header implied by SYSFLAG ${hex32(sysFlag)}`;
  const end = at + totalSize;

  let p = at + 48 + bh;
  const storeTimestamp = readLong(buf, p);
  p += 8;
  const storeHostPos = p;
  p += sh;
  const reconsumeTimes = buf.readInt32BE(p);
  const preparedTransactionOffset = readLong(buf, p + 4);
  const bodyLen = buf.readInt32BE(p + 12);
  p += 16;
  if (bodyLen < 0 || p + bodyLen + tls + 2 > end) {
    return `body length ${bodyLen} does not fit in a record of TOTALSIZE ${totalSize}`;
  }
  const bodyPos = p;
  p += bodyLen;
  const topicLen = tls === 1 ? buf.readInt8(p) : buf.readInt16BE(p);
  p += tls;
  if (topicLen < 0 || p + topicLen + 2 > end) {
    return `topic length ${topicLen} does not fit in a record of TOTALSIZE ${totalSize}`;
  }
  const topicPos = p;
  p += topicLen;
  const propsLen = buf.readInt16BE(p);
  p += 2;
  if (propsLen < 0 || p + propsLen > end) {
    return `properties length ${propsLen} does not fit in a record of TOTALSIZE ${totalSize}`;
  }
  const computed = fixed + bodyLen + topicLen + propsLen;
  if (computed !== totalSize) {
    return `TOTALSIZE mismatch: field says ${totalSize}, fields add up to ${computed}`;
  }
  // "Properties complete": writers end properties with \x02 (tsmq, 5.x) or the last value's
  // character (4.x), never a zero byte; zeros there are a write torn inside the properties of the
  // last record of a zero-filled segment, which no length or body CRC check can see.
  if (propsLen > 0 && buf[p + propsLen - 1] === 0) {
    return 'properties end in a zero byte: the record was torn inside its properties';
  }
  const physicalOffset = readLong(buf, at + 28);
  if (expectedPhysicalOffset !== undefined && physicalOffset !== expectedPhysicalOffset) {
    return `PHYSICALOFFSET ${physicalOffset} differs from the record's position ${expectedPhysicalOffset}`;
  }
  const storedCrc = buf.readInt32BE(at + 8);
  if (checkCrc) {
    const actual = computeBodyCrc(buf, bodyPos, bodyPos + bodyLen);
    if (actual !== storedCrc) return `body CRC mismatch: stored ${storedCrc}, computed ${actual}`;
  }
  return {
    totalSize,
    magic,
    bodyCrc: storedCrc,
    queueId: buf.readInt32BE(at + 12),
    flag: buf.readInt32BE(at + 16),
    queueOffset: readLong(buf, at + 20),
    physicalOffset,
    sysFlag,
    bornTimestamp: readLong(buf, at + 40),
    bornHostWidth: bh,
    storeTimestamp,
    storeHostPos,
    storeHostWidth: sh,
    reconsumeTimes,
    preparedTransactionOffset,
    bodyPos,
    bodyLen,
    topic: topicLen === 0 ? '' : buf.toString('utf8', topicPos, topicPos + topicLen),
    properties: propsLen === 0 ? new Map() : decodeProperties(buf.toString('utf8', p, p + propsLen)),
  };
}
