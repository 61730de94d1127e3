/**
 * Processes and temp dirs of one `bench:vs-apache` run. Every process is spawned in its own
 * process group (detached) and registered here; every temp dir too. `cleanupSync()` SIGKILLs the
 * groups by pid and removes the dirs; it runs at exit and on SIGINT/SIGTERM (Ctrl-C), so nothing
 * outlives the run. Never kills by name.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BenchChild } from '../lib/child.js';

const procs = new Set<ChildProcess>();
const dirs = new Set<string>();

function killGroup(p: ChildProcess, signal: NodeJS.Signals): void {
  if (p.exitCode !== null || p.signalCode !== null || p.pid === undefined) return;
  try {
    process.kill(-p.pid, signal); // its own process group (spawned detached)
  } catch {
    try {
      p.kill(signal);
    } catch {
      /* gone */
    }
  }
}

/** SIGTERM to the process group, SIGKILL after `graceMs`; resolves when the leader has exited. */
export async function stopProc(p: ChildProcess, graceMs = 15_000): Promise<void> {
  if (p.exitCode === null && p.signalCode === null) {
    const exited = new Promise((r) => p.once('exit', r));
    killGroup(p, 'SIGTERM');
    const t = setTimeout(() => killGroup(p, 'SIGKILL'), graceMs);
    await exited;
    clearTimeout(t);
  }
  killGroup(p, 'SIGKILL'); // leftovers of the group (tsx's child node)
  procs.delete(p);
}

export function cleanupSync(): void {
  for (const p of procs) killGroup(p, 'SIGKILL');
  procs.clear();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs.clear();
}

let installed = false;
/** Installs the exit / SIGINT / SIGTERM cleanup (once). */
export function installCleanup(): void {
  if (installed) return;
  installed = true;
  process.on('exit', cleanupSync);
  for (const s of ['SIGINT', 'SIGTERM'] as const) {
    process.on(s, () => {
      console.error(`\n${s}: stopping every process started by this run and removing its temp dirs`);
      cleanupSync();
      process.exit(130);
    });
  }
}

export function tempDir(parent: string, prefix: string): string {
  const d = mkdtempSync(join(parent, prefix));
  dirs.add(d);
  return d;
}

export function removeDir(d: string): void {
  rmSync(d, { recursive: true, force: true });
  dirs.delete(d);
}

export interface SpawnOpts {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** taskset CPU list (e.g. "0", "1", "0,1"); the process and its threads/children stay on them */
  cpus?: string | null;
  /** stdin as a pipe (the load generator reads commands) */
  stdin?: boolean;
}

/** Spawns `cmd args` (under `taskset -c <cpus>` when given) in its own process group. */
export function startProc(cmd: string, args: string[], label: string, o: SpawnOpts): BenchChild {
  const [c, a] = o.cpus ? ['taskset', ['-c', o.cpus, cmd, ...args]] : [cmd, args];
  const p = spawn(c, a, { cwd: o.cwd, stdio: [o.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, ...(o.env ?? {}) } });
  procs.add(p);
  return BenchChild.wrap(p, label);
}

/** Forgets a process that has exited by itself. */
export function forget(p: ChildProcess): void {
  procs.delete(p);
}
