/**
 * Child processes for measurements that need isolation (a crashing writer, a broker, a load
 * generator on its own core): spawn a TypeScript file through tsx, wait for a `TAG {json}` line
 * on its stdout, and kill it by pid (never by name).
 */
import { spawn, type ChildProcess } from 'node:child_process';

export class BenchChild {
  private out = '';
  private err = '';
  readonly exited: Promise<number | null>;

  private constructor(readonly proc: ChildProcess, readonly label: string) {
    this.exited = new Promise((res) => proc.once('exit', (c) => res(c)));
    proc.stdout?.on('data', (b: Buffer) => {
      this.out += b.toString();
      if (this.out.length > 1_000_000) this.out = this.out.slice(-500_000);
    });
    proc.stderr?.on('data', (b: Buffer) => {
      this.err += b.toString();
      if (this.err.length > 200_000) this.err = this.err.slice(-100_000);
    });
  }

  /** `node [nodeArgs] --import tsx <script> <args...>` with the repo as cwd. */
  static start(repoRoot: string, script: string, args: string[], opts: { label?: string; nodeArgs?: string[]; env?: Record<string, string> } = {}): BenchChild {
    const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', script, ...args], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TSMQ_LOG_LEVEL: process.env.TSMQ_LOG_LEVEL ?? 'warn', ...(opts.env ?? {}) },
    });
    return new BenchChild(proc, opts.label ?? script);
  }

  /** Wraps an already spawned process. */
  static wrap(proc: ChildProcess, label: string): BenchChild {
    return new BenchChild(proc, label);
  }

  get pid(): number {
    return this.proc.pid ?? -1;
  }

  get stdout(): string {
    return this.out;
  }

  get stderr(): string {
    return this.err;
  }

  /** Waits for a stdout line `TAG {json}` and returns the parsed JSON. */
  async waitLine<T>(tag: string, timeoutMs: number): Promise<T> {
    const re = new RegExp(`^${tag} (.*)$`, 'm');
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = re.exec(this.out);
      if (m) return JSON.parse(m[1]!) as T;
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) {
        throw new Error(`${this.label} exited (${this.proc.exitCode ?? this.proc.signalCode}) before ${tag}:\n${this.err.slice(-3000)}\n${this.out.slice(-2000)}`);
      }
      if (Date.now() > deadline) throw new Error(`${this.label}: no ${tag} within ${timeoutMs} ms:\n${this.err.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Waits until stdout+stderr match `re`. */
  async waitFor(re: RegExp, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!re.test(this.out) && !re.test(this.err)) {
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) throw new Error(`${this.label} exited before ${re}:\n${this.err.slice(-3000)}\n${this.out.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`${this.label}: ${re} not seen within ${timeoutMs} ms:\n${this.err.slice(-3000)}\n${this.out.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** SIGKILL and wait until it is gone. */
  async kill(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM, wait up to `graceMs`, then SIGKILL. */
  async stop(graceMs = 15_000): Promise<number | null> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return this.proc.exitCode;
    this.proc.kill('SIGTERM');
    const t = setTimeout(() => this.proc.kill('SIGKILL'), graceMs);
    const c = await this.exited;
    clearTimeout(t);
    return c;
  }
}
