/**
 * ConsumeQueue entry codec and file layout (RocketMQ `ConsumeQueue` store unit, spec §2.3).
 *
 * One entry ("unit", `CQ_STORE_UNIT_SIZE` = 20 bytes, big-endian) per queue offset:
 *
 *   offset  size  type  field
 *   0       8     long  commit-log physical offset of the record
 *   8       4     int   record size (the record's TOTALSIZE)
 *   12      8     long  tags code (Java String.hashCode of TAGS, sign-extended; the deliver time
 *                       for SCHEDULE_TOPIC_XXXX)
 *
 * Files `consumequeue/<topic>/<queueId>/<20-digit start byte offset>` hold
 * `mappedFileSizeConsumeQueue` bytes (default 6,000,000 = 300,000 units; always a multiple of 20).
 * The entry of queue offset q lives at logical byte q × 20 of the queue's byte stream, so the
 * second default file is named `00000000000006000000`.
 *
 * Validity (recovery, truncation, lookups): an entry is valid when phyOffset ≥ 0 && size > 0; the
 * first invalid entry ends a queue's data. Pre-blank entries `(0, Integer.MAX_VALUE, 0)` fill a
 * queue's first file up to its first real entry when the queue starts at a non-zero offset
 * (RocketMQ `fillPreBlank`); they are valid but never data. A slot of 20 zero bytes was never
 * written.
 *
 * Pure functions; reads past the end of a buffer throw RangeError (Node Buffer bounds checks).
 */
import { readLong, writeLong } from '../../common/message/record-codec.js';

export const CQ_STORE_UNIT_SIZE = 20;
/** Default units per ConsumeQueue file (mappedFileSizeConsumeQueue 6,000,000 / 20). */
export const CQ_UNITS_PER_FILE_DEFAULT = 300_000;
/** Size field of a pre-blank entry (Java Integer.MAX_VALUE). */
export const PRE_BLANK_SIZE = 0x7fffffff;

export interface CqEntry {
  phyOffset: number;
  size: number;
  tagsCode: number;
}

/** Decodes entry `i` (0-based) of a buffer of packed entries. */
export function readCqEntry(buf: Buffer, i: number): CqEntry {
  const at = i * CQ_STORE_UNIT_SIZE;
  return { phyOffset: readLong(buf, at), size: buf.readInt32BE(at + 8), tagsCode: readLong(buf, at + 12) };
}

/**
 * Field readers of entry `i` without an entry object (the pull path reads thousands per pull
 * round; readCqEntry allocates one object each). Same values as readCqEntry's fields.
 */
export function cqEntryPhyOffset(buf: Buffer, i: number): number {
  return readLong(buf, i * CQ_STORE_UNIT_SIZE);
}

export function cqEntrySize(buf: Buffer, i: number): number {
  return buf.readInt32BE(i * CQ_STORE_UNIT_SIZE + 8);
}

export function cqEntryTagsCode(buf: Buffer, i: number): number {
  return readLong(buf, i * CQ_STORE_UNIT_SIZE + 12);
}

/** Encodes one entry at byte `at` of `buf`. */
export function writeCqEntry(buf: Buffer, at: number, phyOffset: number, size: number, tagsCode: number): void {
  writeLong(buf, at, phyOffset);
  buf.writeInt32BE(size, at + 8);
  writeLong(buf, at + 12, tagsCode);
}

/** A new 20-byte pre-blank entry `(0, Integer.MAX_VALUE, 0)`. */
export function preBlankEntry(): Buffer {
  const b = Buffer.alloc(CQ_STORE_UNIT_SIZE);
  writeCqEntry(b, 0, 0, PRE_BLANK_SIZE, 0);
  return b;
}

/** offset ≥ 0 && size > 0 (pre-blanks included). */
export function isValidEntry(e: CqEntry): boolean {
  return e.phyOffset >= 0 && e.size > 0;
}

export function isPreBlank(e: CqEntry): boolean {
  return e.phyOffset === 0 && e.size === PRE_BLANK_SIZE && e.tagsCode === 0;
}

/** True when the 20 bytes at `at` are all zero (a slot never written). */
export function isZeroSlot(buf: Buffer, at: number): boolean {
  return (
    buf.readUInt32BE(at) === 0 &&
    buf.readUInt32BE(at + 4) === 0 &&
    buf.readUInt32BE(at + 8) === 0 &&
    buf.readUInt32BE(at + 12) === 0 &&
    buf.readUInt32BE(at + 16) === 0
  );
}

/**
 * A DataView over packed entries for the field readers below (the pull path's scan: DataView
 * reads compile to plain loads, Buffer.readInt32BE pairs cost ~3× as much per entry).
 */
export function cqEntriesView(buf: Buffer): DataView {
  return new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** cqEntryPhyOffset over cqEntriesView(buf). */
export function cqViewPhyOffset(view: DataView, i: number): number {
  const at = i * CQ_STORE_UNIT_SIZE;
  return view.getInt32(at) * 4294967296 + view.getUint32(at + 4);
}

/** cqEntrySize over cqEntriesView(buf). */
export function cqViewSize(view: DataView, i: number): number {
  return view.getInt32(i * CQ_STORE_UNIT_SIZE + 8);
}

/** cqEntryTagsCode over cqEntriesView(buf). */
export function cqViewTagsCode(view: DataView, i: number): number {
  const at = i * CQ_STORE_UNIT_SIZE + 12;
  return view.getInt32(at) * 4294967296 + view.getUint32(at + 4);
}
