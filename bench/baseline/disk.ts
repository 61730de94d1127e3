/**
 * Baseline: what this machine's disk path gives a Node process, measured the plain way so the
 * store's figures can be read as a fraction of it.
 *
 * - sequential positional writes (fs.writeSync) of 1 MiB and 256 KiB blocks into a new file,
 *   MB/s into the page cache (writes only) and to disk (writes + one final fdatasync). A first
 *   1 MiB pass runs on memory "as found" and is thrown away (it warms the guest's memory, see
 *   warmPageCache); the measured passes reuse those pages, so the figures are the disk path's,
 *   not the VM's first-touch cost (reported on its own line);
 * - sequential 1 MiB reads of that file, cold (after `echo 1 > /proc/sys/vm/drop_caches`) and hot;
 * - fdatasync latency after a 1 KiB append (file grows), and after a 1 KiB write into a
 *   sparse (ftruncated) and a pre-written file, one at a time, fdatasync on the libuv pool;
 * - "64 KiB then fdatasync" records/s: the ceiling of one group commit at a time;
 * - a group-commit model: 64 closed-loop producers of 1 KiB sharing fdatasyncs (lib/disk-ops.ts).
 *
 * Figures (references for later benchmarks): seqWrite1MiBCacheMBps, seqWrite1MiBDiskMBps,
 * seqWrite256KiBCacheMBps, seqWrite256KiBDiskMBps, firstPassMBps, seqRead1MiBColdMBps,
 * seqRead1MiBCacheMBps, coldReadValid, fdatasyncP50Ms,
 * fdatasyncP99Ms, fdatasyncSparseP99Ms, fdatasyncPrewrittenP99Ms, durable64KiBPerSec,
 * groupCommitPerSec, groupCommitP50Ms, groupCommitP99Ms.
 */
import { join } from 'node:path';
import { openSync, readSync, unlinkSync } from 'node:fs';
import { dropPageCache } from '../lib/os.js';
import { closeQuietly, createPrewritten, createSparse, fdatasyncAsync, groupCommitModel, pwriteAll, randomBuffer, sequentialWrite, warmPageCache } from '../lib/disk-ops.js';
import { GiB, LatencyRecorder, MiB, mbPerSec, nowMs, round3 } from '../lib/stats.js';
import type { BenchContext, BenchOutput, Metric } from '../lib/types.js';

interface Sizes {
  seqBytes: number;
  syncIterations: number;
  durableSeconds: number;
}

const SIZES: Record<'quick' | 'full', Sizes> = {
  quick: { seqBytes: 1 * GiB, syncIterations: 2000, durableSeconds: 3 },
  full: { seqBytes: 4 * GiB, syncIterations: 10_000, durableSeconds: 10 },
};

/** Sequential writes of `blockBytes` into a new file, then fdatasync; the file is removed after unless `keep`. */
async function seq(ctx: BenchContext, blockBytes: number, bytes: number, keep = false): Promise<{ cacheMBps: number; diskMBps: number; syncMs: number; path: string }> {
  const path = join(ctx.workDir, `seq-${blockBytes}`);
  const fd = openSync(path, 'w+');
  try {
    const r = await sequentialWrite(fd, randomBuffer(blockBytes), bytes);
    return { cacheMBps: mbPerSec(bytes, r.writeMs), diskMBps: mbPerSec(bytes, r.totalMs), syncMs: r.syncMs, path };
  } finally {
    closeQuietly(fd);
    if (!keep) unlinkSync(path);
  }
}

/** Sequential 1 MiB positional reads of a whole file, MB/s. */
function seqRead(path: string, bytes: number): number {
  const fd = openSync(path, 'r');
  const buf = Buffer.allocUnsafe(MiB);
  try {
    const t0 = nowMs();
    for (let pos = 0; pos < bytes; pos += MiB) readSync(fd, buf, 0, MiB, pos);
    return mbPerSec(bytes, nowMs() - t0);
  } finally {
    closeQuietly(fd);
  }
}

type SyncVariant = 'append' | 'sparse' | 'prewritten';

/** 1 KiB write then fdatasync, `n` times in a row; latency of the fdatasync alone. */
async function syncLatency(ctx: BenchContext, variant: SyncVariant, n: number): Promise<LatencyRecorder> {
  const path = join(ctx.workDir, `sync-${variant}`);
  const size = n * 1024 + MiB;
  const fd = variant === 'append' ? openSync(path, 'w+') : variant === 'sparse' ? createSparse(path, size) : (await createPrewritten(path, size)).fd;
  const rec = new LatencyRecorder(n);
  const block = randomBuffer(1024);
  try {
    for (let i = 0; i < n; i++) {
      pwriteAll(fd, block, i * 1024);
      const t0 = nowMs();
      await fdatasyncAsync(fd);
      rec.add(nowMs() - t0);
    }
    return rec;
  } finally {
    closeQuietly(fd);
    unlinkSync(path);
  }
}

/** Appends of 64 KiB each followed by fdatasync, for `seconds`; returns records (64 KiB) per second. */
async function durableRecords(ctx: BenchContext, seconds: number): Promise<{ perSec: number; latency: LatencyRecorder }> {
  const path = join(ctx.workDir, 'durable-64k');
  const fd = openSync(path, 'w+');
  const block = randomBuffer(64 * 1024);
  const rec = new LatencyRecorder();
  try {
    const t0 = nowMs();
    let n = 0;
    while (nowMs() - t0 < seconds * 1000) {
      const s = nowMs();
      pwriteAll(fd, block, n * block.length);
      await fdatasyncAsync(fd);
      rec.add(nowMs() - s);
      n++;
    }
    return { perSec: n / ((nowMs() - t0) / 1000), latency: rec };
  } finally {
    closeQuietly(fd);
    unlinkSync(path);
  }
}

/** groupCommitModel on a sparse (ftruncated) file, as the store's segments are created. */
async function groupCommit(ctx: BenchContext, seconds: number): Promise<{ msgsPerSec: number; p50Ms: number; p99Ms: number }> {
  const path = join(ctx.workDir, 'group-commit');
  const fd = createSparse(path, 1024 * MiB);
  try {
    const r = await groupCommitModel(fd, 64, seconds);
    const rec = new LatencyRecorder(r.latencyMs.length);
    for (const x of r.latencyMs) rec.add(x);
    const s = rec.summary();
    return { msgsPerSec: r.msgsPerSec, p50Ms: s.p50Ms, p99Ms: s.p99Ms };
  } finally {
    closeQuietly(fd);
    unlinkSync(path);
  }
}

export async function run(ctx: BenchContext): Promise<BenchOutput> {
  const s = SIZES[ctx.mode];
  const gib = s.seqBytes / GiB;
  ctx.log(`first pass: ${gib} GiB of 1 MiB writes on memory as found (warms the page cache pages)`);
  const firstPassMBps = warmPageCache(ctx.workDir, s.seqBytes);
  ctx.log(`sequential 1 MiB writes, ${gib} GiB`);
  const seq1m = await seq(ctx, MiB, s.seqBytes, true);
  const dropped = dropPageCache();
  ctx.log(`sequential 1 MiB reads, ${dropped ? 'cold (page cache dropped)' : 'page cache NOT dropped (not permitted)'}, then from the page cache`);
  const readColdMBps = seqRead(seq1m.path, s.seqBytes);
  const readCacheMBps = seqRead(seq1m.path, s.seqBytes);
  unlinkSync(seq1m.path);
  ctx.log(`sequential 256 KiB writes, ${gib} GiB`);
  const seq256k = await seq(ctx, 256 * 1024, s.seqBytes);
  ctx.log(`fdatasync after 1 KiB, ${s.syncIterations}x each: append, sparse, pre-written`);
  const append = (await syncLatency(ctx, 'append', s.syncIterations)).summary();
  const sparse = (await syncLatency(ctx, 'sparse', s.syncIterations)).summary();
  const pre = (await syncLatency(ctx, 'prewritten', s.syncIterations)).summary();
  ctx.log(`64 KiB + fdatasync for ${s.durableSeconds} s`);
  const durable = await durableRecords(ctx, s.durableSeconds);
  const d = durable.latency.summary();
  ctx.log(`group-commit model: 64 closed-loop producers, 1 KiB writes, shared fdatasync, ${s.durableSeconds} s`);
  const gc = await groupCommit(ctx, s.durableSeconds);

  const metrics: Metric[] = [
    { name: `seq write 1 MiB blocks, page cache (${gib} GiB)`, value: seq1m.cacheMBps, unit: 'MB/s' },
    { name: `seq write 1 MiB blocks + final fdatasync (${gib} GiB)`, value: seq1m.diskMBps, unit: 'MB/s' },
    { name: `seq write 256 KiB blocks, page cache (${gib} GiB)`, value: seq256k.cacheMBps, unit: 'MB/s' },
    { name: `seq write 256 KiB blocks + final fdatasync (${gib} GiB)`, value: seq256k.diskMBps, unit: 'MB/s' },
    { name: `seq read 1 MiB blocks, ${dropped ? 'cold (after drop_caches)' : 'NOT cold (drop_caches not permitted)'}`, value: readColdMBps, unit: 'MB/s' },
    { name: 'seq read 1 MiB blocks, page cache', value: readCacheMBps, unit: 'MB/s' },
    { name: `first pass, 1 MiB writes on memory as found (VM first-touch)`, value: firstPassMBps, unit: 'MB/s' },
    { name: 'fdatasync after 1 KiB append (file grows), p50', value: append.p50Ms, unit: 'ms' },
    { name: 'fdatasync after 1 KiB append (file grows), p99', value: append.p99Ms, unit: 'ms' },
    { name: 'fdatasync after 1 KiB write into sparse file, p99', value: sparse.p99Ms, unit: 'ms', note: `p50 ${round3(sparse.p50Ms)} ms` },
    { name: 'fdatasync after 1 KiB write into pre-written file, p99', value: pre.p99Ms, unit: 'ms', note: `p50 ${round3(pre.p50Ms)} ms` },
    { name: '64 KiB append + fdatasync, durable records/s', value: durable.perSec, unit: 'records/s', note: `p99 ${round3(d.p99Ms)} ms` },
    { name: '  same, as 1 KiB messages/s (64 per record)', value: durable.perSec * 64, unit: 'msgs/s' },
    { name: 'group-commit model: 64 producers × 1 KiB, shared fdatasync', value: gc.msgsPerSec, unit: 'msgs/s', note: `p50 ${round3(gc.p50Ms)} ms, p99 ${round3(gc.p99Ms)} ms` },
  ];
  return {
    metrics,
    figures: {
      seqWrite1MiBCacheMBps: seq1m.cacheMBps,
      seqWrite1MiBDiskMBps: seq1m.diskMBps,
      seqWrite256KiBCacheMBps: seq256k.cacheMBps,
      seqWrite256KiBDiskMBps: seq256k.diskMBps,
      firstPassMBps,
      seqRead1MiBColdMBps: readColdMBps,
      seqRead1MiBCacheMBps: readCacheMBps,
      coldReadValid: dropped ? 1 : 0,
      fdatasyncP50Ms: append.p50Ms,
      fdatasyncP99Ms: append.p99Ms,
      fdatasyncPrewrittenP99Ms: pre.p99Ms,
      fdatasyncSparseP99Ms: sparse.p99Ms,
      durable64KiBPerSec: durable.perSec,
      groupCommitPerSec: gc.msgsPerSec,
      groupCommitP50Ms: gc.p50Ms,
      groupCommitP99Ms: gc.p99Ms,
    },
    notes: [
      `Writes are fs.writeSync at increasing positions from one pre-filled random buffer into a new file; fdatasync runs on the libuv pool as in the store. The final fdatasync of the ${gib} GiB 1 MiB run took ${round3(seq1m.syncMs)} ms.`,
      `The first pass (${round3(firstPassMBps)} MB/s) writes into whatever memory the guest has free: this VM backs guest memory lazily and takes freed memory back within seconds (virtio-balloon free-page reporting), so page-cache pages that were not touched recently cost ~2.7 µs per 4 KiB on first touch (~380 MB/s). The measured passes reuse the pages the first pass just freed; tsmq benchmarks warm the same way before they write.`,
      `fdatasync after 1 KiB, p50/p99/max: append ${round3(append.p50Ms)}/${round3(append.p99Ms)}/${round3(append.maxMs)} ms; sparse (ftruncated) file ${round3(sparse.p50Ms)}/${round3(sparse.p99Ms)}/${round3(sparse.maxMs)} ms; pre-written file ${round3(pre.p50Ms)}/${round3(pre.p99Ms)}/${round3(pre.maxMs)} ms (${s.syncIterations} each).`,
      `64 KiB + fdatasync loop: p50 ${round3(d.p50Ms)} ms, p99 ${round3(d.p99Ms)} ms over ${d.count} records.`,
      `Group-commit model (the SYNC_FLUSH reference): 64 closed-loop producers each fs.writeSync 1 KiB at the end of a sparse file and wait for an fdatasync issued after their write; one fdatasync in flight, the next starts as soon as it returns. No encoding or indexing: the ceiling of group commit for 1 KiB messages from Node on this disk.`,
    ],
    details: { groupCommit: gc, firstPassMBps, readColdMBps, readCacheMBps, dropped, seq1m, seq256k, fdatasyncAppend: append, fdatasyncSparse: sparse, fdatasyncPrewritten: pre, durable64k: d },
  };
}
