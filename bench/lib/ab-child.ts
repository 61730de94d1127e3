/**
 * Shared pieces of the A/B benches (bench/broker/*-ab.ts, bench/store/*-ab.ts): each side runs in
 * its own child process, which prints one line `SIDE {json}` with its result.
 */
import { spawn } from 'node:child_process';

/**
 * Runs `node <args>` (stdout piped, stderr inherited) and resolves with the JSON of its
 * `SIDE {json}` line. Rejects when the child cannot start, exits non-zero or prints no such line
 * (the error holds `label`, the exit code and the child's stdout).
 */
export function runSideChild<T>(args: readonly string[], label: string, cwd?: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const p = spawn(process.execPath, [...args], { ...(cwd !== undefined ? { cwd } : {}), stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.on('error', reject);
    p.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('SIDE '));
      if (code !== 0 || !line) reject(new Error(`side ${label} exited ${code}: ${out}`));
      else resolve(JSON.parse(line.slice(5)) as T);
    });
  });
}

/** Median of `xs` (mean of the middle two for an even count; NaN when empty). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}
