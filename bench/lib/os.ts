/**
 * Operating-system helpers for benchmarks: machine description, page-cache dropping, RSS of a
 * process, free loopback ports, disk space.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statfsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import type { MachineInfo } from './types.js';

export function machineInfo(repoRoot: string, dataDir: string): MachineInfo {
  let gitCommit: string | null = null;
  try {
    gitCommit = execFileSync('git', ['-C', repoRoot, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', repoRoot, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim();
    if (dirty) gitCommit += '+dirty';
  } catch {
    gitCommit = null;
  }
  return {
    date: new Date().toISOString(),
    hostname: os.hostname(),
    platform: `${os.platform()} ${os.arch()}`,
    kernel: os.release(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    ramGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    disk: describeDisk(dataDir),
    gitCommit,
    loadAvgAtStart: Math.round(os.loadavg()[0]! * 100) / 100,
  };
}

/** "ext4 on /dev/vda, 80 GiB free" for the filesystem holding `dir`. */
export function describeDisk(dir: string): string {
  let fsDesc = 'unknown fs';
  try {
    const out = execFileSync('df', ['-T', dir], { encoding: 'utf8' }).trim().split('\n').pop() ?? '';
    const [dev, type] = out.split(/\s+/);
    fsDesc = `${type} on ${dev}`;
  } catch {
    /* df missing: keep unknown */
  }
  return `${fsDesc}, ${Math.round(freeBytes(dir) / 2 ** 30)} GiB free`;
}

export function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

/**
 * Writes back dirty pages and drops the clean page cache (`sync; echo 1 > drop_caches`).
 * Returns false when not permitted (non-root, read-only /proc): callers report it.
 */
export function dropPageCache(): boolean {
  try {
    execFileSync('sync');
    writeFileSync('/proc/sys/vm/drop_caches', '1');
    return true;
  } catch {
    return false;
  }
}

/** `Cached:` of /proc/meminfo in bytes (page cache size), or NaN. */
export function pageCacheBytes(): number {
  try {
    const m = /^Cached:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Resident set size of a process in bytes (VmRSS), or NaN if it is gone. */
export function rssOf(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** RssAnon / RssFile split of a process in bytes (file-backed pages are page cache mappings). */
export function rssBreakdown(pid: number): { anon: number; file: number; shmem: number } {
  try {
    const t = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string): number => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(t)?.[1] ?? NaN) * 1024;
    return { anon: kb('RssAnon'), file: kb('RssFile'), shmem: kb('RssShmem') };
  } catch {
    return { anon: NaN, file: NaN, shmem: NaN };
  }
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export { freePort } from '../../test/support/free-port.js';

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Disk space allocated under `dir` in bytes (du -sk; sparse segment tails do not count). */
export function dirBytes(dir: string): number {
  try {
    return Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split(/\s+/)[0]) * 1024;
  } catch {
    return NaN;
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat; NaN if gone. */
/** User and system CPU-seconds of a process (/proc/<pid>/stat utime and stime; NaN when unreadable). */
export function cpuSplitOf(pid: number): { userS: number; sysS: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { userS: Number(fields[11]) / 100, sysS: Number(fields[12]) / 100 };
  } catch {
    return { userS: NaN, sysS: NaN };
  }
}

/**
 * User and system CPU-seconds of a process's threads (/proc/<pid>/task/<tid>/stat): the main thread
 * (tid = pid) as `main`, the others as `<name>/<tid>` (Node names its threads `node`: GC helpers,
 * libuv pool, workers).
 */
export function cpuByThreadOf(pid: number): Map<string, { userS: number; sysS: number }> {
  const out = new Map<string, { userS: number; sysS: number }>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = Number(tid) === pid ? 'main' : `${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}/${tid}`;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const t = out.get(name) ?? { userS: 0, sysS: 0 };
      t.userS += Number(fields[11]) / 100;
      t.sysS += Number(fields[12]) / 100;
      out.set(name, t);
    } catch {
      // the thread ended
    }
  }
  return out;
}

export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); utime = field 14, stime = field 15 (clock ticks, 100/s on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}
