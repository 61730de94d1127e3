/**
 * Random reads of single CommitLog records for the offline tools: "does a valid record start at
 * physical offset X, and what are its topic, queue, size, queue offset and tags code?" — the
 * question a ConsumeQueue entry or an index entry asks. A record starts at X when `checkRecord`
 * accepts the bytes there with PHYSICALOFFSET = X (BODYCRC is not re-checked: the sequential
 * walk did that). Memory: at most `MAX_OPEN` segment readers with a 64 KiB window each.
 */
import { join } from 'node:path';
import { checkRecord, readLong, type DispatchRequest } from '../../common/message/record-codec.js';
import { MESSAGE_MAGIC_CODE_V1, MESSAGE_MAGIC_CODE_V2 } from '../../common/message/record-layout.js';
import { offsetToFileName } from '../mapped-file/file-names.js';
import { MAX_SCANNED_RECORD_BYTES } from '../recovery/segment-scanner.js';
import { WindowReader } from './store-file-reader.js';

const MAX_OPEN = 4;
const WINDOW_BYTES = 64 * 1024;

export type ProbeResult = { kind: 'valid'; sizeBytes: number; dispatch: DispatchRequest } | { kind: 'invalid'; reason: string };

export class RecordProbe {
  private readonly readers = new Map<number, WindowReader | null>();

  constructor(
    private readonly root: string,
    private readonly segmentBytes: number,
    /** [minPhysicalOffset, maxPhysicalOffset): where valid records are. */
    private readonly minPhysicalOffset: number,
    private readonly maxPhysicalOffset: number,
    private readonly delayLevelTableMs: number[],
  ) {}

  private reader(base: number): WindowReader | null {
    if (this.readers.has(base)) {
      const r = this.readers.get(base)!;
      this.readers.delete(base); // most recently used last
      this.readers.set(base, r);
      return r;
    }
    if (this.readers.size >= MAX_OPEN) {
      const [oldest, r] = this.readers.entries().next().value as [number, WindowReader | null];
      r?.close();
      this.readers.delete(oldest);
    }
    let r: WindowReader | null = null;
    try {
      r = new WindowReader(join(this.root, 'commitlog', offsetToFileName(base)), WINDOW_BYTES);
    } catch {
      r = null;
    }
    this.readers.set(base, r);
    return r;
  }

  /**
   * Whether a record starts at `phy` judged by its header only (TOTALSIZE fits the file, magic
   * V1/V2, PHYSICALOFFSET = phy): the index-entry check. Null when one does, else the reason.
   */
  startsAt(phy: number): string | null {
    if (phy < this.minPhysicalOffset) return `before the first CommitLog file (${this.minPhysicalOffset})`;
    if (phy >= this.maxPhysicalOffset) return `past the end of the CommitLog data (${this.maxPhysicalOffset})`;
    const base = Math.floor(phy / this.segmentBytes) * this.segmentBytes;
    const r = this.reader(base);
    if (!r) return `CommitLog file ${offsetToFileName(base)} is missing`;
    const pos = phy - base;
    const h = r.view(pos, 36);
    if (h.available < 36) return 'no record header there';
    const total = r.buf.readInt32BE(h.at);
    const magic = r.buf.readInt32BE(h.at + 4);
    if (magic !== MESSAGE_MAGIC_CODE_V1 && magic !== MESSAGE_MAGIC_CODE_V2) return `no record starts there (magic code ${magic})`;
    if (total <= 36 || total > r.sizeBytes - pos) return `no record starts there (TOTALSIZE would be ${total})`;
    const stored = readLong(r.buf, h.at + 28);
    return stored === phy ? null : `no record starts there (PHYSICALOFFSET there is ${stored})`;
  }

  /** The record starting at `phy`, or why none does there. */
  at(phy: number): ProbeResult {
    if (phy < this.minPhysicalOffset) return { kind: 'invalid', reason: `before the first CommitLog file (${this.minPhysicalOffset})` };
    if (phy >= this.maxPhysicalOffset) return { kind: 'invalid', reason: `past the end of the CommitLog data (${this.maxPhysicalOffset})` };
    const base = Math.floor(phy / this.segmentBytes) * this.segmentBytes;
    const r = this.reader(base);
    if (!r) return { kind: 'invalid', reason: `CommitLog file ${offsetToFileName(base)} is missing` };
    const pos = phy - base;
    const head = r.view(pos, 8);
    if (head.available < 8) return { kind: 'invalid', reason: 'no record header there' };
    const total = r.buf.readInt32BE(head.at);
    if (total <= 8 || total > MAX_SCANNED_RECORD_BYTES || total > r.sizeBytes - pos) return { kind: 'invalid', reason: `no record starts there (TOTALSIZE would be ${total})` };
    const w = r.view(pos, total);
    const c = checkRecord(r.buf, w.at, w.available, { checkCrc: false, expectedPhysicalOffset: phy, delayLevelTableMs: this.delayLevelTableMs });
    if (c.kind === 'valid') return { kind: 'valid', sizeBytes: c.size, dispatch: c.dispatch };
    return { kind: 'invalid', reason: c.kind === 'blank' ? 'a blank end-of-file filler is there' : c.reason };
  }

  close(): void {
    for (const r of this.readers.values()) r?.close();
    this.readers.clear();
  }
}
