/**
 * FileSystem port implemented with Node's `fs`. Positional I/O uses the *Sync calls (page cache
 * only); fdatasync/fsync use the callback API so they run on the libuv thread pool, never on the
 * event-loop thread.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FileStat, FileSystem, OpenMode } from './file-system.js';

function promisifyFd(op: (fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => void, fd: number): Promise<void> {
  return new Promise((resolve, reject) => op(fd, (err) => (err ? reject(err) : resolve())));
}

export class NodeFileSystem implements FileSystem {
  open(p: string, mode: OpenMode): number {
    return fs.openSync(p, mode);
  }

  close(fd: number): void {
    fs.closeSync(fd);
  }

  pread(fd: number, buf: Buffer, bufOffset: number, length: number, position: number): number {
    let done = 0;
    while (done < length) {
      const n = fs.readSync(fd, buf, bufOffset + done, length - done, position + done);
      if (n === 0) break;
      done += n;
    }
    return done;
  }

  pwrite(fd: number, buf: Buffer, bufOffset: number, length: number, position: number): number {
    let done = 0;
    while (done < length) {
      done += fs.writeSync(fd, buf, bufOffset + done, length - done, position + done);
    }
    return done;
  }

  async pwriteAsync(fd: number, buf: Buffer, bufOffset: number, length: number, position: number): Promise<number> {
    let done = 0;
    while (done < length) {
      done += await new Promise<number>((resolve, reject) =>
        fs.write(fd, buf, bufOffset + done, length - done, position + done, (err, n) => (err ? reject(err) : resolve(n))),
      );
    }
    return done;
  }

  ftruncate(fd: number, lengthBytes: number): void {
    fs.ftruncateSync(fd, lengthBytes);
  }

  fdatasync(fd: number): Promise<void> {
    return promisifyFd(fs.fdatasync, fd);
  }

  fsync(fd: number): Promise<void> {
    return promisifyFd(fs.fsync, fd);
  }

  fstatSize(fd: number): number {
    return fs.fstatSync(fd).size;
  }

  stat(p: string): FileStat | null {
    const s = fs.statSync(p, { throwIfNoEntry: false });
    if (!s) return null;
    return { sizeBytes: s.size, mtimeMs: s.mtimeMs, isDirectory: s.isDirectory(), isFile: s.isFile() };
  }

  readdir(dir: string): string[] {
    try {
      return fs.readdirSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
  }

  mkdirp(dir: string): void {
    fs.mkdirSync(dir, { recursive: true });
  }

  unlink(p: string): void {
    fs.rmSync(p, { force: true });
  }

  rmrf(p: string): void {
    fs.rmSync(p, { recursive: true, force: true });
  }

  rename(from: string, to: string): void {
    fs.renameSync(from, to);
  }

  exists(p: string): boolean {
    return fs.existsSync(p);
  }

  readFile(p: string): Buffer | null {
    try {
      return fs.readFileSync(p);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async writeFileDurable(p: string, data: Buffer): Promise<void> {
    const tmp = `${p}.tmp`;
    const fd = fs.openSync(tmp, 'w');
    try {
      this.pwrite(fd, data, 0, data.length, 0);
      await this.fsync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, p);
    await this.fsyncDir(path.dirname(p));
  }

  writeFile(p: string, data: Buffer): void {
    fs.writeFileSync(p, data);
  }

  private async fsyncDir(dir: string): Promise<void> {
    let fd: number;
    try {
      fd = fs.openSync(dir, 'r');
    } catch {
      return; // platforms that cannot open directories
    }
    try {
      await this.fsync(fd).catch(() => undefined);
    } finally {
      fs.closeSync(fd);
    }
  }
}

/** Process-wide default instance. */
export const nodeFileSystem: FileSystem = new NodeFileSystem();
