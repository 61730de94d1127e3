/**
 * Load generator JVMs of bench/vs-apache (java/…/LoadGen.java, Apache rocketmq-client 4.9.8):
 * spawned (optionally under taskset), driven by one command a line on stdin, answering with one
 * JSON line each on stdout ({"event":...}). A `GeneratorGroup` sends a command to all of them and
 * waits for every answer.
 */
import type { BenchChild } from '../lib/child.js';
import { treeCpuSeconds } from './cpu.js';
import { forget, startProc, stopProc } from './procs.js';

export const LOADGEN_JVM = ['-Xms1g', '-Xmx1g', '-XX:+UseG1GC', '-Drocketmq.client.logUseSlf4j=true', '-Drocketmq.client.rebalance.waitInterval=1000'];

export type GenEvent = { event: string } & Record<string, unknown>;

export class Generator {
  private buf = '';
  private readonly events: GenEvent[] = [];
  private waiter: (() => void) | null = null;

  constructor(readonly child: BenchChild) {
    child.proc.stdout!.on('data', (b: Buffer) => {
      this.buf += b.toString();
      let i: number;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, i).trim();
        this.buf = this.buf.slice(i + 1);
        if (!line.startsWith('{"event"')) continue;
        this.events.push(JSON.parse(line) as GenEvent);
        this.waiter?.();
      }
    });
    child.proc.once('exit', () => this.waiter?.());
    child.proc.stdin!.on('error', () => undefined); // EPIPE after the JVM exited: reported by next()
  }

  get pid(): number {
    return this.child.pid;
  }

  send(line: string): void {
    this.child.proc.stdin!.write(`${line}\n`);
  }

  /** The next event (in order); an {"event":"error"} answer or an exit throws. */
  async next(timeoutMs: number): Promise<GenEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const e = this.events.shift();
      if (e) {
        if (e.event === 'error') throw new Error(`${this.child.label}: ${String(e.command)} failed: ${String(e.message)}\n${this.child.stderr.slice(-2000)}`);
        return e;
      }
      if (this.child.proc.exitCode !== null || this.child.proc.signalCode !== null) throw new Error(`${this.child.label} exited (${this.child.proc.exitCode ?? this.child.proc.signalCode}):\n${this.child.stderr.slice(-3000)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.child.label}: no answer within ${timeoutMs} ms:\n${this.child.stderr.slice(-3000)}`);
      await new Promise<void>((res) => {
        const t = setTimeout(res, Math.min(left, 1000));
        this.waiter = () => {
          clearTimeout(t);
          res();
        };
      });
      this.waiter = null;
    }
  }

  /** Sends `line` and waits for its answer, which must be `event`. */
  async call(line: string, event: string, timeoutMs: number): Promise<GenEvent> {
    this.send(line);
    const e = await this.next(timeoutMs);
    if (e.event !== event) throw new Error(`${this.child.label}: expected ${event} after "${line.split(' ')[0]}", got ${e.event}`);
    return e;
  }
}

export class GeneratorGroup {
  private constructor(readonly gens: Generator[]) {}

  /** Starts `count` LoadGen JVMs against `namesrv` and waits until each is ready. */
  static async start(count: number, classpath: string, namesrv: string, cpus: string | null, cwd: string, label: string): Promise<GeneratorGroup> {
    const gens: Generator[] = [];
    const group = new GeneratorGroup(gens);
    try {
      for (let i = 0; i < count; i++) {
        const ch = startProc('java', [...LOADGEN_JVM, '-cp', classpath, 'tsmq.bench.LoadGen', `namesrv=${namesrv}`], `load generator ${i + 1}/${count} vs ${label}`, { cwd, cpus, stdin: true });
        gens.push(new Generator(ch));
      }
      await Promise.all(gens.map((g) => g.next(60_000)));
    } catch (e) {
      await group.stop();
      throw e;
    }
    return group;
  }

  get pids(): number[] {
    return this.gens.map((g) => g.pid);
  }

  cpuSeconds(): number {
    return treeCpuSeconds(this.pids);
  }

  /** `line(i)` to every generator at once, then every answer (must be `event`). */
  all(line: (i: number) => string, event: string, timeoutMs: number): Promise<GenEvent[]> {
    return Promise.all(this.gens.map((g, i) => g.call(line(i), event, timeoutMs)));
  }

  async stop(): Promise<void> {
    for (const g of this.gens) {
      try {
        g.send('quit');
      } catch {
        /* stdin closed */
      }
    }
    await Promise.all(this.gens.map((g) => stopProc(g.child.proc, 5000)));
    for (const g of this.gens) forget(g.child.proc);
  }
}
