/**
 * `tsmq start` as a child process with the gRPC front, killed with SIGKILL in the middle of
 * consumption: after the restart no acked message is delivered again and the unacked ones come
 * back (attempt 2) once their invisible time passed. While `tsmq start` does not serve gRPC yet
 * (the front is wired in src/cli by the lead), the same broker + front run in grpc-child.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Producer, SimpleConsumer, type MessageView } from 'rocketmq-client-nodejs';
import { freePort, TsmqProcess } from '../../support/tsmq-process.js';
import { quietClientLogger } from './grpc-harness.js';
import './grpc-clients.js';

const N = 20;

interface Runner {
  kill(): Promise<void>;
  stop(): Promise<unknown>;
}

/** grpc-child.ts as a child process. */
async function startChild(storeDir: string, grpcPort: number): Promise<Runner> {
  const script = fileURLToPath(new URL('./grpc-child.ts', import.meta.url));
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script, storeDir, String(grpcPort), 'popFlushIntervalMs=50'], {
    env: { ...process.env, NODE_TEST_CONTEXT: '', TSMQ_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + 30_000;
  while (!out.includes('grpc child started')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`grpc child did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

async function listening(port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

describe('gRPC pop state survives SIGKILL of tsmq start', { timeout: 90_000 }, () => {
  let storeDir: string;
  let proc: Runner | null = null;
  let useChild = false;
  let grpcPort = 0;
  let namesrvPort = 0;
  let listenPort = 0;
  let producer: Producer | null = null;
  let consumer: SimpleConsumer | null = null;

  const start = async (): Promise<Runner> =>
    useChild
      ? await startChild(storeDir, grpcPort)
      : await TsmqProcess.start({ storeDir, namesrvPort, listenPort, options: { grpcListenPort: String(grpcPort), popFlushIntervalMs: '50' } });

  before(async () => {
    storeDir = mkdtempSync(join(tmpdir(), 'tsmq-grpc-crash-'));
    [grpcPort, namesrvPort, listenPort] = [await freePort(), await freePort(), await freePort()];
    proc = await start();
    if (!(await listening(grpcPort))) {
      await proc.stop();
      useChild = true;
      proc = await start();
    }
  });

  after(async () => {
    await consumer?.shutdown().catch(() => {});
    await producer?.shutdown().catch(() => {});
    await proc?.stop();
    rmSync(storeDir, { recursive: true, force: true });
  });

  it('keeps acks and invisibility across a crash', async () => {
    const endpoints = `127.0.0.1:${grpcPort}`;
    producer = new Producer({ endpoints, topics: ['CR_T'], logger: quietClientLogger } as never);
    await producer.startup();
    for (let i = 0; i < N; i++) await producer.send({ topic: 'CR_T', keys: [`c-${i}`], body: Buffer.from(`c${i}`) } as never);
    consumer = new SimpleConsumer({ endpoints, consumerGroup: 'CR_G', subscriptions: new Map([['CR_T', '*']]), awaitDuration: 500, logger: quietClientLogger } as never);
    await consumer.startup();
    const seen = new Map<string, number[]>();
    const note = (m: MessageView): void => void seen.set(m.keys[0]!, [...(seen.get(m.keys[0]!) ?? []), m.deliveryAttempt ?? 0]);
    while (seen.size < N) {
      for (const m of await consumer.receive(10, 4000)) {
        note(m);
        if (Number(m.keys[0]!.slice(2)) % 2 === 0) await consumer.ack(m);
      }
    }
    await new Promise((r) => setTimeout(r, 200));
    await proc!.kill();
    proc = await start();
    const deadline = Date.now() + 30_000;
    let acked = N / 2;
    while (acked < N && Date.now() < deadline) {
      try {
        for (const m of await consumer.receive(10, 4000)) {
          note(m);
          await consumer.ack(m);
          acked++;
        }
      } catch {
        await new Promise((r) => setTimeout(r, 500)); // reconnecting
      }
    }
    for (let i = 0; i < N; i++) assert.deepEqual(seen.get(`c-${i}`), i % 2 === 0 ? [1] : [1, 2], `c-${i}`);
  });
});
