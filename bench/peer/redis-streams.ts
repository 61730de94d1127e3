/**
 * Peer: Redis Streams on the same machine, same payloads, same load shape as the broker e2e
 * benchmark: XADD of 1 KiB payloads to 16 streams (4 "topics" × 4 "queues"), `window` requests
 * in flight over `connections` ioredis clients (pipelined on each connection), for a fixed time;
 * then the same in ioredis pipelines of `batch` commands (the peer of SEND_BATCH_MESSAGE);
 * redis-benchmark's C client for the server's own ceiling; then XRANGE reads of 32 entries per
 * call over all streams (the pull peer).
 * redis-server runs with appendonly yes, appendfsync everysec (≈ tsmq ASYNC_FLUSH).
 *
 * Options (--set): e2e.connections (4), e2e.window (256), e2e.batch (64), e2e.batchWindow (16),
 * e2e.seconds (10 quick / 30 full).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { ensureRedisServer, startRedis } from '../lib/redis-server.js';
import { mbPerSec, nowMs, perSec, round3 } from '../lib/stats.js';
import type { BenchContext, BenchOutput } from '../lib/types.js';
import { runWindowed } from '../lib/window-load.js';

export interface E2eShape {
  connections: number;
  /** Single-message requests in flight. */
  window: number;
  /** Messages per batch request (SEND_BATCH_MESSAGE / one ioredis pipeline). */
  batch: number;
  /** Batch requests in flight. */
  batchWindow: number;
  seconds: number;
}

export function e2eLoadShape(ctx: BenchContext): E2eShape {
  return {
    connections: Number(ctx.options['e2e.connections'] ?? 4),
    window: Number(ctx.options['e2e.window'] ?? 256),
    batch: Number(ctx.options['e2e.batch'] ?? 64),
    batchWindow: Number(ctx.options['e2e.batchWindow'] ?? 16),
    seconds: Number(ctx.options['e2e.seconds'] ?? (ctx.mode === 'full' ? 30 : 10)),
  };
}

/** redis-benchmark (C client) XADD with pipelining: the server's own ceiling, for context. */
function redisBenchmarkCeiling(port: number, connections: number, pipeline: number, count: number): number | null {
  try {
    const out = execFileSync('redis-benchmark', ['-p', String(port), '-c', String(connections), '-P', String(pipeline), '-n', String(count), '--csv', 'XADD', 'bench:ceiling', '*', 'body', 'x'.repeat(1024)], {
      encoding: 'utf8',
      timeout: 120_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const line = out.trim().split('\n').pop() ?? '';
    const v = Number(line.split('","')[1]);
    return Number.isFinite(v) && v > 0 ? v : null;
  } catch {
    return null;
  }
}

export async function run(ctx: BenchContext): Promise<BenchOutput> {
  const bin = ensureRedisServer(ctx.log);
  const shape = e2eLoadShape(ctx);
  const redis = await startRedis(bin, join(ctx.workDir, 'redis'));
  const clients = Array.from({ length: shape.connections }, () => new Redis({ port: redis.port, host: '127.0.0.1', lazyConnect: false, maxRetriesPerRequest: 1, enableAutoPipelining: true }));
  try {
    await Promise.all(clients.map((c) => c.ping()));
    const payloads = Array.from({ length: 256 }, () => randomBytes(1024));
    const streams = Array.from({ length: 16 }, (_, i) => `bench:BenchTopic${Math.floor(i / 4)}:${i % 4}`);
    const xadd = (i: number): Promise<number> =>
      clients[i % clients.length]!.xadd(streams[i % streams.length]!, '*', 'body', payloads[i % payloads.length]!).then(() => 1);
    ctx.log(`warm-up 2 s`);
    await runWindowed(shape.window, 2000, xadd);
    ctx.log(`XADD 1 KiB, ${shape.connections} connections, ${shape.window} in flight, ${shape.seconds} s`);
    const w = await runWindowed(shape.window, shape.seconds * 1000, xadd);
    const lat = w.latency.summary();
    const sendPerSec = perSec(w.messages, w.elapsedMs);
    const xaddBatch = (i: number): Promise<number> => {
      const pl = clients[i % clients.length]!.pipeline();
      for (let k = 0; k < shape.batch; k++) pl.xadd(streams[(i + k) % streams.length]!, '*', 'body', payloads[(i * shape.batch + k) % payloads.length]!);
      return pl.exec().then((res) => {
        for (const [err] of res ?? []) if (err) throw err;
        return shape.batch;
      });
    };
    ctx.log(`XADD in pipelines of ${shape.batch}, ${shape.batchWindow} pipelines in flight, ${shape.seconds} s`);
    const wb = await runWindowed(shape.batchWindow, shape.seconds * 1000, xaddBatch);
    const latB = wb.latency.summary();
    const batchPerSec = perSec(wb.messages, wb.elapsedMs);
    ctx.log('redis-benchmark XADD ceiling (C client)');
    const ceiling = redisBenchmarkCeiling(redis.port, shape.connections, shape.batch, ctx.mode === 'full' ? 2_000_000 : 500_000);

    ctx.log('XRANGE 32 at a time over all streams');
    const cursors = streams.map((s) => ({ stream: s, from: '-', done: false }));
    let read = 0;
    let readBytes = 0;
    const r0 = nowMs();
    while (cursors.some((c) => !c.done)) {
      await Promise.all(
        cursors
          .filter((c) => !c.done)
          .map(async (c, k) => {
            const entries = (await clients[k % clients.length]!.xrangeBuffer(c.stream, c.from, '+', 'COUNT', 32)) as Array<[Buffer, Buffer[]]>;
            if (entries.length === 0) {
              c.done = true;
              return;
            }
            read += entries.length;
            for (const [, fields] of entries) readBytes += fields[1]?.length ?? 0;
            c.from = `(${entries[entries.length - 1]![0].toString()}`;
          }),
      );
    }
    const readMs = nowMs() - r0;
    const info = await clients[0]!.info('persistence');
    const aofBytes = /aof_current_size:(\d+)/.exec(info)?.[1];
    return {
      metrics: [
        { name: `XADD 1 KiB, ${shape.window} in flight over ${shape.connections} connections`, value: sendPerSec, unit: 'msgs/s' },
        { name: 'XADD latency p99', value: lat.p99Ms, unit: 'ms', note: `p50 ${round3(lat.p50Ms)} ms` },
        { name: `XADD in ioredis pipelines of ${shape.batch}, ${shape.batchWindow} in flight`, value: batchPerSec, unit: 'msgs/s', note: `pipeline p99 ${round3(latB.p99Ms)} ms` },
        { name: `server ceiling: redis-benchmark (C) -c ${shape.connections} -P ${shape.batch}`, value: ceiling, unit: 'msgs/s' },
        { name: 'XRANGE COUNT 32 read-back', value: perSec(read, readMs), unit: 'msgs/s', note: `${round3(mbPerSec(readBytes, readMs))} MB/s of payload` },
      ],
      figures: { xaddPerSec: sendPerSec, xaddP50Ms: lat.p50Ms, xaddP99Ms: lat.p99Ms, xaddBatchPerSec: batchPerSec, xaddBatchP99Ms: latB.p99Ms, ceilingPerSec: ceiling ?? NaN, readPerSec: perSec(read, readMs), window: shape.window, connections: shape.connections },
      notes: [
        `${redis.version}; appendonly yes, appendfsync everysec, no RDB; ${w.ok.toLocaleString('en-US')} XADD ok, ${w.failed} failed${w.firstError ? ` (${w.firstError})` : ''}; AOF ${aofBytes ? round3(Number(aofBytes) / 1e6) + ' MB' : 'size unknown'}.`,
        `Client: ioredis in the benchmark process (one Node thread), the server in its own process; latency p50/p99/max ${round3(lat.p50Ms)}/${round3(lat.p99Ms)}/${round3(lat.maxMs)} ms. Read-back: ${read.toLocaleString('en-US')} entries in ${round3(readMs)} ms.`,
      ],
      details: { latency: lat, batchLatency: latB, shape, read, readMs, ceiling },
    };
  } finally {
    for (const c of clients) c.disconnect();
    await redis.child.stop(5000);
  }
}
