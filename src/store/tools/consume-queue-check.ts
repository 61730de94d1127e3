/**
 * Offline check of one ConsumeQueue (`consumequeue/<topic>/<queueId>/`) against the CommitLog,
 * streamed file by file (1 MiB window): file names contiguous and sized
 * `mappedFileSizeConsumeQueue`, every 20-byte unit pointing at a valid record of this topic and
 * queue with the unit's size, queue offset and tags code; a zero unit ends the queue and nothing
 * may follow it. Pre-blank units `(0, Integer.MAX_VALUE, 0)` and units whose record was deleted
 * by retention (before the CommitLog's first file) are not checked, like RocketMQ's
 * `correctMinOffset`.
 *
 * `firstBad` is where abnormal recovery (and `tsmq store repair`) cuts the queue: the first unit
 * that is wrong, a unit after the end, or the first byte missing from a short or absent file.
 */
import { join } from 'node:path';
import { readLong } from '../../common/message/record-codec.js';
import { PRE_BLANK_SIZE } from '../consumequeue/consume-queue-entry.js';
import type { StoreProblem } from './commit-log-walk.js';
import type { RecordProbe } from './record-probe.js';
import { listNames, SEGMENT_NAME, WindowReader } from './store-file-reader.js';

export interface QueueCut {
  /** Queue offset of the first unit removed. */
  queueOffset: number;
  /** File (relative to the store root) and byte offset in it where the cut starts. */
  file: string;
  offset: number;
  reason: string;
}

export interface QueueCheck {
  topic: string;
  queueId: number;
  /** Files relative to the store root, by start offset. */
  files: string[];
  /** First queue offset holding data (after pre-blanks); equals maxOffset when empty. */
  minOffset: number;
  /**
   * First queue offset whose record is still in the CommitLog (RocketMQ's corrected min offset:
   * units of records deleted by retention do not count); maxOffset when none.
   */
  minLiveOffset: number;
  /** Queue offset after the last unit before the end (a zero unit or the end of the files), as written. */
  maxOffset: number;
  entries: number;
  /** Physical offsets of the units at minOffset and maxOffset - 1 (-1 when none). */
  firstPhysicalOffset: number;
  lastPhysicalOffset: number;
  firstBad: QueueCut | null;
}

export interface QueueCheckContext {
  root: string;
  cqFileBytes: number;
  minPhysicalOffset: number;
  /** Null: the units are not checked against the CommitLog (`tsmq store stat`). */
  probe: RecordProbe | null;
  problem: (p: StoreProblem) => void;
  onBytes?: (n: number) => void;
}

/** Name of the ConsumeQueue file holding queue offset `q` and the unit's byte offset in it. */
export function cqPosition(topic: string, queueId: number, q: number, cqFileBytes: number): { file: string; offset: number } {
  const logical = q * 20;
  const start = Math.floor(logical / cqFileBytes) * cqFileBytes;
  return { file: `consumequeue/${topic}/${queueId}/${String(start).padStart(20, '0')}`, offset: logical - start };
}

export function checkQueue(q: { topic: string; queueId: number; dir: string }, ctx: QueueCheckContext): QueueCheck {
  const names = listNames(q.dir, SEGMENT_NAME);
  const rel = (n: string): string => `consumequeue/${q.topic}/${q.queueId}/${n}`;
  const out: QueueCheck = {
    topic: q.topic,
    queueId: q.queueId,
    files: names.map(rel),
    minOffset: -1,
    minLiveOffset: -1,
    maxOffset: names.length > 0 ? Number(names[0]) / 20 : 0,
    entries: 0,
    firstPhysicalOffset: -1,
    lastPhysicalOffset: -1,
    firstBad: null,
  };
  /** A problem at (file, offset); the queue is cut from queue offset `cutAt` on. */
  const bad = (cutAt: number, file: string, offset: number, reason: string): void => {
    ctx.problem({ file, offset, message: reason });
    out.firstBad ??= { queueOffset: cutAt, ...cqPosition(q.topic, q.queueId, cutAt, ctx.cqFileBytes), reason };
  };
  let ended = false;
  for (let fi = 0; fi < names.length; fi++) {
    const name = names[fi]!;
    const file = rel(name);
    const start = Number(name);
    if (start % ctx.cqFileBytes !== 0) bad(start / 20, file, 0, `file name ${name} is not a multiple of the ConsumeQueue file size ${ctx.cqFileBytes}`);
    if (fi > 0 && start !== Number(names[fi - 1]) + ctx.cqFileBytes) {
      const expected = Number(names[fi - 1]) + ctx.cqFileBytes;
      bad(expected / 20, file, 0, `file starts at ${start} but the previous file ends at ${expected} (missing or misnamed file)`);
      ended = true;
    }
    const r = new WindowReader(join(q.dir, name), 1024 * 1024);
    try {
      if (r.sizeBytes !== ctx.cqFileBytes) {
        const msg = `file is ${r.sizeBytes} bytes, expected ${ctx.cqFileBytes} (mappedFileSizeConsumeQueue)`;
        if (r.sizeBytes < ctx.cqFileBytes && !ended) bad((start + r.sizeBytes - (r.sizeBytes % 20)) / 20, file, r.sizeBytes - (r.sizeBytes % 20), msg);
        else ctx.problem({ file, offset: 0, message: msg });
      }
      for (let p = 0; p + 20 <= r.sizeBytes; p += 20) {
        const v = r.view(p, 20);
        const phy = readLong(r.buf, v.at);
        const sz = r.buf.readInt32BE(v.at + 8);
        const tagsCode = readLong(r.buf, v.at + 12);
        const queueOffset = (start + p) / 20;
        if (phy === 0 && sz === 0 && tagsCode === 0) {
          if (!ended) out.maxOffset = queueOffset;
          ended = true; // zeros: the end of the queue
          continue;
        }
        if (ended) {
          bad(out.maxOffset, file, p, `entry ${queueOffset} after the end of the queue at ${out.maxOffset} (a zero entry or a missing file before it)`);
          continue;
        }
        out.maxOffset = queueOffset + 1;
        if (phy === 0 && sz === PRE_BLANK_SIZE && tagsCode === 0) continue; // pre-blank
        if (out.minOffset < 0) {
          out.minOffset = queueOffset;
          out.firstPhysicalOffset = phy;
        }
        out.lastPhysicalOffset = phy;
        out.entries++;
        if (phy < ctx.minPhysicalOffset) continue; // its CommitLog file was deleted by retention
        if (out.minLiveOffset < 0) out.minLiveOffset = queueOffset;
        if (out.firstBad || !ctx.probe) continue; // cut anyway; only the first wrong unit is named
        if (phy < 0 || sz <= 0) {
          bad(queueOffset, file, p, `entry ${queueOffset}: invalid unit (physical offset ${phy}, size ${sz})`);
          continue;
        }
        const rec = ctx.probe.at(phy);
        if (rec.kind === 'invalid') {
          bad(queueOffset, file, p, `entry ${queueOffset} points at physical offset ${phy}, ${rec.reason.startsWith('past the end') ? rec.reason : `where no record starts (${rec.reason})`}`);
          continue;
        }
        const d = rec.dispatch;
        const wrong: string[] = [];
        if (d.topic !== q.topic || d.queueId !== q.queueId) wrong.push(`the record is of ${d.topic}/${d.queueId}`);
        if (rec.sizeBytes !== sz) wrong.push(`size ${sz} but the record is ${rec.sizeBytes} bytes`);
        if (d.consumeQueueOffset !== queueOffset) wrong.push(`the record's QUEUEOFFSET is ${d.consumeQueueOffset}`);
        if (d.tagsCode !== tagsCode) wrong.push(`tags code ${tagsCode} but the record's is ${d.tagsCode}`);
        if (wrong.length > 0) bad(queueOffset, file, p, `entry ${queueOffset} (physical offset ${phy}): ${wrong.join('; ')}`);
      }
      if (r.sizeBytes < ctx.cqFileBytes) ended = true;
    } finally {
      ctx.onBytes?.(r.sizeBytes);
      r.close();
    }
  }
  if (out.minOffset < 0) out.minOffset = out.maxOffset;
  if (out.minLiveOffset < 0) out.minLiveOffset = out.maxOffset;
  return out;
}
