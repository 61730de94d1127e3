/**
 * Broker end to end over loopback: `tsmq start` (nameserver + broker) in a child process with a
 * temp store, default config (ASYNC_FLUSH), driven from this process by
 *
 *   1. the lean load generator (bench/lib/remoting-client.ts): SEND_MESSAGE_V2 (310) frames,
 *      `window` in flight over `connections` sockets;
 *   2. the same with SEND_BATCH_MESSAGE (320), `batch` messages per request;
 *   3. the real `ali-ons` producer (npm, unmodified), `window` sends in flight;
 *   4. raw PULL_MESSAGE (11) of 32 over all 16 queues from offset 0;
 *   5. an `ali-ons` push consumer of the four topics, from the first offset;
 *
 * each beside Redis Streams measured earlier in the same run with the same load shape
 * (bench/peer/redis-streams.ts). CPU seconds of the broker and of this process are sampled per
 * phase, so a client-bound phase shows itself. 1 KiB random bodies, 4 topics × 4 queues.
 */
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { encodeBatchBody } from '../../src/common/message/batch-codec.js';
import { BenchChild } from '../lib/child.js';
import { warmPageCache } from '../lib/disk-ops.js';
import { cpuSecondsOf, freePort, rssOf, sleep } from '../lib/os.js';
import { countRecords, RawRemotingClient } from '../lib/remoting-client.js';
import { GiB, MiB, mbPerSec, nowMs, perSec, round3 } from '../lib/stats.js';
import type { BenchContext, BenchOutput, Metric } from '../lib/types.js';
import { runWindowed, type WindowRun } from '../lib/window-load.js';
import { e2eLoadShape } from '../peer/redis-streams.js';

const require = createRequire(import.meta.url);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const ons = require('ali-ons') as any;
const quietLogger = { info(): void {}, debug(): void {}, warn(): void {}, error(): void {} };

const TOPICS = ['BenchTopic0', 'BenchTopic1', 'BenchTopic2', 'BenchTopic3'];

interface Phase {
  name: string;
  run: WindowRun | null;
  elapsedMs: number;
  messages: number;
  bytes: number;
  brokerCpuS: number;
  clientCpuS: number;
}

function sendExt(topic: string, queueId: number, uniq: string): Record<string, string | number | boolean> {
  return { a: 'PID_BENCH', b: topic, c: 'TBW102', d: 4, e: queueId, f: 0, g: Date.now(), h: 0, i: `UNIQ_KEY\u0001${uniq}\u0002WAIT\u0001true\u0002TAGS\u0001TagA\u0002`, j: 0, k: false };
}

async function measure(name: string, brokerPid: number, fn: () => Promise<{ run: WindowRun | null; messages: number; bytes: number; elapsedMs: number }>): Promise<Phase> {
  const b0 = cpuSecondsOf(brokerPid);
  const c0 = process.cpuUsage();
  const r = await fn();
  const c = process.cpuUsage(c0);
  return { name, ...r, brokerCpuS: cpuSecondsOf(brokerPid) - b0, clientCpuS: (c.user + c.system) / 1e6 };
}

function cpuNote(p: Phase): string {
  const s = p.elapsedMs / 1000;
  // broker CPU seconds per message: the cost figure that does not depend on who else uses the cores
  const perMsg = p.messages > 0 ? ` = ${round3((p.brokerCpuS / p.messages) * 1e6)} µs/msg` : '';
  return `broker CPU ${Math.round((p.brokerCpuS / s) * 100)}%${perMsg}, client CPU ${Math.round((p.clientCpuS / s) * 100)}%`;
}

export async function run(ctx: BenchContext): Promise<BenchOutput> {
  const shape = e2eLoadShape(ctx);
  const ms = shape.seconds * 1000;
  warmPageCache(ctx.workDir, 2 * GiB);
  const namesrvPort = await freePort();
  const brokerPort = await freePort();
  const broker = BenchChild.start(ctx.repoRoot, join(ctx.repoRoot, 'src/cli/main.ts'), ['start', '-n', String(namesrvPort), '-p', String(brokerPort), '--store', join(ctx.workDir, 'store'), '-o', 'grpcListenPort=-1', '-o', 'metricsPromExporterPort=0', '-o', 'consolePort=-1'], {
    label: 'tsmq start',
  });
  const phases: Phase[] = [];
  const notes: string[] = [];
  const clients: RawRemotingClient[] = [];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let producer: any = null;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let consumer: any = null;
  try {
    await broker.waitFor(/tsmq started/, 60_000);
    const brokerAddr = `127.0.0.1:${brokerPort}`;
    const nameSrv = `127.0.0.1:${namesrvPort}`;
    for (let i = 0; i < shape.connections; i++) clients.push(await RawRemotingClient.connect(brokerAddr));
    const bodies = Array.from({ length: 256 }, () => randomBytes(1024));
    let uniq = 0;
    const nextUniq = (): string => (0x10000000 + uniq++).toString(16).toUpperCase().padStart(32, '0');
    const sendOne = async (i: number): Promise<number> => {
      const lane = i % 16;
      const r = await clients[i % clients.length]!.invoke(310, sendExt(TOPICS[lane >> 2]!, lane & 3, nextUniq()), bodies[i % bodies.length]);
      if (r.code !== 0) throw new Error(`send code ${r.code}: ${r.remark}`);
      return 1;
    };
    ctx.log('warm-up 2 s (creates the topics)');
    await runWindowed(shape.window, 2000, sendOne);

    ctx.log(`1. SEND_MESSAGE_V2, ${shape.window} in flight over ${shape.connections} connections, ${shape.seconds} s`);
    phases.push(await measure('raw-single', broker.pid, async () => {
      const r = await runWindowed(shape.window, ms, sendOne);
      return { run: r, messages: r.messages, bytes: r.messages * 1024, elapsedMs: r.elapsedMs };
    }));

    const batchBodies = Array.from({ length: 16 }, () =>
      encodeBatchBody(Array.from({ length: shape.batch }, (_, k) => ({ flag: 0, body: bodies[k % bodies.length]!, properties: new Map([['UNIQ_KEY', nextUniq()], ['TAGS', 'TagA']]) }))),
    );
    const sendBatch = async (i: number): Promise<number> => {
      const lane = i % 16;
      const ext = { ...sendExt(TOPICS[lane >> 2]!, lane & 3, nextUniq()), i: 'WAIT\u0001true\u0002', m: true };
      const r = await clients[i % clients.length]!.invoke(320, ext, batchBodies[i % batchBodies.length]);
      if (r.code !== 0) throw new Error(`batch code ${r.code}: ${r.remark}`);
      return shape.batch;
    };
    ctx.log(`2. SEND_BATCH_MESSAGE of ${shape.batch}, ${shape.batchWindow} in flight, ${shape.seconds} s`);
    phases.push(await measure('raw-batch', broker.pid, async () => {
      const r = await runWindowed(shape.batchWindow, ms, sendBatch);
      return { run: r, messages: r.messages, bytes: r.messages * 1024, elapsedMs: r.elapsedMs };
    }));

    ctx.log(`3. ali-ons producer, ${shape.window} sends in flight, ${shape.seconds} s`);
    producer = new ons.Producer({ httpclient: {}, nameSrv, producerGroup: 'PID_BENCH_ONS', logger: quietLogger });
    await producer.ready();
    const onsSend = async (i: number): Promise<number> => {
      const r = await producer.send(new ons.Message(TOPICS[i % 4], 'TagA', bodies[i % bodies.length]));
      if (r.sendStatus !== 'SEND_OK') throw new Error(`ali-ons sendStatus ${r.sendStatus}`);
      return 1;
    };
    await runWindowed(shape.window, 1000, onsSend);
    phases.push(await measure('ons-send', broker.pid, async () => {
      const r = await runWindowed(shape.window, ms, onsSend);
      return { run: r, messages: r.messages, bytes: r.messages * 1024, elapsedMs: r.elapsedMs };
    }));

    ctx.log(`4. PULL_MESSAGE of 32 over 16 queues from offset 0, up to ${shape.seconds} s`);
    phases.push(await measure('raw-pull', broker.pid, async () => {
      const lanes = Array.from({ length: 16 }, (_, l) => ({ topic: TOPICS[l >> 2]!, queueId: l & 3, offset: 0, done: false }));
      let messages = 0;
      let bytes = 0;
      const t0 = nowMs();
      await Promise.all(
        lanes.map(async (lane, l) => {
          while (!lane.done && nowMs() - t0 < ms) {
            const r = await clients[l % clients.length]!.invoke(11, {
              consumerGroup: 'GID_BENCH_RAW', topic: lane.topic, queueId: lane.queueId, queueOffset: lane.offset, maxMsgNums: 32,
              sysFlag: 4, commitOffset: 0, suspendTimeoutMillis: 0, subscription: '*', subVersion: 0,
            });
            if (r.code === 0) {
              messages += countRecords(r.body);
              bytes += r.body.length;
              lane.offset = Number(r.extFields.nextBeginOffset);
            } else if (r.code === 19 || r.code === 20 || r.code === 21) lane.done = true;
            else throw new Error(`pull code ${r.code}: ${r.remark}`);
          }
        }),
      );
      return { run: null, messages, bytes, elapsedMs: nowMs() - t0 };
    }));

    ctx.log(`5. ali-ons push consumer of the 4 topics, up to ${shape.seconds} s`);
    phases.push(await measure('ons-consume', broker.pid, async () => {
      let received = 0;
      let bytes = 0;
      let first = 0;
      consumer = new ons.Consumer({
        httpclient: {}, nameSrv, consumerGroup: 'GID_BENCH_ONS', consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
        logger: quietLogger, parallelConsumeLimit: 32, pullBatchSize: 32,
      });
      consumer.on('error', () => {});
      for (const t of TOPICS) {
        consumer.subscribe(t, '*', async (msg: { body: Buffer }) => {
          if (first === 0) first = nowMs();
          received++;
          bytes += msg.body.length;
        });
      }
      await consumer.ready();
      const t0 = nowMs();
      while (nowMs() - t0 < ms + 5000 && (first === 0 || nowMs() - first < ms)) await sleep(100);
      const end = nowMs();
      return { run: null, messages: received, bytes, elapsedMs: first ? end - first : end - t0 };
    }));
    notes.push(`Broker RSS at the end: ${round3(rssOf(broker.pid) / MiB)} MiB.`);
  } finally {
    await consumer?.close().catch(() => {});
    await producer?.close().catch(() => {});
    for (const c of clients) c.close();
    await broker.stop(20_000);
  }

  const f = ctx.figures;
  const ref = (key: string, label: string, unit: string): Metric['reference'] | undefined =>
    Number.isFinite(f[key]) ? { key, label, value: f[key]!, unit } : undefined;
  const by = (n: string): Phase => phases.find((p) => p.name === n)!;
  const metrics: Metric[] = [];
  const sendRow = (p: Phase, label: string, refKey: string, refLabel: string, target: boolean): void => {
    const lat = p.run!.latency.summary();
    metrics.push({
      name: label,
      value: perSec(p.messages, p.elapsedMs),
      unit: 'msgs/s',
      reference: ref(refKey, refLabel, 'msgs/s'),
      ...(target ? { target: { op: '>=' as const, limit: 1, on: 'ratio' as const } } : {}),
      note: `${cpuNote(p)}${p.run!.failed ? `; ${p.run!.failed} failed: ${p.run!.firstError}` : ''}`,
    });
    metrics.push({ name: `  send latency p99 (p50 ${round3(lat.p50Ms)} ms)`, value: lat.p99Ms, unit: 'ms', reference: ref(refKey.includes('Batch') ? 'redis-streams.xaddBatchP99Ms' : 'redis-streams.xaddP99Ms', 'Redis p99', 'ms') });
  };
  sendRow(by('raw-single'), `lean loadgen SEND_MESSAGE_V2, ${shape.window} in flight`, 'redis-streams.xaddPerSec', 'Redis XADD, same window', true);
  sendRow(by('raw-batch'), `lean loadgen SEND_BATCH_MESSAGE ×${shape.batch}, ${shape.batchWindow} in flight`, 'redis-streams.xaddBatchPerSec', 'Redis pipelines of the same size', true);
  sendRow(by('ons-send'), `ali-ons producer.send, ${shape.window} in flight`, 'redis-streams.xaddPerSec', 'Redis XADD, same window', false);
  const pull = by('raw-pull');
  metrics.push({ name: 'lean PULL_MESSAGE ×32, 16 queues', value: perSec(pull.messages, pull.elapsedMs), unit: 'msgs/s', reference: ref('redis-streams.readPerSec', 'Redis XRANGE COUNT 32', 'msgs/s'), note: `${round3(mbPerSec(pull.bytes, pull.elapsedMs))} MB/s of records; ${cpuNote(pull)}` });
  const cons = by('ons-consume');
  metrics.push({ name: 'ali-ons push consumer, 4 topics', value: perSec(cons.messages, cons.elapsedMs), unit: 'msgs/s', reference: ref('redis-streams.readPerSec', 'Redis XRANGE COUNT 32', 'msgs/s'), note: cpuNote(cons) });
  notes.push(
    `Load shape: ${shape.connections} connections, ${shape.window} single sends or ${shape.batchWindow} batches of ${shape.batch} in flight, ${shape.seconds} s per phase, 1 KiB random bodies over 4 topics × 4 queues; broker default config (ASYNC_FLUSH, 1 GiB segments) in its own process; the load generators and clients run in the benchmark process (one Node thread). 2 cores in total, so a client at 100% CPU leaves one core to the broker.`,
    `Messages: ${phases.map((p) => `${p.name} ${p.messages.toLocaleString('en-US')}`).join(', ')}. Pull phases read what the send phases wrote (from the page cache).`,
  );
  return {
    metrics,
    notes,
    figures: { rawSinglePerSec: perSec(by('raw-single').messages, by('raw-single').elapsedMs), rawBatchPerSec: perSec(by('raw-batch').messages, by('raw-batch').elapsedMs) },
    details: phases.map((p) => ({ ...p, run: p.run ? { ...p.run, latency: p.run.latency.summary() } : null })),
  };
}
