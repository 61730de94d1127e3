/**
 * One sequential pass over a stopped store's CommitLog for the offline tools, in bounded memory
 * (one window per segment, `WindowReader`). It finds the end of the valid data exactly as
 * abnormal recovery does (spec §3.6: records checked with `checkRecord`, PHYSICALOFFSET = the
 * position, BODYCRC; a blank filler moves to the next segment; the first invalid record or a
 * zero TOTALSIZE ends the log) and reports the file chain's defects (names, sizes, gaps, data
 * after the end). Each valid record is handed to `onRecord`; nothing is kept.
 */
import { join } from 'node:path';
import { checkRecord, type DispatchRequest } from '../../common/message/record-codec.js';
import { BLANK_MAGIC_CODE } from '../../common/message/record-layout.js';
import { MAX_SCANNED_RECORD_BYTES } from '../recovery/segment-scanner.js';
import { listNames, SEGMENT_NAME, WindowReader } from './store-file-reader.js';

/** One problem found: `file` is relative to the store root, `offset` is a byte offset in it. */
export interface StoreProblem {
  file: string;
  offset: number;
  message: string;
}

export interface CommitLogSegment {
  /** `commitlog/<20-digit name>` */
  file: string;
  base: number;
  sizeBytes: number;
}

export interface CommitLogWalk {
  segments: CommitLogSegment[];
  /** Names in commitlog/ that are not segment names (ignored, like RocketMQ). */
  ignored: string[];
  minPhysicalOffset: number;
  /** End of the valid data: the next write position after recovery. */
  maxPhysicalOffset: number;
  records: number;
  firstStoreTimestampMs: number;
  lastStoreTimestampMs: number;
  /** Where and why the valid data ends when an invalid record (not zeros or the last filler) ends it. */
  invalidAt: { file: string; offset: number; physicalOffset: number; reason: string } | null;
  /** First non-zero byte after the end of the valid data (in the end segment or a later one); null when none. */
  dataAfterEnd: { file: string; offset: number } | null;
  problems: StoreProblem[];
}

export interface WalkOptions {
  segmentBytes: number;
  checkCrc: boolean;
  delayLevelTableMs: number[];
  onRecord?: (d: DispatchRequest, sizeBytes: number) => void;
  /** Start at this segment (records never span segments, so each starts with a record); default 0. */
  fromSegmentIndex?: number;
  /** Bytes of CommitLog files read so far (whole segments, for progress). */
  onBytes?: (n: number) => void;
}

const ZEROS = Buffer.alloc(1024 * 1024);

/** First non-zero byte of [from, file end) of an open reader, or -1 (zero chunks compared with memcmp). */
export function firstNonZero(r: WindowReader, from: number): number {
  const step = ZEROS.length;
  for (let pos = from; pos < r.sizeBytes; pos += step) {
    const v = r.view(pos, step);
    const chunk = r.buf.subarray(v.at, v.at + Math.min(step, v.available));
    if (chunk.equals(ZEROS.subarray(0, chunk.length))) continue;
    for (let i = 0; i < chunk.length; i++) if (chunk[i] !== 0) return pos + i;
    if (v.available === 0) break;
  }
  return -1;
}

export function walkCommitLog(root: string, opts: WalkOptions): CommitLogWalk {
  const dir = join(root, 'commitlog');
  const names = listNames(dir, SEGMENT_NAME);
  const size = opts.segmentBytes;
  const out: CommitLogWalk = {
    segments: [],
    ignored: listNames(dir, /.*/).filter((n) => !SEGMENT_NAME.test(n)),
    minPhysicalOffset: names.length > 0 ? Number(names[0]) : 0,
    maxPhysicalOffset: names.length > 0 ? Number(names[0]) : 0,
    records: 0,
    firstStoreTimestampMs: 0,
    lastStoreTimestampMs: 0,
    invalidAt: null,
    dataAfterEnd: null,
    problems: [],
  };
  const problem = (file: string, offset: number, message: string): void => void out.problems.push({ file, offset, message });
  let ended = false;
  for (let i = opts.fromSegmentIndex ?? 0; i < names.length; i++) {
    const name = names[i]!;
    const file = `commitlog/${name}`;
    const base = Number(name);
    const r = new WindowReader(join(dir, name));
    try {
      out.segments.push({ file, base, sizeBytes: r.sizeBytes });
      if (base % size !== 0) problem(file, 0, `file name ${name} is not a multiple of mappedFileSizeCommitLog ${size}`);
      if (i > 0 && base !== Number(names[i - 1]) + size) problem(file, 0, `file starts at ${base} but the previous file ends at ${Number(names[i - 1]) + size} (missing or misnamed file)`);
      if (r.sizeBytes !== size) problem(file, 0, `file is ${r.sizeBytes} bytes, expected mappedFileSizeCommitLog ${size}`);
      if (ended) {
        const nz = firstNonZero(r, 0);
        if (nz >= 0) {
          out.dataAfterEnd ??= { file, offset: nz };
          problem(file, nz, 'data after the end of the CommitLog (recovery deletes this file)');
        }
        continue;
      }
      let pos = 0;
      for (;;) {
        const left = r.sizeBytes - pos;
        if (left <= 0) {
          out.maxPhysicalOffset = base + r.sizeBytes; // full to its last byte without a filler
          if (r.sizeBytes < size) ended = true; // a short file: the next record position is missing
          break;
        }
        const head = r.view(pos, 8);
        if (head.available < 4 || r.buf.readInt32BE(head.at) === 0) {
          ended = true; // zeros: the end of the written data
          out.maxPhysicalOffset = base + pos;
          const nz = firstNonZero(r, pos);
          if (nz >= 0) {
            out.dataAfterEnd = { file, offset: nz };
            problem(file, nz, `data after the end of the CommitLog at ${pos} (a zero TOTALSIZE there ends the log; recovery zeroes the rest)`);
          }
          break;
        }
        const total = r.buf.readInt32BE(head.at);
        const magic = head.available >= 8 ? r.buf.readInt32BE(head.at + 4) : 0;
        let check;
        if (magic === BLANK_MAGIC_CODE) check = total === left ? { kind: 'blank' as const } : { kind: 'invalid' as const, reason: `blank filler says ${total} bytes but ${left} are left in the segment` };
        else if (total > left) check = { kind: 'invalid' as const, reason: `torn record: TOTALSIZE ${total} but only ${left} bytes left in the segment` };
        else if (total > MAX_SCANNED_RECORD_BYTES || total < 0) check = { kind: 'invalid' as const, reason: `TOTALSIZE ${total} is implausible` };
        else {
          const w = r.view(pos, total);
          check = checkRecord(r.buf, w.at, w.available, { checkCrc: opts.checkCrc, expectedPhysicalOffset: base + pos, delayLevelTableMs: opts.delayLevelTableMs });
        }
        if (check.kind === 'blank') {
          out.maxPhysicalOffset = base + r.sizeBytes;
          break;
        }
        if (check.kind === 'invalid') {
          ended = true;
          out.maxPhysicalOffset = base + pos;
          out.invalidAt = { file, offset: pos, physicalOffset: base + pos, reason: check.reason };
          out.dataAfterEnd = { file, offset: pos };
          problem(file, pos, `invalid record: ${check.reason}; the rest of the file cannot be read (recovery truncates here)`);
          break;
        }
        const d = check.dispatch;
        out.records++;
        if (out.firstStoreTimestampMs === 0) out.firstStoreTimestampMs = d.storeTimestamp;
        out.lastStoreTimestampMs = d.storeTimestamp;
        opts.onRecord?.(d, check.size);
        pos += check.size;
      }
    } finally {
      opts.onBytes?.(r.sizeBytes);
      r.close();
    }
  }
  return out;
}
