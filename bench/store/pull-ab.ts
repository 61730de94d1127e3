/**
 * A/B of the embedded store's pull (the `store-pull` load: getMessage ×32 round robin over 4 topics
 * × 4 queues of 1 KiB messages, from offset 0 to the end, page cache hot) from source trees and
 * modes, interleaved side by side for `rounds` rounds, each set beside the page-cache read rate
 * of the same bytes measured in the same child right after its pulls (the CommitLog files just
 * pulled, read back with 1 MiB positional reads into one buffer).
 *
 * A side is `label=<root>` (copy mode: one body per pull, released with `release()` or
 * `releaseMessageBody`) or `label=<root>@lend` (getMessage's lend mode `{ minViewBytes: 0,
 * maxParts: ∞ }`: views of the read cache's chunks, `bodyParts` taken, then `release()`), or
 * `label=<root>@lend:<minViewBytes>:<maxParts>` (the broker's settings). Each child imports the
 * store from its own tree, so an exported older commit works as a side (copy mode only).
 *
 * Per side and round: `passes` hot passes; the figure of a round is the median of its last
 * ⌈passes/2⌉ passes (the first ones warm the JIT, chunk buffers and pools: a fresh process's first
 * pass runs at about half speed) — MB/s of records wall-clock, and CPU µs per message (user +
 * system); the table shows medians over rounds
 * and the ratio pull MB/s / read MB/s of the same child.
 *
 * Usage: npx tsx bench/store/pull-ab.ts --side before=/tmp/main --side after=.@lend [--side …]
 *        [--rounds 3] [--messages 600000] [--passes 6] [--dir <tmp parent>]
 * Output: one `AB {json}` line per side and round, then a table of medians.
 */
import { closeSync, existsSync, mkdtempSync, openSync, readSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { warmPageCache } from '../lib/disk-ops.js';
import { MiB, nowMs } from '../lib/stats.js';
import { median, runSideChild } from '../lib/ab-child.js';

interface Side {
  label: string;
  root: string;
  mode: string;
}
interface Opts {
  sides: Side[];
  rounds: number;
  messages: number;
  passes: number;
  dir: string;
}
interface SideResult {
  pullMBps: number;
  pullCpuUsPerMsg: number;
  readMBps: number;
  passes: Array<{ mbps: number; cpuUsPerMsg: number }>;
}

function parseArgs(argv: string[]): Opts {
  const o: Opts = { sides: [], rounds: 3, messages: 600_000, passes: 6, dir: tmpdir() };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i]!;
    const v = argv[++i];
    if (v === undefined) throw new Error(`${k} needs a value`);
    if (k === '--side') {
      const eq = v.indexOf('=');
      if (eq <= 0) throw new Error(`--side label=<root>[@mode], got ${v}`);
      const [root, mode = 'copy'] = v.slice(eq + 1).split('@');
      o.sides.push({ label: v.slice(0, eq), root: resolve(root!), mode });
    } else if (k === '--rounds') o.rounds = Number(v);
    else if (k === '--messages') o.messages = Number(v);
    else if (k === '--passes') o.passes = Number(v);
    else if (k === '--dir') o.dir = v;
    else throw new Error(`unknown option ${k}`);
  }
  if (o.sides.length === 0) throw new Error('no --side given');
  return o;
}

/** Child: `--child <root> <dir> <messages> <passes> <mode>`; prints `SIDE {json}`. */
async function child(root: string, dir: string, messages: number, passes: number, mode: string): Promise<void> {
  const load = (await import(pathToFileURL(join(root, 'bench/lib/store-load.ts')).href)) as typeof import('../lib/store-load.js');
  warmPageCache(dir, Math.ceil((messages * 1300) / MiB) * MiB);
  const [modeName, minView = '0', maxParts = 'Infinity'] = mode.split(':');
  const lend = modeName === 'lend' ? { minViewBytes: Number(minView), maxParts: Number(maxParts) } : null;
  const storeDir = join(dir, 'store');
  const store = await load.openBenchStore(storeDir, { flushDiskType: 'ASYNC_FLUSH' });
  const out: SideResult = { pullMBps: 0, pullCpuUsPerMsg: 0, readMBps: 0, passes: [] };
  try {
    const run = await load.putWindowed(store, load.messagePool(), messages, 1024);
    await load.waitDispatched(store);
    if (run.ok !== messages) throw new Error(`only ${run.ok} of ${messages} PUT_OK`);
    type Result = Awaited<ReturnType<typeof store.getMessage>> & { bodyParts?: Buffer[]; release?: () => void };
    const get = store.getMessage.bind(store) as (...a: unknown[]) => Promise<Result>;
    for (let pass = 0; pass < passes; pass++) {
      const lanes = load.pullLanes(store);
      let pulled = 0;
      let bytes = 0;
      const c0 = process.cpuUsage();
      const t0 = nowMs();
      let active = lanes;
      while (active.length > 0) {
        for (const lane of active) {
          const r = lend ? await get('BenchGroup', lane.topic, lane.queueId, lane.offset, 32, null, lend) : await get('BenchGroup', lane.topic, lane.queueId, lane.offset, 32, null);
          const parts = lend ? r.bodyParts : r.body;
          if (r.bufferTotalSizeBytes > 0 && parts === undefined) throw new Error('records not handed out');
          pulled += r.messageQueueOffsets.length;
          bytes += r.bufferTotalSizeBytes;
          if (r.release) r.release();
          else if (r.body) (store as { releaseMessageBody?: (b: Buffer) => void }).releaseMessageBody?.(r.body);
          if (r.nextBeginOffset <= lane.offset) throw new Error(`no progress on ${lane.topic}/${lane.queueId} at ${lane.offset}: ${r.status}`);
          lane.offset = r.nextBeginOffset;
        }
        active = active.filter((l) => l.offset < l.max);
      }
      const s = (nowMs() - t0) / 1000;
      const cpu = process.cpuUsage(c0);
      if (pulled !== messages) throw new Error(`pulled ${pulled} of ${messages}`);
      out.passes.push({ mbps: Math.round(bytes / 1e6 / s), cpuUsPerMsg: Math.round(((cpu.user + cpu.system) / pulled) * 1000) / 1000 });
    }
    const warm = out.passes.slice(Math.floor(passes / 2));
    out.pullMBps = median(warm.map((p) => p.mbps));
    out.pullCpuUsPerMsg = median(warm.map((p) => p.cpuUsPerMsg));
    out.readMBps = readBack(join(storeDir, 'commitlog'), store.getMaxPhyOffset());
    console.log(`SIDE ${JSON.stringify(out)}`);
  } finally {
    await store.shutdown();
  }
}

/** The CommitLog's first `bytes` bytes read back with 1 MiB positional reads into one buffer (page cache): MB/s. */
function readBack(commitLogDir: string, bytes: number): number {
  const files = readdirSync(commitLogDir).filter((f) => /^\d{20}$/.test(f)).sort();
  const block = Buffer.allocUnsafe(MiB);
  let left = bytes;
  const t0 = nowMs();
  for (const f of files) {
    if (left <= 0) break;
    const fd = openSync(join(commitLogDir, f), 'r');
    try {
      for (let pos = 0; left > 0; ) {
        const n = readSync(fd, block, 0, Math.min(MiB, left), pos);
        if (n <= 0) break;
        pos += n;
        left -= n;
      }
    } finally {
      closeSync(fd);
    }
  }
  return Math.round((bytes - left) / 1e6 / ((nowMs() - t0) / 1000));
}

function runSide(o: Opts, side: Side): Promise<SideResult> {
  const dir = mkdtempSync(join(o.dir, 'tsmq-pull-ab-'));
  const self = new URL(import.meta.url).pathname;
  if (!existsSync(join(side.root, 'bench/lib/store-load.ts'))) return Promise.reject(new Error(`${side.root} has no bench/lib/store-load.ts`));
  return runSideChild<SideResult>(['--import', 'tsx', self, '--child', side.root, dir, String(o.messages), String(o.passes), side.mode], side.label, side.root).finally(() => rmSync(dir, { recursive: true, force: true }));
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') return await child(argv[1]!, argv[2]!, Number(argv[3]), Number(argv[4]), argv[5] ?? 'copy');
  const o = parseArgs(argv);
  const rows: Array<{ side: Side; round: number; r: SideResult }> = [];
  for (let round = 1; round <= o.rounds; round++) {
    // alternate the order each round, so no side always runs first
    const order = round % 2 === 1 ? o.sides : [...o.sides].reverse();
    for (const side of order) {
      const r = await runSide(o, side);
      console.log(`AB ${JSON.stringify({ label: side.label, mode: side.mode, round, ...r })}`);
      rows.push({ side, round, r });
    }
  }
  console.log(`\nPull: getMessage ×32 round robin over 16 queues, ${o.messages} messages, page cache; ${o.rounds} rounds × ${o.passes} passes; ratio = pull MB/s / 1 MiB page-cache reads of the same CommitLog bytes in the same child`);
  console.log('\n| side | mode | pull MB/s (median) | read MB/s (median) | ratio (median of rounds) | CPU µs/msg | rounds (MB/s, ratio, µs) |');
  console.log('|---|---|---|---|---|---|---|');
  for (const side of o.sides) {
    const rs = rows.filter((x) => x.side === side).map((x) => x.r);
    const ratios = rs.map((r) => r.pullMBps / r.readMBps);
    console.log(
      `| ${side.label} | ${side.mode} | ${median(rs.map((r) => r.pullMBps))} | ${median(rs.map((r) => r.readMBps))} | ${median(ratios).toFixed(3)}× | ${median(rs.map((r) => r.pullCpuUsPerMsg))} | ${rs.map((r, i) => `${r.pullMBps}, ${ratios[i]!.toFixed(2)}, ${r.pullCpuUsPerMsg}`).join(' / ')} |`,
    );
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
