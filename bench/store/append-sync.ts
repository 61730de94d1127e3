/**
 * Store append, SYNC_FLUSH: 64 concurrent producers, each putting one 1 KiB message and waiting
 * for its result (PUT_OK after the group commit that covers it) before the next, for a fixed
 * time. Reports msgs/s and p50/p99 put latency; p99 beside the same-run fdatasync p99.
 *
 * Options (--set): sync.producers (64), sync.seconds (10 quick / 30 full).
 */
import { join } from 'node:path';
import { warmPageCache } from '../lib/disk-ops.js';
import { GiB, MiB, mbPerSec, perSec, round3 } from '../lib/stats.js';
import { describeFailures, messagePool, openBenchStore, putClosedLoop } from '../lib/store-load.js';
import type { BenchContext, BenchOutput } from '../lib/types.js';

export async function run(ctx: BenchContext): Promise<BenchOutput> {
  const producers = Number(ctx.options['sync.producers'] ?? 64);
  const seconds = Number(ctx.options['sync.seconds'] ?? (ctx.mode === 'full' ? 30 : 10));
  warmPageCache(ctx.workDir, Math.min(4 * GiB, Math.ceil((seconds * 150_000 * 1300) / MiB) * MiB));
  const pool = messagePool();
  const store = await openBenchStore(join(ctx.workDir, 'store'), { flushDiskType: 'SYNC_FLUSH' });
  try {
    ctx.log(`warm-up 2 s`);
    await putClosedLoop(store, pool, producers, 2000);
    ctx.log(`${producers} producers for ${seconds} s`);
    const r = await putClosedLoop(store, pool, producers, seconds * 1000);
    const lat = r.latency.summary();
    const msgsPerSec = perSec(r.ok, r.elapsedMs);
    const fsyncP99 = ctx.figures['disk.fdatasyncP99Ms'];
    const fsyncP50 = ctx.figures['disk.fdatasyncP50Ms'];
    const durable = ctx.figures['disk.durable64KiBPerSec'];
    const gcRate = ctx.figures['disk.groupCommitPerSec'];
    const gcP99 = ctx.figures['disk.groupCommitP99Ms'];
    return {
      metrics: [
        {
          name: `SYNC_FLUSH, ${producers} producers, msgs/s`,
          value: msgsPerSec,
          unit: 'msgs/s',
          ...(gcRate ? { reference: { key: 'disk.groupCommitPerSec', label: 'group-commit model, 64 producers', value: gcRate, unit: 'msgs/s' } } : {}),
          target: { op: '>=', limit: 100_000, on: 'value' },
        },
        { name: 'SYNC_FLUSH put latency p50', value: lat.p50Ms, unit: 'ms', ...(fsyncP50 ? { reference: { key: 'disk.fdatasyncP50Ms', label: 'fdatasync after 1 KiB append, p50', value: fsyncP50, unit: 'ms' } } : {}) },
        {
          name: 'SYNC_FLUSH put latency p99',
          value: lat.p99Ms,
          unit: 'ms',
          ...(fsyncP99 ? { reference: { key: 'disk.fdatasyncP99Ms', label: 'fdatasync after 1 KiB append, p99', value: fsyncP99, unit: 'ms' } } : {}),
          target: { op: '<=', limit: 2, on: 'value' },
        },
        ...(gcP99 ? [{ name: '  same p99 vs the group-commit model', value: lat.p99Ms, unit: 'ms', reference: { key: 'disk.groupCommitP99Ms', label: 'group-commit model p99', value: gcP99, unit: 'ms' } }] : []),
        { name: 'SYNC_FLUSH record MB/s', value: mbPerSec(r.recordBytes, r.elapsedMs), unit: 'MB/s' },
      ],
      figures: { msgsPerSec, p50Ms: lat.p50Ms, p99Ms: lat.p99Ms },
      notes: [
        `${r.ok.toLocaleString('en-US')} PUT_OK in ${round3(r.elapsedMs / 1000)} s (${describeFailures(r.notOk)}); latency p50/p90/p99/p99.9/max ${round3(lat.p50Ms)}/${round3(lat.p90Ms)}/${round3(lat.p99Ms)}/${round3(lat.p999Ms)}/${round3(lat.maxMs)} ms.`,
        `Closed loop: with ${producers} producers and one message in flight each, throughput = ${producers} / mean latency (${round3(lat.meanMs)} ms), so ≥ 100,000 msgs/s needs a mean put latency ≤ ${round3((producers / 100_000) * 1000)} ms, i.e. one group commit (write + fdatasync of up to ${producers} messages) every ~${round3((producers / 100_000) * 1000)} ms.`,
        ...(durable ? [`Disk ceiling for comparison: one 64 KiB write + fdatasync at a time ran ${round3(durable)}/s in the baseline; with ${producers} producers a group is at most ${producers} messages (~${round3((producers * 1.2) / 1)} KiB).`] : []),
      ],
      details: { latency: lat, producers, seconds, notOk: Object.fromEntries(r.notOk) },
    };
  } finally {
    await store.shutdown().catch(() => {});
  }
}
