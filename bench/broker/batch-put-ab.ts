/**
 * A/B of the broker's SEND_BATCH_MESSAGE (320) put path from two source trees, in process (no
 * sockets, no load generator): the send processor of an in-process broker (the unit tests'
 * BrokerHarness) over a real DefaultMessageStore (ASYNC_FLUSH, temp dir), fed batches of
 * `--batch` × `--size` B shaped as the Java client sends them (each item TAGS, WAIT, UNIQ_KEY;
 * the batch header WAIT and UNIQ_KEY), `--window` batches in flight, round robin over 8 queues.
 * Measures what the vs-apache batch run's broker spends per message on the put path (decode,
 * properties, encode, CRC, CommitLog write, ConsumeQueue and index dispatch, reply) without the
 * network and the load generator, so CPU per message is much less sensitive to a shared machine.
 *
 * Each side runs in a child process (`node --import tsx`) importing the broker and store from
 * its own tree; sides interleave A, B, B, A, … per round.
 *
 * Usage: npx tsx bench/broker/batch-put-ab.ts --a <root> --b <root> [--rounds 3] [--messages 320000]
 *        [--batch 32] [--size 1024] [--window 16] [--label-a before] [--label-b after]
 *        [--profile-dir <dir>] (children run with --cpu-prof; profiles in <dir>/<label>-<round>/)
 *        [--node-arg <flag>]… (node/V8 flags for both children, e.g. --single-threaded-gc: all GC work on
 *        the main thread, so its CPU counts in the main-thread column)
 *        [--node-arg-a <flag>]… [--node-arg-b <flag>]… (flags for one side only, e.g. the same tree with and
 *        without --max-semi-space-size)
 * Env: BATCH_AB_STORE_CONF (JSON of extra store config for both sides, e.g. {"messageIndexEnable":false}).
 * Output: one `AB {json}` line per side and round (msgs/s, process and main-thread CPU µs per
 * message, load average), then a table of medians and minima (on a shared machine the minimum is
 * the run least disturbed).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { nowMs } from '../lib/stats.js';
import { median, parseRootAbArgs, runSideChild } from '../lib/ab-child.js';

interface Opts { a: string; b: string; rounds: number; messages: number; batch: number; size: number; window: number; labelA: string; labelB: string; profileDir: string | null; nodeArgs: string[]; nodeArgsA: string[]; nodeArgsB: string[] }
interface SideResult { msgsPerSec: number; cpuUsPerMsg: number; systemCpuUsPerMsg: number; mainThreadCpuUsPerMsg: number; load1: number }

const QUEUES = 8;

function parseArgs(argv: string[]): Opts {
  const own = { batch: 32, window: 16, profileDir: null as string | null, nodeArgs: [] as string[], nodeArgsA: [] as string[], nodeArgsB: [] as string[] };
  const o = parseRootAbArgs(argv, { rounds: 3, messages: 320_000 }, (k, v) => {
    if (k === '--batch') own.batch = Number(v);
    else if (k === '--window') own.window = Number(v);
    else if (k === '--profile-dir') own.profileDir = v;
    else if (k === '--node-arg') own.nodeArgs.push(v);
    else if (k === '--node-arg-a') own.nodeArgsA.push(v);
    else if (k === '--node-arg-b') own.nodeArgsB.push(v);
    else return false;
    return true;
  });
  return { ...o, ...own };
}

/** CPU seconds of this process's main thread (/proc/self/task/<pid>/stat utime + stime; 10 ms ticks). */
function mainThreadCpuSeconds(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/**
 * A batch body as Apache's Java client 4.9.8 (the vs-apache load generator) writes it with
 * MessageDecoder.encodeMessages: items with TAGS, WAIT, UNIQ_KEY, the properties text without
 * its last separator (messageProperties2String drops it since 4.9).
 */
function batchBody(batch: number, size: number): Buffer {
  const parts: Buffer[] = [];
  for (let k = 0; k < batch; k++) {
    const props = Buffer.from(`TAGS\u0001TagA\u0002WAIT\u0001true\u0002UNIQ_KEY\u0001${randomBytes(16).toString('hex').toUpperCase()}`, 'latin1');
    const total = 22 + size + props.length;
    const b = Buffer.alloc(total);
    b.writeInt32BE(total, 0);
    b.writeInt32BE(size, 16);
    randomBytes(size).copy(b, 20);
    b.writeInt16BE(props.length, 20 + size);
    props.copy(b, 22 + size);
    parts.push(b);
  }
  return Buffer.concat(parts);
}

/** Child: `--child <root> <messages> <batch> <size> <window>`; prints `SIDE {json}`. */
async function child(root: string, messages: number, batch: number, size: number, window: number): Promise<void> {
  const imp = async <T>(rel: string): Promise<T> => (await import(pathToFileURL(join(root, rel)).href)) as T;
  const { BrokerHarness } = await imp<typeof import('../../test/unit/broker/support/broker-harness.js')>('test/unit/broker/support/broker-harness.ts');
  const { DefaultMessageStore } = await imp<typeof import('../../src/store/default-message-store.js')>('src/store/default-message-store.ts');
  const { silentLogger } = await imp<typeof import('../../src/common/logging/logger.js')>('src/common/logging/logger.ts');
  const dir = mkdtempSync(join(tmpdir(), 'tsmq-batch-put-ab-'));
  const extraConf = JSON.parse(process.env.BATCH_AB_STORE_CONF ?? '{}') as Record<string, unknown>;
  const store = await DefaultMessageStore.open({ storePathRootDir: join(dir, 'store'), flushDiskType: 'ASYNC_FLUSH', ...extraConf }, { logger: silentLogger });
  const h = await BrokerHarness.create({ store, dir: join(dir, 'broker') });
  try {
    const bodies = Array.from({ length: 64 }, () => batchBody(batch, size));
    let sent = 0;
    const sendOne = async (i: number): Promise<void> => {
      const ext = { a: 'PID_AB', b: 'BatchAbTopic', c: 'TBW102', d: QUEUES, e: i % QUEUES, f: 0, g: Date.now(), h: 0, i: `WAIT\u0001true\u0002UNIQ_KEY\u0001${(i + 0x10000).toString(16).toUpperCase().padStart(32, '0')}`, j: 0, k: false, m: true };
      const r = await h.call(320, ext, bodies[i % bodies.length]!);
      if (r.code !== 0) throw new Error(`batch ${i}: code ${r.code} ${r.remark}`);
      sent += batch;
    };
    const run = async (batches: number, from: number): Promise<void> => {
      for (let i = 0; i < batches; i += window) {
        await Promise.all(Array.from({ length: Math.min(window, batches - i) }, (_, k) => sendOne(from + i + k)));
      }
    };
    const warm = Math.ceil(64_000 / batch);
    await run(warm, 0);
    const batches = Math.ceil(messages / batch);
    const c0 = process.cpuUsage();
    const m0 = mainThreadCpuSeconds();
    const t0 = nowMs();
    sent = 0;
    await run(batches, warm);
    const s = (nowMs() - t0) / 1000;
    const cpu = process.cpuUsage(c0);
    const main = mainThreadCpuSeconds() - m0;
    const out: SideResult = { msgsPerSec: Math.round(sent / s), cpuUsPerMsg: Math.round(((cpu.user + cpu.system) / sent) * 100) / 100, systemCpuUsPerMsg: Math.round((cpu.system / sent) * 100) / 100, mainThreadCpuUsPerMsg: Math.round((main / sent) * 1e8) / 100, load1: Math.round(loadavg()[0]! * 10) / 10 };
    console.log(`SIDE ${JSON.stringify(out)}`);
  } finally {
    await h.close();
    await store.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}

function runSide(o: Opts, root: string, label: string, round: number, sideArgs: string[]): Promise<SideResult> {
  const args = [...o.nodeArgs, ...sideArgs, '--import', 'tsx'];
  if (o.profileDir) args.push('--cpu-prof', `--cpu-prof-dir=${join(o.profileDir, `${label}-${round}`)}`);
  args.push(new URL(import.meta.url).pathname, '--child', root, String(o.messages), String(o.batch), String(o.size), String(o.window));
  return runSideChild<SideResult>(args, label);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') {
    await child(argv[1]!, Number(argv[2]), Number(argv[3]), Number(argv[4]), Number(argv[5]));
    return;
  }
  const o = parseArgs(argv);
  const sides = [{ label: o.labelA, root: o.a, args: o.nodeArgsA }, { label: o.labelB, root: o.b, args: o.nodeArgsB }];
  const results = new Map<string, SideResult[]>(sides.map((s) => [s.label, []]));
  for (let round = 1; round <= o.rounds; round++) {
    const order = round % 2 === 1 ? sides : [...sides].reverse();
    for (const side of order) {
      const r = await runSide(o, side.root, side.label, round, side.args);
      results.get(side.label)!.push(r);
      console.log(`AB ${JSON.stringify({ label: side.label, round, ...r })}`);
    }
  }
  console.log(`\n| side | msgs/s (median) | process CPU µs/msg (median, min) | main thread CPU µs/msg (median, min) | runs (msgs/s / process µs / main µs / load) |\n|---|---|---|---|---|`);
  for (const s of sides) {
    const rs = results.get(s.label)!;
    const cpu = rs.map((r) => r.cpuUsPerMsg);
    const main = rs.map((r) => r.mainThreadCpuUsPerMsg);
    console.log(`| ${s.label} | ${median(rs.map((r) => r.msgsPerSec))} | ${median(cpu).toFixed(2)}, ${Math.min(...cpu)} | ${median(main).toFixed(2)}, ${Math.min(...main)} | ${rs.map((r) => `${r.msgsPerSec}/${r.cpuUsPerMsg}/${r.mainThreadCpuUsPerMsg}/${r.load1}`).join(', ')} |`);
  }
}

await main();
