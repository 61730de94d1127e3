/**
 * CommitLog record codec (spec §1, §3.7). Mirrors RocketMQ's `MessageExtEncoder` (encode),
 * `CommitLog.DefaultAppendMessageCallback` (patching at append, blank filler),
 * `MessageDecoder.decode` and `CommitLog.checkMessageAndReturnSize` (validation + dispatch).
 *
 * Record layout (big-endian; offsets for IPv4 born and store hosts, each IPv6 host adds 12 to
 * every later field):
 *
 *   0 TOTALSIZE int | 4 MAGICCODE int | 8 BODYCRC int | 12 QUEUEID int | 16 FLAG int
 *   20 QUEUEOFFSET long | 28 PHYSICALOFFSET long | 36 SYSFLAG int | 40 BORNTIMESTAMP long
 *   48 BORNHOST 8|20 (ip 4|16 + port int) | 56 STORETIMESTAMP long (68 with IPv6 born host)
 *   64 STOREHOSTADDRESS 8|20 | 72 RECONSUMETIMES int | 76 PREPARED TX OFFSET long
 *   84 BODY len int + bytes | TOPIC len (V1: signed byte, V2: short) + UTF-8
 *   PROPERTIES len short + UTF-8 (`name\x01value\x02`…)
 *
 *   TOTALSIZE = 74 + BH + SH + TLS + bodyLen + topicLen + propertiesLen
 *
 * int64 fields are JS numbers written as hi/lo int32 pairs (exact up to 2^53).
 */
import type { MessageExt, MessageInner, SocketAddress } from './message.js';
import { bodyCrc } from '../bytes/crc32.js';
import { propertiesByteLength, writeProperties } from './properties.js';
import { createMessageId } from './msgid.js';
import { MessageSysFlag } from './sysflag.js';
import { TsmqError } from '../errors.js';
import { parseRecord, readLong, writeLong, type ParsedRecord } from './record-parse.js';

export { checkRecord, type DispatchRequest, type RecordCheck, type CheckRecordOptions } from './record-check.js';
export { readLong, writeLong } from './record-parse.js';
export * from './record-layout.js';
import {
  BLANK_MAGIC_CODE,
  MAX_PROPERTIES_LENGTH,
  MAX_TOPIC_LENGTH,
  MESSAGE_MAGIC_CODE_V1,
  MESSAGE_MAGIC_CODE_V2,
  END_FILE_MIN_BLANK_LENGTH,
  PHY_POS_POSITION,
  QUEUE_OFFSET_POSITION,
  SYSFLAG_POSITION,
  TOTALSIZE_POSITION,
  MAGIC_POSITION,
  storeTimestampPosition,
} from './record-layout.js';

/** Why encoding was refused; `status` is the RocketMQ put status the broker should report. */
export class RecordEncodeError extends TsmqError {
  readonly status: 'MESSAGE_ILLEGAL' | 'PROPERTIES_SIZE_EXCEEDED';
  constructor(status: 'MESSAGE_ILLEGAL' | 'PROPERTIES_SIZE_EXCEEDED', message: string) {
    super(status, message);
    this.status = status;
  }
}

/** A record that cannot be decoded; `reason` says which check failed. */
export class RecordDecodeError extends TsmqError {
  readonly reason: string;
  readonly at: number;
  constructor(reason: string, at: number) {
    super('RECORD_INVALID', `invalid CommitLog record at buffer position ${at}: ${reason}`);
    this.reason = reason;
    this.at = at;
  }
}

/** TOTALSIZE of a record (§1.2): 74 + BH + SH + TLS + body + topic + properties. */
export function recordSize(
  bodyLength: number,
  topicLength: number,
  propertiesLength: number,
  sysFlag: number,
  version: 1 | 2 = 1,
): number {
  const bh = (sysFlag & MessageSysFlag.BORNHOST_V6_FLAG) !== 0 ? 20 : 8;
  const sh = (sysFlag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG) !== 0 ? 20 : 8;
  return 74 + bh + sh + (version === 2 ? 2 : 1) + bodyLength + topicLength + propertiesLength;
}

function hostWidth(host: SocketAddress, what: string): number {
  const n = host?.ip?.length;
  if (n !== 4 && n !== 16) {
    throw new RecordEncodeError('MESSAGE_ILLEGAL', `${what} address must have 4 or 16 bytes, got ${String(n)}`);
  }
  return n + 4;
}

function assertLong(v: number, what: string): void {
  if (!Number.isSafeInteger(v)) throw new RecordEncodeError('MESSAGE_ILLEGAL', `${what} ${v} is not a safe integer`);
}

/**
 * What `writeRecord` needs to lay out one record, computed (and validated) before any byte is
 * written: the exact TOTALSIZE is known here, so the CommitLog can decide where the record goes
 * (this segment or, after the blank filler, the next one) and then encode it in place.
 * Reusable: `planRecord(msg, opts, plan)` overwrites every field of `plan`.
 */
export interface RecordPlan {
  msg: MessageInner;
  /** TOTALSIZE. */
  size: number;
  version: 1 | 2;
  /** SYSFLAG as stored (IPv6 host bits from the address lengths). */
  sysFlag: number;
  /** Born/store host field widths: 8 (IPv4) or 20 (IPv6). */
  bornHostWidth: number;
  storeHostWidth: number;
  topicLen: number;
  /** UTF-8 bytes of the topic (shared, cached per topic: never modify). */
  topicBytes: Buffer;
  /** MessageInner.encodedProperties when set, else '' (then the text is in `propsBytes`). */
  propsText: string;
  /**
   * When the message has no encodedProperties: the UTF-8 text of its properties Map at
   * `[0, propsTextLen)`, written by planRecord straight from the Map (properties.ts
   * writeProperties, no intermediate string). The plan's own buffer, reused by the next plan.
   */
  propsBytes: Buffer;
  /** Whether the text is in propsBytes (else propsText). */
  propsFromMap: boolean;
  /** UTF-8 bytes of the properties text. */
  propsTextLen: number;
  /** Stored after propsText (MessageInner.encodedPropertiesTail; '' when none). */
  propsTail: string;
  /** PROPERTIES length: propsTextLen + UTF-8 bytes of propsTail. */
  propsLen: number;
}

/** Placeholder topic bytes of a blank plan (planRecord replaces them; shared, never written). */
const NO_TOPIC_BYTES = Buffer.alloc(0);
/** A blank plan's properties buffer (planRecord gives the plan its own when it first needs one). */
const NO_PROPS_BYTES = Buffer.alloc(0);
/** First size of a plan's properties buffer (worst case of ~170 UTF-16 units; grown when a message needs more). */
const PROPS_BYTES_INITIAL = 512;

/**
 * Writes the text of `props` into `plan.propsBytes` (given or grown as needed) and returns its
 * byte length; PROPERTIES_SIZE_EXCEEDED when it is over the limit.
 */
function planMapProperties(plan: RecordPlan, props: Map<string, string>): number {
  if (plan.propsBytes.length === 0) plan.propsBytes = Buffer.allocUnsafe(PROPS_BYTES_INITIAL);
  let n = writeProperties(plan.propsBytes, 0, props);
  if (n >= 0) return n;
  n = propertiesByteLength(props);
  if (n > MAX_PROPERTIES_LENGTH) throw new RecordEncodeError('PROPERTIES_SIZE_EXCEEDED', `properties are ${n} bytes, the limit is ${MAX_PROPERTIES_LENGTH}`);
  // room for the worst case of this text (writeProperties checks 3 bytes per UTF-16 unit)
  plan.propsBytes = Buffer.allocUnsafe(Math.max(2 * plan.propsBytes.length, 3 * n + 8));
  n = writeProperties(plan.propsBytes, 0, props);
  if (n < 0) throw new Error('properties text does not fit the buffer sized for it');
  return n;
}

/** A fresh, blank plan object for `planRecord`'s third argument. */
export function newRecordPlan(): RecordPlan {
  return {
    msg: null as unknown as MessageInner,
    size: 0,
    version: 1,
    sysFlag: 0,
    bornHostWidth: 8,
    storeHostWidth: 8,
    topicLen: 0,
    topicBytes: NO_TOPIC_BYTES,
    propsText: '',
    propsBytes: NO_PROPS_BYTES,
    propsFromMap: false,
    propsTextLen: 0,
    propsTail: '',
    propsLen: 0,
  };
}

/** Topic → UTF-8 bytes; topics are few, so the cache is small (cleared when it reaches the cap). */
const topicCache = new Map<string, Buffer>();
const TOPIC_CACHE_MAX = 4096;

/** UTF-8 bytes of `topic`, cached (shared: never modify). */
export function cachedTopicBytes(topic: string): Buffer {
  let b = topicCache.get(topic);
  if (b === undefined) {
    if (topicCache.size >= TOPIC_CACHE_MAX) topicCache.clear();
    b = Buffer.from(topic, 'utf8');
    topicCache.set(topic, b);
  }
  return b;
}

/**
 * Validates a message for encoding and computes its layout (see `encodeRecord` for the rules).
 * @throws RecordEncodeError as `encodeRecord`.
 */
export function planRecord(msg: MessageInner, opts?: { version?: 1 | 2 }, plan: RecordPlan = newRecordPlan()): RecordPlan {
  const topic = msg.topic;
  if (typeof topic !== 'string') throw new RecordEncodeError('MESSAGE_ILLEGAL', 'topic is missing');
  const tb = cachedTopicBytes(topic);
  const topicLen = tb.length;
  if (topicLen > MAX_TOPIC_LENGTH) {
    throw new RecordEncodeError('MESSAGE_ILLEGAL', `topic is too long: ${topicLen} bytes, the limit is ${MAX_TOPIC_LENGTH}`);
  }
  const body = msg.body;
  if (!Buffer.isBuffer(body)) throw new RecordEncodeError('MESSAGE_ILLEGAL', 'message body is missing');
  const encoded = msg.encodedProperties;
  const propsText = encoded ?? '';
  const propsFromMap = encoded === undefined;
  const propsTail = propsFromMap ? '' : (msg.encodedPropertiesTail ?? '');
  const propsTextLen = propsFromMap ? planMapProperties(plan, msg.properties) : propsText.length === 0 ? 0 : Buffer.byteLength(propsText, 'utf8');
  const propsLen = propsTail.length === 0 ? propsTextLen : propsTextLen + Buffer.byteLength(propsTail, 'utf8');
  if (propsLen > MAX_PROPERTIES_LENGTH) {
    throw new RecordEncodeError(
      'PROPERTIES_SIZE_EXCEEDED',
      `properties are ${propsLen} bytes, the limit is ${MAX_PROPERTIES_LENGTH}`,
    );
  }
  assertLong(msg.bornTimestamp, 'born timestamp');
  assertLong(msg.preparedTransactionOffset, 'prepared transaction offset');
  const bh = hostWidth(msg.bornHost, 'born host');
  const sh = hostWidth(msg.storeHost, 'store host');
  const version = opts?.version === 2 || topicLen > 127 ? 2 : 1;
  let sysFlag = msg.sysFlag & ~(MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG);
  if (bh === 20) sysFlag |= MessageSysFlag.BORNHOST_V6_FLAG;
  if (sh === 20) sysFlag |= MessageSysFlag.STOREHOSTADDRESS_V6_FLAG;
  plan.msg = msg;
  plan.size = 74 + bh + sh + version + body.length + topicLen + propsLen;
  plan.version = version;
  plan.sysFlag = sysFlag;
  plan.bornHostWidth = bh;
  plan.storeHostWidth = sh;
  plan.topicLen = topicLen;
  plan.topicBytes = tb;
  plan.propsText = propsText;
  plan.propsFromMap = propsFromMap;
  plan.propsTextLen = propsTextLen;
  plan.propsTail = propsTail;
  plan.propsLen = propsLen;
  return plan;
}

/** Big-endian int32 without Buffer's argument checks (positions are computed, not user input). */
export function w32(b: Buffer, p: number, v: number): void {
  b[p] = v >>> 24;
  b[p + 1] = v >>> 16;
  b[p + 2] = v >>> 8;
  b[p + 3] = v;
}

/** Big-endian int64 from a safe-integer JS number (hi/lo pair; negative values in two's complement). */
export function w64(b: Buffer, p: number, v: number): void {
  const hi = Math.floor(v / 4294967296);
  w32(b, p, hi | 0);
  w32(b, p + 4, (v - hi * 4294967296) >>> 0);
}

/** Copies `len` bytes of `src` to `buf[p, p + len)` byte by byte (cheaper than a native call for a host address or topic). */
function copyShort(buf: Buffer, p: number, src: Uint8Array, len: number): void {
  for (let i = 0; i < len; i++) buf[p + i] = src[i]!;
}

/** Buffer's own text writers, without `write`'s argument normalisation (Node's Buffer.prototype.latin1Write / utf8Write). */
interface TextWriters {
  latin1Write(text: string, offset: number, length: number): number;
  utf8Write(text: string, offset: number, length: number): number;
}

/**
 * Writes `text`, whose UTF-8 form is `byteLength` bytes, at `buf[p]`; returns `byteLength`.
 * When the UTF-8 length equals the UTF-16 length every character is ASCII, and the Latin-1
 * writer yields the same bytes.
 */
function writeText(buf: Buffer, p: number, text: string, byteLength: number): number {
  const w = buf as unknown as TextWriters;
  return byteLength === text.length ? w.latin1Write(text, p, byteLength) : w.utf8Write(text, p, byteLength);
}

/**
 * Writes the record planned by `planRecord` at `buf[at, at + plan.size)`, computing BODYCRC and
 * filling QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP with the given values.
 * @throws RangeError when the record does not fit in `buf`.
 */
export function writeRecord(buf: Buffer, at: number, plan: RecordPlan, queueOffset: number, physicalOffset: number, storeTimestamp: number): void {
  const size = plan.size;
  if (at < 0 || at + size > buf.length) throw new RangeError(`writeRecord: ${size} bytes at ${at} do not fit in ${buf.length} bytes`);
  const msg = plan.msg;
  const body = msg.body;
  const bh = plan.bornHostWidth;
  const sh = plan.storeHostWidth;
  w32(buf, at, size);
  w32(buf, at + 4, plan.version === 2 ? MESSAGE_MAGIC_CODE_V2 : MESSAGE_MAGIC_CODE_V1);
  w32(buf, at + 8, bodyCrc(body));
  w32(buf, at + 12, msg.queueId | 0);
  w32(buf, at + 16, msg.flag | 0);
  w64(buf, at + 20, queueOffset);
  w64(buf, at + 28, physicalOffset);
  w32(buf, at + 36, plan.sysFlag | 0);
  w64(buf, at + 40, msg.bornTimestamp);
  let p = at + 48;
  copyShort(buf, p, msg.bornHost.ip, bh - 4);
  w32(buf, p + bh - 4, msg.bornHost.port | 0);
  p += bh;
  w64(buf, p, storeTimestamp);
  p += 8;
  copyShort(buf, p, msg.storeHost.ip, sh - 4);
  w32(buf, p + sh - 4, msg.storeHost.port | 0);
  p += sh;
  w32(buf, p, msg.reconsumeTimes | 0);
  w64(buf, p + 4, msg.preparedTransactionOffset);
  w32(buf, p + 12, body.length);
  p += 16;
  buf.set(body, p);
  p += body.length;
  const topicLen = plan.topicLen;
  if (plan.version === 2) {
    buf[p] = topicLen >>> 8;
    buf[p + 1] = topicLen;
    p += 2;
  } else {
    buf[p++] = topicLen;
  }
  copyShort(buf, p, plan.topicBytes, topicLen);
  p += topicLen;
  const propsLen = plan.propsLen;
  buf[p] = propsLen >>> 8;
  buf[p + 1] = propsLen;
  p += 2;
  const textLen = plan.propsTextLen;
  if (textLen > 0) {
    if (!plan.propsFromMap) p += writeText(buf, p, plan.propsText, textLen);
    else {
      if (textLen <= 256) copyShort(buf, p, plan.propsBytes, textLen);
      else plan.propsBytes.copy(buf, p, 0, textLen);
      p += textLen;
    }
  }
  if (propsLen > plan.propsTextLen) p += writeText(buf, p, plan.propsTail, propsLen - plan.propsTextLen);
  if (p !== at + size) throw new Error(`writeRecord: internal size mismatch ${p - at} != ${size}`);
}

/**
 * Encodes a full record into a fresh buffer. BODYCRC is computed from the body; QUEUEOFFSET,
 * PHYSICALOFFSET and STORETIMESTAMP are written as 0 (set them with `patchRecord` at append).
 * SYSFLAG gets BORNHOST_V6_FLAG / STOREHOSTADDRESS_V6_FLAG from the host address lengths.
 * Version: V1 (1-byte topic length) unless `opts.version` is 2 or the topic is longer than
 * 127 bytes (then V2, like `autoMessageVersionOnTopicLen`).
 * @throws RecordEncodeError PROPERTIES_SIZE_EXCEEDED when properties exceed 32767 UTF-8 bytes;
 *   MESSAGE_ILLEGAL for a topic over 255 bytes, a host that is not 4/16 bytes, a missing body or
 *   a non-integer timestamp/offset.
 */
export function encodeRecord(msg: MessageInner, opts?: { version?: 1 | 2 }): Buffer {
  const plan = planRecord(msg, opts);
  const buf = Buffer.allocUnsafe(plan.size);
  writeRecord(buf, 0, plan, 0, 0, 0);
  return buf;
}

/**
 * Writes QUEUEOFFSET (@20), PHYSICALOFFSET (@28) and STORETIMESTAMP (@56, or @68 when SYSFLAG
 * says the born host is IPv6) of the record starting at `at`.
 * @throws RangeError when the record header does not fit in `buf`.
 */
export function patchRecord(
  buf: Buffer,
  at: number,
  queueOffset: number,
  physicalOffset: number,
  storeTimestamp: number,
): void {
  const tsPos = storeTimestampPosition(buf.readInt32BE(at + SYSFLAG_POSITION));
  if (at + tsPos + 8 > buf.length) throw new RangeError(`patchRecord: record at ${at} does not fit in ${buf.length} bytes`);
  writeLong(buf, at + QUEUE_OFFSET_POSITION, queueOffset);
  writeLong(buf, at + PHY_POS_POSITION, physicalOffset);
  writeLong(buf, at + tsPos, storeTimestamp);
}

/**
 * Writes the 8-byte end-of-file filler at `at`: int `maxBlank` (the filler's TOTALSIZE, i.e. the
 * bytes left in the file) then int BLANK_MAGIC_CODE. The rest of the gap is left untouched.
 * @throws RangeError when maxBlank < 8 or the 8 bytes do not fit.
 */
export function writeBlankRecord(buf: Buffer, at: number, maxBlank: number): void {
  if (!Number.isInteger(maxBlank) || maxBlank < END_FILE_MIN_BLANK_LENGTH) {
    throw new RangeError(`writeBlankRecord: maxBlank ${maxBlank} is below ${END_FILE_MIN_BLANK_LENGTH}`);
  }
  if (at < 0 || at + END_FILE_MIN_BLANK_LENGTH > buf.length) {
    throw new RangeError(`writeBlankRecord: 8 bytes at ${at} do not fit in ${buf.length} bytes`);
  }
  buf.writeInt32BE(maxBlank, at + TOTALSIZE_POSITION);
  buf.writeInt32BE(BLANK_MAGIC_CODE, at + MAGIC_POSITION);
}

function copyHost(buf: Buffer, pos: number, width: number): SocketAddress {
  const ipLen = width - 4;
  return { ip: Buffer.from(buf.subarray(pos, pos + ipLen)), port: buf.readInt32BE(pos + ipLen) };
}

function viewHost(buf: Buffer, pos: number, width: number): SocketAddress {
  const ipLen = width - 4;
  return { ip: buf.subarray(pos, pos + ipLen), port: buf.readInt32BE(pos + ipLen) };
}

/**
 * Decodes the record at `at` into a MessageExt (body and host bytes are copies). With
 * `readBody: false` the body is an empty buffer. `checkCrc` verifies BODYCRC (a stored 0 is a
 * legitimate value). msgId = createMessageId(storeHost, PHYSICALOFFSET). With `views: true`
 * body and host addresses are views into `buf` (valid while `buf` is) and msgId is '' — for a
 * caller that copies the record once itself (the timer prefetch).
 * @throws RecordDecodeError for a blank, torn or malformed record (reason in `.reason`).
 */
export function decodeRecord(buf: Buffer, at = 0, opts?: { readBody?: boolean; checkCrc?: boolean; views?: boolean }): MessageExt {
  const available = at >= 0 && at <= buf.length ? buf.length - at : 0;
  const r = parseRecord(buf, at, available, opts?.checkCrc === true, undefined);
  if (typeof r === 'string') throw new RecordDecodeError(r, at);
  if (typeof r === 'number') throw new RecordDecodeError('blank (end-of-file filler) record, not a message', at);
  return toMessageExt(buf, at, r, opts?.readBody !== false, opts?.views === true);
}

function toMessageExt(buf: Buffer, at: number, r: ParsedRecord, readBody: boolean, views: boolean): MessageExt {
  const host = views ? viewHost : copyHost;
  const storeHost = host(buf, r.storeHostPos, r.storeHostWidth);
  return {
    topic: r.topic,
    queueId: buf.readInt32BE(at + 12),
    flag: buf.readInt32BE(at + 16),
    body: !readBody ? Buffer.alloc(0) : views ? buf.subarray(r.bodyPos, r.bodyPos + r.bodyLen) : Buffer.from(buf.subarray(r.bodyPos, r.bodyPos + r.bodyLen)),
    properties: r.properties,
    sysFlag: r.sysFlag,
    bornTimestamp: r.bornTimestamp,
    bornHost: host(buf, at + 48, r.bornHostWidth),
    storeHost,
    reconsumeTimes: buf.readInt32BE(r.storeHostPos + r.storeHostWidth),
    preparedTransactionOffset: r.preparedTransactionOffset,
    storeSize: r.totalSize,
    magicCode: r.magic,
    bodyCrc: r.bodyCrc,
    queueOffset: r.queueOffset,
    commitLogOffset: r.physicalOffset,
    storeTimestamp: r.storeTimestamp,
    msgId: views ? '' : createMessageId(storeHost, Math.max(0, r.physicalOffset)),
  };
}

/** TOTALSIZE field of the record at `at`. The read* helpers throw RangeError past the buffer end. */
export function readRecordTotalSize(buf: Buffer, at: number): number {
  return buf.readInt32BE(at + TOTALSIZE_POSITION);
}

/** MAGICCODE field of the record at `at`. */
export function readMagic(buf: Buffer, at: number): number {
  return buf.readInt32BE(at + MAGIC_POSITION);
}

/** QUEUEOFFSET field (@20) of the record at `at`. */
export function readQueueOffset(buf: Buffer, at: number): number {
  return readLong(buf, at + QUEUE_OFFSET_POSITION);
}

/** PHYSICALOFFSET field (@28) of the record at `at`. */
export function readPhysicalOffset(buf: Buffer, at: number): number {
  return readLong(buf, at + PHY_POS_POSITION);
}

/** SYSFLAG field (@36) of the record at `at`. */
export function readSysFlag(buf: Buffer, at: number): number {
  return buf.readInt32BE(at + SYSFLAG_POSITION);
}

/**
 * STORETIMESTAMP of the record at `at`; consults SYSFLAG: @56 for an IPv4 born host, @68 for
 * IPv6 (mirrors `CommitLog.pickupStoreTimestamp` after the fix for RocketMQ #8549, case B19).
 */
export function readStoreTimestamp(buf: Buffer, at: number): number {
  return readLong(buf, at + storeTimestampPosition(buf.readInt32BE(at + SYSFLAG_POSITION)));
}
