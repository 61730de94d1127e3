/**
 * Store append, ASYNC_FLUSH: 1 KiB bodies over 4 topics × 4 queues into an embedded
 * DefaultMessageStore with default segment sizes (1 GiB CommitLog files), `window` puts in flight,
 * twice: with putMessageWithCallback (no promise per put; the target row) and then with
 * putMessage's promises (what the broker's send path awaits), `count` messages each.
 * Reports messages/s and MB/s of record bytes (what lands in the CommitLog) beside Node's
 * positional-write ceiling measured in this process before and after the two runs: one
 * `fs.writeSync(fd, record, 0, len, position)` per record of the store's average record size,
 * back to back into warmed page-cache memory (what the append would cost if encoding, indexing
 * and bookkeeping were free and every record were its own write; issue 13: ≥ 0.45 of it, and
 * ≥ 400k msgs/s), and beside the disk baseline's 1 MiB writes.
 *
 * Options (--set): append.messages, append.window.
 */
import { closeSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { join } from 'node:path';
import { warmPageCache } from '../lib/disk-ops.js';
import { GiB, MiB, mbPerSec, nowMs, perSec, round3 } from '../lib/stats.js';
import { describeFailures, messagePool, openBenchStore, putWindowed, waitDispatched, type PutApi, type PutRun } from '../lib/store-load.js';
import type { BenchContext, BenchOutput } from '../lib/types.js';

/** Node's per-record positional-write ceiling: `messages` writeSync calls of `recordBytes` each into a fresh file; writes/s. */
function positionalWriteCeiling(dir: string, messages: number, recordBytes: number): number {
  warmPageCache(dir, Math.ceil((messages * recordBytes) / MiB) * MiB);
  const path = join(dir, 'ceiling');
  const rec = randomBytes(recordBytes);
  const fd = openSync(path, 'w+');
  const t0 = nowMs();
  try {
    for (let i = 0, pos = 0; i < messages; i++, pos += recordBytes) writeSync(fd, rec, 0, recordBytes, pos);
    return perSec(messages, nowMs() - t0);
  } finally {
    closeSync(fd);
    unlinkSync(path);
  }
}

interface ApiRun {
  api: PutApi;
  run: PutRun;
  cpuUsPerMsg: number;
}

export async function run(ctx: BenchContext): Promise<BenchOutput> {
  const count = Number(ctx.options['append.messages'] ?? (ctx.mode === 'full' ? 4_000_000 : 1_000_000));
  const window = Number(ctx.options['append.window'] ?? 1024);
  const pool = messagePool();
  ctx.log(`warming ${round3((2 * count * 1300) / GiB)} GiB of page cache (see baseline/disk.ts)`);
  warmPageCache(ctx.workDir, Math.ceil((2 * count * 1300) / MiB) * MiB);
  const store = await openBenchStore(join(ctx.workDir, 'store'), { flushDiskType: 'ASYNC_FLUSH' });
  const cpu0 = process.cpuUsage();
  const runs: ApiRun[] = [];
  const ceilings: number[] = [];
  let dispatchMs = 0;
  let shutdownMs = 0;
  try {
    ctx.log(`warm-up 20,000 messages per API`);
    await putWindowed(store, pool, 20_000, window, 0, 'callback');
    await putWindowed(store, pool, 20_000, window, 0, 'promise');
    await waitDispatched(store);
    // the store's record size for the ceiling: every pool message has the same size
    const recordBytes = (await store.putMessage(pool[0]!)).appendResult?.wroteBytes ?? 1200;
    ctx.log(`positional-write ceiling, ${count.toLocaleString('en-US')} writes of ${recordBytes} bytes`);
    ceilings.push(positionalWriteCeiling(ctx.workDir, count, recordBytes));
    for (const api of ['callback', 'promise'] as const) {
      ctx.log(`${count.toLocaleString('en-US')} messages, ${window} in flight, ${api} API`);
      const c0 = process.cpuUsage();
      const run = await putWindowed(store, pool, count, window, 20_000, api);
      const cpu = process.cpuUsage(c0);
      runs.push({ api, run, cpuUsPerMsg: (cpu.user + cpu.system) / run.count });
      dispatchMs = await waitDispatched(store);
    }
    ctx.log(`positional-write ceiling again`);
    ceilings.push(positionalWriteCeiling(ctx.workDir, count, recordBytes));
    const s0 = nowMs();
    await store.shutdown();
    shutdownMs = nowMs() - s0;
    const ceiling = (ceilings[0]! + ceilings[1]!) / 2;
    const [cb, pr] = runs as [ApiRun, ApiRun];
    const rate = (r: ApiRun): number => perSec(r.run.ok, r.run.elapsedMs);
    const recMBps = (r: ApiRun): number => mbPerSec(r.run.recordBytes, r.run.elapsedMs);
    const avgRecord = cb.run.recordBytes / Math.max(1, cb.run.ok);
    const disk = ctx.figures['disk.seqWrite1MiBDiskMBps'];
    const cache = ctx.figures['disk.seqWrite1MiBCacheMBps'];
    const gibWritten = round3((cb.run.recordBytes + pr.run.recordBytes) / GiB);
    const ceilingRef = { key: 'store-append.positionalWriteCeilingPerSec', label: `one writeSync per ${recordBytes}-byte record, this process (mean of before/after: ${Math.round(ceilings[0]!)}, ${Math.round(ceilings[1]!)})`, value: ceiling, unit: 'msgs/s' };
    return {
      metrics: [
        { name: 'append 1 KiB, ASYNC_FLUSH, putMessageWithCallback, msgs/s', value: rate(cb), unit: 'msgs/s', target: { op: '>=', limit: 400_000, on: 'value' } },
        { name: '  same vs Node\'s positional-write ceiling', value: rate(cb), unit: 'msgs/s', reference: ceilingRef, target: { op: '>=', limit: 0.45, on: 'ratio' } },
        { name: 'append 1 KiB, ASYNC_FLUSH, putMessage (a promise per put), msgs/s', value: rate(pr), unit: 'msgs/s', reference: ceilingRef },
        {
          name: 'append (callback), record MB/s',
          value: recMBps(cb),
          unit: 'MB/s',
          ...(disk ? { reference: { key: 'disk.seqWrite1MiBDiskMBps', label: 'seq 1 MiB writes + fdatasync', value: disk, unit: 'MB/s' } } : {}),
        },
        ...(cache
          ? [{ name: '  same MB/s vs 1 MiB writes into the page cache', value: recMBps(cb), unit: 'MB/s', reference: { key: 'disk.seqWrite1MiBCacheMBps', label: 'seq 1 MiB writes, page cache', value: cache, unit: 'MB/s' } }]
          : []),
        { name: 'body MB/s (1 KiB payloads, callback)', value: mbPerSec(cb.run.bodyBytes, cb.run.elapsedMs), unit: 'MB/s' },
        { name: 'CPU per message, callback (user+sys, store process)', value: cb.cpuUsPerMsg, unit: 'µs' },
        { name: 'CPU per message, promise (user+sys, store process)', value: pr.cpuUsPerMsg, unit: 'µs' },
      ],
      figures: { msgsPerSec: rate(pr), callbackMsgsPerSec: rate(cb), recordMBps: recMBps(pr), positionalWriteCeilingPerSec: ceiling },
      notes: [
        `${count.toLocaleString('en-US')} messages per API (callback: ${describeFailures(cb.run.notOk)}; promise: ${describeFailures(pr.run.notOk)}), average record ${round3(avgRecord)} bytes, ${gibWritten} GiB of CommitLog, default config (1 GiB segments, flushIntervalCommitLog 500 ms), ${window} puts in flight; the callback run first, then the promise run, the ceiling before and after both.`,
        `Timed from the first put to the last put's result; ConsumeQueue dispatch caught up ${round3(dispatchMs)} ms after the promise run; clean shutdown (final flush) took ${round3(shutdownMs)} ms.`,
        `CPU ${round3(cb.cpuUsPerMsg)} µs (callback) and ${round3(pr.cpuUsPerMsg)} µs (promise) per message on the single JS thread (includes the load loop), ${round3((process.cpuUsage(cpu0).user + process.cpuUsage(cpu0).system) / 1e6)} s CPU total. On this shared machine compare CPU per message and the ratio to the same-process ceiling, not msgs/s across runs.`,
        `MB/s counts whole CommitLog records (${round3(avgRecord)} bytes each incl. properties) in 10^6 bytes/s; the page cache was warmed first as for the baseline (the store is ${gibWritten} GiB, far below the ${round3(os.totalmem() / GiB)} GiB RAM, so every CommitLog page is a new page-cache page).`,
      ],
      details: { runs: runs.map((r) => ({ api: r.api, cpuUsPerMsg: r.cpuUsPerMsg, run: { ...r.run, notOk: Object.fromEntries(r.run.notOk) } })), ceilings, recordBytes, dispatchMs, shutdownMs, window, segmentBytes: GiB, poolMiB: round3((pool.length * 1024) / MiB) },
    };
  } finally {
    await store.shutdown().catch(() => {});
  }
}
