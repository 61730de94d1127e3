/**
 * A throw-away etcd server (Debian package `etcd-server`, binary `etcd`) for controller-mode
 * tests: temp data dir, client and peer URLs on free 127.0.0.1 ports, killed by `close()`.
 *
 * `etcdSkipReason()`: when the binary is missing, tests skip with that reason locally; in CI
 * (env CI=true) a missing etcd is an error instead (`.ci/run` installs it), never a silent skip.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from './free-port.js';

/** Path of the etcd binary, or null. */
export function findEtcd(): string | null {
  for (const p of [process.env.ETCD_BIN, '/usr/bin/etcd', '/usr/local/bin/etcd']) if (p && fs.existsSync(p)) return p;
  const r = spawnSync('sh', ['-c', 'command -v etcd'], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() !== '' ? r.stdout.trim() : null;
}

/**
 * null when etcd is available; a skip reason when it is not and we are not in CI.
 * @throws Error in CI (CI=true) when etcd is missing.
 */
export function etcdSkipReason(): string | null {
  if (findEtcd()) return null;
  const msg = 'etcd is not installed (apt-get install etcd-server, or set ETCD_BIN)';
  if (process.env.CI === 'true') throw new Error(`${msg}: controller-mode tests cannot be skipped in CI`);
  return msg;
}

export class EtcdServer {
  private log = '';

  private constructor(
    readonly child: ChildProcess,
    readonly clientPort: number,
    readonly dir: string,
    readonly exited: Promise<void>,
  ) {
    const collect = (b: Buffer): void => {
      this.log = (this.log + b.toString()).slice(-50_000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.clientPort}`;
  }

  get output(): string {
    return this.log;
  }

  static async start(): Promise<EtcdServer> {
    const bin = findEtcd();
    if (!bin) throw new Error('etcd is not installed');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-etcd-'));
    const clientPort = await freePort();
    const peerPort = await freePort();
    const child = spawn(
      bin,
      [
        '--name', 'tsmq-test',
        '--data-dir', dir,
        '--listen-client-urls', `http://127.0.0.1:${clientPort}`,
        '--advertise-client-urls', `http://127.0.0.1:${clientPort}`,
        '--listen-peer-urls', `http://127.0.0.1:${peerPort}`,
        '--initial-advertise-peer-urls', `http://127.0.0.1:${peerPort}`,
        '--initial-cluster', `tsmq-test=http://127.0.0.1:${peerPort}`,
        '--log-level', 'warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ETCD_UNSUPPORTED_ARCH: process.env.ETCD_UNSUPPORTED_ARCH ?? '' } },
    );
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const s = new EtcdServer(child, clientPort, dir, exited);
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`etcd exited (${child.exitCode}):\n${s.log}`);
      try {
        const r = await fetch(`${s.endpoint}/health`);
        if (r.ok && ((await r.json()) as { health?: string }).health === 'true') return s;
      } catch {
        // not up yet
      }
      if (Date.now() > deadline) {
        await s.close();
        throw new Error(`etcd did not become healthy within 20 s:\n${s.log}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async close(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
