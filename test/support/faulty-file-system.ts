/**
 * A FileSystem for tests: delegates to the real Node implementation and lets a test inject
 * faults — a slow fdatasync (delay in ms, resolved by a ref'd timer), failing calls, and counts
 * of fdatasync calls (to observe group commit). `pathFault` targets single files: it sees the
 * operation and the file's path (pwrite and fdatasync on a descriptor are mapped back to the path
 * it was opened with) and returns the error code to throw (fdatasync: reject with), or null to
 * let the call through. `pwriteAsync` (asynchronous CommitLog commits) sees the faults of `pwrite`
 * when it runs, after an optional delay.
 */
import type { FileStat, FileSystem, OpenMode } from '../../src/common/fs/file-system.js';
import { NodeFileSystem } from '../../src/common/fs/node-file-system.js';

export class FaultyFileSystem implements FileSystem {
  private readonly real = new NodeFileSystem();
  /** Extra delay before every fdatasync/fsync completes. */
  fdatasyncDelayMs = 0;
  /** When set, fdatasync rejects with this error code. */
  fdatasyncErrorCode: string | null = null;
  fdatasyncCalls = 0;
  /** When set, pwrite throws this error code (e.g. 'ENOSPC'). */
  pwriteErrorCode: string | null = null;
  /** Per-file faults, e.g. `(op, p) => op === 'open' && p.includes('/consumequeue/') ? 'EIO' : null`. */
  pathFault: ((op: 'open' | 'pwrite' | 'fdatasync' | 'ftruncate', path: string) => string | null) | null = null;
  readonly #paths = new Map<number, string>();

  #inject(op: 'open' | 'pwrite' | 'fdatasync' | 'ftruncate', p: string | undefined): void {
    const code = p === undefined ? null : (this.pathFault?.(op, p) ?? null);
    if (code) throw Object.assign(new Error(`injected ${code}`), { code });
  }

  open(p: string, mode: OpenMode): number {
    this.#inject('open', p);
    const fd = this.real.open(p, mode);
    this.#paths.set(fd, p);
    return fd;
  }
  close(fd: number): void {
    this.#paths.delete(fd);
    this.real.close(fd);
  }
  pread(fd: number, buf: Buffer, off: number, len: number, pos: number): number {
    return this.real.pread(fd, buf, off, len, pos);
  }
  pwrite(fd: number, buf: Buffer, off: number, len: number, pos: number): number {
    if (this.pwriteErrorCode) throw Object.assign(new Error(`injected ${this.pwriteErrorCode}`), { code: this.pwriteErrorCode });
    this.#inject('pwrite', this.#paths.get(fd));
    return this.real.pwrite(fd, buf, off, len, pos);
  }
  /** Extra delay before every pwriteAsync writes (the bytes reach the file only after it). */
  pwriteAsyncDelayMs = 0;
  pwriteAsyncCalls = 0;
  /**
   * pwrite on the libuv pool (asynchronous CommitLog commits, background pre-writes): the faults
   * of `pwrite`, checked when the write runs. Absent with `{ asyncWrites: false }` (callers then
   * use `pwrite`, e.g. the pre-writer's 64 KiB synchronous pieces).
   */
  pwriteAsync?: (fd: number, buf: Buffer, off: number, len: number, pos: number) => Promise<number>;

  constructor(opts: { asyncWrites?: boolean } = {}) {
    if (opts.asyncWrites === false) return;
    this.pwriteAsync = async (fd, buf, off, len, pos) => {
      this.pwriteAsyncCalls++;
      if (this.pwriteAsyncDelayMs > 0) await new Promise((r) => setTimeout(r, this.pwriteAsyncDelayMs));
      else await Promise.resolve();
      if (this.pwriteErrorCode) throw Object.assign(new Error(`injected ${this.pwriteErrorCode}`), { code: this.pwriteErrorCode });
      this.#inject('pwrite', this.#paths.get(fd));
      return this.real.pwriteAsync(fd, buf, off, len, pos);
    };
  }
  ftruncate(fd: number, len: number): void {
    this.#inject('ftruncate', this.#paths.get(fd));
    this.real.ftruncate(fd, len);
  }
  async fdatasync(fd: number): Promise<void> {
    this.fdatasyncCalls++;
    if (this.fdatasyncDelayMs > 0) await new Promise((r) => setTimeout(r, this.fdatasyncDelayMs));
    if (this.fdatasyncErrorCode) throw Object.assign(new Error(`injected ${this.fdatasyncErrorCode}`), { code: this.fdatasyncErrorCode });
    this.#inject('fdatasync', this.#paths.get(fd));
    return this.real.fdatasync(fd);
  }
  async fsync(fd: number): Promise<void> {
    if (this.fdatasyncDelayMs > 0) await new Promise((r) => setTimeout(r, this.fdatasyncDelayMs));
    return this.real.fsync(fd);
  }
  fstatSize(fd: number): number {
    return this.real.fstatSize(fd);
  }
  stat(p: string): FileStat | null {
    return this.real.stat(p);
  }
  readdir(dir: string): string[] {
    return this.real.readdir(dir);
  }
  mkdirp(dir: string): void {
    this.real.mkdirp(dir);
  }
  unlink(p: string): void {
    this.real.unlink(p);
  }
  rmrf(p: string): void {
    this.real.rmrf(p);
  }
  rename(a: string, b: string): void {
    this.real.rename(a, b);
  }
  exists(p: string): boolean {
    return this.real.exists(p);
  }
  readFile(p: string): Buffer | null {
    return this.real.readFile(p);
  }
  writeFileDurable(p: string, data: Buffer): Promise<void> {
    return this.real.writeFileDurable(p, data);
  }
  writeFile(p: string, data: Buffer): void {
    this.real.writeFile(p, data);
  }
}
