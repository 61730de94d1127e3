/**
 * Binary form of a pop state record in `<storePathRootDir>/pop/pop-<generation>.log`.
 * Big-endian, one record after another:
 *
 *   0   int32  size            whole record in bytes, this field included
 *   4   int32  crc             CRC-32 (unsigned, stored as int32 bits) of bytes [8, size)
 *   8   int8   type            1 POP, 2 ACK, 3 MOVE, 4 RESET (ackOffset := offset, entries dropped),
 *                              5 FORGET_TOPIC (every state of the topic; group empty),
 *                              6 FORGET_GROUP (every state of the group; topic empty)
 *   9   int64  version         delivery version (0 for MOVE, RESET and FORGET_*)
 *   17  int64  offset          queue offset (0 for FORGET_*)
 *   25  int64  invisibleUntilMs  (0 for ACK, MOVE, RESET and FORGET_*)
 *   33  int32  attempts        (0 for ACK, MOVE, RESET and FORGET_*)
 *   37  int32  queueId         (0 for FORGET_*)
 *   41  int16  group length G, then G bytes UTF-8
 *       int16  topic length T, then T bytes UTF-8
 *
 * A record whose size is out of range or whose CRC does not match ends the log (torn write):
 * the reader reports the position so the file can be truncated there.
 */
import { crc32 } from '../../common/bytes/crc32.js';
import type { PopLogRecord } from './pop-state-table.js';

const HEADER_BYTES = 41;
export const POP_RECORD_MAX_BYTES = HEADER_BYTES + 4 + 2 * 32767;

const TYPE_CODE = { POP: 1, ACK: 2, MOVE: 3, RESET: 4 } as const;
const FORGET_TOPIC = 5;
const FORGET_GROUP = 6;

/** @throws RangeError when the group or topic is longer than 32767 UTF-8 bytes. */
export function encodePopRecord(rec: PopLogRecord): Buffer {
  if (rec.type === 'FORGET') {
    return rec.topic !== undefined ? encode(FORGET_TOPIC, '', rec.topic, 0, 0, 0, 0, 0) : encode(FORGET_GROUP, rec.group, '', 0, 0, 0, 0, 0);
  }
  return encode(
    TYPE_CODE[rec.type],
    rec.group,
    rec.topic,
    rec.type === 'POP' || rec.type === 'ACK' ? rec.version : 0,
    rec.offset,
    rec.type === 'POP' ? rec.invisibleUntilMs : 0,
    rec.type === 'POP' ? rec.attempts : 0,
    rec.queueId,
  );
}

function encode(typeCode: number, groupName: string, topicName: string, version: number, offset: number, invisibleUntilMs: number, attempts: number, queueId: number): Buffer {
  const group = Buffer.from(groupName, 'utf8');
  const topic = Buffer.from(topicName, 'utf8');
  if (group.length > 32767 || topic.length > 32767) throw new RangeError('pop record: group or topic longer than 32767 bytes');
  const size = HEADER_BYTES + 2 + group.length + 2 + topic.length;
  const buf = Buffer.alloc(size);
  buf.writeInt32BE(size, 0);
  buf.writeInt8(typeCode, 8);
  buf.writeBigInt64BE(BigInt(version), 9);
  buf.writeBigInt64BE(BigInt(offset), 17);
  buf.writeBigInt64BE(BigInt(invisibleUntilMs), 25);
  buf.writeInt32BE(attempts, 33);
  buf.writeInt32BE(queueId, 37);
  let p = HEADER_BYTES;
  buf.writeInt16BE(group.length, p);
  group.copy(buf, p + 2);
  p += 2 + group.length;
  buf.writeInt16BE(topic.length, p);
  topic.copy(buf, p + 2);
  buf.writeInt32BE(crc32(buf, 8, size) | 0, 4);
  return buf;
}

export interface DecodedPopLog {
  records: PopLogRecord[];
  /** Byte length of the valid prefix; anything after it is torn or garbage. */
  validBytes: number;
  /** Why reading stopped before the end of the buffer, if it did. */
  stopReason?: string;
}

/** Decodes every valid record from the start of `buf`; stops at the first invalid one. */
export function decodePopLog(buf: Buffer): DecodedPopLog {
  const records: PopLogRecord[] = [];
  let at = 0;
  while (at < buf.length) {
    const r = decodeOne(buf, at);
    if (typeof r === 'string') return { records, validBytes: at, stopReason: `${r} at byte ${at}` };
    records.push(r.record);
    at += r.size;
  }
  return { records, validBytes: at };
}

function decodeOne(buf: Buffer, at: number): { record: PopLogRecord; size: number } | string {
  if (buf.length - at < HEADER_BYTES + 4) return 'short header';
  const size = buf.readInt32BE(at);
  if (size < HEADER_BYTES + 4 || size > POP_RECORD_MAX_BYTES) return `bad size ${size}`;
  if (at + size > buf.length) return 'record runs past the end';
  if ((crc32(buf, at + 8, at + size) | 0) !== buf.readInt32BE(at + 4)) return 'crc mismatch';
  const typeCode = buf.readInt8(at + 8);
  const version = Number(buf.readBigInt64BE(at + 9));
  const offset = Number(buf.readBigInt64BE(at + 17));
  const invisibleUntilMs = Number(buf.readBigInt64BE(at + 25));
  const attempts = buf.readInt32BE(at + 33);
  const queueId = buf.readInt32BE(at + 37);
  let p = at + HEADER_BYTES;
  const gl = buf.readInt16BE(p);
  if (gl < 0 || p + 2 + gl + 2 > at + size) return 'bad group length';
  const group = buf.toString('utf8', p + 2, p + 2 + gl);
  p += 2 + gl;
  const tl = buf.readInt16BE(p);
  if (tl < 0 || p + 2 + tl !== at + size) return 'bad topic length';
  const topic = buf.toString('utf8', p + 2, p + 2 + tl);
  const ref = { group, topic, queueId, offset };
  switch (typeCode) {
    case 1:
      return { record: { type: 'POP', ...ref, attempts, invisibleUntilMs, version }, size };
    case 2:
      return { record: { type: 'ACK', ...ref, version }, size };
    case 3:
      return { record: { type: 'MOVE', ...ref }, size };
    case 4:
      return { record: { type: 'RESET', ...ref }, size };
    case FORGET_TOPIC:
      return { record: { type: 'FORGET', topic }, size };
    case FORGET_GROUP:
      return { record: { type: 'FORGET', group }, size };
    default:
      return `unknown type ${typeCode}`;
  }
}
