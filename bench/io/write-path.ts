/**
 * Write-path micro-benchmark behind docs/internals/io-engine.md: how should a CommitLog segment
 * be written from Node?
 *
 * A. Append throughput of 1 KiB records into one segment-sized file:
 *    (a) fs.writeSync per append at the record's position;
 *    (b) copy into a 1 MiB write buffer, one positional write per full buffer (what the store does);
 *    (c) memcpy into a shared memory mapping (npm `mmap-io`, built outside the repo; skipped
 *        when it cannot be loaded), msync at the end;
 *    each into a freshly ftruncated (sparse) file and into a pre-written (zero-filled) file.
 * B. Group commit: 64 records of 1 KiB then fdatasync, repeated, sparse vs pre-written file
 *    (the SYNC_FLUSH question), and the same through mmap + msync(MS_SYNC).
 * C. What pre-writing costs: zero-filling a segment, and the VM's first touch of fresh memory.
 * D. The closed-loop group-commit model of the baseline (64 producers × 1 KiB sharing
 *    fdatasyncs), sparse vs pre-written file.
 *
 * Options (--set): io.segmentMiB (512 quick / 1024 full), io.mmapModule (path to mmap-io,
 * default /tmp/mmap-try/node_modules/mmap-io).
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { existsSync, unlinkSync } from 'node:fs';
import { closeQuietly, createPrewritten, createSparse, fdatasyncAsync, groupCommitModel, pwriteAll, randomBuffer, warmPageCache } from '../lib/disk-ops.js';
import { LatencyRecorder, MiB, mbPerSec, nowMs, perSec, round3 } from '../lib/stats.js';
import type { BenchContext, BenchOutput, Metric } from '../lib/types.js';

type Method = 'writeSync' | 'buffered' | 'mmap';
type Prep = 'sparse' | 'prewritten';

interface Mmap {
  map(size: number, prot: number, flags: number, fd: number, offset?: number): Buffer;
  sync(buf: Buffer, offset: number, size: number, blocking: boolean, invalidate?: boolean): void;
  PROT_READ: number;
  PROT_WRITE: number;
  MAP_SHARED: number;
}

const RECORD = 1024;
const GROUP = 64;

function loadMmap(ctx: BenchContext): { mmap: Mmap | null; why: string } {
  const dir = ctx.options['io.mmapModule'] ?? '/tmp/mmap-try/node_modules/mmap-io';
  if (!existsSync(dir)) return { mmap: null, why: `${dir} not found (build it: see bench/README.md)` };
  try {
    const req = createRequire(join(dir, 'package.json'));
    return { mmap: req(dir) as Mmap, why: '' };
  } catch (e) {
    return { mmap: null, why: `could not load ${dir}: ${(e as Error).message}` };
  }
}

async function prepare(path: string, size: number, prep: Prep): Promise<{ fd: number; prepMs: number }> {
  if (prep === 'sparse') {
    const t0 = nowMs();
    return { fd: createSparse(path, size), prepMs: nowMs() - t0 };
  }
  const r = await createPrewritten(path, size);
  return { fd: r.fd, prepMs: r.ms };
}

interface AppendFigures {
  appendMs: number;
  flushMs: number;
  msgsPerSec: number;
  mbps: number;
  durableMBps: number;
  prepMs: number;
}

/** Part A: `size / RECORD` appends with one method, then a final flush. */
async function appendRun(ctx: BenchContext, method: Method, prep: Prep, size: number, mm: Mmap | null): Promise<AppendFigures> {
  const path = join(ctx.workDir, `seg-${method}-${prep}`);
  // Same memory conditions for every variant: pages freed a moment ago (see baseline/disk.ts).
  if (prep === 'sparse') warmPageCache(ctx.workDir, size);
  const { fd, prepMs } = await prepare(path, size, prep);
  const src = randomBuffer(MiB);
  const n = size / RECORD;
  let flushMs = 0;
  let appendMs = 0;
  try {
    if (method === 'writeSync') {
      const t0 = nowMs();
      for (let i = 0; i < n; i++) pwriteAll(fd, src, i * RECORD, RECORD, (i * RECORD) % MiB);
      appendMs = nowMs() - t0;
      const t1 = nowMs();
      await fdatasyncAsync(fd);
      flushMs = nowMs() - t1;
    } else if (method === 'buffered') {
      const wb = Buffer.allocUnsafe(MiB);
      let used = 0;
      let filePos = 0;
      const t0 = nowMs();
      for (let i = 0; i < n; i++) {
        src.copy(wb, used, (i * RECORD) % MiB, (i * RECORD) % MiB + RECORD);
        used += RECORD;
        if (used === wb.length) {
          pwriteAll(fd, wb, filePos, used);
          filePos += used;
          used = 0;
        }
      }
      if (used > 0) pwriteAll(fd, wb, filePos, used);
      appendMs = nowMs() - t0;
      const t1 = nowMs();
      await fdatasyncAsync(fd);
      flushMs = nowMs() - t1;
    } else {
      const m = mm!;
      const map = m.map(size, m.PROT_READ | m.PROT_WRITE, m.MAP_SHARED, fd, 0);
      const t0 = nowMs();
      for (let i = 0; i < n; i++) src.copy(map, i * RECORD, (i * RECORD) % MiB, (i * RECORD) % MiB + RECORD);
      appendMs = nowMs() - t0;
      const t1 = nowMs();
      m.sync(map, 0, size, true);
      flushMs = nowMs() - t1;
    }
  } finally {
    closeQuietly(fd);
    unlinkSync(path);
  }
  return { appendMs, flushMs, prepMs, msgsPerSec: perSec(n, appendMs), mbps: mbPerSec(size, appendMs), durableMBps: mbPerSec(size, appendMs + flushMs) };
}

/** Part B: GROUP records then a durable flush, for `seconds`; returns groups/s and flush latency. */
async function groupCommitRun(ctx: BenchContext, prep: Prep, viaMmap: Mmap | null, size: number, seconds: number): Promise<{ msgsPerSec: number; lat: ReturnType<LatencyRecorder['summary']> }> {
  const path = join(ctx.workDir, `gc-${prep}-${viaMmap ? 'mmap' : 'pwrite'}`);
  const { fd } = await prepare(path, size, prep);
  const group = randomBuffer(GROUP * RECORD);
  const rec = new LatencyRecorder();
  const map = viaMmap ? viaMmap.map(size, viaMmap.PROT_READ | viaMmap.PROT_WRITE, viaMmap.MAP_SHARED, fd, 0) : null;
  let pos = 0;
  let groups = 0;
  try {
    const t0 = nowMs();
    while (nowMs() - t0 < seconds * 1000 && pos + group.length <= size) {
      const s = nowMs();
      if (map && viaMmap) {
        group.copy(map, pos);
        // msync over the dirty range, page aligned (blocking: mmap-io has no async msync).
        const from = pos - (pos % 4096);
        viaMmap.sync(map, from, pos + group.length - from, true);
      } else {
        pwriteAll(fd, group, pos);
        await fdatasyncAsync(fd);
      }
      rec.add(nowMs() - s);
      pos += group.length;
      groups++;
    }
    return { msgsPerSec: perSec(groups * GROUP, nowMs() - t0), lat: rec.summary() };
  } finally {
    closeQuietly(fd);
    unlinkSync(path);
  }
}

/** Part C: first touch of anonymous memory, fresh vs reused, MB/s. */
function firstTouch(bytes: number): { freshMBps: number; reusedMBps: number } {
  const b = Buffer.alloc(bytes);
  const t0 = nowMs();
  b.fill(1);
  const t1 = nowMs();
  b.fill(2);
  const t2 = nowMs();
  return { freshMBps: mbPerSec(bytes, t1 - t0), reusedMBps: mbPerSec(bytes, t2 - t1) };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)]!;
}

function spread(xs: number[]): string {
  return `median of ${xs.length}, range ${round3(Math.min(...xs))}–${round3(Math.max(...xs))}`;
}

export async function run(ctx: BenchContext): Promise<BenchOutput> {
  const segMiB = Number(ctx.options['io.segmentMiB'] ?? (ctx.mode === 'full' ? 1024 : 512));
  const rounds = Number(ctx.options['io.rounds'] ?? (ctx.mode === 'full' ? 5 : 3));
  const size = segMiB * MiB;
  const { mmap, why } = loadMmap(ctx);
  const methods: Method[] = mmap ? ['writeSync', 'buffered', 'mmap'] : ['writeSync', 'buffered'];
  const preps: Prep[] = ['sparse', 'prewritten'];
  const metrics: Metric[] = [];
  const details: Record<string, unknown> = {};
  const notes: string[] = [];
  const label: Record<Method, string> = { writeSync: '(a) writeSync per 1 KiB append', buffered: '(b) 1 MiB write buffer + pwrite', mmap: '(c) mmap (mmap-io) memcpy' };

  // Part A, rounds interleaved so slow phases of the host hit every variant alike.
  const a = new Map<string, AppendFigures[]>();
  for (let r = 0; r < rounds; r++) {
    for (const method of methods) {
      for (const prep of preps) {
        ctx.log(`A round ${r + 1}/${rounds}: ${method} into ${prep} ${segMiB} MiB file`);
        const key = `${method}.${prep}`;
        a.set(key, [...(a.get(key) ?? []), await appendRun(ctx, method, prep, size, mmap)]);
      }
    }
  }
  for (const method of methods) {
    for (const prep of preps) {
      const runs = a.get(`${method}.${prep}`)!;
      details[`A.${method}.${prep}`] = runs;
      const rates = runs.map((x) => x.msgsPerSec);
      metrics.push({
        name: `${label[method]}, ${prep} file`,
        value: median(rates),
        unit: 'appends/s',
        note: `${spread(rates)}; ${round3(median(runs.map((x) => x.mbps)))} MB/s; incl. final ${method === 'mmap' ? 'msync' : 'fdatasync'} ${round3(median(runs.map((x) => x.durableMBps)))} MB/s`,
      });
    }
  }
  if (!mmap) notes.push(`(c) mmap skipped: ${why}`);

  // Part B, group commit.
  const gcSeconds = ctx.mode === 'full' ? 5 : 2;
  const gcSize = Math.min(size, 256 * MiB);
  const variants: Array<{ key: string; prep: Prep; mm: Mmap | null; name: string }> = [];
  for (const prep of preps) variants.push({ key: `pwrite.${prep}`, prep, mm: null, name: `group commit ${GROUP}×1 KiB: pwrite + fdatasync, ${prep} file` });
  if (mmap) for (const prep of preps) variants.push({ key: `mmap.${prep}`, prep, mm: mmap, name: `group commit ${GROUP}×1 KiB: mmap + msync (blocking), ${prep} file` });
  const b = new Map<string, Array<{ msgsPerSec: number; lat: ReturnType<LatencyRecorder['summary']> }>>();
  for (let r = 0; r < rounds; r++) {
    for (const v of variants) {
      ctx.log(`B round ${r + 1}/${rounds}: ${v.key}, ${gcSeconds} s`);
      b.set(v.key, [...(b.get(v.key) ?? []), await groupCommitRun(ctx, v.prep, v.mm, gcSize, gcSeconds)]);
    }
  }
  for (const v of variants) {
    const runs = b.get(v.key)!;
    details[`B.${v.key}`] = runs;
    const rates = runs.map((x) => x.msgsPerSec);
    metrics.push({
      name: v.name,
      value: median(rates),
      unit: 'msgs/s',
      note: `${spread(rates)}; flush p50 ${round3(median(runs.map((x) => x.lat.p50Ms)))} ms, p99 ${round3(median(runs.map((x) => x.lat.p99Ms)))} ms`,
    });
  }

  // Part D: closed-loop group-commit model (the SYNC_FLUSH shape), sparse vs pre-written.
  const d = new Map<Prep, Array<{ msgsPerSec: number; p50Ms: number; p99Ms: number }>>();
  for (let r = 0; r < rounds; r++) {
    for (const prep of preps) {
      ctx.log(`D round ${r + 1}/${rounds}: group-commit model, 64 producers, ${prep} file, ${gcSeconds} s`);
      const path = join(ctx.workDir, `gcm-${prep}`);
      const { fd } = await prepare(path, gcSize, prep);
      try {
        const m = await groupCommitModel(fd, GROUP, gcSeconds);
        const rec = new LatencyRecorder(m.latencyMs.length);
        for (const x of m.latencyMs) rec.add(x);
        const sum = rec.summary();
        d.set(prep, [...(d.get(prep) ?? []), { msgsPerSec: m.msgsPerSec, p50Ms: sum.p50Ms, p99Ms: sum.p99Ms }]);
      } finally {
        closeQuietly(fd);
        unlinkSync(path);
      }
    }
  }
  for (const prep of preps) {
    const runs = d.get(prep)!;
    details[`D.${prep}`] = runs;
    const rates = runs.map((x) => x.msgsPerSec);
    metrics.push({
      name: `group-commit model, ${GROUP} closed-loop producers × 1 KiB, ${prep} file`,
      value: median(rates),
      unit: 'msgs/s',
      note: `${spread(rates)}; put p50 ${round3(median(runs.map((x) => x.p50Ms)))} ms, p99 ${round3(median(runs.map((x) => x.p99Ms)))} ms`,
    });
  }

  // Part C.
  ctx.log('C cost of pre-writing a segment, first touch of memory');
  const zeroPath = join(ctx.workDir, 'zero-fill');
  const z = await createPrewritten(zeroPath, size);
  closeQuietly(z.fd);
  unlinkSync(zeroPath);
  metrics.push({ name: `zero-fill a ${segMiB} MiB segment (writes + fdatasync)`, value: mbPerSec(size, z.ms), unit: 'MB/s', note: `${round3(z.ms)} ms` });
  const ft = firstTouch(256 * MiB);
  metrics.push({ name: 'anonymous memory, first touch (256 MiB)', value: ft.freshMBps, unit: 'MB/s', note: `second touch ${round3(ft.reusedMBps)} MB/s` });
  details.firstTouch = ft;
  notes.push(
    `Records are ${RECORD} bytes copied from a 1 MiB random buffer; segment ${segMiB} MiB; ${rounds} interleaved rounds per variant, medians shown. "sparse" = open + ftruncate (no blocks, no page-cache pages; page cache warmed first as in the baseline), "pre-written" = zeros written and fdatasync'ed beforehand (blocks allocated, pages already in the page cache).`,
    `Group commit writes ${GROUP} records (${GROUP} KiB) after the previous group, then forces it (fdatasync on the libuv pool, or msync(MS_SYNC) on the JS thread: mmap-io has no asynchronous msync); latency is write + flush.`,
  );
  return { metrics, details, notes, figures: {} };
}
