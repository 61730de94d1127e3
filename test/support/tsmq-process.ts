/**
 * Runs `tsmq start` (nameserver + broker in one process) as a child process for
 * integration tests, on free loopback ports and a temp store directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { freePort } from './free-port.js';
import { cliEntryArgs } from './cli-entry.js';

export { freePort };

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface TsmqProcessOptions {
  storeDir: string;
  namesrvPort?: number;
  listenPort?: number;
  /** gRPC front port (default: a free port, so parallel tests never fight for 8081). */
  grpcPort?: number;
  /** Extra RocketMQ config keys passed as `-o key=value`. */
  options?: Record<string, string>;
  /** How long to wait for "tsmq started" before killing the process and failing (default 90,000 ms). */
  startTimeoutMs?: number;
  /** More `tsmq start` arguments, e.g. ['--tls', 'enforcing']. */
  extraArgs?: string[];
}

export class TsmqProcess {
  private output = '';
  private exited: Promise<number | null>;

  private constructor(
    readonly child: ChildProcess,
    readonly namesrvPort: number,
    readonly listenPort: number,
    readonly grpcPort: number,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    const collect = (b: Buffer): void => {
      this.output += b.toString();
      if (this.output.length > 200_000) this.output = this.output.slice(-100_000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
  }

  get namesrvAddr(): string {
    return `127.0.0.1:${this.namesrvPort}`;
  }

  /** `host:port` of the gRPC v2 front (rocketmq-client-nodejs `endpoints`). */
  get grpcEndpoints(): string {
    return `127.0.0.1:${this.grpcPort}`;
  }

  get brokerAddr(): string {
    return `127.0.0.1:${this.listenPort}`;
  }

  /** `http://127.0.0.1:<port>/metrics` from the start-up banner, or null when metrics are off. */
  get metricsUrl(): string | null {
    return /metrics (http:\/\/\S+\/metrics)/.exec(this.output)?.[1] ?? null;
  }

  /** `http://127.0.0.1:<port>` of the web console from the start-up banner, or null when it is off. */
  get consoleUrl(): string | null {
    return /console (http:\/\/[^\s,]+)/.exec(this.output)?.[1] ?? null;
  }

  /** Everything the process printed so far (for failure messages). */
  get log(): string {
    return this.output;
  }

  /**
   * Starts `tsmq start` on free ports. A port picked by freePort() can be taken by someone else
   * (e.g. a JVM's outgoing connection) before tsmq binds it: when the process exits with
   * EADDRINUSE on a port that was not given (a crash harness keeps its nameserver and broker ports
   * across restarts but lets the gRPC port be picked each time), it is started again on new free
   * ports (3 attempts); a taken port the caller chose is an error at once.
   */
  static async start(opts: TsmqProcessOptions): Promise<TsmqProcess> {
    const given = new Set([opts.namesrvPort, opts.listenPort, opts.grpcPort].filter((p): p is number => p !== undefined));
    for (let attempt = 1; ; attempt++) {
      try {
        return await TsmqProcess.startOnce(opts);
      } catch (e) {
        const taken = /EADDRINUSE[^\n]*?:(\d+)/.exec((e as Error).message);
        if (attempt >= 3 || !taken || given.has(Number(taken[1]))) throw e;
      }
    }
  }

  private static async startOnce(opts: TsmqProcessOptions): Promise<TsmqProcess> {
    const namesrvPort = opts.namesrvPort ?? (await freePort());
    const listenPort = opts.listenPort ?? (await freePort());
    const grpcPort = opts.grpcPort ?? (await freePort());
    const args = [...cliEntryArgs(), 'start', '-n', String(namesrvPort), '-p', String(listenPort), '--store', opts.storeDir, ...(opts.extraArgs ?? [])];
    // haListenPort=0: a free HA port, so the default listenPort+1 never collides with another test's broker.
    // metrics on a free port, no console (parallel tests never fight for 5557/8080); read them back from metricsUrl/consoleUrl.
    const options = { grpcListenPort: String(grpcPort), haListenPort: '0', metricsPromExporterPort: '0', consolePort: '-1', ...(opts.options ?? {}) };
    for (const [k, v] of Object.entries(options)) args.push('-o', `${k}=${v}`);
    const child = spawn(process.execPath, args, {
      cwd: repoRoot,
      env: { ...process.env, TSMQ_LOG_LEVEL: process.env.TSMQ_LOG_LEVEL ?? 'warn', NODE_TEST_CONTEXT: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const p = new TsmqProcess(child, namesrvPort, listenPort, grpcPort);
    try {
      // 90 s: on a loaded machine (load 30–48 on 2 cores) a start through tsx took > 30 s; a start that hangs still fails.
      await p.waitFor(/tsmq started/, opts.startTimeoutMs ?? 90_000);
    } catch (e) {
      await p.kill();
      throw e;
    }
    return p;
  }

  async waitFor(pattern: RegExp, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(this.output)) {
      if (this.child.exitCode !== null) throw new Error(`tsmq exited (${this.child.exitCode}) before ${pattern}:\n${this.output}`);
      if (Date.now() > deadline) throw new Error(`timeout waiting for ${pattern} (${timeoutMs} ms, pid ${this.child.pid}):\n${this.output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGTERM and wait for a clean exit; returns the exit code. */
  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    this.child.kill('SIGTERM');
    return await this.exited;
  }

  /** SIGKILL (crash) and wait until the process is gone. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}
