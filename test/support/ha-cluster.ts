/**
 * Test support for master/slave replication (docs/ha.md):
 *
 * - In-process: `RawHAPeer`, a hand-written slave speaking the HA wire format (reports, frame
 *   parsing) to probe a master; `readCommitLog` / `firstCommitLogDifference` compare CommitLog
 *   bytes on disk; `waitUntil`.
 * - Separate processes: `HaCluster` runs `tsmq namesrv` and `tsmq broker -c <conf>` children on
 *   loopback with free ports and temp stores (one conf file per broker, written here), kills them
 *   by pid (SIGKILL = crash, SIGTERM = clean stop) and restarts them on the same store.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { connect, type Socket } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { silentLogger } from '../../src/common/logging/logger.js';
import { DefaultMessageStore } from '../../src/store/default-message-store.js';
import { LeanClient } from './lean-client.js';
import { freePort } from './free-port.js';
import { cliEntryArgs } from './cli-entry.js';

export { freePort };

const repoRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Polls `cond` every 20 ms until true; throws with `describe()` after `timeoutMs`. */
export async function waitUntil(cond: () => boolean | Promise<boolean>, timeoutMs: number, describe: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${describe()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** CommitLog segment files of a store root, sorted, with their start offsets. */
export function commitLogSegments(root: string): Array<{ file: string; from: number; size: number }> {
  const dir = path.join(root, 'commitlog');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((n) => /^\d{20}$/.test(n))
    .sort()
    .map((n) => ({ file: path.join(dir, n), from: Number(n), size: fs.statSync(path.join(dir, n)).size }));
}

/** The logical CommitLog bytes [from, to) read from the segment files on disk. */
export function readCommitLog(root: string, from: number, to: number): Buffer {
  const out = Buffer.alloc(Math.max(0, to - from));
  for (const seg of commitLogSegments(root)) {
    const a = Math.max(from, seg.from);
    const b = Math.min(to, seg.from + seg.size);
    if (a >= b) continue;
    const fd = fs.openSync(seg.file, 'r');
    try {
      fs.readSync(fd, out, a - from, b - a, a - seg.from);
    } finally {
      fs.closeSync(fd);
    }
  }
  return out;
}

/**
 * First CommitLog offset in [from, to) where the two stores' files differ, or -1 when equal.
 * Reads 8 MiB at a time.
 */
export function firstCommitLogDifference(rootA: string, rootB: string, from: number, to: number): number {
  const step = 8 * 1024 * 1024;
  for (let at = from; at < to; at += step) {
    const end = Math.min(to, at + step);
    const a = readCommitLog(rootA, at, end);
    const b = readCommitLog(rootB, at, end);
    if (!a.equals(b)) {
      for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return at + i;
    }
  }
  return -1;
}

export interface RawFrame {
  offset: number;
  body: Buffer;
}

/** A hand-written slave: connects to a master HA port, sends reports, parses frames. */
export class RawHAPeer {
  readonly frames: RawFrame[] = [];
  received = Buffer.alloc(0);
  closed = false;
  readonly closedPromise: Promise<void>;
  private readonly socket: Socket;
  private pending = Buffer.alloc(0);

  private constructor(socket: Socket) {
    this.socket = socket;
    this.closedPromise = new Promise((resolve) => socket.once('close', () => {
      this.closed = true;
      resolve();
    }));
    socket.on('error', () => {});
    socket.on('data', (d: Buffer) => {
      this.received = Buffer.concat([this.received, d]);
      this.pending = Buffer.concat([this.pending, d]);
      while (this.pending.length >= 12) {
        const size = this.pending.readInt32BE(8);
        if (this.pending.length < 12 + size) break;
        this.frames.push({ offset: Number(this.pending.readBigInt64BE(0)), body: Buffer.from(this.pending.subarray(12, 12 + size)) });
        this.pending = this.pending.subarray(12 + size);
      }
    });
  }

  static async connect(port: number): Promise<RawHAPeer> {
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('error', reject);
    });
    return new RawHAPeer(socket);
  }

  /** Sends an 8-byte big-endian offset report. */
  report(offset: number): void {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(BigInt(offset), 0);
    this.socket.write(b);
  }

  /** Bytes of data frames received so far (heartbeats excluded). */
  dataBytes(): number {
    return this.frames.reduce((n, f) => n + f.body.length, 0);
  }

  destroy(): void {
    this.socket.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// Remoting helpers (LeanClient, independent of src/remoting)

/** UPDATE_AND_CREATE_TOPIC (17) with `queues` read and write queues, perm 6. */
export async function createTopic(addr: string, topic: string, queues: number): Promise<void> {
  const c = new LeanClient(addr);
  try {
    await c.ready;
    const r = await c.invoke(17, { topic, readQueueNums: queues, writeQueueNums: queues, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false });
    if (r.code !== 0) throw new Error(`create topic ${topic} on ${addr}: ${r.code} ${r.remark}`);
  } finally {
    c.close();
  }
}

/** GET_MAX_OFFSET (30) of every queue 0..queues-1; -1 for a queue whose request failed. */
export async function queueMaxOffsets(addr: string, topic: string, queues: number): Promise<number[]> {
  const c = new LeanClient(addr);
  try {
    await c.ready;
    const out: number[] = [];
    for (let q = 0; q < queues; q++) {
      const r = await c.invoke(30, { topic, queueId: q }, undefined, 5000);
      out.push(r.code === 0 ? Number(r.extFields.offset) : -1);
    }
    return out;
  } catch {
    return Array.from({ length: queues }, () => -1);
  } finally {
    c.close();
  }
}

/** QUERY_CONSUMER_OFFSET (14); -1 when none or on error. */
export async function consumerOffsets(addr: string, group: string, topic: string, queues: number): Promise<number[]> {
  const c = new LeanClient(addr);
  try {
    await c.ready;
    const out: number[] = [];
    for (let q = 0; q < queues; q++) {
      const r = await c.invoke(14, { consumerGroup: group, topic, queueId: q }, undefined, 5000);
      out.push(r.code === 0 ? Number(r.extFields.offset) : -1);
    }
    return out;
  } catch {
    return Array.from({ length: queues }, () => -1);
  } finally {
    c.close();
  }
}

export interface ProduceResult {
  acked: number;
  failed: number;
  /** Response codes other than 0 and how often they came. */
  codes: Record<string, number>;
  bytes: number;
  elapsedMs: number;
}

/**
 * SEND_MESSAGE_V2 of `count` messages of `bodyBytes` (key `${keyPrefix}${i}`), round robin over
 * `queues`, `window` in flight. Stops early when `shouldStop()` turns true. Never throws for a
 * failed send (a killed broker counts as failures).
 */
export async function produce(
  addr: string,
  topic: string,
  opts: { queues: number; count: number; bodyBytes: number; window?: number; keyPrefix?: string; shouldStop?: () => boolean; onAck?: (i: number) => void },
): Promise<ProduceResult> {
  const res: ProduceResult = { acked: 0, failed: 0, codes: {}, bytes: 0, elapsedMs: 0 };
  const t0 = Date.now();
  const base = Buffer.alloc(opts.bodyBytes, 'ha-payload-');
  let client = new LeanClient(addr);
  await client.ready.catch(() => undefined);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < opts.count && !(opts.shouldStop?.() ?? false)) {
      const i = next++;
      const body = Buffer.from(base);
      body.write(`#${i}#`, 0);
      try {
        const r = await client.send(topic, i % opts.queues, body, { KEYS: `${opts.keyPrefix ?? 'k'}${i}`, WAIT: 'true' }).catch(async (e: Error) => {
          client.close();
          client = new LeanClient(addr);
          await client.ready.catch(() => undefined);
          throw e;
        });
        if (r.code === 0) {
          res.acked++;
          res.bytes += body.length;
          opts.onAck?.(i);
        } else {
          res.failed++;
          res.codes[r.code] = (res.codes[r.code] ?? 0) + 1;
        }
      } catch {
        res.failed++;
        res.codes.error = (res.codes.error ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: opts.window ?? 32 }, worker));
  client.close();
  res.elapsedMs = Date.now() - t0;
  return res;
}

/** Opens a stopped broker's store in this process (normal or crash recovery), reads its CommitLog range, closes it. */
export async function storeOffsets(root: string, config: Record<string, string | number> = {}): Promise<{ min: number; max: number }> {
  const cfg: Record<string, string | number> = { storePathRootDir: root, ...config };
  const store = await DefaultMessageStore.open(cfg as never, { logger: silentLogger });
  try {
    return { min: store.getMinPhyOffset(), max: store.getMaxPhyOffset() };
  } finally {
    await store.shutdown();
  }
}

// ---------------------------------------------------------------------------------------------
// Separate processes

export interface NodeProcess {
  name: string;
  child: ChildProcess;
  log: string;
  exited: Promise<number | null>;
}

export interface BrokerSpec {
  /** Label for logs, e.g. 'master-a'. */
  name: string;
  brokerName: string;
  brokerId: number;
  brokerRole: 'ASYNC_MASTER' | 'SYNC_MASTER' | 'SLAVE';
  /** Extra broker.conf keys. */
  conf?: Record<string, string>;
}

export interface RunningBroker {
  spec: BrokerSpec;
  listenPort: number;
  haListenPort: number;
  storeDir: string;
  confFile: string;
  proc: NodeProcess | null;
}

/** namesrv + brokers as child processes (`tsmq namesrv`, `tsmq broker -c <conf>`). */
export class HaCluster {
  readonly brokers = new Map<string, RunningBroker>();
  namesrv: NodeProcess | null = null;
  namesrvPort = 0;

  private constructor(readonly dir: string) {}

  static async start(): Promise<HaCluster> {
    const c = new HaCluster(fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-ha-')));
    c.namesrvPort = await freePort();
    c.namesrv = await startNode('namesrv', ['namesrv', '-p', String(c.namesrvPort)], /tsmq nameserver listening/);
    return c;
  }

  get namesrvAddr(): string {
    return `127.0.0.1:${this.namesrvPort}`;
  }

  broker(name: string): RunningBroker {
    const b = this.brokers.get(name);
    if (!b) throw new Error(`no broker ${name}`);
    return b;
  }

  addr(name: string): string {
    return `127.0.0.1:${this.broker(name).listenPort}`;
  }

  /** Writes the broker's conf (first time: fresh ports and store) and starts it. */
  async startBroker(spec: BrokerSpec): Promise<RunningBroker> {
    let b = this.brokers.get(spec.name);
    if (!b) {
      const storeDir = path.join(this.dir, spec.name);
      b = { spec, listenPort: await freePort(), haListenPort: await freePort(), storeDir, confFile: path.join(this.dir, `${spec.name}.conf`), proc: null };
      this.brokers.set(spec.name, b);
    }
    b.spec = spec;
    const conf: Record<string, string> = {
      brokerClusterName: 'HaCluster',
      brokerName: spec.brokerName,
      brokerId: String(spec.brokerId),
      brokerRole: spec.brokerRole,
      listenPort: String(b.listenPort),
      haListenPort: String(b.haListenPort),
      namesrvAddr: this.namesrvAddr,
      storePathRootDir: b.storeDir,
      brokerIP1: '127.0.0.1',
      ...(spec.conf ?? {}),
    };
    fs.writeFileSync(b.confFile, Object.entries(conf).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
    b.proc = await startNode(spec.name, ['broker', '-c', b.confFile], /tsmq broker started/);
    return b;
  }

  /** SIGKILL (crash) a broker and wait until it is gone. */
  async kill(name: string): Promise<void> {
    const b = this.broker(name);
    if (!b.proc) return;
    const p = b.proc;
    b.proc = null;
    if (p.child.exitCode === null && p.child.signalCode === null) {
      process.kill(p.child.pid!, 'SIGKILL');
      await p.exited;
    }
  }

  /** SIGTERM (clean shutdown) and wait. */
  async stop(name: string): Promise<void> {
    const b = this.broker(name);
    if (!b.proc) return;
    const p = b.proc;
    b.proc = null;
    if (p.child.exitCode === null && p.child.signalCode === null) {
      process.kill(p.child.pid!, 'SIGTERM');
      await p.exited;
    }
  }

  /** Stops everything (SIGKILL) and removes the directory unless `keep`. */
  async close(keep = false): Promise<void> {
    for (const name of this.brokers.keys()) await this.kill(name).catch(() => undefined);
    if (this.namesrv && this.namesrv.child.exitCode === null) {
      process.kill(this.namesrv.child.pid!, 'SIGKILL');
      await this.namesrv.exited;
    }
    if (!keep) fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** Logs of every process (for failure messages), the last `chars` of each. */
  logs(chars = 4000): string {
    const parts = [`--- namesrv\n${this.namesrv?.log.slice(-chars) ?? ''}`];
    for (const b of this.brokers.values()) parts.push(`--- ${b.spec.name}\n${b.proc?.log.slice(-chars) ?? '(not running)'}`);
    return parts.join('\n');
  }
}

async function startNode(name: string, args: string[], ready: RegExp, timeoutMs = 30_000): Promise<NodeProcess> {
  const child = spawn(process.execPath, [...cliEntryArgs(), ...args], {
    cwd: repoRoot,
    env: { ...process.env, TSMQ_LOG_LEVEL: process.env.TSMQ_LOG_LEVEL ?? 'warn', NODE_TEST_CONTEXT: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const node: NodeProcess = { name, child, log: '', exited: new Promise((r) => child.once('exit', (code) => r(code))) };
  const collect = (b: Buffer): void => {
    node.log += b.toString();
    if (node.log.length > 400_000) node.log = node.log.slice(-200_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const deadline = Date.now() + timeoutMs;
  while (!ready.test(node.log)) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}) before ${ready}:\n${node.log}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name}: timeout waiting for ${ready}:\n${node.log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return node;
}
