/**
 * Bounded-memory file access for the offline store tools (`tsmq store verify|stat|dump|repair`):
 * a windowed reader over one file (a fixed window, grown only for a larger record; never the
 * whole file) and the directory listings of a store (CommitLog segments, ConsumeQueue files,
 * index files), sorted by name. Synchronous: the tools run outside a broker.
 */
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Default window of a `WindowReader`: 4 MiB. */
export const DEFAULT_WINDOW_BYTES = 4 * 1024 * 1024;

/** 20-digit start offset: CommitLog and ConsumeQueue file names. */
export const SEGMENT_NAME = /^\d{20}$/;

/**
 * Reads a file through one window buffer. `view(pos, len)` makes [pos, pos+len) (clamped to the
 * file) present and returns where it is in `buf`; a sequential walk re-reads each byte once.
 */
export class WindowReader {
  buf: Buffer;
  private winStart = 0;
  private winLen = 0;
  readonly fd: number;
  readonly sizeBytes: number;

  constructor(
    readonly path: string,
    windowBytes = DEFAULT_WINDOW_BYTES,
  ) {
    this.fd = openSync(path, 'r');
    this.sizeBytes = fstatSync(this.fd).size;
    this.buf = Buffer.allocUnsafe(Math.max(64, Math.min(windowBytes, this.sizeBytes)));
  }

  /** @returns the buffer offset of `pos` and how many bytes from there are present (≤ what is left in the file). */
  view(pos: number, len: number): { at: number; available: number } {
    const want = Math.max(0, Math.min(len, this.sizeBytes - pos));
    if (pos >= this.winStart && pos + want <= this.winStart + this.winLen) return { at: pos - this.winStart, available: this.winStart + this.winLen - pos };
    if (want > this.buf.length) this.buf = Buffer.allocUnsafe(want);
    let n = 0;
    const toRead = Math.max(0, Math.min(this.buf.length, this.sizeBytes - pos));
    while (n < toRead) {
      const r = readSync(this.fd, this.buf, n, toRead - n, pos + n);
      if (r === 0) break;
      n += r;
    }
    this.winStart = pos;
    this.winLen = n;
    return { at: 0, available: n };
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** Names matching `re` in `dir`, sorted; [] when the directory does not exist. */
export function listNames(dir: string, re: RegExp): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((f) => re.test(f)).sort() : [];
}

/** The ConsumeQueue directories `consumequeue/<topic>/<queueId>`, topics by name, queues by number. */
export function listQueues(root: string): Array<{ topic: string; queueId: number; dir: string }> {
  const cqRoot = join(root, 'consumequeue');
  const out: Array<{ topic: string; queueId: number; dir: string }> = [];
  if (!existsSync(cqRoot)) return out;
  for (const topic of readdirSync(cqRoot).sort()) {
    const tdir = join(cqRoot, topic);
    if (!statSync(tdir).isDirectory()) continue;
    for (const qid of readdirSync(tdir).filter((q) => /^\d+$/.test(q)).sort((a, b) => Number(a) - Number(b))) {
      const dir = join(tdir, qid);
      if (statSync(dir).isDirectory()) out.push({ topic, queueId: Number(qid), dir });
    }
  }
  return out;
}

/** Size of the regular files of a directory's tree in bytes (0 when absent). */
export function treeBytes(dir: string): number {
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    n += st.isDirectory() ? treeBytes(p) : st.size;
  }
  return n;
}

/** ConsumeQueue file size actually used: mappedFileSizeConsumeQueue rounded up to 20-byte units (RocketMQ). */
export function cqFileBytes(mappedFileSizeConsumeQueue: number): number {
  return Math.ceil(mappedFileSizeConsumeQueue / 20) * 20;
}
