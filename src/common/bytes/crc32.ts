/**
 * CRC-32 helpers for CommitLog records.
 *
 * Algorithm: CRC-32/ISO-HDLC (reflected polynomial 0xEDB88320, init and final XOR 0xFFFFFFFF),
 * identical to `java.util.zip.CRC32` and zlib `crc32`. RocketMQ (`UtilAll.crc32`) stores the
 * value masked with `& 0x7FFFFFFF` (31 significant bits, always non-negative) — see `bodyCrc`.
 * Note that 0 is a legitimate CRC value (case B08), never a "missing" marker.
 */
import { crc32 as zlibCrc32 } from 'node:zlib';

/**
 * Unsigned CRC-32 of `buf[start, end)`, in [0, 2^32).
 * @throws RangeError when the range is outside the buffer or reversed.
 */
export function crc32(buf: Buffer, start = 0, end: number = buf.length): number {
  if (start < 0 || end > buf.length || start > end) {
    throw new RangeError(`crc32 range [${start}, ${end}) is outside a buffer of ${buf.length} bytes`);
  }
  const view = start === 0 && end === buf.length ? buf : buf.subarray(start, end);
  return zlibCrc32(view) >>> 0;
}

/** bodyCrc of all of `bytes` (any Uint8Array view: no Buffer object is made for a slice). */
export function bodyCrcOf(bytes: Uint8Array): number {
  return (zlibCrc32(bytes) >>> 0) & 0x7fffffff;
}

/** RocketMQ's stored body CRC: `crc32(...) & 0x7FFFFFFF` (mirrors `UtilAll.crc32(byte[])`). */
export function bodyCrc(buf: Buffer, start = 0, end: number = buf.length): number {
  return crc32(buf, start, end) & 0x7fffffff;
}
