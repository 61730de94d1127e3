/**
 * An in-memory FileSystem that models the page cache vs the device, for power-loss tests.
 *
 * Every file has a volatile image (what reads see: page cache) and a durable image (what
 * survives `powerLoss()`). pwrite/ftruncate change the volatile image only; fdatasync/fsync copy
 * it to the durable image (asynchronously, after `syncDelayMs`). Directory operations (create,
 * unlink, rename, mkdir) are treated as durable at once — a simplification: the store never
 * relies on them being atomic with data. `writeFileDurable` is durable when it resolves.
 *
 * `powerLoss()` closes every fd and resets every file to its durable image; files never synced
 * keep their durable length (0 bytes of data for a file that was created but never synced,
 * but the length set by ftruncate at creation is treated as durable metadata).
 *
 * fsyncgate (`failNextSync`): the next fdatasync/fsync of a matching file rejects (EIO) and, like
 * Linux after a writeback error, marks the file's dirty pages clean without writing them: from
 * then on a sync writes only 4 KiB pages written after the failure (even with the same bytes), so the bytes dirty at the
 * failure never reach the durable image although later syncs succeed (reads still see them
 * until `powerLoss()`).
 */
import * as path from 'node:path';
import type { FileStat, FileSystem, OpenMode } from '../../src/common/fs/file-system.js';

interface SimFile {
  volatile: Buffer;
  durable: Buffer;
  mtimeMs: number;
  /** After a failed sync: what the "kernel" believes is on the device; syncs write only pages differing from it. */
  clean?: Buffer;
  /** After a failed sync: pages written since the last sync (a write makes a page dirty even with the same bytes, as in Linux). */
  rewritten?: Set<number>;
}

const SIM_PAGE_BYTES = 4096;

function enoent(p: string): Error {
  return Object.assign(new Error(`ENOENT: no such file or directory, ${p}`), { code: 'ENOENT' });
}

export class SimulatedFileSystem implements FileSystem {
  private readonly files = new Map<string, SimFile>();
  private readonly dirs = new Set<string>(['/']);
  private readonly fds = new Map<number, string>();
  private nextFd = 100;
  /** Bumped by powerLoss(): syncs that were in flight then never complete. */
  private generation = 0;
  syncDelayMs = 0;
  syncCalls = 0;
  /** Pending fsyncgate faults: the next sync of a file whose path matches fails with `code`. */
  private readonly syncFaults: Array<{ match: (p: string) => boolean; code: string }> = [];
  /** Paths whose sync failed (fsyncgate), in order. */
  readonly failedSyncs: string[] = [];

  /** The next fdatasync/fsync of a file whose path matches rejects with `code` and drops its dirty pages (see the file comment). */
  failNextSync(match: (p: string) => boolean, code = 'EIO'): void {
    this.syncFaults.push({ match, code });
  }

  private file(fd: number): SimFile {
    const p = this.fds.get(fd);
    const f = p === undefined ? undefined : this.files.get(p);
    if (!f) throw Object.assign(new Error(`EBADF: bad file descriptor ${fd}`), { code: 'EBADF' });
    return f;
  }

  open(p: string, mode: OpenMode): number {
    const exists = this.files.has(p);
    if (mode === 'wx+' && exists) throw Object.assign(new Error(`EEXIST: ${p}`), { code: 'EEXIST' });
    if ((mode === 'r' || mode === 'r+') && !exists) throw enoent(p);
    if (!this.dirs.has(path.dirname(p))) throw enoent(p);
    if (!exists || mode === 'w+') this.files.set(p, { volatile: Buffer.alloc(0), durable: Buffer.alloc(0), mtimeMs: Date.now() });
    const fd = this.nextFd++;
    this.fds.set(fd, p);
    return fd;
  }
  close(fd: number): void {
    if (!this.fds.delete(fd)) throw Object.assign(new Error(`EBADF: ${fd}`), { code: 'EBADF' });
  }
  pread(fd: number, buf: Buffer, off: number, len: number, pos: number): number {
    const f = this.file(fd);
    const n = Math.max(0, Math.min(len, f.volatile.length - pos));
    f.volatile.copy(buf, off, pos, pos + n);
    return n;
  }
  pwrite(fd: number, buf: Buffer, off: number, len: number, pos: number): number {
    const f = this.file(fd);
    if (pos + len > f.volatile.length) {
      const grown = Buffer.alloc(pos + len);
      f.volatile.copy(grown);
      f.volatile = grown;
    }
    buf.copy(f.volatile, pos, off, off + len);
    if (f.clean && len > 0) {
      f.rewritten ??= new Set();
      for (let page = Math.floor(pos / SIM_PAGE_BYTES); page * SIM_PAGE_BYTES < pos + len; page++) f.rewritten.add(page);
    }
    f.mtimeMs = Date.now();
    return len;
  }
  ftruncate(fd: number, len: number): void {
    const f = this.file(fd);
    const next = Buffer.alloc(len);
    f.volatile.copy(next, 0, 0, Math.min(len, f.volatile.length));
    f.volatile = next;
    if (f.durable.length !== len) {
      // the file length is metadata: durable at once, new bytes zero
      const d = Buffer.alloc(len);
      f.durable.copy(d, 0, 0, Math.min(len, f.durable.length));
      f.durable = d;
    }
  }
  async fdatasync(fd: number): Promise<void> {
    this.syncCalls++;
    const f = this.file(fd);
    const p = this.fds.get(fd)!;
    const image = Buffer.from(f.volatile);
    const generation = this.generation;
    const fault = this.syncFaults.findIndex((x) => x.match(p));
    if (this.syncDelayMs > 0) await new Promise((r) => setTimeout(r, this.syncDelayMs));
    else await new Promise((r) => setImmediate(r));
    if (generation !== this.generation) return;
    if (fault >= 0) {
      const { code } = this.syncFaults.splice(fault, 1)[0]!;
      f.clean = image; // dirty pages marked clean, not written
      this.failedSyncs.push(p);
      throw Object.assign(new Error(`injected ${code}`), { code });
    }
    if (!f.clean) {
      f.durable = image;
      return;
    }
    const durable = Buffer.alloc(image.length);
    f.durable.copy(durable, 0, 0, Math.min(image.length, f.durable.length));
    for (let pos = 0; pos < image.length; pos += SIM_PAGE_BYTES) {
      const end = Math.min(image.length, pos + SIM_PAGE_BYTES);
      const before = f.clean.subarray(pos, Math.min(end, f.clean.length));
      const written = f.rewritten?.has(pos / SIM_PAGE_BYTES) ?? false;
      if (written || before.length !== end - pos || !before.equals(image.subarray(pos, end))) image.copy(durable, pos, pos, end);
    }
    f.durable = durable;
    f.clean = image;
    f.rewritten?.clear();
  }
  fsync(fd: number): Promise<void> {
    return this.fdatasync(fd);
  }
  fstatSize(fd: number): number {
    return this.file(fd).volatile.length;
  }
  stat(p: string): FileStat | null {
    const f = this.files.get(p);
    if (f) return { sizeBytes: f.volatile.length, mtimeMs: f.mtimeMs, isDirectory: false, isFile: true };
    if (this.dirs.has(p)) return { sizeBytes: 0, mtimeMs: 0, isDirectory: true, isFile: false };
    return null;
  }
  readdir(dir: string): string[] {
    const out = new Set<string>();
    const prefix = dir.endsWith('/') ? dir : `${dir}/`;
    for (const p of [...this.files.keys(), ...this.dirs]) {
      if (p.startsWith(prefix) && p.length > prefix.length) out.add(p.slice(prefix.length).split('/')[0]!);
    }
    return [...out];
  }
  mkdirp(dir: string): void {
    let d = dir;
    while (!this.dirs.has(d)) {
      this.dirs.add(d);
      d = path.dirname(d);
    }
  }
  unlink(p: string): void {
    this.files.delete(p);
  }
  rmrf(p: string): void {
    const prefix = `${p}/`;
    for (const k of [...this.files.keys()]) if (k === p || k.startsWith(prefix)) this.files.delete(k);
    for (const k of [...this.dirs]) if (k === p || k.startsWith(prefix)) this.dirs.delete(k);
  }
  rename(from: string, to: string): void {
    const f = this.files.get(from);
    if (!f) throw enoent(from);
    this.files.delete(from);
    this.files.set(to, f);
  }
  exists(p: string): boolean {
    return this.files.has(p) || this.dirs.has(p);
  }
  readFile(p: string): Buffer | null {
    const f = this.files.get(p);
    return f ? Buffer.from(f.volatile) : null;
  }
  async writeFileDurable(p: string, data: Buffer): Promise<void> {
    this.mkdirp(path.dirname(p));
    this.files.set(p, { volatile: Buffer.from(data), durable: Buffer.from(data), mtimeMs: Date.now() });
  }
  writeFile(p: string, data: Buffer): void {
    if (!this.dirs.has(path.dirname(p))) throw enoent(p);
    const existing = this.files.get(p);
    this.files.set(p, { volatile: Buffer.from(data), durable: existing?.durable ?? Buffer.alloc(0), mtimeMs: Date.now() });
  }

  /** Power loss: all fds closed, every file back to its durable image. */
  powerLoss(): void {
    this.generation++;
    this.fds.clear();
    for (const f of this.files.values()) {
      f.volatile = Buffer.from(f.durable);
      delete f.clean;
    }
  }

  /** Direct access for assertions and fault injection. */
  fileImage(p: string): Buffer | null {
    return this.files.get(p)?.volatile ?? null;
  }
}
