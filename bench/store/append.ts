/**
 * Store append, ASYNC_FLUSH: 1 KiB bodies over 4 topics × 4 queues into an embedded
 * DefaultMessageStore with default segment sizes (1 GiB CommitLog files), `window` putMessage
 * calls in flight. Reports messages/s and MB/s of record bytes (what lands in the CommitLog),
 * beside the same-run baseline of sequential 1 MiB writes into fresh page-cache memory.
 *
 * Options (--set): append.messages, append.window.
 */
import os from 'node:os';
import { join } from 'node:path';
import { warmPageCache } from '../lib/disk-ops.js';
import { GiB, MiB, mbPerSec, nowMs, perSec, round3 } from '../lib/stats.js';
import { describeFailures, messagePool, openBenchStore, putWindowed, waitDispatched } from '../lib/store-load.js';
import type { BenchContext, BenchOutput } from '../lib/types.js';

export async function run(ctx: BenchContext): Promise<BenchOutput> {
  const count = Number(ctx.options['append.messages'] ?? (ctx.mode === 'full' ? 4_000_000 : 1_000_000));
  const window = Number(ctx.options['append.window'] ?? 1024);
  const pool = messagePool();
  ctx.log(`warming ${round3((count * 1300) / GiB)} GiB of page cache (see baseline/disk.ts)`);
  warmPageCache(ctx.workDir, Math.ceil((count * 1300) / MiB) * MiB);
  const store = await openBenchStore(join(ctx.workDir, 'store'), { flushDiskType: 'ASYNC_FLUSH' });
  const cpu0 = process.cpuUsage();
  let putRun;
  let dispatchMs = 0;
  let shutdownMs = 0;
  try {
    ctx.log(`warm-up 20,000 messages`);
    await putWindowed(store, pool, 20_000, window);
    ctx.log(`${count.toLocaleString('en-US')} messages, ${window} in flight`);
    const c0 = process.cpuUsage();
    putRun = await putWindowed(store, pool, count, window, 20_000);
    const cpu = process.cpuUsage(c0);
    dispatchMs = await waitDispatched(store);
    const s0 = nowMs();
    await store.shutdown();
    shutdownMs = nowMs() - s0;
    const msgsPerSec = perSec(putRun.ok, putRun.elapsedMs);
    const recMBps = mbPerSec(putRun.recordBytes, putRun.elapsedMs);
    const avgRecord = putRun.recordBytes / Math.max(1, putRun.ok);
    const cpuUsPerMsg = (cpu.user + cpu.system) / putRun.count;
    const disk = ctx.figures['disk.seqWrite1MiBDiskMBps'];
    const cache = ctx.figures['disk.seqWrite1MiBCacheMBps'];
    const gibWritten = round3(putRun.recordBytes / GiB);
    return {
      metrics: [
        { name: 'append 1 KiB, ASYNC_FLUSH, msgs/s', value: msgsPerSec, unit: 'msgs/s', target: { op: '>=', limit: 300_000, on: 'value' } },
        {
          name: 'append 1 KiB, ASYNC_FLUSH, record MB/s',
          value: recMBps,
          unit: 'MB/s',
          ...(disk ? { reference: { key: 'disk.seqWrite1MiBDiskMBps', label: 'seq 1 MiB writes + fdatasync', value: disk, unit: 'MB/s' } } : {}),
          target: { op: '>=', limit: 0.4, on: 'ratio' },
        },
        ...(cache
          ? [{ name: '  same MB/s vs 1 MiB writes into the page cache', value: recMBps, unit: 'MB/s', reference: { key: 'disk.seqWrite1MiBCacheMBps', label: 'seq 1 MiB writes, page cache', value: cache, unit: 'MB/s' } }]
          : []),
        { name: 'body MB/s (1 KiB payloads)', value: mbPerSec(putRun.bodyBytes, putRun.elapsedMs), unit: 'MB/s' },
        { name: 'CPU per message (user+sys, store process)', value: cpuUsPerMsg, unit: 'µs' },
      ],
      figures: { msgsPerSec, recordMBps: recMBps },
      notes: [
        `${putRun.ok.toLocaleString('en-US')} messages (${describeFailures(putRun.notOk)}), average record ${round3(avgRecord)} bytes, ${gibWritten} GiB of CommitLog, default config (1 GiB segments, flushIntervalCommitLog 500 ms), ${window} puts in flight.`,
        `Timed from the first put to the last put's result; ConsumeQueue dispatch caught up ${round3(dispatchMs)} ms after that; clean shutdown (final flush) took ${round3(shutdownMs)} ms.`,
        `CPU ${round3(cpuUsPerMsg)} µs per message on the single JS thread (includes the load loop), ${round3((process.cpuUsage(cpu0).user + process.cpuUsage(cpu0).system) / 1e6)} s CPU total.`,
        `MB/s counts whole CommitLog records (${round3(avgRecord)} bytes each incl. properties) in 10^6 bytes/s; the reference is fs.writeSync of 1 MiB blocks plus one fdatasync (the disk path's bandwidth); the page cache was warmed first as for the baseline (the store is ${gibWritten} GiB, far below the ${round3(os.totalmem() / GiB)} GiB RAM, so every CommitLog page is a new page-cache page).`,
      ],
      details: { putRun: { ...putRun, notOk: Object.fromEntries(putRun.notOk) }, dispatchMs, shutdownMs, window, segmentBytes: GiB, poolMiB: round3((pool.length * 1024) / MiB) },
    };
  } finally {
    await store.shutdown().catch(() => {});
  }
}
