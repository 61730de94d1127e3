/**
 * The simulation's disk: an in-memory FileSystem with a page cache, a device, seeded faults and
 * power loss at any I/O step. Everything random comes from the PRNG it is given.
 *
 * Model (page = 4096 bytes, sector = 512 bytes):
 * - Every file has a volatile image (what reads see: the page cache) and a durable image (the
 *   device). pwrite/writeFile change the volatile image and mark pages dirty (pwriteAsync after a
 *   seeded latency: the async CommitLog commit). fdatasync/fsync
 *   capture the dirty pages when called and copy them to the device when they complete (after a
 *   seeded latency on the virtual event loop); a page written again meanwhile stays dirty.
 * - Metadata is durable at once: creating, renaming and deleting files and directories, and a
 *   file's length set by ftruncate (extension is sparse: new bytes are zero on both images).
 *   `writeFileDurable` is atomic and durable when it resolves.
 * - Space: pages are allocated on first write; a write that needs a page beyond `capacityBytes`
 *   throws ENOSPC and writes nothing. `usedRatio()` feeds the store's DiskUsageProbe.
 * - Faults (set by the simulator, each drawn per call): pwrite → ENOSPC/EIO, fdatasync → EIO.
 *   After a failed fdatasync, `fsyncFailure` says what happened to the dirty pages:
 *   'stay-dirty' (a later fdatasync writes them) or 'dropped' (Linux writeback-error semantics:
 *   marked clean without reaching the device, so only a rewrite makes them durable again).
 * - Crash: when the mutating I/O operation number `crashAtOp` is reached, the power fails before
 *   it takes effect. The durable image is frozen with, per file, a seeded part of what was not
 *   synced: a prefix of the dirty pages (in file order) or a random subset, where a page at the
 *   edge may be torn at a sector boundary. From then on every call fails with EIO (close
 *   succeeds) and in-flight syncs never reach the device. `restartAfterPowerLoss()` gives a new
 *   file system holding the frozen image.
 */
import * as path from 'node:path';
import type { FileStat, FileSystem, OpenMode } from '../../src/common/fs/file-system.js';
import type { Clock } from '../../src/common/time/clock.js';

export const PAGE_BYTES = 4096;
const SECTOR_BYTES = 512;

export type FsyncFailureSemantics = 'stay-dirty' | 'dropped';

export interface FaultRates {
  /** Probability that a pwrite throws ENOSPC. */
  pwriteEnospc: number;
  /** Probability that a pwrite throws EIO. */
  pwriteEio: number;
  /** Probability that an fdatasync/fsync rejects with EIO. */
  fsyncEio: number;
}

export const NO_FAULTS: FaultRates = { pwriteEnospc: 0, pwriteEio: 0, fsyncEio: 0 };

interface SimFile {
  volatile: Buffer;
  durable: Buffer;
  /** Pages whose volatile content may differ from the device, with their write version. */
  dirty: Map<number, number>;
  /** Write version of each page's content on the device (a slower sync of an older version must not overwrite it). */
  durableVersion: Map<number, number>;
  /** Truncations (write version, new length): a sync captured before one must not bring cut bytes back. */
  cuts: Array<{ version: number; len: number }>;
  allocated: Set<number>;
  mtimeMs: number;
}

function err(code: string, what: string): Error {
  return Object.assign(new Error(`${code}: ${what}`), { code });
}

export interface CrashStats {
  ioOps: number;
  fsyncs: number;
  injectedFaults: number;
  enospc: number;
}

export class CrashFileSystem implements FileSystem {
  private readonly files = new Map<string, SimFile>();
  private readonly dirs = new Set<string>(['/']);
  private readonly fds = new Map<number, string>();
  private nextFd = 100;
  private writeVersion = 0;
  private allocatedPages = 0;
  /** The frozen durable image once the power failed. */
  private frozen: Map<string, Buffer> | null = null;
  private frozenDirs: Set<string> | null = null;
  faults: FaultRates = NO_FAULTS;
  fsyncFailure: FsyncFailureSemantics = 'stay-dirty';
  /** Mutating I/O operation number at which the power fails (Infinity: never). */
  crashAtOp = Infinity;
  /** Called once, synchronously, at the moment the power fails. */
  onCrash: (() => void) | null = null;
  /** Max latency of a sync in virtual ms (0 = completes on the next immediate). */
  syncLatencyMs = 2;
  readonly stats: CrashStats = { ioOps: 0, fsyncs: 0, injectedFaults: 0, enospc: 0 };
  /** 0 for the first disk, +1 for each restart after a power loss. */
  generation = 0;

  constructor(
    private readonly rand: () => number,
    private readonly clock: Clock,
    /** Device size; the simulator grows it when a start fails on a full disk (an operator freeing space). */
    public capacityBytes: number,
  ) {}

  get crashed(): boolean {
    return this.frozen !== null;
  }

  /** Used fraction of the capacity (two decimals, rounded up like RocketMQ's probe). */
  usedRatio(): number {
    return Math.ceil((this.allocatedPages * PAGE_BYTES * 100) / this.capacityBytes) / 100;
  }

  // ---- fault and crash plumbing ----

  private dead(what: string): never {
    throw err('EIO', `${what}: the simulated machine lost power (disk ${this.generation})`);
  }

  /** Counts a mutating operation; fails the power when its number comes up. */
  private step(what: string): void {
    if (this.frozen) this.dead(what);
    this.stats.ioOps++;
    if (this.stats.ioOps >= this.crashAtOp) {
      this.powerFail();
      this.dead(what);
    }
  }

  private file(fd: number): SimFile {
    const p = this.fds.get(fd);
    const f = p === undefined ? undefined : this.files.get(p);
    if (!f) throw err('EBADF', `bad file descriptor ${fd}`);
    return f;
  }

  private pathOf(fd: number): string {
    return this.fds.get(fd) ?? '?';
  }

  /** Allocates the pages [pos, pos+len) needs; ENOSPC (nothing allocated) when they do not fit. */
  private allocate(f: SimFile, pos: number, len: number, what: string): void {
    if (len <= 0) return;
    const first = Math.floor(pos / PAGE_BYTES);
    const last = Math.floor((pos + len - 1) / PAGE_BYTES);
    let need = 0;
    for (let p = first; p <= last; p++) if (!f.allocated.has(p)) need++;
    if ((this.allocatedPages + need) * PAGE_BYTES > this.capacityBytes) {
      this.stats.enospc++;
      throw err('ENOSPC', `no space left on device, ${what}`);
    }
    for (let p = first; p <= last; p++) f.allocated.add(p);
    this.allocatedPages += need;
  }

  private release(f: SimFile): void {
    this.allocatedPages -= f.allocated.size;
    f.allocated.clear();
  }

  private markDirty(f: SimFile, pos: number, len: number): void {
    if (len <= 0) return;
    const v = ++this.writeVersion;
    for (let p = Math.floor(pos / PAGE_BYTES); p <= Math.floor((pos + len - 1) / PAGE_BYTES); p++) f.dirty.set(p, v);
  }

  private newFile(): SimFile {
    return { volatile: Buffer.alloc(0), durable: Buffer.alloc(0), dirty: new Map(), durableVersion: new Map(), cuts: [], allocated: new Set(), mtimeMs: this.clock.nowMs() };
  }

  // ---- FileSystem ----

  open(p: string, mode: OpenMode): number {
    if (this.frozen) this.dead(`open ${p}`);
    const exists = this.files.has(p);
    if (mode === 'wx+' && exists) throw err('EEXIST', p);
    if ((mode === 'r' || mode === 'r+') && !exists) throw err('ENOENT', `no such file or directory, ${p}`);
    if (!this.dirs.has(path.dirname(p))) throw err('ENOENT', `no such file or directory, ${p}`);
    if (!exists || mode === 'w+') {
      this.step(`open ${p}`);
      const old = this.files.get(p);
      if (old) this.release(old);
      this.files.set(p, this.newFile());
    }
    const fd = this.nextFd++;
    this.fds.set(fd, p);
    return fd;
  }

  close(fd: number): void {
    if (this.frozen) {
      this.fds.delete(fd);
      return;
    }
    if (!this.fds.delete(fd)) throw err('EBADF', String(fd));
  }

  pread(fd: number, buf: Buffer, off: number, len: number, pos: number): number {
    if (this.frozen) this.dead('pread');
    const f = this.file(fd);
    const n = Math.max(0, Math.min(len, f.volatile.length - pos));
    f.volatile.copy(buf, off, pos, pos + n);
    return n;
  }

  pwrite(fd: number, buf: Buffer, off: number, len: number, pos: number): number {
    const f = this.file(fd);
    this.step(`pwrite ${this.pathOf(fd)}`);
    if (this.faults.pwriteEnospc > 0 && this.rand() < this.faults.pwriteEnospc) {
      this.stats.injectedFaults++;
      throw err('ENOSPC', `injected: no space left on device, pwrite ${this.pathOf(fd)}`);
    }
    if (this.faults.pwriteEio > 0 && this.rand() < this.faults.pwriteEio) {
      this.stats.injectedFaults++;
      throw err('EIO', `injected: i/o error, pwrite ${this.pathOf(fd)}`);
    }
    this.allocate(f, pos, len, `pwrite ${this.pathOf(fd)}`);
    if (pos + len > f.volatile.length) {
      const grown = Buffer.alloc(pos + len);
      f.volatile.copy(grown);
      f.volatile = grown;
    }
    buf.copy(f.volatile, pos, off, off + len);
    this.markDirty(f, pos, len);
    f.mtimeMs = this.clock.nowMs();
    return len;
  }

  /**
   * `pwrite` on the "libuv pool" (asynchronous CommitLog commits, pre-writes): takes effect, with
   * the faults of `pwrite`, after a seeded latency on the virtual event loop; a power failure
   * before then loses it (it never reached the page cache).
   */
  async pwriteAsync(fd: number, buf: Buffer, off: number, len: number, pos: number): Promise<number> {
    const f = this.file(fd);
    const p = this.pathOf(fd);
    const latency = Math.floor(this.rand() * 2);
    await new Promise((resolve) => (latency === 0 ? setImmediate(resolve) : setTimeout(resolve, latency)));
    if (this.frozen) this.dead(`pwriteAsync ${p}`);
    // a descriptor names the file it was opened on (an inode), not its path: a write to a file
    // unlinked (or replaced by a new one of the same name) meanwhile cannot be seen by anyone
    if (this.files.get(p) !== f) return len;
    return this.pwrite(fd, buf, off, len, pos);
  }

  ftruncate(fd: number, len: number): void {
    const f = this.file(fd);
    this.step(`ftruncate ${this.pathOf(fd)}`);
    const resize = (b: Buffer): Buffer => {
      const next = Buffer.alloc(len);
      b.copy(next, 0, 0, Math.min(len, b.length));
      return next;
    };
    f.volatile = resize(f.volatile);
    f.durable = resize(f.durable); // the length is metadata: durable at once
    const lastPage = Math.ceil(len / PAGE_BYTES);
    for (const p of [...f.dirty.keys()]) if (p >= lastPage) f.dirty.delete(p);
    // the cut is durable at once: pages wholly beyond it get a new device version (no older sync
    // may write them back); a dirty page holding the new end stays dirty, and syncs captured
    // before the cut apply without the cut bytes
    const v = ++this.writeVersion;
    for (const p of [...f.durableVersion.keys()]) if (p >= lastPage) f.durableVersion.set(p, v);
    const edge = Math.floor(len / PAGE_BYTES);
    if (len % PAGE_BYTES !== 0 && f.dirty.has(edge)) f.dirty.set(edge, v);
    f.cuts.push({ version: v, len });
    if (f.cuts.length > 16) f.cuts.shift();
    for (const p of [...f.allocated]) {
      if (p >= lastPage) {
        f.allocated.delete(p);
        this.allocatedPages--;
      }
    }
  }

  async fdatasync(fd: number): Promise<void> {
    const f = this.file(fd);
    this.step(`fdatasync ${this.pathOf(fd)}`);
    this.stats.fsyncs++;
    const fail = this.faults.fsyncEio > 0 && this.rand() < this.faults.fsyncEio;
    const captured = [...f.dirty.entries()].map(([page, version]) => ({ page, version, bytes: Buffer.from(f.volatile.subarray(page * PAGE_BYTES, (page + 1) * PAGE_BYTES)) }));
    const latency = Math.floor(this.rand() * (this.syncLatencyMs + 1));
    await new Promise((resolve) => (latency === 0 ? setImmediate(resolve) : setTimeout(resolve, latency)));
    if (this.frozen) this.dead(`fdatasync ${this.pathOf(fd)}`);
    if (fail) {
      this.stats.injectedFaults++;
      if (this.fsyncFailure === 'dropped') for (const c of captured) if (f.dirty.get(c.page) === c.version) f.dirty.delete(c.page);
      throw err('EIO', `injected: i/o error, fdatasync ${this.pathOf(fd)}`);
    }
    for (const c of captured) {
      const start = c.page * PAGE_BYTES;
      if (start >= f.durable.length) continue; // truncated meanwhile
      if ((f.durableVersion.get(c.page) ?? 0) < c.version) {
        // syncs may complete out of order; the device never goes back to an older page version
        for (const cut of f.cuts) if (cut.version > c.version && cut.len < start + c.bytes.length) c.bytes.fill(0, Math.max(0, cut.len - start));
        c.bytes.copy(f.durable, start, 0, Math.min(c.bytes.length, f.durable.length - start));
        f.durableVersion.set(c.page, c.version);
      }
      if (f.dirty.get(c.page) === c.version) f.dirty.delete(c.page);
    }
  }

  fsync(fd: number): Promise<void> {
    return this.fdatasync(fd);
  }

  fstatSize(fd: number): number {
    if (this.frozen) this.dead('fstat');
    return this.file(fd).volatile.length;
  }

  stat(p: string): FileStat | null {
    if (this.frozen) this.dead(`stat ${p}`);
    const f = this.files.get(p);
    if (f) return { sizeBytes: f.volatile.length, mtimeMs: f.mtimeMs, isDirectory: false, isFile: true };
    if (this.dirs.has(p)) return { sizeBytes: 0, mtimeMs: 0, isDirectory: true, isFile: false };
    return null;
  }

  readdir(dir: string): string[] {
    if (this.frozen) this.dead(`readdir ${dir}`);
    const out = new Set<string>();
    const prefix = dir.endsWith('/') ? dir : `${dir}/`;
    for (const p of [...this.files.keys(), ...this.dirs]) {
      if (p.startsWith(prefix) && p.length > prefix.length) out.add(p.slice(prefix.length).split('/')[0]!);
    }
    return [...out].sort();
  }

  mkdirp(dir: string): void {
    if (this.dirs.has(dir)) return;
    this.step(`mkdir ${dir}`);
    let d = dir;
    while (!this.dirs.has(d)) {
      this.dirs.add(d);
      d = path.dirname(d);
    }
  }

  unlink(p: string): void {
    if (!this.files.has(p)) return;
    this.step(`unlink ${p}`);
    this.release(this.files.get(p)!);
    this.files.delete(p);
  }

  rmrf(p: string): void {
    this.step(`rmrf ${p}`);
    const prefix = `${p}/`;
    for (const [k, f] of [...this.files]) {
      if (k === p || k.startsWith(prefix)) {
        this.release(f);
        this.files.delete(k);
      }
    }
    for (const k of [...this.dirs]) if (k === p || k.startsWith(prefix)) this.dirs.delete(k);
  }

  rename(from: string, to: string): void {
    const f = this.files.get(from);
    if (!f) throw err('ENOENT', from);
    this.step(`rename ${from}`);
    const old = this.files.get(to);
    if (old) this.release(old);
    this.files.delete(from);
    this.files.set(to, f);
  }

  exists(p: string): boolean {
    if (this.frozen) this.dead(`exists ${p}`);
    return this.files.has(p) || this.dirs.has(p);
  }

  readFile(p: string): Buffer | null {
    if (this.frozen) this.dead(`readFile ${p}`);
    const f = this.files.get(p);
    return f ? Buffer.from(f.volatile) : null;
  }

  async writeFileDurable(p: string, data: Buffer): Promise<void> {
    this.step(`writeFileDurable ${p}`);
    this.mkdirp(path.dirname(p));
    const f = this.newFile();
    this.allocate(f, 0, data.length, `writeFileDurable ${p}`);
    f.volatile = Buffer.from(data);
    f.durable = Buffer.from(data);
    const old = this.files.get(p);
    if (old) this.release(old);
    this.files.set(p, f);
    await new Promise((resolve) => setImmediate(resolve));
    if (this.frozen) this.dead(`writeFileDurable ${p}`);
  }

  writeFile(p: string, data: Buffer): void {
    if (!this.dirs.has(path.dirname(p))) throw err('ENOENT', p);
    this.step(`writeFile ${p}`);
    const old = this.files.get(p);
    const f = this.newFile();
    this.allocate(f, 0, data.length, `writeFile ${p}`);
    if (old) this.release(old);
    // the new content is in the page cache only; the device keeps the old content (or nothing)
    f.volatile = Buffer.from(data);
    f.durable = old ? old.durable : Buffer.alloc(0);
    this.markDirty(f, 0, data.length);
    this.files.set(p, f);
  }

  // ---- power loss ----

  /** Freezes the durable image now, with a seeded part of the unsynced pages (file comment). */
  powerFail(): void {
    if (this.frozen) return;
    const image = new Map<string, Buffer>();
    for (const [p, f] of [...this.files].sort(([a], [b]) => (a < b ? -1 : 1))) {
      let cur = Buffer.from(f.durable);
      const dirty = [...f.dirty.keys()].sort((a, b) => a - b);
      if (dirty.length > 0) {
        const prefixMode = this.rand() < 0.6;
        const keepCount = Math.floor(this.rand() * (dirty.length + 1));
        dirty.forEach((page, i) => {
          let keepBytes: number;
          if (prefixMode) keepBytes = i < keepCount ? PAGE_BYTES : i === keepCount ? Math.floor(this.rand() * (PAGE_BYTES / SECTOR_BYTES)) * SECTOR_BYTES : 0;
          else {
            const r = this.rand();
            keepBytes = r < 0.45 ? PAGE_BYTES : r < 0.55 ? Math.floor(this.rand() * (PAGE_BYTES / SECTOR_BYTES)) * SECTOR_BYTES : 0;
          }
          const start = page * PAGE_BYTES;
          const end = Math.min(start + keepBytes, f.volatile.length);
          if (end <= start) return;
          if (end > cur.length) {
            // a write past the durable length (writeFile/append growth) brings the length with it
            const grown = Buffer.alloc(end);
            cur.copy(grown);
            cur = grown;
          }
          f.volatile.copy(cur, start, start, end);
        });
      }
      image.set(p, cur);
    }
    this.frozen = image;
    this.frozenDirs = new Set(this.dirs);
    this.onCrash?.();
  }

  /** A fresh file system holding what survived the power failure (powerFail() first if needed). */
  restartAfterPowerLoss(rand: () => number): CrashFileSystem {
    this.powerFail();
    const next = new CrashFileSystem(rand, this.clock, this.capacityBytes);
    for (const d of this.frozenDirs!) next.dirs.add(d);
    for (const [p, data] of this.frozen!) {
      const f = next.newFile();
      f.volatile = Buffer.from(data);
      f.durable = Buffer.from(data);
      f.mtimeMs = this.files.get(p)?.mtimeMs ?? this.clock.nowMs();
      for (let page = 0; page * PAGE_BYTES < data.length; page++) {
        if (this.files.get(p)?.allocated.has(page) ?? true) f.allocated.add(page);
      }
      next.allocatedPages += f.allocated.size;
      next.files.set(p, f);
    }
    next.generation = this.generation + 1;
    next.fsyncFailure = this.fsyncFailure;
    next.syncLatencyMs = this.syncLatencyMs;
    return next;
  }

  /** Overwrites a file on both images (the simulator's stand-in for what a reboot changes). */
  replaceDurably(p: string, data: Buffer): void {
    const f = this.files.get(p);
    if (!f) return;
    this.release(f);
    f.volatile = Buffer.from(data);
    f.durable = Buffer.from(data);
    f.dirty.clear();
    this.allocate(f, 0, data.length, p);
  }
}
