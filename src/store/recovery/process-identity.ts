/**
 * Who is process N, as far as the store lock needs to know (Linux /proc, with a fallback).
 *
 * RocketMQ holds `<store>/lock` with an OS file lock (`FileChannel.tryLock`) that the kernel drops
 * when the process dies. Node has no flock, so tsmq records the holder's identity in the file and
 * checks it at the next start:
 *
 * - `/proc/<pid>/stat` field 3 (state; `Z` = zombie, `X` = dead) and field 22 (start time in
 *   clock ticks since boot). Parsed after the LAST `)` because field 2 (comm) may contain spaces
 *   and parentheses. Together with the pid, the start time names one process for the life of a
 *   boot: a reused pid has a later start time.
 * - `/proc/sys/kernel/random/boot_id`: a UUID that changes at every boot, so a lock written before
 *   a reboot is recognised as stale even if its pid and start time happen to match again.
 *
 * - `/proc/<pid>/cmdline`: argv[0], to tell an old lock file that holds only a pid (written by an
 *   earlier tsmq) from an unrelated program that got the pid.
 *
 * Without /proc (macOS, a container without procfs) only liveness is known, from `kill(pid, 0)`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export type ProcessState =
  /** No such process (or it is dead / a zombie): it holds nothing. */
  | { kind: 'gone'; why: string }
  /**
   * A running process; `startTime` is null when it cannot be read (no /proc); `program` is the
   * file name of its argv[0] (`node`, `sleep`), null when unknown.
   */
  | { kind: 'running'; startTime: string | null; program: string | null };

export interface ProcessProbe {
  /** This host's boot id, or null when unknown. */
  bootId(): string | null;
  /** What process `pid` is now. */
  inspect(pid: number): ProcessState;
}

/** Fields of a `/proc/<pid>/stat` line: state (field 3) and starttime (field 22), or null if malformed. */
export function parseProcStat(text: string): { state: string; startTime: string } | null {
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const rest = text.slice(close + 1).trim().split(/\s+/);
  // rest[0] is field 3 (state); field 22 is 19 further on.
  const state = rest[0];
  const startTime = rest[19];
  if (!state || !startTime || !/^\d+$/.test(startTime)) return null;
  return { state, startTime };
}

function livenessBySignal(pid: number): ProcessState {
  try {
    process.kill(pid, 0);
    return { kind: 'running', startTime: null, program: null };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // EPERM: it exists but belongs to another user.
    return code === 'EPERM' ? { kind: 'running', startTime: null, program: null } : { kind: 'gone', why: 'no such process' };
  }
}

/** File name of argv[0] from a /proc cmdline file (NUL-separated), or null. */
function programOf(cmdlineFile: string): string | null {
  try {
    const argv0 = fs.readFileSync(cmdlineFile, 'utf8').split('\0')[0] ?? '';
    return argv0 === '' ? null : path.basename(argv0);
  } catch {
    return null;
  }
}

/** The probe over the real /proc (falls back to `kill(pid, 0)` where /proc is missing). */
export function createProcProbe(procRoot = '/proc'): ProcessProbe {
  const procMounted = (): boolean => fs.existsSync(`${procRoot}/self/stat`);
  return {
    bootId(): string | null {
      try {
        const id = fs.readFileSync(`${procRoot}/sys/kernel/random/boot_id`, 'utf8').trim();
        return id === '' ? null : id;
      } catch {
        return null;
      }
    },
    inspect(pid: number): ProcessState {
      let text: string;
      try {
        text = fs.readFileSync(`${procRoot}/${pid}/stat`, 'utf8');
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' && procMounted()) return { kind: 'gone', why: 'no such process' };
        return livenessBySignal(pid);
      }
      const stat = parseProcStat(text);
      if (!stat) return livenessBySignal(pid);
      if (stat.state === 'Z' || stat.state === 'X' || stat.state === 'x') return { kind: 'gone', why: `process ${pid} is a zombie (state ${stat.state})` };
      return { kind: 'running', startTime: stat.startTime, program: programOf(`${procRoot}/${pid}/cmdline`) };
    },
  };
}

export const procProbe: ProcessProbe = createProcProbe();
