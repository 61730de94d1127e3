/**
 * Timer messages (issue 16, item 5), in child processes (bench/timer/timer-child.ts):
 *
 *  1. Burst: N timers (quick 200,000, full 1,000,000; `--set timer.burst=N`) with 1 KiB bodies,
 *     all due at the same whole second, put through the broker put path well before; then the
 *     lateness of each delivery (due → stored in its topic = consumable) p50/p99/max and the
 *     due-delivery throughput. Target: p99 ≤ 1 s for 1 M on this machine.
 *     Same-run reference: the put rate of the same broker (`putPerSec`), the ceiling of any re-put;
 *     and the store's own ceiling: the same number of prepared records appended with
 *     putPreparedMessages right after (the least time the due deliveries can take).
 *     `--set timer.broker.<key>=<value>` passes broker config (e.g. timerPrefetchMaxBytes).
 *     Before the burst's broker starts the page cache is filled (bench/lib/page-cache.ts; off with
 *     `--set timer.fill=0`): the due second writes ~1.3 GB of CommitLog, and on this VM new
 *     page-cache pages cost ~2 µs of kernel time per 1 KiB record against ~0.26 µs for the reused
 *     pages a long-running broker writes into. The target is judged with the fill.
 *  2. Pending: M timers (quick 1,000,000, full 10,000,000; `--set timer.pending=M`) due over an
 *     hour (128-byte bodies), broker RSS once they are all in the wheel (target ≤ 1 GiB), then
 *     20,000 more unchecked ones and SIGKILL; a fresh process times the recovery. The same is done
 *     with M/10 timers: recovery time must not grow with the number pending (only the unchecked
 *     tail is re-read).
 */
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { BenchChild } from '../lib/child.js';
import { fillPageCache, type PageCacheFill } from '../lib/page-cache.js';
import { MiB, round3 } from '../lib/stats.js';
import type { BenchContext, BenchOutput, Metric } from '../lib/types.js';

const script = (ctx: BenchContext): string => join(ctx.repoRoot, 'bench/timer/timer-child.ts');

async function child<T>(ctx: BenchContext, args: object, tag: string, timeoutMs: number): Promise<T> {
  const c = BenchChild.start(ctx.repoRoot, script(ctx), [JSON.stringify(args)], { label: `timer ${(args as { role: string }).role}`, nodeArgs: ['--expose-gc', '--max-old-space-size=3072'] });
  try {
    const r = await c.waitLine<T>(tag, timeoutMs);
    await c.exited;
    return r;
  } finally {
    await c.kill();
  }
}

interface Burst {
  count: number;
  putPerSec: number;
  latenessP50Ms: number;
  latenessP99Ms: number;
  latenessMaxMs: number;
  earliestMs: number;
  deliveredPerSec: number;
  deliveryCpuMs?: number;
  deliveryMainThreadCpuMs?: number | null;
  slackBeforeDueMs: number;
  rssBytes: number;
  stats: { deliveredPrepared: number };
  prefetch: { prepared: number; overBudget: number; preparedAtDue: number; busyMs: number } | null;
  ceiling: { count: number; ms: number; perSec: number; bytes: number; cpuMs?: number } | null;
  beforeDue: { rssBytes: number; heapUsedBytes: number; arrayBuffersBytes: number };
}
interface Ready {
  rssBytes: number;
  heapUsedBytes: number;
  timerLogBytes: number;
  pendingInWheel: number;
  putMs: number;
}
interface Recovered {
  report: { unitsReplayed: number; wheelLoadMs: number; tailScanMs: number };
  timerRecoveryMs: number;
  createMs: number;
  startMs: number;
  pendingInWheel: number;
  rssBytes: number;
}

async function pendingRound(ctx: BenchContext, root: string, count: number): Promise<{ ready: Ready; rec: Recovered }> {
  const w = BenchChild.start(ctx.repoRoot, script(ctx), [JSON.stringify({ role: 'pending', root, count, bodyBytes: 128, spreadMs: 3_600_000 })], {
    label: 'timer pending',
    nodeArgs: ['--expose-gc', '--max-old-space-size=3072'],
  });
  let ready: Ready;
  try {
    ready = await w.waitLine<Ready>('READY', 3 * 3_600_000);
    await w.waitLine('TAIL', 600_000);
  } finally {
    await w.kill(); // SIGKILL
  }
  const rec = await child<Recovered>(ctx, { role: 'recover', root }, 'RESULT', 1_800_000);
  return { ready, rec };
}

export async function run(ctx: BenchContext): Promise<BenchOutput> {
  const full = ctx.mode === 'full';
  const burstN = Number(ctx.options['timer.burst'] ?? (full ? 1_000_000 : 200_000));
  const pendingN = Number(ctx.options['timer.pending'] ?? (full ? 10_000_000 : 1_000_000));
  ctx.log(`burst: ${burstN} timers due in the same second`);
  // `--set timer.broker.<key>=<value>`: broker config of the burst child (e.g. timer.broker.timerPrefetchWindowMs=0 for the on-time path only)
  const brokerExtra = Object.fromEntries(Object.entries(ctx.options).filter(([k]) => k.startsWith('timer.broker.')).map(([k, v]) => [k.slice('timer.broker.'.length), String(v)]));
  const fillOn = (ctx.options['timer.fill'] ?? '1') !== '0';
  // the fill's sparse file stays (its pages cached) until the burst's broker has stopped
  const fill: PageCacheFill | null = fillOn ? await fillPageCache(ctx.workDir) : null;
  if (fill) ctx.log(`page cache filled: ${round3(fill.bytes / MiB)} MiB in ${fill.seconds} s`);
  const loadAtStart = loadavg()[0]!;
  let b: Burst;
  try {
    b = await child<Burst>(ctx, { role: 'burst', root: join(ctx.workDir, 'burst'), count: burstN, bodyBytes: 1024, precisionMs: 1000, brokerExtra }, 'RESULT', 3_600_000);
  } finally {
    if (fill) rmSync(fill.path, { force: true });
  }
  const loadAtEnd = loadavg()[0]!;
  ctx.log(`  p50 ${b.latenessP50Ms} ms, p99 ${b.latenessP99Ms} ms, max ${b.latenessMaxMs} ms, ${b.deliveredPerSec}/s; store ceiling ${b.ceiling?.perSec ?? "-"}/s`);
  ctx.log(`pending: ${pendingN / 10} then ${pendingN} timers over an hour, SIGKILL, recovery`);
  const small = await pendingRound(ctx, join(ctx.workDir, 'pending-small'), Math.round(pendingN / 10));
  const big = await pendingRound(ctx, join(ctx.workDir, 'pending-big'), pendingN);
  const n = (x: number) => x.toLocaleString('en-US');
  const metrics: Metric[] = [
    { name: `burst of ${n(b.count)}: lateness p50 (due → consumable)`, value: b.latenessP50Ms, unit: 'ms' },
    { name: `burst of ${n(b.count)}: lateness p99`, value: b.latenessP99Ms, unit: 'ms', target: { op: '<=', limit: 1000, on: 'value' } },
    { name: `burst of ${n(b.count)}: lateness max`, value: b.latenessMaxMs, unit: 'ms', note: `earliest delivery ${b.earliestMs} ms after due (never early)` },
    {
      name: `burst of ${n(b.count)}: due-delivery throughput`,
      value: b.deliveredPerSec,
      unit: 'msg/s',
      reference: { key: 'timer.putPerSec', label: 'same broker, plain puts', value: b.putPerSec, unit: 'msg/s' },
      note: `${b.deliveryCpuMs !== undefined ? `broker CPU from just before due to the last delivery ${n(b.deliveryCpuMs)} ms; ` : ''}${n(b.stats.deliveredPrepared ?? 0)} of them appended as prepared records (${b.prefetch ? `${n(b.prefetch.prepared)} prepared ahead, ${n(b.prefetch.preparedAtDue)} at due time beyond the memory budget; prefetch busy ${n(Math.round(b.prefetch.busyMs))} ms` : 'no prefetch'}; broker config ${JSON.stringify(brokerExtra)}); main-thread CPU of the due window ${b.deliveryMainThreadCpuMs ?? '-'} ms; load average ${round3(loadAtStart)} → ${round3(loadAtEnd)}; ${fill ? `page cache filled before the broker start (${round3(fill.bytes / MiB)} MiB in ${fill.seconds} s)` : 'no page-cache fill (timer.fill=0)'}`,
    },
    ...(b.ceiling
      ? [
          {
            name: `store ceiling: ${n(b.ceiling.count)} prepared 1 KiB records appended by putPreparedMessages in 4 MiB blocks (ConsumeQueue + index dispatch), same broker after the burst`,
            value: b.ceiling.perSec,
            unit: 'msg/s',
            note: `${n(b.ceiling.ms)} ms${b.ceiling.cpuMs !== undefined ? ` (CPU ${n(b.ceiling.cpuMs)} ms)` : ''} for ${n(b.ceiling.count)} (${round3(b.ceiling.bytes / MiB)} MiB): the least time the due deliveries of this burst can take`,
          } satisfies Metric,
        ]
      : []),
    { name: `burst of ${n(b.count)}: broker RSS just before due`, value: round3(b.beforeDue.rssBytes / MiB), unit: 'MiB', note: `heap ${round3(b.beforeDue.heapUsedBytes / MiB)} MiB, array buffers ${round3(b.beforeDue.arrayBuffersBytes / MiB)} MiB (prepared records)` },
    { name: `broker RSS with ${n(big.ready.pendingInWheel)} pending timers`, value: round3(big.ready.rssBytes / MiB), unit: 'MiB', target: { op: '<=', limit: 1024, on: 'value' }, note: `heap ${round3(big.ready.heapUsedBytes / MiB)} MiB; timerlog ${round3(big.ready.timerLogBytes / MiB)} MiB on disk` },
    { name: `timer recovery after SIGKILL, ${n(small.ready.pendingInWheel)} pending + 20,000 unchecked`, value: round3(small.rec.timerRecoveryMs), unit: 'ms', note: `pending after recovery ${n(small.rec.pendingInWheel)}; wheel read ${round3(small.rec.report.wheelLoadMs)} ms, ${n(small.rec.report.unitsReplayed)} units replayed in ${round3(small.rec.report.tailScanMs)} ms; whole broker open ${round3(small.rec.createMs + small.rec.startMs)} ms` },
    { name: `timer recovery after SIGKILL, ${n(big.ready.pendingInWheel)} pending + 20,000 unchecked`, value: round3(big.rec.timerRecoveryMs), unit: 'ms', note: `pending after recovery ${n(big.rec.pendingInWheel)}; wheel read ${round3(big.rec.report.wheelLoadMs)} ms, ${n(big.rec.report.unitsReplayed)} units replayed in ${round3(big.rec.report.tailScanMs)} ms; whole broker open ${round3(big.rec.createMs + big.rec.startMs)} ms (CommitLog/ConsumeQueue recovery grows with the store)` },
    { name: 'timer recovery time, 10× the pending timers', value: round3(big.rec.timerRecoveryMs / small.rec.timerRecoveryMs), unit: '×' },
  ];
  return {
    metrics,
    figures: { putPerSec: b.putPerSec, burstP99Ms: b.latenessP99Ms, pendingRssMiB: big.ready.rssBytes / MiB },
    notes: [
      'In-process broker (real store, ASYNC_FLUSH, 1 GiB CommitLog segments, timerPrecisionMs 1000); timers put through the broker put path (timer hook), 64 in flight.',
      'Lateness = store time of the delivered message − due time; tsmq dispatches to the ConsumeQueue within the put, so a delivered message is consumable at its store time.',
      'Timer recovery = TimerStore.open (wheel read, timerlog tail after the checkpoint re-linked) + position recovery at start; the whole broker open (store recovery included) is in the notes. The timer wheel is one 38.7 MB file read at open; only the timerlog after the checkpoint is re-read.',
    ],
    details: { burst: b, fill, loadAverage: { burstStart: loadAtStart, burstEnd: loadAtEnd }, pendingSmall: small, pendingBig: big },
  };
}
