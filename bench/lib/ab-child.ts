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

/** Options every two-tree A/B bench takes (send-pipeline-ab, pull-inproc-ab, pull-ab, single-put-ab, batch-put-ab). */
export interface RootAbOpts { a: string; b: string; rounds: number; messages: number; size: number; labelA: string; labelB: string }

/**
 * Parses `--a <root> --b <root> [--rounds N] [--messages N] [--size BYTES] [--label-a A] [--label-b B]`
 * over `defaults`; any other `--flag value` goes to `extra` (a bench's own flags), which returns
 * false for a flag it does not know either. @throws Error on an unknown flag, a flag without a
 * value, or a missing --a / --b.
 */
export function parseRootAbArgs(argv: readonly string[], defaults: Pick<RootAbOpts, 'rounds' | 'messages'>, extra?: (flag: string, value: string) => boolean): RootAbOpts {
  const o: RootAbOpts = { a: '', b: '', size: 1024, labelA: 'A', labelB: 'B', ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i]!;
    const v = argv[++i];
    if (v === undefined) throw new Error(`${k} needs a value`);
    if (k === '--a') o.a = v;
    else if (k === '--b') o.b = v;
    else if (k === '--rounds') o.rounds = Number(v);
    else if (k === '--messages') o.messages = Number(v);
    else if (k === '--size') o.size = Number(v);
    else if (k === '--label-a') o.labelA = v;
    else if (k === '--label-b') o.labelB = v;
    else if (!extra?.(k, v)) throw new Error(`unknown flag ${k}`);
  }
  if (!o.a || !o.b) throw new Error('--a <root> and --b <root> are required');
  return o;
}
