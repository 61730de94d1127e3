/**
 * One property of a stored record read straight from its bytes, without decoding the record
 * (the broker's exact tag check on pulled records: decodeRecord builds the whole properties map,
 * topic string and header object for each of them).
 *
 * Same answer as `decodeRecord(buf, at).properties.get(name)` for every record decodeRecord
 * accepts: the PROPERTIES text is split on \x02; a piece counts when its first \x01 comes after
 * its first byte and before its last (so the value is not empty); the last piece with the key
 * wins (properties.ts `decodeProperties`). UTF-8 never puts bytes 0x01/0x02 inside a multi-byte
 * character, so splitting bytes is splitting characters. Returns `null` (not `undefined`) when
 * the bytes at `at` are not a well-formed message record (bad magic, a blank filler, lengths
 * that do not add up to TOTALSIZE, or beyond the buffer), where decodeRecord would throw.
 */
import { MessageSysFlag } from './sysflag.js';
import { MESSAGE_MAGIC_CODE_V1, MESSAGE_MAGIC_CODE_V2 } from './record-layout.js';

/** `name`'s value in the record at `at`; undefined when absent; null when the record is not readable. */
export function readRecordProperty(buf: Buffer, at: number, name: string): string | undefined | null {
  if (!(at >= 0) || at + 40 > buf.length) return null;
  const totalSize = buf.readInt32BE(at);
  const magic = buf.readInt32BE(at + 4);
  const tls = magic === MESSAGE_MAGIC_CODE_V2 ? 2 : magic === MESSAGE_MAGIC_CODE_V1 ? 1 : 0;
  if (tls === 0 || totalSize > buf.length - at) return null;
  const sysFlag = buf.readInt32BE(at + 36);
  const bh = (sysFlag & MessageSysFlag.BORNHOST_V6_FLAG) !== 0 ? 20 : 8;
  const sh = (sysFlag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG) !== 0 ? 20 : 8;
  const fixed = 74 + bh + sh + tls;
  if (totalSize < fixed) return null;
  const end = at + totalSize;
  // BODYLENGTH after born host, store timestamp, store host, reconsume times, prepared offset
  let p = at + 48 + bh + 8 + sh + 12;
  const bodyLen = buf.readInt32BE(p);
  p += 4;
  if (bodyLen < 0 || p + bodyLen + tls + 2 > end) return null;
  p += bodyLen;
  const topicLen = tls === 1 ? buf.readInt8(p) : buf.readInt16BE(p);
  p += tls;
  if (topicLen < 0 || p + topicLen + 2 > end) return null;
  p += topicLen;
  const propsLen = buf.readInt16BE(p);
  p += 2;
  if (propsLen < 0 || p + propsLen !== end || fixed + bodyLen + topicLen + propsLen !== totalSize) return null;
  if (propsLen > 0 && buf[end - 1] === 0) return null; // torn inside its properties (parseRecord)
  return findProperty(buf, p, end, name);
}

/** The last valid `name` piece of the properties text in buf[start, end) (see the file comment). */
function findProperty(buf: Buffer, start: number, end: number, name: string): string | undefined {
  const keyLen = name.length; // property names are ASCII
  let found: string | undefined;
  let s = start;
  while (s < end) {
    let e = buf.indexOf(2, s);
    if (e < 0 || e > end) e = end;
    // key matches when the piece starts with name + \x01 and something follows the \x01
    if (e - s > keyLen + 1 && buf[s + keyLen] === 1 && keyMatches(buf, s, name)) found = buf.toString('utf8', s + keyLen + 1, e);
    s = e + 1;
  }
  return found;
}

function keyMatches(buf: Buffer, at: number, name: string): boolean {
  for (let i = 0; i < name.length; i++) if (buf[at + i] !== name.charCodeAt(i)) return false;
  return true;
}
