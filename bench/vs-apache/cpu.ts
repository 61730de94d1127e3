/**
 * CPU accounting from /proc for bench/vs-apache: CPU-seconds of a process tree (utime + stime of
 * every live descendant, e.g. tsx's launcher and the node process that runs the broker) and of a
 * JVM's JIT compiler threads (/proc/<pid>/task/<tid>/comm "C1 CompilerThre" / "C2 CompilerThre").
 * Linux clock ticks are 100/s.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

/** ppid, utime+stime ticks, stime ticks and minor page faults from a /proc stat line, or null. */
function statOf(path: string): { ppid: number; ticks: number; sysTicks: number; minflt: number } | null {
  try {
    const s = readFileSync(path, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    // f[0] = field 3 (state), f[1] = ppid (field 4), minflt = field 10, utime = field 14, stime = field 15
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]), sysTicks: Number(f[12]), minflt: Number(f[7]) };
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

/**
 * What a thread does, from its /proc comm: `jit` = HotSpot's C1/C2 compiler threads; `gc` = HotSpot's
 * GC threads ("GC Thread#N", "G1 …" concurrent/refine/service threads) and the "VM Thread" that runs
 * the safepoint operations (GC pauses among them); `v8` = a node process's threads other than its main
 * thread (V8's platform workers — concurrent marking/sweeping, background compiles — and libuv's pool;
 * Node 20 leaves them all named "node"); `other` = the rest (application, netty threads, a node main
 * thread).
 */
export type ThreadClass = 'jit' | 'gc' | 'v8' | 'other';

export function threadClassOf(comm: string, mainThread: boolean): ThreadClass {
  if (/^C[12] CompilerThre/.test(comm)) return 'jit';
  if (/^(GC Thread|G1 |VM Thread)/.test(comm)) return 'gc';
  if (/^(V8 |libuv-worker)/.test(comm) || (comm === 'node' && !mainThread)) return 'v8';
  return 'other';
}

/**
 * CPU-seconds per thread class, in all (`total`), in the kernel (`sys`), minor page faults, and
 * CPU-seconds (all, kernel) per thread name with its digits replaced by `#` (`byName`: "SendMessageThre").
 */
export type ClassSeconds = Record<ThreadClass | 'total' | 'sys' | 'minflt', number> & { byName: Map<string, { total: number; sys: number }> };

/** Per-thread CPU of the processes' trees (/proc/<pid>/task/<tid>/stat + comm), summed as ClassSeconds. */
export function threadClassSeconds(roots: number[]): ClassSeconds {
  const out: ClassSeconds = { jit: 0, gc: 0, v8: 0, other: 0, total: 0, sys: 0, minflt: 0, byName: new Map() };
  for (const r of roots) {
    for (const p of treePids(r)) {
      let tids: string[] = [];
      try {
        tids = readdirSync(`/proc/${p}/task`);
      } catch {
        continue;
      }
      for (const t of tids) {
        try {
          const comm = readFileSync(`/proc/${p}/task/${t}/comm`, 'utf8').trim();
          const st = statOf(`/proc/${p}/task/${t}/stat`);
          if (!st) continue;
          const s = st.ticks / TICKS_PER_SECOND;
          out[threadClassOf(comm, t === String(p))] += s;
          out.total += s;
          out.sys += st.sysTicks / TICKS_PER_SECOND;
          out.minflt += st.minflt;
          const name = comm === 'node' ? (t === String(p) ? 'node main' : 'node helpers') : comm.replace(/\d+/g, '#');
          const n = out.byName.get(name) ?? { total: 0, sys: 0 };
          n.total += s;
          n.sys += st.sysTicks / TICKS_PER_SECOND;
          out.byName.set(name, n);
        } catch {
          /* thread gone */
        }
      }
    }
  }
  return out;
}

/**
 * Read and write system calls made so far by the processes' trees (/proc/<pid>/io syscr, syscw:
 * read/recv/readv/pread and write/send/writev/pwrite of every thread); processes that are gone or
 * unreadable count 0.
 */
export function treeIoCalls(roots: number[]): { reads: number; writes: number } {
  let reads = 0;
  let writes = 0;
  for (const r of roots) {
    for (const p of treePids(r)) {
      try {
        const io = readFileSync(`/proc/${p}/io`, 'utf8');
        reads += Number(/^syscr: (\d+)$/m.exec(io)?.[1] ?? 0);
        writes += Number(/^syscw: (\d+)$/m.exec(io)?.[1] ?? 0);
      } catch {
        /* gone */
      }
    }
  }
  return { reads, writes };
}

/** Resident set size (VmRSS) of the processes' trees, bytes. */
export function treeRssBytes(roots: number[]): number {
  let kib = 0;
  for (const r of roots) {
    for (const p of treePids(r)) {
      try {
        const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
        if (m) kib += Number(m[1]);
      } catch {
        /* gone */
      }
    }
  }
  return kib * 1024;
}

/**
 * Machine-wide counters: /proc/stat's first line in CPU-seconds (all cores) and /proc/meminfo's
 * MemFree, Cached, Dirty and Writeback in bytes.
 */
export interface SystemSample {
  user: number; nice: number; system: number; idle: number; iowait: number; irq: number; softirq: number; steal: number;
  memFreeBytes: number; cachedBytes: number; dirtyBytes: number; writebackBytes: number;
}

export function systemSample(): SystemSample {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map((x) => Number(x) / TICKS_PER_SECOND);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f;
  const mem = readFileSync('/proc/meminfo', 'utf8');
  const kib = (k: string): number => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(mem)?.[1] ?? NaN) * 1024;
  return { user, nice, system, idle, iowait, irq, softirq, steal, memFreeBytes: kib('MemFree'), cachedBytes: kib('Cached'), dirtyBytes: kib('Dirty'), writebackBytes: kib('Writeback') };
}

const PROBE_SCRIPT = `let x=0x12345678;const w=(n)=>{for(let i=0;i<n;i++){x^=x<<13;x^=x>>>17;x^=x<<5}};w(5e6);const c=process.cpuUsage();w(2e7);const d=process.cpuUsage(c);console.log((d.user+d.system)/1000,x)`;

/**
 * CPU milliseconds a fixed integer loop (2e7 xorshift steps, after a JIT warm-up of 5e6) takes in a
 * fresh node process pinned with taskset to `cpus` (null: not pinned), or null if it failed. The
 * guest's own load hardly changes it (it is CPU time, not wall time); host-side slowdowns that the
 * guest's steal time does not show (a busy SMT sibling, a lower clock) raise it (42–44 ms on this
 * machine, 2026-12-02 07:50).
 */
export function cpuProbeMs(cpus: string | null): number | null {
  const [cmd, args] = cpus ? ['taskset', ['-c', cpus, process.execPath, '-e', PROBE_SCRIPT]] : [process.execPath, ['-e', PROBE_SCRIPT]];
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 10_000 });
  const ms = Number(r.stdout?.split(' ')[0]);
  return r.status === 0 && Number.isFinite(ms) ? Math.round(ms * 10) / 10 : null;
}
