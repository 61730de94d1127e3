/**
 * A/B of the broker's single-send path from two source trees with the real store, in process (no
 * sockets, no load generator): SEND_MESSAGE_V2 (310) frames exactly as Apache's Java client 4.9.8
 * writes them (fastjson header with string values; UNIQ_KEY, WAIT, KEYS, TAGS properties without
 * the last separator; `--size` B body), `--window` frames per read, through each tree's
 * FrameDecoder → ProcessorTable.dispatch → the broker's 310 handler (an in-process broker: the
 * unit tests' BrokerHarness) → a real DefaultMessageStore (ASYNC_FLUSH, temp dir: CommitLog
 * append and commit, ConsumeQueue and index dispatch) → FrameBatch encoding of the replies; the
 * next read when all replies of one are out, round robin over 8 queues.
 * What the vs-apache single run's broker spends per send, less the kernel's socket work, with far
 * less noise from a shared machine than a whole-broker run. Each side is a child process importing
 * from its own tree; sides interleave A, B, B, A, … per round.
 *
 * Env of a child: TSMQ_AB_WARMUP (sends before the measured ones, default 50 000), TSMQ_AB_GATE (see gate()).
 * Usage: npx tsx bench/broker/single-put-ab.ts --a <root> --b <root> [--rounds 4] [--messages 200000]
 *        [--size 1024] [--window 16] [--label-a before] [--label-b after] [--profile-dir <dir>]
 * Output: one `AB {json}` line per side and round (msgs/s, process CPU µs per send and its system part, write system calls per send (/proc/self/io syscw), main-thread CPU µs per
 * send, load average), then a table of medians and minima.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { nowMs } from '../lib/stats.js';
import { median, parseRootAbArgs, runSideChild } from '../lib/ab-child.js';

interface Opts { a: string; b: string; rounds: number; messages: number; size: number; window: number; labelA: string; labelB: string; profileDir: string | null }
interface SideResult { msgsPerSec: number; cpuUsPerMsg: number; sysUsPerMsg: number; writeSyscallsPerMsg: number; mainThreadCpuUsPerMsg: number; load1: number }

/** Write system calls of this process so far (write, pwrite, writev: `syscw` of /proc/self/io); NaN where unreadable. */
function writeSyscalls(): number {
  try {
    return Number(/^syscw: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? Number.NaN);
  } catch {
    return Number.NaN;
  }
}

const QUEUES = 8;

function parseArgs(argv: string[]): Opts {
  const own = { window: 16, profileDir: null as string | null };
  const o = parseRootAbArgs(argv, { rounds: 4, messages: 200_000 }, (k, v) => {
    if (k === '--window') own.window = Number(v);
    else if (k === '--profile-dir') own.profileDir = v;
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

/** A SEND_MESSAGE_V2 frame as the Java client 4.9.8 writes it (fastjson key order, string values, properties without the last separator). */
function javaSendFrame(i: number, body: Buffer, opaque: number): Buffer {
  const props = `UNIQ_KEY\u0001${(0x7f000001_00000000n + BigInt(i)).toString(16).toUpperCase().padStart(32, '0')}\u0002WAIT\u0001true\u0002KEYS\u0001order-${i} user-${i % 1000}\u0002TAGS\u0001TagA`;
  const ext = { a: 'PID_SINGLE_AB', b: 'SingleAbTopic', c: 'TBW102', d: String(QUEUES), e: String(i % QUEUES), f: '0', g: String(1_764_640_000_000 + i), h: '0', i: props, j: '0', k: 'false', m: 'false', n: 'broker-a' };
  const header = Buffer.from(`{"code":310,"extFields":${JSON.stringify(ext)},"flag":0,"language":"JAVA","opaque":${opaque},"serializeTypeCurrentRPC":"JSON","version":453}`);
  const f = Buffer.alloc(8 + header.length + body.length);
  f.writeInt32BE(4 + header.length + body.length, 0);
  f.writeInt32BE(header.length, 4);
  header.copy(f, 8);
  body.copy(f, 8 + header.length);
  return f;
}

/**
 * With TSMQ_AB_GATE=<path> (a child run by hand under `valgrind --tool=callgrind --instr-atstart=no`):
 * prints `GATE <step> <path>.<step>` on stderr and waits until that file exists, so that a
 * driver can switch instrumentation on (`callgrind_control -i on`) for the measured sends only.
 */
async function gate(step: 'begin' | 'end'): Promise<void> {
  const base = process.env.TSMQ_AB_GATE;
  if (!base) return;
  const file = `${base}.${step}`;
  process.stderr.write(`GATE ${step} ${file}\n`);
  while (!existsSync(file)) await new Promise((r) => setTimeout(r, 20));
}

/** Child: `--child <root> <messages> <size> <window>`; prints `SIDE {json}`. */
async function child(root: string, messages: number, size: number, window: number): Promise<void> {
  const imp = async <T>(rel: string): Promise<T> => (await import(pathToFileURL(join(root, rel)).href)) as T;
  const { BrokerHarness } = await imp<typeof import('../../test/unit/broker/support/broker-harness.js')>('test/unit/broker/support/broker-harness.ts');
  const { DefaultMessageStore } = await imp<typeof import('../../src/store/default-message-store.js')>('src/store/default-message-store.ts');
  const { silentLogger } = await imp<typeof import('../../src/common/logging/logger.js')>('src/common/logging/logger.ts');
  const { FrameDecoder } = await imp<typeof import('../../src/remoting/protocol/frame-codec.js')>('src/remoting/protocol/frame-codec.ts');
  const { FrameBatch } = await imp<typeof import('../../src/remoting/protocol/frame-batch.js')>('src/remoting/protocol/frame-batch.ts');
  const { ProcessorTable } = await imp<typeof import('../../src/remoting/transport/processor-table.js')>('src/remoting/transport/processor-table.ts');
  const dir = mkdtempSync(join(tmpdir(), 'tsmq-single-put-ab-'));
  const store = await DefaultMessageStore.open({ storePathRootDir: join(dir, 'store'), flushDiskType: 'ASYNC_FLUSH' }, { logger: silentLogger });
  const h = await BrokerHarness.create({ store, dir: join(dir, 'broker') });
  try {
    const table = new ProcessorTable(silentLogger);
    table.register(310, h.broker.handlerFor(310)!);
    const batch = new FrameBatch();
    let replies = 0;
    let wake: (() => void) | null = null;
    const channel = {
      id: 'ab', remoteAddress: '127.0.0.1:40000', closed: false, close(): void {}, onClose(): void {},
      send(cmd: { code: number; remark: string | null }): void {
        if (cmd.code !== 0) throw new Error(`send answered ${cmd.code}: ${cmd.remark}`);
        batch.add(cmd as never);
        if (++replies % window === 0) {
          batch.take();
          const w = wake;
          wake = null;
          w?.();
        }
      },
    };
    const decoder = new FrameDecoder((cmd) => void table.dispatch(channel as never, cmd));
    const body = Buffer.alloc(size, 7);
    // 64 distinct reads (distinct UNIQ_KEY / KEYS per message, as the index sees them), reused
    const reads = Array.from({ length: 64 }, (_, r) => Buffer.concat(Array.from({ length: window }, (_, k) => javaSendFrame(r * window + k, body, r * window + k + 1))));
    let n = 0;
    const round = (): Promise<void> => new Promise<void>((done) => {
      wake = done;
      decoder.push(reads[n++ % reads.length]!);
    });
    // the first send creates the topic (its config write is awaited); then warm up
    const warmup = Number(process.env.TSMQ_AB_WARMUP ?? 50_000);
    for (let i = 0; i < Math.ceil(warmup / window); i++) await round();
    await gate('begin');
    const rounds = Math.ceil(messages / window);
    const c0 = process.cpuUsage();
    const m0 = mainThreadCpuSeconds();
    const w0 = writeSyscalls();
    const t0 = nowMs();
    for (let i = 0; i < rounds; i++) await round();
    const s = (nowMs() - t0) / 1000;
    const cpu = process.cpuUsage(c0);
    const main = mainThreadCpuSeconds() - m0;
    const writes = writeSyscalls() - w0;
    await gate('end');
    const sent = rounds * window;
    const out: SideResult = { msgsPerSec: Math.round(sent / s), cpuUsPerMsg: Math.round(((cpu.user + cpu.system) / sent) * 100) / 100, sysUsPerMsg: Math.round((cpu.system / sent) * 100) / 100, writeSyscallsPerMsg: Math.round((writes / sent) * 1000) / 1000, mainThreadCpuUsPerMsg: Math.round((main / sent) * 1e8) / 100, load1: Math.round(loadavg()[0]! * 10) / 10 };
    console.log(`SIDE ${JSON.stringify(out)}`);
  } finally {
    await h.close();
    await store.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}

function runSide(o: Opts, root: string, label: string, round: number): Promise<SideResult> {
  const args = ['--import', 'tsx'];
  if (o.profileDir) args.push('--cpu-prof', `--cpu-prof-dir=${join(o.profileDir, `${label}-${round}`)}`);
  args.push(new URL(import.meta.url).pathname, '--child', root, String(o.messages), String(o.size), String(o.window));
  return runSideChild<SideResult>(args, label);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') {
    await child(argv[1]!, Number(argv[2]), Number(argv[3]), Number(argv[4]));
    return;
  }
  const o = parseArgs(argv);
  const sides = [{ label: o.labelA, root: o.a }, { label: o.labelB, root: o.b }];
  const results = new Map<string, SideResult[]>(sides.map((s) => [s.label, []]));
  for (let round = 1; round <= o.rounds; round++) {
    const order = round % 2 === 1 ? sides : [...sides].reverse();
    for (const side of order) {
      const r = await runSide(o, side.root, side.label, round);
      results.get(side.label)!.push(r);
      console.log(`AB ${JSON.stringify({ label: side.label, round, ...r })}`);
    }
  }
  console.log(`\n| side | msgs/s (median) | process CPU µs/send (median, min) | of which system (median) | write syscalls/send (median) | main thread CPU µs/send (median, min) | runs (msgs/s / process µs / main µs / load) |\n|---|---|---|---|---|---|---|`);
  for (const s of sides) {
    const rs = results.get(s.label)!;
    const cpu = rs.map((r) => r.cpuUsPerMsg);
    const main = rs.map((r) => r.mainThreadCpuUsPerMsg);
    console.log(`| ${s.label} | ${median(rs.map((r) => r.msgsPerSec))} | ${median(cpu).toFixed(2)}, ${Math.min(...cpu)} | ${median(rs.map((r) => r.sysUsPerMsg)).toFixed(2)} | ${median(rs.map((r) => r.writeSyscallsPerMsg)).toFixed(3)} | ${median(main).toFixed(2)}, ${Math.min(...main)} | ${rs.map((r) => `${r.msgsPerSec}/${r.cpuUsPerMsg}/${r.mainThreadCpuUsPerMsg}/${r.load1}`).join(', ')} |`);
  }
}

await main();
