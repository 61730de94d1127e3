/**
 * CPU accounting from /proc for bench/vs-apache: CPU-seconds of a process tree (utime + stime of
 * every live descendant, e.g. tsx's launcher and the node process that runs the broker) and of a
 * JVM's JIT compiler threads (/proc/<pid>/task/<tid>/comm "C1 CompilerThre" / "C2 CompilerThre").
 * Linux clock ticks are 100/s.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

/** [ppid, utime+stime ticks] from a /proc stat line, or null. */
function statOf(path: string): { ppid: number; ticks: number } | null {
  try {
    const s = readFileSync(path, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    // f[0] = field 3 (state), f[1] = ppid (field 4), utime = field 14, stime = field 15
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
  } catch {
    return null;
  }
}

/** `root` and all its live descendants. */
export function treePids(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    const st = statOf(`/proc/${n}/stat`);
    if (!st) continue;
    const l = children.get(st.ppid) ?? [];
    l.push(Number(n));
    children.set(st.ppid, l);
  }
  const out: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const p = stack.pop()!;
    out.push(p);
    stack.push(...(children.get(p) ?? []));
  }
  return out;
}

/** CPU-seconds (user + system) of the given processes and their descendants; exited ones count 0. */
export function treeCpuSeconds(roots: number[]): number {
  let ticks = 0;
  for (const r of roots) for (const p of treePids(r)) ticks += statOf(`/proc/${p}/stat`)?.ticks ?? 0;
  return ticks / TICKS_PER_SECOND;
}

/** Busy CPU-seconds of the whole machine (all cores: /proc/stat user+nice+system+irq+softirq+steal). */
export function machineBusySeconds(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = f;
  return (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND;
}

/** Per-thread CPU ticks of a JVM's JIT compiler threads (tid → ticks). */
export function compilerThreadTicks(pid: number): Map<number, number> {
  const m = new Map<number, number>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return m;
  }
  for (const t of tids) {
    try {
      const comm = readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim();
      if (!/^C[12] CompilerThre/.test(comm)) continue;
      const st = statOf(`/proc/${pid}/task/${t}/stat`);
      if (st) m.set(Number(t), st.ticks);
    } catch {
      /* thread gone */
    }
  }
  return m;
}

/**
 * Samples a JVM's compiler threads once a second and answers "CPU share of the JIT over the last
 * `windowSeconds`" (CPU-seconds / wall seconds; 0.02 = 2 % of one core). Threads that appear count
 * from 0, threads that exit (dynamic compiler threads) stop counting.
 */
export class JitMonitor {
  private last = new Map<number, number>();
  private readonly samples: Array<{ atMs: number; cumTicks: number }> = [];
  private cumTicks = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly pid: number, private readonly windowSeconds = 5) {}

  start(): this {
    this.last = compilerThreadTicks(this.pid);
    this.cumTicks = 0;
    this.samples.length = 0;
    this.samples.push({ atMs: Date.now(), cumTicks: 0 });
    this.timer = setInterval(() => this.sample(), 1000);
    return this;
  }

  private sample(): void {
    const now = compilerThreadTicks(this.pid);
    for (const [tid, t] of now) this.cumTicks += Math.max(0, t - (this.last.get(tid) ?? 0));
    this.last = now;
    this.samples.push({ atMs: Date.now(), cumTicks: this.cumTicks });
    if (this.samples.length > 600) this.samples.splice(0, this.samples.length - 600);
  }

  /** JIT CPU share over the last window, or null until a full window has been sampled. */
  share(): number | null {
    const end = this.samples[this.samples.length - 1]!;
    const from = [...this.samples].reverse().find((s) => end.atMs - s.atMs >= this.windowSeconds * 1000);
    if (!from) return null;
    return (end.cumTicks - from.cumTicks) / TICKS_PER_SECOND / ((end.atMs - from.atMs) / 1000);
  }

  /** JIT CPU-seconds since start(). */
  get cpuSeconds(): number {
    return this.cumTicks / TICKS_PER_SECOND;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
