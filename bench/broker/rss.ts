/**
 * Broker RSS while holding a large store (full mode; or `--only broker-rss` with small sizes).
 *
 * For each size in turn (default 1 GiB then 16 GiB, the same store growing): the store is filled
 * to that size through the embedded DefaultMessageStore (fast, no network), then `tsmq start`
 * runs on it and, while its RSS is sampled every 200 ms, takes 10 s of sends and pulls spread
 * over the whole store (offsets at 0 %, 50 % and 90 % of every queue). Bounded means the
 * broker's RSS at 16 GiB is about what it is at 1 GiB: segment data lives in the page cache
 * (pread/pwrite, no mappings), not in the process.
 *
 * Options (--set): rss.sizesGiB (1,16 full / 0.5,2 quick), rss.seconds (10).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { BenchChild } from '../lib/child.js';
import { warmPageCache } from '../lib/disk-ops.js';
import { dirBytes, freePort, rssBreakdown, rssOf, sleep } from '../lib/os.js';
import { RawRemotingClient } from '../lib/remoting-client.js';
import { GiB, MiB, nowMs, round3 } from '../lib/stats.js';
import { messagePool, openBenchStore, putWindowed, topicName } from '../lib/store-load.js';
import type { BenchContext, BenchOutput, Metric } from '../lib/types.js';
import { runWindowed } from '../lib/window-load.js';

interface Sample {
  sizeBytes: number;
  startRss: number;
  maxRss: number;
  maxAnon: number;
  maxFile: number;
  endRss: number;
  sends: number;
  pulls: number;
}

async function startBroker(ctx: BenchContext, storeDir: string): Promise<{ broker: BenchChild; addr: string }> {
  const ns = await freePort();
  const port = await freePort();
  const broker = BenchChild.start(ctx.repoRoot, join(ctx.repoRoot, 'src/cli/main.ts'), ['start', '-n', String(ns), '-p', String(port), '--store', storeDir, '-o', 'grpcListenPort=-1'], { label: 'tsmq start' });
  await broker.waitFor(/tsmq started/, 10 * 60_000);
  return { broker, addr: `127.0.0.1:${port}` };
}

function sendExt(lane: number): Record<string, string | number | boolean> {
  return { a: 'PID_RSS', b: topicName(lane >> 2), c: 'TBW102', d: 4, e: lane & 3, f: 0, g: Date.now(), h: 0, i: 'WAIT\u0001true\u0002TAGS\u0001TagA\u0002', j: 0, k: false };
}

/** Sends and spread-out pulls for `ms` while sampling the broker's RSS. */
async function exercise(broker: BenchChild, addr: string, ms: number, maxOffsets: number[]): Promise<Omit<Sample, 'sizeBytes'>> {
  const client = await RawRemotingClient.connect(addr);
  const body = randomBytes(1024);
  const startRss = rssOf(broker.pid);
  let maxRss = startRss;
  let maxAnon = 0;
  let maxFile = 0;
  const sampler = setInterval(() => {
    maxRss = Math.max(maxRss, rssOf(broker.pid));
    const b = rssBreakdown(broker.pid);
    maxAnon = Math.max(maxAnon, b.anon);
    maxFile = Math.max(maxFile, b.file);
  }, 200);
  let pulls = 0;
  try {
    const sendP = runWindowed(64, ms, async (i) => {
      const r = await client.invoke(310, sendExt(i % 16), body);
      if (r.code !== 0) throw new Error(`send code ${r.code}: ${r.remark}`);
      return 1;
    });
    const t0 = nowMs();
    const pullP = (async () => {
      for (let k = 0; nowMs() - t0 < ms; k++) {
        const lane = k % 16;
        const frac = [0, 0.5, 0.9][Math.floor(k / 16) % 3]!;
        const offset = Math.floor((maxOffsets[lane] ?? 0) * frac) + (k % 97) * 32;
        await client.invoke(11, {
          consumerGroup: 'GID_RSS', topic: topicName(lane >> 2), queueId: lane & 3, queueOffset: offset, maxMsgNums: 32,
          sysFlag: 4, commitOffset: 0, suspendTimeoutMillis: 0, subscription: '*', subVersion: 0,
        });
        pulls++;
      }
    })();
    const [s] = await Promise.all([sendP, pullP]);
    await sleep(500);
    return { startRss, maxRss, maxAnon, maxFile, endRss: rssOf(broker.pid), sends: s.messages, pulls };
  } finally {
    clearInterval(sampler);
    client.close();
  }
}

export async function run(ctx: BenchContext): Promise<BenchOutput> {
  const sizesGiB = (ctx.options['rss.sizesGiB'] ?? (ctx.mode === 'full' ? '1,16' : '0.5,2')).split(',').map(Number);
  const ms = Number(ctx.options['rss.seconds'] ?? 10) * 1000;
  const storeDir = join(ctx.workDir, 'store');
  // Create the topics through the broker so its topic table knows them.
  {
    const { broker, addr } = await startBroker(ctx, storeDir);
    const c = await RawRemotingClient.connect(addr);
    for (let lane = 0; lane < 16; lane++) await c.invoke(310, sendExt(lane), Buffer.alloc(1024));
    c.close();
    await broker.stop(30_000);
  }
  const samples: Sample[] = [];
  const pool = messagePool();
  let written = 0;
  for (const gib of sizesGiB) {
    const target = gib * GiB;
    ctx.log(`filling the store to ${gib} GiB through the embedded store`);
    warmPageCache(ctx.workDir, Math.min(4 * GiB, Math.max(0, target - written)));
    const store = await openBenchStore(storeDir);
    while (store.getMaxPhyOffset() < target) {
      const r = await putWindowed(store, pool, 100_000, 1024, written);
      written += r.count;
    }
    const maxOffsets = Array.from({ length: 16 }, (_, lane) => store.getMaxOffsetInQueue(topicName(lane >> 2), lane & 3));
    await store.shutdown();
    ctx.log(`broker on the ${gib} GiB store (${round3(dirBytes(storeDir) / GiB)} GiB on disk): ${ms / 1000} s of sends and spread pulls`);
    const { broker, addr } = await startBroker(ctx, storeDir);
    try {
      await sleep(1000);
      samples.push({ sizeBytes: target, ...(await exercise(broker, addr, ms, maxOffsets)) });
    } finally {
      await broker.stop(60_000);
    }
  }
  const metrics: Metric[] = samples.map((s) => ({
    name: `broker RSS with a ${round3(s.sizeBytes / GiB)} GiB store, max during sends + pulls`,
    value: s.maxRss / MiB,
    unit: 'MiB',
    note: `anon ${round3(s.maxAnon / MiB)} MiB, file-backed ${round3(s.maxFile / MiB)} MiB, at start ${round3(s.startRss / MiB)} MiB`,
  }));
  const first = samples[0]!;
  const last = samples[samples.length - 1]!;
  metrics.push({
    name: `RSS growth for ${round3(last.sizeBytes / first.sizeBytes)}× store size`,
    value: last.maxRss / first.maxRss,
    unit: '×',
    target: { op: '<=', limit: 1.5, on: 'value' },
  });
  return {
    metrics,
    notes: [
      `Store filled with the embedded DefaultMessageStore (1 KiB bodies, 4 topics × 4 queues, 1 GiB segments), then \`tsmq start\` in a child process; RSS (VmRSS, RssAnon, RssFile from /proc) sampled every 200 ms during ${ms / 1000} s of sends (64 in flight) and pulls of 32 at 0 %, 50 % and 90 % of every queue.`,
      `Sends/pulls per run: ${samples.map((s) => `${s.sends}/${s.pulls}`).join(', ')}.`,
      `"Growth ≤ 1.5×" is this harness's reading of "bounded, not growing with store size"; not from the issue.`,
    ],
    details: samples,
  };
}
