/**
 * A/B of the embedded store's ASYNC_FLUSH append (the `store-append` load: 1 KiB bodies, 4 topics ×
 * 4 queues, `window` putMessage calls in flight) from two source trees, interleaved A, B, A, B, …,
 * beside Node's positional-write ceiling measured in the same run between the sides: one
 * `fs.writeSync(fd, record, 0, len, position)` per message of the store's average record size,
 * back to back into a warmed page cache (what the append would cost if encoding, indexing and
 * bookkeeping were free and every record were its own syscall), and the same bytes in 1 MiB writes.
 *
 * Each side runs in a child process (`node --import tsx`) that imports the store and the load from
 * its own tree (`<root>/bench/lib/store-load.ts`), so any commit that has `putWindowed` works as A.
 *
 * With `--pull`, each side then also pulls everything back as bench/store/pull.ts does (hot: getMessage
 * ×32 round robin over the 16 queues from offset 0), set beside 1 MiB page-cache reads of the same
 * number of bytes, measured between the sides.
 *
 * A side `<root>@callback` puts with putMessageWithCallback (putWindowed's `callback` API) instead of
 * awaiting putMessage's promises.
 *
 * Usage: npx tsx bench/store/append-ab.ts --a <root>[@callback] --b <root>[@callback] [--c <root>[@callback]] [--pull] [--rounds 3] [--messages 600000]
 *        [--window 1024] [--dir <tmp parent>] [--label-a before] [--label-b after] [--label-c …]
 *        [--profile-dir <dir>] (children run with --cpu-prof; profiles in <dir>/<label>-<round>/)
 * Output: one `AB {json}` line per side and round, then a table of medians on stdout.
 */
import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { warmPageCache } from '../lib/disk-ops.js';
import { MiB, nowMs } from '../lib/stats.js';
import { median, runSideChild } from '../lib/ab-child.js';

interface Opts { a: string; b: string; c: string | null; labelC: string; rounds: number; messages: number; window: number; dir: string; labelA: string; labelB: string; profileDir: string | null; pull: boolean }

interface SideResult { msgsPerSec: number; recordMBps: number; cpuUsPerMsg: number; avgRecordBytes: number; dispatchMs: number; pullMsgsPerSec?: number; pullMBps?: number; pullCpuUsPerMsg?: number }

function parseArgs(argv: string[]): Opts {
  const o: Opts = { a: '', b: '', c: null, labelC: 'C', rounds: 3, messages: 600_000, window: 1024, dir: tmpdir(), labelA: 'A', labelB: 'B', profileDir: null, pull: false };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i]!;
    const v = argv[++i];
    if (k === '--pull') {
      o.pull = true;
      i--;
      continue;
    }
    if (v === undefined) throw new Error(`${k} needs a value`);
    if (k === '--a') o.a = v;
    else if (k === '--b') o.b = v;
    else if (k === '--c') o.c = v;
    else if (k === '--label-c') o.labelC = v;
    else if (k === '--rounds') o.rounds = Number(v);
    else if (k === '--messages') o.messages = Number(v);
    else if (k === '--window') o.window = Number(v);
    else if (k === '--dir') o.dir = v;
    else if (k === '--label-a') o.labelA = v;
    else if (k === '--label-b') o.labelB = v;
    else if (k === '--profile-dir') o.profileDir = v;
    else throw new Error(`unknown flag ${k}`);
  }
  if (!o.a || !o.b) throw new Error('--a <root> and --b <root> are required');
  return o;
}

/** Child: `--child <root> <dir> <messages> <window> [pull] [api]`; prints `SIDE {json}`. */
async function child(root: string, dir: string, messages: number, window: number, pull: boolean, api: string): Promise<void> {
  // a tree compiled with tsc (for line-level profiles) has .js files; a source tree .ts (through tsx)
  const compiled = join(root, 'bench/lib/store-load.js');
  const load = (await import(pathToFileURL(existsSync(compiled) ? compiled : join(root, 'bench/lib/store-load.ts')).href)) as typeof import('../lib/store-load.js');
  warmPageCache(dir, Math.ceil(((messages + 20_000) * 1300) / MiB) * MiB);
  const pool = load.messagePool();
  const store = await load.openBenchStore(join(dir, 'store'), { flushDiskType: 'ASYNC_FLUSH' });
  try {
    // a tree without the api parameter ignores it (promise)
    const put = load.putWindowed as (...args: unknown[]) => ReturnType<typeof load.putWindowed>;
    await put(store, pool, 20_000, window, 0, api);
    const c0 = process.cpuUsage();
    const run = await put(store, pool, messages, window, 20_000, api);
    const cpu = process.cpuUsage(c0);
    const dispatchMs = await load.waitDispatched(store);
    if (run.ok !== messages) throw new Error(`only ${run.ok} of ${messages} PUT_OK`);
    const s = run.elapsedMs / 1000;
    const out: SideResult = {
      msgsPerSec: Math.round(run.ok / s),
      recordMBps: Math.round(run.recordBytes / 1e6 / s),
      cpuUsPerMsg: Math.round(((cpu.user + cpu.system) / messages) * 100) / 100,
      avgRecordBytes: Math.round(run.recordBytes / run.ok),
      dispatchMs: Math.round(dispatchMs),
    };
    if (pull) Object.assign(out, await pullHot(load, store, run.ok));
    console.log(`SIDE ${JSON.stringify(out)}`);
  } finally {
    await store.shutdown();
  }
}

/** The store-pull load (bench/store/pull.ts): getMessage ×32 round robin over the 16 queues from offset 0 to the end. */
async function pullHot(load: typeof import('../lib/store-load.js'), store: Awaited<ReturnType<typeof load.openBenchStore>>, expected: number): Promise<Partial<SideResult>> {
  const lanes = load.pullLanes(store);
  let messages = 0;
  let bytes = 0;
  const c0 = process.cpuUsage();
  const t0 = nowMs();
  let active = lanes;
  while (active.length > 0) {
    for (const lane of active) {
      const r = await store.getMessage('BenchGroup', lane.topic, lane.queueId, lane.offset, 32);
      messages += r.messages.length;
      bytes += r.bufferTotalSizeBytes;
      if (r.nextBeginOffset <= lane.offset) throw new Error(`no progress on ${lane.topic}/${lane.queueId} at ${lane.offset}: ${r.status}`);
      lane.offset = r.nextBeginOffset;
    }
    active = active.filter((l) => l.offset < l.max);
  }
  const s = (nowMs() - t0) / 1000;
  const cpu = process.cpuUsage(c0);
  if (messages < expected) throw new Error(`pulled ${messages} of ${expected}`);
  return { pullMsgsPerSec: Math.round(messages / s), pullMBps: Math.round(bytes / 1e6 / s), pullCpuUsPerMsg: Math.round(((cpu.user + cpu.system) / messages) * 100) / 100 };
}

/** Node's ceiling for the same bytes: one positional writeSync per record, and 1 MiB writes. */
function ceiling(dir: string, messages: number, recordBytes: number): { perRecordMsgsPerSec: number; perRecordMBps: number; mib1MBps: number; readMib1MBps: number } {
  const total = messages * recordBytes;
  warmPageCache(dir, Math.ceil(total / MiB) * MiB);
  const path = join(dir, 'ceiling');
  const rec = randomBytes(recordBytes);
  let fd = openSync(path, 'w+');
  let t0 = nowMs();
  for (let i = 0, pos = 0; i < messages; i++, pos += recordBytes) writeSync(fd, rec, 0, recordBytes, pos);
  const perRecordS = (nowMs() - t0) / 1000;
  closeSync(fd);
  unlinkSync(path);
  warmPageCache(dir, Math.ceil(total / MiB) * MiB);
  const block = randomBytes(MiB);
  fd = openSync(path, 'w+');
  t0 = nowMs();
  for (let pos = 0; pos < total; pos += MiB) writeSync(fd, block, 0, Math.min(MiB, total - pos), pos);
  const mibS = (nowMs() - t0) / 1000;
  // the same file read back in 1 MiB blocks from the page cache (the pull reference)
  t0 = nowMs();
  for (let pos = 0; pos < total; pos += MiB) readSync(fd, block, 0, Math.min(MiB, total - pos), pos);
  const readS = (nowMs() - t0) / 1000;
  closeSync(fd);
  unlinkSync(path);
  return { perRecordMsgsPerSec: Math.round(messages / perRecordS), perRecordMBps: Math.round(total / 1e6 / perRecordS), mib1MBps: Math.round(total / 1e6 / mibS), readMib1MBps: Math.round(total / 1e6 / readS) };
}

function runSide(o: Opts, root: string, label: string, round: number): Promise<SideResult> {
  const dir = mkdtempSync(join(o.dir, 'tsmq-append-ab-'));
  const nodeArgs = o.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(o.profileDir, `${label}-${round}`)}`] : [];
  const self = new URL(import.meta.url).pathname;
  const [tree, api] = root.split('@') as [string, string | undefined];
  return runSideChild<SideResult>([...nodeArgs, '--import', 'tsx', self, '--child', tree, dir, String(o.messages), String(o.window), o.pull ? 'pull' : 'append', api ?? 'promise'], label, tree).finally(() => rmSync(dir, { recursive: true, force: true }));
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') return await child(argv[1]!, argv[2]!, Number(argv[3]), Number(argv[4]), argv[5] === 'pull', argv[6] ?? 'promise');
  const o = parseArgs(argv);
  const rows: Array<{ label: string; round: number; r: SideResult }> = [];
  const ceilings: Array<ReturnType<typeof ceiling>> = [];
  for (let round = 1; round <= o.rounds; round++) {
    const sides: Array<[string, string]> = [[o.a, o.labelA], [o.b, o.labelB], ...(o.c ? [[o.c, o.labelC] as [string, string]] : [])];
    // the order rotates per round (no side always runs first after the ceiling)
    for (const [root, label] of sides.slice((round - 1) % sides.length).concat(sides.slice(0, (round - 1) % sides.length))) {
      const r = await runSide(o, root, label, round);
      console.log(`AB ${JSON.stringify({ label, round, ...r })}`);
      rows.push({ label, round, r });
    }
    const dir = mkdtempSync(join(o.dir, 'tsmq-append-ceiling-'));
    try {
      const c = ceiling(dir, o.messages, rows[rows.length - 1]!.r.avgRecordBytes);
      console.log(`CEILING ${JSON.stringify({ round, ...c })}`);
      ceilings.push(c);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const ceil = median(ceilings.map((c) => c.perRecordMsgsPerSec));
  const ceilMiB = median(ceilings.map((c) => c.mib1MBps));
  console.log(`\nNode positional-write ceiling (median of ${ceilings.length}): ${ceil} writes/s of one record each (${median(ceilings.map((c) => c.perRecordMBps))} MB/s); 1 MiB writes ${ceilMiB} MB/s`);
  console.log('\n| side | msgs/s (median) | vs per-record ceiling | record MB/s | vs 1 MiB writes | CPU µs/msg | runs (msgs/s / µs) |');
  console.log('|---|---|---|---|---|---|---|');
  const labels = [o.labelA, o.labelB, ...(o.c ? [o.labelC] : [])];
  for (const label of labels) {
    const rs = rows.filter((x) => x.label === label).map((x) => x.r);
    const m = median(rs.map((r) => r.msgsPerSec));
    const mb = median(rs.map((r) => r.recordMBps));
    console.log(`| ${label} | ${m} | ${(m / ceil).toFixed(3)}× | ${mb} | ${(mb / ceilMiB).toFixed(3)}× | ${median(rs.map((r) => r.cpuUsPerMsg))} | ${rs.map((r) => `${r.msgsPerSec}/${r.cpuUsPerMsg}`).join(', ')} |`);
  }
  if (o.pull) {
    const readRef = median(ceilings.map((c) => c.readMib1MBps));
    console.log(`\nPull (getMessage ×32 round robin over 16 queues, page cache) vs 1 MiB page-cache reads of the same bytes (median ${readRef} MB/s):`);
    console.log('\n| side | pull msgs/s (median) | pull MB/s | vs 1 MiB reads | CPU µs/msg | runs (MB/s / µs) |');
    console.log('|---|---|---|---|---|---|');
    for (const label of labels) {
      const rs = rows.filter((x) => x.label === label).map((x) => x.r);
      const mb = median(rs.map((r) => r.pullMBps ?? 0));
      console.log(`| ${label} | ${median(rs.map((r) => r.pullMsgsPerSec ?? 0))} | ${mb} | ${(mb / readRef).toFixed(3)}× | ${median(rs.map((r) => r.pullCpuUsPerMsg ?? 0))} | ${rs.map((r) => `${r.pullMBps}/${r.pullCpuUsPerMsg}`).join(', ')} |`);
    }
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
