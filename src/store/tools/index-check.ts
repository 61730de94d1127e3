/**
 * Offline check of the index files (`index/<17-digit time>`, RocketMQ `IndexFile`), streamed in
 * 1 MiB windows (a default index file is ~420 MB): size = header + maxHashSlotNum slots +
 * maxIndexNum entries; indexCount ≤ maxIndexNum; endTimestamp ≥ beginTimestamp; every slot
 * names an entry below indexCount; every entry's previous-entry link goes back, its time
 * difference is ≥ 0 and its physical offset is the start of a valid record (or before the
 * CommitLog's first file: retention).
 */
import { join } from 'node:path';
import { readLong } from '../../common/message/record-codec.js';
import { INDEX_ENTRY_SIZE, INDEX_HEADER_SIZE, INDEX_SLOT_SIZE } from '../index/index-file.js';
import type { StoreProblem } from './commit-log-walk.js';
import type { RecordProbe } from './record-probe.js';
import { listNames, WindowReader } from './store-file-reader.js';

export const INDEX_FILE_NAME = /^\d{17}$/;

export interface IndexFileHeader {
  beginTimestampMs: number;
  endTimestampMs: number;
  beginPhysicalOffset: number;
  endPhysicalOffset: number;
  hashSlotCount: number;
  indexCount: number;
}

export interface IndexFileCheck {
  /** `index/<name>` */
  file: string;
  sizeBytes: number;
  header: IndexFileHeader | null;
  /** Entries checked (indexCount - 1: entry 0 is never used). */
  entries: number;
  problems: number;
}

export interface IndexCheckContext {
  maxHashSlotNum: number;
  maxIndexNum: number;
  minPhysicalOffset: number;
  probe: RecordProbe;
  problem: (p: StoreProblem) => void;
  onBytes?: (n: number) => void;
}

export function readIndexHeader(buf: Buffer, at: number): IndexFileHeader {
  return {
    beginTimestampMs: readLong(buf, at),
    endTimestampMs: readLong(buf, at + 8),
    beginPhysicalOffset: readLong(buf, at + 16),
    endPhysicalOffset: readLong(buf, at + 24),
    hashSlotCount: buf.readInt32BE(at + 32),
    indexCount: buf.readInt32BE(at + 36),
  };
}

export function listIndexFiles(root: string): string[] {
  return listNames(join(root, 'index'), INDEX_FILE_NAME);
}

export function checkIndexFile(root: string, name: string, ctx: IndexCheckContext): IndexFileCheck {
  const file = `index/${name}`;
  const r = new WindowReader(join(root, 'index', name), 1024 * 1024);
  const out: IndexFileCheck = { file, sizeBytes: r.sizeBytes, header: null, entries: 0, problems: 0 };
  const problem = (offset: number, message: string): void => {
    out.problems++;
    ctx.problem({ file, offset, message });
  };
  try {
    const expected = INDEX_HEADER_SIZE + ctx.maxHashSlotNum * INDEX_SLOT_SIZE + ctx.maxIndexNum * INDEX_ENTRY_SIZE;
    if (r.sizeBytes !== expected) {
      problem(0, `file is ${r.sizeBytes} bytes, expected ${expected} (maxHashSlotNum ${ctx.maxHashSlotNum}, maxIndexNum ${ctx.maxIndexNum})`);
      return out;
    }
    const h = r.view(0, INDEX_HEADER_SIZE);
    const header = readIndexHeader(r.buf, h.at);
    out.header = header;
    const indexCount = Math.max(1, header.indexCount);
    if (indexCount > ctx.maxIndexNum) problem(36, `indexCount ${indexCount} exceeds maxIndexNum ${ctx.maxIndexNum}`);
    if (header.endTimestampMs < header.beginTimestampMs) problem(8, `endTimestamp ${header.endTimestampMs} is before beginTimestamp ${header.beginTimestampMs}`);
    for (let s = 0; s < ctx.maxHashSlotNum; s++) {
      const at = INDEX_HEADER_SIZE + s * INDEX_SLOT_SIZE;
      const w = r.view(at, INDEX_SLOT_SIZE);
      const v = r.buf.readInt32BE(w.at);
      if (v < 0 || v >= indexCount) problem(at, `slot ${s} holds entry ${v}, outside 0..${indexCount - 1}`);
    }
    const entriesAt = INDEX_HEADER_SIZE + ctx.maxHashSlotNum * INDEX_SLOT_SIZE;
    for (let e = 1; e < Math.min(indexCount, ctx.maxIndexNum); e++) {
      const at = entriesAt + e * INDEX_ENTRY_SIZE;
      const w = r.view(at, INDEX_ENTRY_SIZE);
      const phy = readLong(r.buf, w.at + 4);
      const timeDiff = r.buf.readInt32BE(w.at + 12);
      const prev = r.buf.readInt32BE(w.at + 16);
      out.entries++;
      if (prev < 0 || prev >= e) problem(at, `entry ${e}: previous entry ${prev} is not an earlier entry`);
      if (timeDiff < 0) problem(at, `entry ${e}: negative time difference ${timeDiff}`);
      if (phy >= ctx.minPhysicalOffset) {
        const why = ctx.probe.startsAt(phy);
        if (why !== null) problem(at, `entry ${e} points at physical offset ${phy}, ${why.startsWith('past the end') ? why : `where no record starts (${why})`}`);
      }
    }
    return out;
  } finally {
    ctx.onBytes?.(r.sizeBytes);
    r.close();
  }
}
