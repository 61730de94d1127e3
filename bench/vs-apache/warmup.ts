/**
 * The warm-up of a bench/vs-apache phase and its per-interval trace.
 *
 * A warm-up runs the phase's load and ends at the first interval boundary where all of these hold:
 * - at least `minWarmupSeconds` have passed;
 * - for a JVM broker, its JIT compiler threads used < JIT_QUIET_SHARE of a core over the last
 *   JIT_WINDOW_SECONDS (the rule of issue 13);
 * - the throughput is steady (`steadiness`): each of the last `windows` intervals is within
 *   ±`tolerance` of their mean and their least-squares rise over those intervals is below
 *   `tolerance` / 2 of the mean (no upward trend). Consume warm-ups apply it per consumer kind
 *   (push / lite / raw cycles alternate), over cycles instead of fixed intervals.
 * or when `maxWarmupSeconds` (the cap) has passed: then the result says which rule was not met.
 *
 * Every interval is traced: msgs/s, mean latency per send call, CPU of the broker and the load
 * generators by thread class (cpu.ts `ThreadClass`; for tsmq its node helper threads), the broker's kernel
 * time, minor faults and busiest threads, the machine's CPU split (/proc/stat: user,
 * system, iowait, steal, idle, and what other processes used), /proc/meminfo MemFree / Cached /
 * Dirty / Writeback, the broker's RSS and a fixed-work CPU probe on the broker's CPUs (cpu.ts
 * `cpuProbeMs`: host-side slowdowns that steal time does not show). The trace goes into the result JSON (`warmup.trace`) and a
 * compact throughput line into the Markdown.
 */
import { sleep } from '../lib/os.js';
import { cpuProbeMs, JitMonitor, systemSample, threadClassSeconds, treeIoCalls, treeRssBytes, type ClassSeconds, type SystemSample } from './cpu.js';
import type { GeneratorGroup } from './generators.js';
import type { Running } from './peers.js';

export const JIT_QUIET_SHARE = 0.02;
export const JIT_WINDOW_SECONDS = 5;

/** When is a warm-up's throughput steady (see the file comment). */
export interface SteadyRule {
  /** length of a produce trace interval, s */
  intervalSeconds: number;
  /** how many of the last intervals (consume: cycles of one kind) must agree */
  windows: number;
  /** allowed deviation of each from their mean, as a fraction (0.05 = ±5 %) */
  tolerance: number;
}

export const DEFAULT_STEADY: SteadyRule = { intervalSeconds: 10, windows: 3, tolerance: 0.05 };

/** Columns of a trace row, in order (JSON keeps rows as arrays to stay compact). */
export const TRACE_COLUMNS = [
  't_s', 'series', 'msgs_per_s', 'latency_ms_mean',
  'broker_cores', 'broker_sys_cores', 'broker_jit_cores', 'broker_gc_cores', 'broker_node_helper_cores', 'broker_minflt_per_s',
  'gen_cores', 'gen_jit_cores', 'gen_gc_cores',
  'sys_user_cores', 'sys_system_cores', 'sys_iowait_cores', 'sys_steal_cores', 'sys_idle_cores', 'other_cores',
  'mem_free_gib', 'cached_gib', 'dirty_mib', 'writeback_mib', 'broker_rss_mib', 'broker_top_threads', 'cpu_probe_ms',
  'broker_reads_per_msg', 'broker_writes_per_msg',
] as const;

export type TraceRow = Array<number | string | null>;

export interface WarmupInfo {
  seconds: number;
  /** broker JIT compiler threads' CPU share over the last 5 s when the warm-up ended (null: not a JVM) */
  jitShareAtEnd: number | null;
  /** broker JIT CPU-seconds during the warm-up (null: not a JVM) */
  jitCpuSeconds: number | null;
  /** true when the warm-up ended by its rules (JIT quiet and throughput steady), false when the cap ended it */
  settled: boolean;
  /** JIT quiet at the end (true for tsmq) */
  jitQuiet: boolean;
  /** throughput steady at the end by the SteadyRule */
  steady: boolean;
  /** the rule used */
  rule: SteadyRule;
  /** the per-interval trace, rows of TRACE_COLUMNS */
  trace: { columns: readonly string[]; rows: TraceRow[] };
  /** warm-up consume cycles (consume phases) */
  cycles?: number;
}

/**
 * Whether the last `rule.windows` rates are steady: each within ±tolerance of their mean and a
 * least-squares rise across them below tolerance / 2 of the mean. Null until there are enough.
 */
export function steadiness(rates: number[], rule: Pick<SteadyRule, 'windows' | 'tolerance'>): { steady: boolean; maxDeviation: number; rise: number } | null {
  const k = rule.windows;
  if (k < 2 || rates.length < k) return null;
  const last = rates.slice(-k);
  const mean = last.reduce((s, x) => s + x, 0) / k;
  if (!(mean > 0)) return { steady: false, maxDeviation: Infinity, rise: NaN };
  const maxDeviation = Math.max(...last.map((x) => Math.abs(x - mean) / mean));
  const xm = (k - 1) / 2;
  let num = 0;
  let den = 0;
  last.forEach((y, i) => {
    num += (i - xm) * (y - mean);
    den += (i - xm) ** 2;
  });
  const rise = ((num / den) * (k - 1)) / mean;
  return { steady: maxDeviation <= rule.tolerance && rise < rule.tolerance / 2, maxDeviation, rise };
}

/** What warm-up needs of a phase's environment (a subset of phases.ts PhaseEnv). */
export interface WarmupEnv {
  sys: Running;
  gens: GeneratorGroup;
  minWarmupSeconds: number;
  maxWarmupSeconds: number;
  steady: SteadyRule;
  /** the broker's taskset CPU list (null: any): where the per-interval CPU probe runs */
  brokerCpus: string | null;
  log: (s: string) => void;
}

/** One warm-up step: produce = one interval, consume = one cycle; its throughput and series (consumer kind). */
export type WarmupTick = () => Promise<{ msgsPerSec: number; latencyMs: number | null; series: string }>;

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

/** CPU and memory counters at one instant, diffed per interval by `traceRow`. */
interface Snap { atMs: number; broker: ClassSeconds; gen: ClassSeconds; sys: SystemSample; brokerIo: { reads: number; writes: number } }

function snap(env: WarmupEnv): Snap {
  return { atMs: Date.now(), broker: threadClassSeconds(env.sys.cpuRoots), gen: threadClassSeconds(env.gens.pids), sys: systemSample(), brokerIo: treeIoCalls(env.sys.cpuRoots) };
}

function traceRow(env: WarmupEnv, t0: number, a: Snap, b: Snap, tick: { msgsPerSec: number; latencyMs: number | null; series: string }): TraceRow {
  const wall = (b.atMs - a.atMs) / 1000;
  const c = (x: number, y: number): number => r3((y - x) / wall);
  const s = (k: keyof SystemSample): number => c(a.sys[k], b.sys[k]);
  const busy = (x: SystemSample): number => x.user + x.nice + x.system + x.irq + x.softirq + x.steal;
  const brokerCores = c(a.broker.total, b.broker.total);
  const genCores = c(a.gen.total, b.gen.total);
  const other = Math.max(0, r3(c(busy(a.sys), busy(b.sys)) - brokerCores - genCores));
  const gib = (x: number): number => Math.round((x / 2 ** 30) * 100) / 100;
  const mib = (x: number): number => Math.round(x / 2 ** 20);
  // per message of the interval (tick.msgsPerSec × wall): a single send's broker reads ≈ 1 / sends per event-loop turn
  const msgs = tick.msgsPerSec * wall;
  const perMsg = (x: number, y: number): number | null => (msgs > 0 ? r3((y - x) / msgs) : null);
  return [
    Math.round((b.atMs - t0) / 100) / 10, tick.series, Math.round(tick.msgsPerSec), tick.latencyMs === null ? null : r3(tick.latencyMs),
    brokerCores, c(a.broker.sys, b.broker.sys), c(a.broker.jit, b.broker.jit), c(a.broker.gc, b.broker.gc), c(a.broker.v8, b.broker.v8), Math.round((b.broker.minflt - a.broker.minflt) / wall),
    genCores, c(a.gen.jit, b.gen.jit), c(a.gen.gc, b.gen.gc),
    r3(s('user') + s('nice')), r3(s('system') + s('irq') + s('softirq')), s('iowait'), s('steal'), s('idle'), other,
    gib(b.sys.memFreeBytes), gib(b.sys.cachedBytes), mib(b.sys.dirtyBytes), mib(b.sys.writebackBytes), mib(treeRssBytes(env.sys.cpuRoots)), topThreads(a.broker.byName, b.broker.byName, wall), cpuProbeMs(env.brokerCpus),
    perMsg(a.brokerIo.reads, b.brokerIo.reads), perMsg(a.brokerIo.writes, b.brokerIo.writes),
  ];
}

/** The broker's 6 busiest thread names over the interval: "name=cores/kernel cores,…" (threads that exited count 0). */
function topThreads(a: ClassSeconds['byName'], b: ClassSeconds['byName'], wall: number): string {
  return [...b.entries()]
    .map(([n, x]) => [n, Math.max(0, x.total - (a.get(n)?.total ?? 0)) / wall, Math.max(0, x.sys - (a.get(n)?.sys ?? 0)) / wall] as const)
    .sort((x, y) => y[1] - x[1])
    .slice(0, 6)
    .filter(([, x]) => x >= 0.005)
    .map(([n, x, k]) => `${n}=${x.toFixed(3)}/${k.toFixed(3)}`)
    .join(',');
}

/** Runs `tick` until the warm-up rules hold or the cap is reached (see the file comment). */
export async function warmUp(env: WarmupEnv, tick: WarmupTick): Promise<WarmupInfo> {
  const mon = env.sys.jvmPid !== null ? new JitMonitor(env.sys.jvmPid, JIT_WINDOW_SECONDS).start() : null;
  const t0 = Date.now();
  const rows: TraceRow[] = [];
  const rates = new Map<string, number[]>();
  let cycles = 0;
  let settled = false;
  let jitQuiet = false;
  let steady = false;
  try {
    let prev = snap(env);
    for (;;) {
      const r = await tick();
      const now = snap(env);
      const row = traceRow(env, t0, prev, now, r);
      rows.push(row);
      env.log(`      ${traceLine(row)}`);
      prev = now;
      cycles++;
      const l = rates.get(r.series) ?? [];
      l.push(r.msgsPerSec);
      rates.set(r.series, l);
      const elapsed = (Date.now() - t0) / 1000;
      const share = mon ? mon.share() : 0;
      jitQuiet = share !== null && share < JIT_QUIET_SHARE;
      steady = [...rates.values()].every((x) => steadiness(x, env.steady)?.steady === true);
      if (elapsed >= env.minWarmupSeconds && jitQuiet && steady) {
        settled = true;
        break;
      }
      if (elapsed >= env.maxWarmupSeconds) break;
    }
  } finally {
    mon?.stop();
  }
  const seconds = Math.round((Date.now() - t0) / 100) / 10;
  const share = mon?.share() ?? null;
  const why = settled ? '' : ` — NOT settled at the cap (${[...(jitQuiet ? [] : ['JIT busy']), ...(steady ? [] : ['throughput not steady'])].join(', ')})`;
  env.log(`    warm-up ${seconds} s${mon ? `, broker JIT ${(share === null ? NaN : share * 100).toFixed(2)} % over the last ${JIT_WINDOW_SECONDS} s (${mon.cpuSeconds.toFixed(1)} CPU-s in all)` : ''}; msgs/s per step: ${compactTrace(rows)}${why}`);
  return {
    seconds, jitShareAtEnd: share === null ? null : Math.round(share * 10000) / 10000, jitCpuSeconds: mon ? Math.round(mon.cpuSeconds * 10) / 10 : null,
    settled, jitQuiet, steady, rule: env.steady, trace: { columns: TRACE_COLUMNS, rows }, cycles,
  };
}

/** One trace row for the live log. */
function traceLine(row: TraceRow): string {
  const v = (c: (typeof TRACE_COLUMNS)[number]): number | string | null => row[TRACE_COLUMNS.indexOf(c)] ?? null;
  const lat = v('latency_ms_mean');
  return `${String(v('t_s'))} s ${String(v('series'))}: ${String(v('msgs_per_s'))} msgs/s${lat === null ? '' : ` (${String(lat)} ms)`}; broker ${String(v('broker_cores'))} cores (sys ${String(v('broker_sys_cores'))}, JIT ${String(v('broker_jit_cores'))}, GC ${String(v('broker_gc_cores'))}, node helpers ${String(v('broker_node_helper_cores'))}), generators ${String(v('gen_cores'))} (JIT ${String(v('gen_jit_cores'))}, GC ${String(v('gen_gc_cores'))}); machine sys ${String(v('sys_system_cores'))} iowait ${String(v('sys_iowait_cores'))} steal ${String(v('sys_steal_cores'))} idle ${String(v('sys_idle_cores'))} other ${String(v('other_cores'))}; free ${String(v('mem_free_gib'))} GiB, cached ${String(v('cached_gib'))} GiB, dirty ${String(v('dirty_mib'))} MiB, writeback ${String(v('writeback_mib'))} MiB, broker RSS ${String(v('broker_rss_mib'))} MiB, ${String(v('broker_minflt_per_s'))} minor faults/s, ${String(v('broker_reads_per_msg'))} read / ${String(v('broker_writes_per_msg'))} write syscalls per msg; CPU probe ${String(v('cpu_probe_ms'))} ms; top threads ${String(v('broker_top_threads'))}`;
}

/** "95k 110k 118k …" (consume: "push 80k lite 95k …"): the trace's throughput in one line. */
export function compactTrace(rows: TraceRow[]): string {
  const series = new Set(rows.map((r) => r[1]));
  const k = (x: number): string => (x >= 10_000 ? `${Math.round(x / 1000)}k` : `${(x / 1000).toFixed(1)}k`);
  return rows.map((r) => `${series.size > 1 ? `${String(r[1])} ` : ''}${k(Number(r[2]))}`).join(' ');
}

/** A produce warm-up step: sleep one interval, then the generators' OK messages and latency over it. */
export function produceTick(gens: GeneratorGroup, intervalSeconds: number): WarmupTick {
  let last: { msgs: number; calls: number; latUs: number; atMs: number } | null = null;
  const read = async (): Promise<{ msgs: number; calls: number; latUs: number; atMs: number }> => {
    const ev = await gens.all(() => 'stats', 'stats', 30_000);
    return { msgs: ev.reduce((s, e) => s + Number(e.msgs), 0), calls: ev.reduce((s, e) => s + Number(e.calls), 0), latUs: ev.reduce((s, e) => s + Number(e.latencyUsSum), 0), atMs: Date.now() };
  };
  return async () => {
    last ??= await read();
    await sleep(intervalSeconds * 1000);
    const now = await read();
    const d = { msgs: now.msgs - last.msgs, calls: now.calls - last.calls, latUs: now.latUs - last.latUs, s: (now.atMs - last.atMs) / 1000 };
    last = now;
    return { msgsPerSec: d.msgs / d.s, latencyMs: d.calls > 0 ? d.latUs / d.calls / 1000 : null, series: 'produce' };
  };
}
