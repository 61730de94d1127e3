/**
 * The abort marker and the lock file of a store root (spec §3.2).
 *
 * - `abort`: created when the store starts (holding the PID as text, like 5.x) and removed by a
 *   clean shutdown only when dispatch is caught up. Present at the next start ⇒ the last exit
 *   was abnormal ⇒ abnormal recovery.
 * - `lock`: holds the PID of the process that has the store open. Node has no portable
 *   advisory lock, so exclusivity is enforced within the process (a registry of open roots)
 *   and across processes by refusing a lock file whose PID is a different live process.
 */
import * as path from 'node:path';
import type { FileSystem } from '../../common/fs/file-system.js';

const openRoots = new Set<string>();

/** Thrown when the store root is already open (here or in another live process). */
export class StoreLockedError extends Error {
  constructor(root: string, holder: string) {
    super(`MQ already started: store ${root} is locked by ${holder}`);
    this.name = 'StoreLockedError';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class StoreLock {
  private constructor(
    private readonly fs: FileSystem,
    private readonly root: string,
    private readonly lockPath: string,
  ) {}

  /** Takes the lock. @throws StoreLockedError */
  static acquire(fs: FileSystem, rootDir: string, lockPath: string): StoreLock {
    const root = path.resolve(rootDir);
    if (openRoots.has(root)) throw new StoreLockedError(root, 'this process');
    const previous = fs.readFile(lockPath)?.toString('utf8').trim() ?? '';
    const pid = /^\d+$/.test(previous) ? Number(previous) : 0;
    if (pid > 0 && pid !== process.pid && isAlive(pid)) throw new StoreLockedError(root, `process ${pid}`);
    fs.writeFile(lockPath, Buffer.from(String(process.pid)));
    openRoots.add(root);
    return new StoreLock(fs, root, lockPath);
  }

  /** Releases the lock (the file stays, like RocketMQ's). */
  release(): void {
    openRoots.delete(this.root);
    try {
      this.fs.writeFile(this.lockPath, Buffer.from('lock'));
    } catch {
      // the root may have been removed
    }
  }
}

/** Creates the abort marker with the PID. */
export function createAbortFile(fs: FileSystem, abortPath: string): void {
  fs.writeFile(abortPath, Buffer.from(String(process.pid)));
}
