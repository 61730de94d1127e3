/**
 * Recovery time after a crash vs store size. For each store size S: a writer child appends S
 * bytes, waits until the checkpoint covers them, appends an unchecked tail T and is SIGKILLed.
 * A fresh child then times DefaultMessageStore.open (abnormal recovery) with the page cache hot
 * (a process crash), is SIGKILLed itself, and after drop_caches a third child times it cold.
 * Finally, on the largest store, a bigger tail shows recovery growing with the tail.
 *
 * Expected: time ∝ bytes scanned = from the start of the segment holding the checkpoint to the
 * end, i.e. the unchecked tail (plus the part of its first segment before it), flat in S.
 *
 * Quick: 256 MiB segments, S = 0.5, 1, 2 GiB, T = 64 MiB, big tail 512 MiB.
 * Full: default 1 GiB segments, S = 1, 4, 8 GiB, T = 256 MiB, big tail 2 GiB.
 * Options (--set): recovery.sizesGiB=1,4,8 recovery.tailMiB recovery.bigTailMiB recovery.segmentMiB.
 * The writer uses thorough flush intervals of 1 s (CommitLog and ConsumeQueue) so the checkpoint
 * follows the data within seconds; with RocketMQ's defaults (10 s / 60 s) the unchecked tail is
 * whatever was written in the last minute.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { BenchChild } from '../lib/child.js';
import { dropPageCache } from '../lib/os.js';
import { GiB, MiB, round3 } from '../lib/stats.js';
import type { BenchContext, BenchOutput, Metric } from '../lib/types.js';
import type { StoreConfig } from '../../src/store/store-config.js';
import type { RecoveryReport } from '../../src/store/recovery/store-recovery.js';

interface Ready {
  maxPhyOffset: number;
  bulk: number;
  tail: number;
  bulkMs: number;
  checkpointWaitMs: number;
}
interface OpenResult {
  openMs: number;
  report: RecoveryReport;
  maxPhyOffset: number;
  rssBytes: number;
}

interface Point {
  storeBytes: number;
  tailBytes: number;
  hot: OpenResult;
  cold: OpenResult | null;
  ready: Ready;
}

const script = (ctx: BenchContext): string => join(ctx.repoRoot, 'bench/store/recovery-child.ts');

async function crashAfterWrite(ctx: BenchContext, root: string, config: Partial<StoreConfig>, bulkBytes: number, tailBytes: number): Promise<Ready> {
  const w = BenchChild.start(ctx.repoRoot, script(ctx), [JSON.stringify({ role: 'write', root, config, bulkBytes, tailBytes })], { label: 'recovery writer' });
  try {
    return await w.waitLine<Ready>('READY', 20 * 60_000);
  } finally {
    await w.kill();
  }
}

async function timeOpen(ctx: BenchContext, root: string, config: Partial<StoreConfig>, then: 'hang' | 'close'): Promise<OpenResult> {
  const c = BenchChild.start(ctx.repoRoot, script(ctx), [JSON.stringify({ role: 'open', root, config, then })], { label: 'recovery open' });
  try {
    const r = await c.waitLine<OpenResult>('RESULT', 10 * 60_000);
    if (then === 'close') await c.exited;
    return r;
  } finally {
    await c.kill();
  }
}

function scanned(r: OpenResult): number {
  return r.report.stoppedAt - r.report.startOffset;
}

export async function run(ctx: BenchContext): Promise<BenchOutput> {
  const full = ctx.mode === 'full';
  const sizesGiB = (ctx.options['recovery.sizesGiB'] ?? (full ? '1,4,8' : '0.5,1,2')).split(',').map(Number);
  const tailBytes = Number(ctx.options['recovery.tailMiB'] ?? (full ? 256 : 64)) * MiB;
  const bigTailBytes = Number(ctx.options['recovery.bigTailMiB'] ?? (full ? 2048 : 512)) * MiB;
  const segmentBytes = Number(ctx.options['recovery.segmentMiB'] ?? (full ? 1024 : 256)) * MiB;
  const config: Partial<StoreConfig> = {
    mappedFileSizeCommitLog: segmentBytes,
    flushCommitLogThoroughInterval: 1000,
    flushConsumeQueueThoroughInterval: 1000,
  };
  const points: Point[] = [];
  let dropped = true;
  const measure = async (root: string, storeBytes: number, tail: number, bulk: number): Promise<Point> => {
    ctx.log(`store ${round3(storeBytes / GiB)} GiB: writing ${round3(bulk / GiB)} GiB + checkpoint + ${round3(tail / MiB)} MiB tail, then SIGKILL`);
    const ready = await crashAfterWrite(ctx, root, config, bulk, tail);
    ctx.log(`  recovering (hot page cache)`);
    const hot = await timeOpen(ctx, root, config, 'hang');
    if (hot.maxPhyOffset !== ready.maxPhyOffset) ctx.log(`  warning: recovered max offset ${hot.maxPhyOffset} != written ${ready.maxPhyOffset}`);
    dropped = dropPageCache() && dropped;
    ctx.log(`  recovering again (${dropped ? 'cold' : 'drop_caches not permitted'})`);
    const cold = await timeOpen(ctx, root, config, 'close');
    const p = { storeBytes, tailBytes: tail, hot, cold, ready };
    ctx.log(`  hot ${round3(hot.openMs)} ms, cold ${round3(cold.openMs)} ms, scanned ${round3(scanned(hot) / MiB)} MiB`);
    return p;
  };
  for (const gib of sizesGiB) {
    const root = join(ctx.workDir, `store-${gib}g`);
    const storeBytes = gib * GiB;
    points.push(await measure(root, storeBytes, tailBytes, storeBytes - tailBytes));
    if (gib !== sizesGiB[sizesGiB.length - 1]) rmSync(root, { recursive: true, force: true });
  }
  const last = sizesGiB[sizesGiB.length - 1]!;
  const lastRoot = join(ctx.workDir, `store-${last}g`);
  points.push(await measure(lastRoot, last * GiB + bigTailBytes, bigTailBytes, 0));

  const metrics: Metric[] = points.map((p) => ({
    name: `crash recovery, store ${round3(p.storeBytes / GiB)} GiB, unchecked tail ${round3(p.tailBytes / MiB)} MiB (hot)`,
    value: p.hot.openMs,
    unit: 'ms',
    note: `cold ${round3(p.cold?.openMs ?? NaN)} ms; scanned ${round3(scanned(p.hot) / MiB)} MiB, ${p.hot.report.recordsScanned.toLocaleString('en-US')} records`,
  }));
  const base = points[0]!;
  const ratioFirstLast = points[sizesGiB.length - 1]!.hot.openMs / base.hot.openMs;
  const sizeRatio = points[sizesGiB.length - 1]!.storeBytes / base.storeBytes;
  metrics.push({ name: `recovery time growth for ${round3(sizeRatio)}× store size (same tail)`, value: ratioFirstLast, unit: '×', target: { op: '<=', limit: 2, on: 'value' } });
  return {
    metrics,
    figures: { hotMsSmallest: base.hot.openMs, hotMsLargest: points[sizesGiB.length - 1]!.hot.openMs },
    notes: [
      `Segments ${round3(segmentBytes / MiB)} MiB; the writer's thorough flush intervals are 1 s so the checkpoint (min(physic, logics) − 3 s) passes the bulk data within seconds (waited ${points.map((p) => round3(p.ready.checkpointWaitMs / 1000)).join(', ')} s). Recovery starts at the newest segment whose first record is older than the checkpoint and re-dispatches every record from there, so the scan covers that segment's bytes before the tail plus the tail.`,
      `Recovered max offset equals the written one in every run: ${points.every((p) => p.hot.maxPhyOffset === p.ready.maxPhyOffset) ? 'yes' : 'NO'} (a SIGKILL keeps what was handed to the OS; the writer waited 300 ms after its last put).`,
      `Cold runs: ${dropped ? 'the page cache was dropped (echo 1 > /proc/sys/vm/drop_caches) before the second open' : 'drop_caches was not permitted, the "cold" runs are hot'}; the first open was SIGKILLed right after it finished, so the second open recovers the same crash again.`,
      `Open RSS after recovery: ${points.map((p) => `${round3(p.hot.rssBytes / MiB)} MiB`).join(', ')}.`,
      `"Growth" target (≤ 2× for the range of sizes) is this harness's reading of "must grow with the unchecked tail, not with the store"; not from the issue.`,
    ],
    details: points.map((p) => ({ storeBytes: p.storeBytes, tailBytes: p.tailBytes, ready: p.ready, hot: p.hot, cold: p.cold })),
  };
}
