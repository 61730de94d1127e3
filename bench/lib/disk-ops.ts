/**
 * Small disk primitives shared by the baseline and the write-path micro-benchmark: promisified
 * fdatasync on the libuv pool (as the store's FileSystem port does it), sequential positional
 * writes, and file preparation (sparse ftruncate vs writing zeros).
 */
import { closeSync, fdatasync, fsync, ftruncateSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { randomFillSync } from 'node:crypto';
import { MiB, nowMs } from './stats.js';

export function fdatasyncAsync(fd: number): Promise<void> {
  return new Promise((res, rej) => fdatasync(fd, (e) => (e ? rej(e) : res())));
}

export function fsyncAsync(fd: number): Promise<void> {
  return new Promise((res, rej) => fsync(fd, (e) => (e ? rej(e) : res())));
}

/** A buffer of incompressible bytes. */
export function randomBuffer(size: number): Buffer {
  const b = Buffer.allocUnsafe(size);
  randomFillSync(b);
  return b;
}

/** Writes `buf` fully at `position` (loops on short writes). */
export function pwriteAll(fd: number, buf: Buffer, position: number, length = buf.length, offset = 0): void {
  let done = 0;
  while (done < length) {
    done += writeSync(fd, buf, offset + done, length - done, position + done);
  }
}

/**
 * Sequential positional writes of `block` until `totalBytes`, then one fdatasync.
 * Returns the time of the writes alone (page cache) and of writes + fdatasync (on disk).
 */
export async function sequentialWrite(fd: number, block: Buffer, totalBytes: number, startPosition = 0): Promise<{ writeMs: number; totalMs: number; syncMs: number }> {
  const t0 = nowMs();
  for (let pos = 0; pos < totalBytes; pos += block.length) pwriteAll(fd, block, startPosition + pos, Math.min(block.length, totalBytes - pos));
  const t1 = nowMs();
  await fdatasyncAsync(fd);
  const t2 = nowMs();
  return { writeMs: t1 - t0, syncMs: t2 - t1, totalMs: t2 - t0 };
}

/** Creates (truncating) a file of `size` bytes with ftruncate only: sparse, no blocks allocated. */
export function createSparse(path: string, size: number): number {
  const fd = openSync(path, 'w+');
  ftruncateSync(fd, size);
  return fd;
}

/** Creates a file of `size` bytes by writing zeros (1 MiB at a time) and forcing it to disk. */
export async function createPrewritten(path: string, size: number): Promise<{ fd: number; ms: number }> {
  const t0 = nowMs();
  const fd = openSync(path, 'w+');
  const zeros = Buffer.alloc(MiB);
  for (let pos = 0; pos < size; pos += MiB) pwriteAll(fd, zeros, pos, Math.min(MiB, size - pos));
  await fdatasyncAsync(fd);
  return { fd, ms: nowMs() - t0 };
}

export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    /* already closed */
  }
}

/**
 * Writes `bytes` of 1 MiB blocks to a scratch file in `dir` and unlinks it, so the next
 * `bytes` of page cache come from pages the guest touched a moment ago. On a VM whose memory
 * is backed lazily by the host (and handed back by free-page reporting), first-touch of guest
 * memory costs ~2.7 µs per 4 KiB page; warming makes runs comparable. Returns MB/s of the pass
 * (the rate of memory "as found").
 */
export function warmPageCache(dir: string, bytes: number): number {
  const path = `${dir}/.warm-${process.pid}`;
  const fd = openSync(path, 'w+');
  const block = Buffer.alloc(MiB, 0x5a);
  const t0 = nowMs();
  try {
    for (let pos = 0; pos < bytes; pos += MiB) pwriteAll(fd, block, pos, Math.min(MiB, bytes - pos));
    return bytes / 1e6 / ((nowMs() - t0) / 1000);
  } finally {
    closeSync(fd);
    unlinkSync(path);
  }
}

/**
 * The smallest possible group commit, as a reference for SYNC_FLUSH: `producers` closed-loop
 * producers each append 1 KiB with fs.writeSync at the end of `fd` and wait until an fdatasync
 * issued after their write has completed; one fdatasync in flight at a time, the next one starts
 * as soon as the previous returns (or on the next tick when none is running). No encoding,
 * no index: what the disk and libuv allow for 1 KiB messages from Node.
 */
export async function groupCommitModel(fd: number, producers: number, seconds: number): Promise<{ msgsPerSec: number; latencyMs: number[] }> {
  const rec = randomBuffer(1024);
  let pos = 0;
  let flushed = 0;
  let inFlight = false;
  const waiters: Array<{ off: number; res: () => void }> = [];
  const latencyMs: number[] = [];
  let done = 0;
  const t0 = nowMs();
  const end = t0 + seconds * 1000;
  const maybeFlush = (): void => {
    if (inFlight || pos <= flushed || waiters.length === 0) return;
    const target = pos;
    inFlight = true;
    fdatasyncAsync(fd).then(() => {
      inFlight = false;
      flushed = Math.max(flushed, target);
      let n = 0;
      while (n < waiters.length && waiters[n]!.off <= flushed) waiters[n++]!.res();
      waiters.splice(0, n);
      maybeFlush();
    }, (e: unknown) => {
      throw e;
    });
  };
  const producer = async (): Promise<void> => {
    while (nowMs() < end) {
      const s = nowMs();
      pwriteAll(fd, rec, pos);
      pos += rec.length;
      const off = pos;
      await new Promise<void>((res) => {
        waiters.push({ off, res });
        setImmediate(maybeFlush);
      });
      latencyMs.push(nowMs() - s);
      done++;
    }
  };
  await Promise.all(Array.from({ length: producers }, producer));
  return { msgsPerSec: done / ((nowMs() - t0) / 1000), latencyMs };
}
