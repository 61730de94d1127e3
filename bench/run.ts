/**
 * Benchmark runner: `npm run bench [-- options]`.
 *
 *   --quick            (default) small sizes, the whole run fits in ~10 minutes on 2 cores
 *   --full             the sizes (1/4/8 GiB recovery, 16 GiB RSS); much longer
 *   --only a,b         run only these benchmarks (plus the ones whose figures they need)
 *   --skip a,b         leave these out
 *   --all              also run opt-in benchmarks (write-path; --full includes them)
 *   --set key=value    pass an option to the benchmarks (repeatable; see bench/README.md)
 *   --dir <path>       where benchmark data goes (default: os.tmpdir(), must be the disk under test)
 *   --out <dir>        where results go (default bench/results)
 *   --list             print the benchmark names and exit
 *
 * Each benchmark runs in its own child process with a fresh data directory that is removed
 * afterwards; the page cache is dropped before each one when permitted. Results go to
 * `<out>/<timestamp>-<mode>.json`, `<out>/latest.json` and `<out>/latest.md`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCHES, type BenchEntry } from './registry.js';
import { dropPageCache, freeBytes, machineInfo } from './lib/os.js';
import { evaluateMetric, renderConsole, renderMarkdown } from './lib/report.js';
import type { BenchMode, BenchOutput, BenchResult, Figures, RunReport } from './lib/types.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(benchDir, '..');

interface RunOptions {
  mode: BenchMode;
  only: string[];
  skip: string[];
  all: boolean;
  set: Record<string, string>;
  dataDir: string;
  outDir: string;
  list: boolean;
}

function parseArgs(argv: string[]): RunOptions {
  const o: RunOptions = { mode: 'quick', only: [], skip: [], all: false, set: {}, dataDir: os.tmpdir(), outDir: join(benchDir, 'results'), list: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--quick') o.mode = 'quick';
    else if (a === '--full') o.mode = 'full';
    else if (a === '--only') o.only.push(...next().split(','));
    else if (a === '--skip') o.skip.push(...next().split(','));
    else if (a === '--all') o.all = true;
    else if (a === '--list') o.list = true;
    else if (a === '--dir') o.dataDir = resolve(next());
    else if (a === '--out') o.outDir = resolve(next());
    else if (a === '--set') {
      const kv = next();
      const eq = kv.indexOf('=');
      if (eq <= 0) throw new Error(`--set expects key=value, got ${kv}`);
      o.set[kv.slice(0, eq)] = kv.slice(eq + 1);
    } else throw new Error(`unknown argument ${a} (see the header of bench/run.ts)`);
  }
  const known = new Set(BENCHES.map((b) => b.name));
  for (const n of [...o.only, ...o.skip]) if (!known.has(n)) throw new Error(`unknown benchmark ${n}; known: ${[...known].join(', ')}`);
  return o;
}

/** Selected benchmarks in registry order, with the ones they need added. */
function select(o: RunOptions): BenchEntry[] {
  const wanted = new Set<string>();
  const add = (name: string): void => {
    if (wanted.has(name)) return;
    wanted.add(name);
    for (const n of BENCHES.find((b) => b.name === name)?.needs ?? []) add(n);
  };
  if (o.only.length) o.only.forEach(add);
  else for (const b of BENCHES) if (!b.optIn || o.all || o.mode === 'full') add(b.name);
  for (const s of o.skip) wanted.delete(s);
  return BENCHES.filter((b) => wanted.has(b.name));
}

async function runChild(entry: BenchEntry, o: RunOptions, figures: Figures): Promise<BenchResult> {
  const startedAt = new Date().toISOString();
  const t0 = Date.now();
  const base = { name: entry.name, title: entry.title, startedAt, metrics: [], loadAvgAtStart: Math.round(os.loadavg()[0]! * 100) / 100 };
  if (entry.fullOnly && o.mode !== 'full' && !o.only.includes(entry.name)) {
    return { ...base, durationMs: 0, skipped: `full mode only (npm run bench -- --full, or --only ${entry.name} for its small quick sizes)` };
  }
  const workDir = mkdtempSync(join(o.dataDir, `tsmq-bench-${entry.name}-`));
  const ctxFile = join(workDir, '.ctx.json');
  const outFile = join(workDir, '.result.json');
  writeFileSync(ctxFile, JSON.stringify({ name: entry.name, ctx: { mode: o.mode, workDir, repoRoot, figures, options: o.set } }));
  const timeoutMs = (o.mode === 'full' ? 120 : 10) * 60_000;
  try {
    const code = await new Promise<number | null>((res) => {
      const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', join(benchDir, 'lib/child-main.ts'), join(benchDir, entry.file), ctxFile, outFile], {
        cwd: repoRoot,
        stdio: ['ignore', 'inherit', 'inherit'],
        detached: true,
        env: { ...process.env, TSMQ_LOG_LEVEL: process.env.TSMQ_LOG_LEVEL ?? 'warn' },
      });
      const killGroup = (): void => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      };
      const timer = setTimeout(() => {
        process.stderr.write(`  [${entry.name}] timed out after ${timeoutMs / 60_000} min, killing\n`);
        killGroup();
      }, timeoutMs);
      const onSignal = (): void => {
        killGroup();
        process.exit(130);
      };
      process.once('SIGINT', onSignal);
      child.once('exit', (c) => {
        clearTimeout(timer);
        process.off('SIGINT', onSignal);
        killGroup(); // anything the benchmark left running (brokers, redis)
        res(c);
      });
    });
    if (!existsSync(outFile)) return { ...base, durationMs: Date.now() - t0, error: `child exited with ${code} without a result` };
    const r = JSON.parse(readFileSync(outFile, 'utf8')) as { output?: BenchOutput; skipped?: string; error?: string };
    const out: BenchOutput = r.output ?? { metrics: [] };
    return { ...base, ...out, metrics: out.metrics.map(evaluateMetric), durationMs: Date.now() - t0, skipped: r.skipped, error: r.error };
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const o = parseArgs(argv);
  if (o.list) {
    for (const b of BENCHES) console.log(`${b.name.padEnd(18)} ${b.title}${b.fullOnly ? ' [full only]' : ''}${b.optIn ? ' [opt-in]' : ''}`);
    return;
  }
  const selected = select(o);
  const machine = machineInfo(repoRoot, o.dataDir);
  process.stderr.write(`tsmq bench (${o.mode}): ${selected.map((b) => b.name).join(', ')}\n`);
  process.stderr.write(`  ${machine.cores} cores, ${machine.ramGiB} GiB RAM, node ${machine.node}, data in ${o.dataDir} (${machine.disk})\n`);
  if (machine.loadAvgAtStart > 0.5) process.stderr.write(`  warning: load average ${machine.loadAvgAtStart} before the run: other work on this machine will skew the figures\n`);
  const figures: Figures = {};
  const results: BenchResult[] = [];
  for (const entry of selected) {
    const dropped = dropPageCache();
    process.stderr.write(`\n== ${entry.name}: ${entry.title}${dropped ? '' : ' (page cache not dropped: not permitted)'}\n`);
    const r = await runChild(entry, o, figures);
    for (const [k, v] of Object.entries(r.figures ?? {})) figures[`${entry.name}.${k}`] = v;
    results.push(r);
    const status = r.error ? `ERROR ${r.error.split('\n')[0]}` : r.skipped ? `skipped: ${r.skipped}` : `${r.metrics.length} metrics`;
    process.stderr.write(`== ${entry.name} done in ${(r.durationMs / 1000).toFixed(1)} s: ${status}\n`);
    if (freeBytes(o.dataDir) < 5 * 2 ** 30) process.stderr.write(`  warning: less than 5 GiB free in ${o.dataDir}\n`);
  }
  const report: RunReport = { mode: o.mode, argv, machine, results };
  mkdirSync(o.outDir, { recursive: true });
  const stamp = machine.date.replace(/[:.]/g, '-');
  const json = JSON.stringify(report, null, 2);
  const partial = o.only.length > 0 || o.skip.length > 0;
  writeFileSync(join(o.outDir, `${stamp}-${o.mode}${partial ? '-partial' : ''}.json`), json);
  writeFileSync(join(o.outDir, 'latest.json'), json);
  writeFileSync(join(o.outDir, 'latest.md'), renderMarkdown(report));
  process.stdout.write('\n' + renderConsole(report));
  process.stdout.write(`\nresults: ${join(o.outDir, 'latest.md')}\n`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
