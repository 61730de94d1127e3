/**
 * The abort marker and the lock file of a store root (spec §3.2).
 *
 * - `abort`: created when the store starts (holding the PID as text, like 5.x) and removed by a
 *   clean shutdown only when dispatch is caught up. Present at the next start ⇒ the last exit
 *   was abnormal ⇒ abnormal recovery.
 * - `lock`: names the process that has the store open. RocketMQ takes an OS file lock that dies
 *   with the process; Node has no portable advisory lock, so exclusivity is enforced within the
 *   process (a registry of open roots) and across processes by the holder's identity, written as
 *   `key=value` lines:
 *
 *       pid=12345
 *       startTime=1162722        (/proc/<pid>/stat field 22: clock ticks since boot)
 *       bootId=bd18f88a-…        (/proc/sys/kernel/random/boot_id)
 *       recovered=false          (true once this holder's start-up recovery finished)
 *
 *   At the next start the lock is stale (and taken over) when the boot id differs (the host
 *   rebooted), the pid does not exist, the pid is a zombie (a killed broker not yet reaped), or
 *   the pid's start time differs (the pid was reused by another program). A lock whose holder
 *   cannot be verified (no /proc, or an old file holding only a pid) is stale when the pid runs
 *   another program than this one (e.g. `sleep`, not `node`), and otherwise refused while the pid
 *   is alive, with a hint to delete the file. A released lock holds the word `lock`.
 */
import * as path from 'node:path';
import type { FileSystem } from '../../common/fs/file-system.js';
import { procProbe, type ProcessProbe } from './process-identity.js';

const openRoots = new Set<string>();

/** Thrown when the store root is already open (here or in another live process). */
export class StoreLockedError extends Error {
  constructor(root: string, holder: string, hint = '') {
    super(`MQ already started: store ${root} is locked by ${holder}${hint}`);
    this.name = 'StoreLockedError';
  }
}

/**
 * Identity written in the lock file. `startTime`/`bootId` are null when unknown. `recovered`:
 * whether the holder finished its start-up recovery (false while it recovers; null in records of
 * older tsmq versions, read as finished).
 */
export interface LockRecord {
  pid: number;
  startTime: string | null;
  bootId: string | null;
  recovered?: boolean | null;
}

/** Parses a lock file: `key=value` lines, or (older tsmq) a bare pid. Null when it names no process. */
export function parseLockRecord(text: string): LockRecord | null {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) > 0 ? { pid: Number(trimmed), startTime: null, bootId: null, recovered: null } : null;
  const fields = new Map<string, string>();
  for (const line of trimmed.split(/\r?\n/)) {
    const i = line.indexOf('=');
    if (i > 0) fields.set(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  const pid = Number(fields.get('pid') ?? '');
  if (!Number.isInteger(pid) || pid <= 0) return null;
  const startTime = fields.get('startTime') || null;
  const bootId = fields.get('bootId') || null;
  const rec = fields.get('recovered');
  return { pid, startTime, bootId, recovered: rec === 'true' ? true : rec === 'false' ? false : null };
}

export function formatLockRecord(r: LockRecord): string {
  const recovered = r.recovered === true || r.recovered === false ? `recovered=${r.recovered}\n` : '';
  return `pid=${r.pid}\nstartTime=${r.startTime ?? ''}\nbootId=${r.bootId ?? ''}\n${recovered}`;
}

/** This process's lock record. */
export function ownLockRecord(probe: ProcessProbe, pid = process.pid): LockRecord {
  const self = probe.inspect(pid);
  return { pid, startTime: self.kind === 'running' ? self.startTime : null, bootId: probe.bootId() };
}

export type LockVerdict =
  /** Nobody holds the store; `stale` says why a previous record does not count (null: there was none). */
  | { held: false; stale: string | null }
  /** `pid` holds the store; `verified` false when only its liveness could be checked. */
  | { held: true; pid: number; verified: boolean };

/** Decides whether a lock record still names a live holder (see the file comment). */
export function judgeLockRecord(record: LockRecord | null, probe: ProcessProbe, selfPid = process.pid): LockVerdict {
  if (!record) return { held: false, stale: null };
  const { pid } = record;
  if (pid === selfPid) return { held: false, stale: `lock of process ${pid} (this process) from an earlier open` };
  const bootId = probe.bootId();
  if (record.bootId && bootId && record.bootId !== bootId) return { held: false, stale: `lock of process ${pid} was taken before a reboot (boot id ${record.bootId})` };
  const now = probe.inspect(pid);
  if (now.kind === 'gone') return { held: false, stale: `lock of process ${pid}: ${now.why}` };
  if (record.startTime && now.startTime) {
    if (record.startTime !== now.startTime) {
      return { held: false, stale: `lock of process ${pid}: pid now belongs to another process (start time ${now.startTime}, lock says ${record.startTime})` };
    }
    return { held: true, pid, verified: true };
  }
  // An old lock (pid only) or no start time: a live program other than ours cannot be a holder.
  const ours = path.basename(process.execPath);
  if (now.program && now.program !== ours && now.program !== path.basename(process.argv0)) {
    return { held: false, stale: `lock of process ${pid}: that pid now runs ${now.program}, not ${ours}` };
  }
  return { held: true, pid, verified: false };
}

export class StoreLock {
  private constructor(
    private readonly fs: FileSystem,
    private readonly root: string,
    private readonly lockPath: string,
    /** Why a previous lock record was taken over (for the start-up log), or null. */
    readonly tookOverStale: string | null,
    /**
     * True when the previous lock record was written by a process of the current boot (same boot
     * id) that had finished its start-up recovery: if that process crashed, everything it handed
     * to the OS is still in the page cache, in the order it was written, on top of files it had
     * repaired. False when it was another boot, unknown, or a holder that died or failed while
     * recovering (e.g. a start after a power loss that hit a full disk: the files it had not yet
     * repaired are still what the power loss left, so a same-boot verdict would be wrong).
     */
    readonly previousHolderSameBoot: boolean,
    /**
     * True when the previous lock record names another boot (a reboot since it was written): the
     * page cache of that process is gone. False when it was this boot, or unknown (e.g. the lock
     * was released by a shutdown that still kept the abort file).
     */
    readonly previousHolderOtherBoot: boolean,
    private readonly own: LockRecord,
  ) {}

  /**
   * Rewrites the lock record with `recovered=true`: the start-up recovery finished, so a crash of
   * this process from now on leaves a same-boot page cache over repaired files. A failed write
   * (e.g. a full disk) is ignored: the record keeps `recovered=false`, which only makes the next
   * start-up recover more conservatively.
   */
  markRecovered(): void {
    try {
      this.fs.writeFile(this.lockPath, Buffer.from(formatLockRecord({ ...this.own, recovered: true })));
    } catch {
      // see above
    }
  }

  /** Takes the lock. @throws StoreLockedError naming the holding pid. */
  static acquire(fs: FileSystem, rootDir: string, lockPath: string, probe: ProcessProbe = procProbe): StoreLock {
    const root = path.resolve(rootDir);
    if (openRoots.has(root)) throw new StoreLockedError(root, 'this process');
    const previous = parseLockRecord(fs.readFile(lockPath)?.toString('utf8') ?? '');
    const verdict = judgeLockRecord(previous, probe);
    if (verdict.held) {
      const hint = verdict.verified ? '' : ` (its identity cannot be verified; if no broker runs as process ${verdict.pid}, delete ${lockPath})`;
      throw new StoreLockedError(root, `process ${verdict.pid}`, hint);
    }
    const own: LockRecord = { ...ownLockRecord(probe), recovered: false };
    fs.writeFile(lockPath, Buffer.from(formatLockRecord(own)));
    openRoots.add(root);
    const sameBoot = previous !== null && previous.bootId !== null && own.bootId !== null && previous.bootId === own.bootId && previous.recovered !== false;
    const otherBoot = previous !== null && previous.bootId !== null && own.bootId !== null && previous.bootId !== own.bootId;
    return new StoreLock(fs, root, lockPath, verdict.stale, sameBoot, otherBoot, own);
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
