/**
 * Core scaling of the broker: the same load against `tsmq start` pinned to different CPU sets
 * (`taskset -a -p -c <cpus>` on the broker right after it is spawned; threads it starts later
 * inherit the set), with broker config overrides per side, sides interleaved per round.
 *
 * Per side and round: a fresh broker (temp store, ASYNC_FLUSH); phases separated by 2 s of
 * idle (so a --cpu-prof profile splits into one busy segment per phase):
 *   sendSingle: `messages` SEND_MESSAGE_V2 (310) of `size` bytes, 64 in flight, round robin over
 *               8 queues, each with UNIQ_KEY, KEYS (two words) and TAGS (what the index stores);
 *   sendBatch:  SEND_BATCH_MESSAGE (320) of 32 such messages, 16 batches in flight;
 *   pull:       every queue of both topics from 0 to its end, one PULL_MESSAGE of 32 in flight per queue;
 *   query:      QUERY_MESSAGE (12) of the KEYS word of the last batch message: checks the index
 *               answers (the offset must be found) and reports how long until it does.
 * Reported per phase: msgs/s, broker CPU µs per message (all threads, /proc/<pid>/stat) and main
 * thread CPU µs per message (/proc/<pid>/task/<pid>/stat) — the serial part a second core cannot take.
 *
 * This process (the load generator) is pinned to `--client-cpus` (default: the last CPU), so
 * on a 2-core machine `--side one:0` gives the broker a core of its own and `--side two:0,1`
 * gives it a second core shared with the load generator.
 *
 * Usage: npx tsx bench/broker/scaling.ts --side <label>:<cpus>[:<key=value>,...] [--side ...]
 *        [--root .] [--rounds 2] [--messages 200000] [--size 1024] [--client-cpus 1]
 *        [--dir <tmp parent>] [--profile-dir <dir>]
 * e.g.   --side 1c-main:0:indexBuildInWorker=false --side 2c-main:0,1:indexBuildInWorker=false
 *        --side 1c-worker:0:indexBuildInWorker=true --side 2c-worker:0,1:indexBuildInWorker=true
 * Output: one `SCALING {json}` line per side and round, then a table of medians on stdout.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BenchContext, BenchOutput, Metric } from '../lib/types.js';
import { encodeBatchBody } from '../../src/common/message/batch-codec.js';
import { BenchChild } from '../lib/child.js';
import { cpuSecondsOf, freePort, sleep } from '../lib/os.js';
import { countRecords, RawRemotingClient } from '../lib/remoting-client.js';
import { nowMs } from '../lib/stats.js';

interface Side { label: string; cpus: string; config: string[] }
interface Opts { root: string; sides: Side[]; rounds: number; messages: number; size: number; clientCpus: string; dir: string; profileDir: string | null }

function parseArgs(argv: string[]): Opts {
  const o: Opts = { root: '.', sides: [], rounds: 2, messages: 200_000, size: 1024, clientCpus: String(os.cpus().length - 1), dir: tmpdir(), profileDir: null };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i]!;
    const v = argv[++i];
    if (v === undefined) throw new Error(`${k} needs a value`);
    if (k === '--side') {
      const [label, cpus, cfg] = v.split(':');
      if (!label || !cpus) throw new Error(`--side ${v}: expected <label>:<cpus>[:k=v,...]`);
      o.sides.push({ label, cpus, config: cfg ? cfg.split(',').filter((s) => s.length > 0) : [] });
    } else if (k === '--root') o.root = v;
    else if (k === '--rounds') o.rounds = Number(v);
    else if (k === '--messages') o.messages = Number(v);
    else if (k === '--size') o.size = Number(v);
    else if (k === '--client-cpus') o.clientCpus = v;
    else if (k === '--dir') o.dir = v;
    else if (k === '--profile-dir') o.profileDir = v;
    else throw new Error(`unknown flag ${k}`);
  }
  if (o.sides.length === 0) throw new Error('at least one --side <label>:<cpus>[:k=v,...] is required');
  return o;
}

const QUEUES = 8;
const BATCH = 32;
const IDLE_BETWEEN_PHASES_MS = 2000;

/** CPU seconds of one thread of `pid` (the main thread when tid = pid). */
function threadCpuSeconds(pid: number, tid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

interface PhaseResult { msgsPerSec: number; brokerCpuUsPerMsg: number; mainThreadCpuUsPerMsg: number; messages: number }

class PhaseClock {
  private readonly t0 = nowMs();
  private readonly cpu0: number;
  private readonly main0: number;
  constructor(private readonly pid: number) {
    this.cpu0 = cpuSecondsOf(pid);
    this.main0 = threadCpuSeconds(pid, pid);
  }
  end(messages: number): PhaseResult {
    const s = (nowMs() - this.t0) / 1000;
    const us = (cpu: number): number => Math.round((cpu / messages) * 1e6 * 100) / 100;
    return { msgsPerSec: Math.round(messages / s), brokerCpuUsPerMsg: us(cpuSecondsOf(this.pid) - this.cpu0), mainThreadCpuUsPerMsg: us(threadCpuSeconds(this.pid, this.pid) - this.main0), messages };
  }
}

function sendExt(topic: string, queueId: number, props: string, batch = false): Record<string, string | number | boolean> {
  return { a: 'PID_SCALING', b: topic, c: 'TBW102', d: QUEUES, e: queueId, f: 0, g: Date.now(), h: 0, i: props, j: 0, k: false, ...(batch ? { m: true } : {}) };
}

async function pullAll(client: RawRemotingClient, topic: string, group: string): Promise<number> {
  let messages = 0;
  await Promise.all(
    Array.from({ length: QUEUES }, async (_, queueId) => {
      let offset = 0;
      for (;;) {
        const r = await client.invoke(11, {
          consumerGroup: group, topic, queueId, queueOffset: offset, maxMsgNums: 32, sysFlag: 4, commitOffset: 0, suspendTimeoutMillis: 0, subscription: '*', subVersion: 0,
        });
        if (r.code === 0) {
          messages += countRecords(r.body);
          offset = Number(r.extFields.nextBeginOffset);
        } else if (r.code === 19 || r.code === 20 || r.code === 21) return;
        else throw new Error(`pull code ${r.code}: ${r.remark}`);
      }
    }),
  );
  return messages;
}

async function oneSide(o: Opts, side: Side, round: number): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(o.dir, 'tsmq-scaling-'));
  const nsPort = await freePort();
  const brokerPort = await freePort();
  const root = resolve(o.root);
  const cfgArgs = side.config.flatMap((kv) => ['-o', kv]);
  const broker = BenchChild.start(root, join(root, 'src/cli/main.ts'), ['start', '-n', String(nsPort), '-p', String(brokerPort), '--store', join(dir, 'store'), '-o', 'grpcListenPort=-1', '-o', 'metricsPromExporterPort=0', '-o', 'consolePort=-1', ...cfgArgs], {
    label: `tsmq ${side.label}`,
    nodeArgs: o.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(o.profileDir, `${side.label}-${round}`)}`] : [],
  });
  execFileSync('taskset', ['-a', '-p', '-c', side.cpus, String(broker.pid)], { stdio: 'ignore' });
  const client = { c: null as RawRemotingClient | null };
  try {
    await broker.waitFor(/tsmq started/, 60_000);
    client.c = await RawRemotingClient.connect(`127.0.0.1:${brokerPort}`);
    const c = client.c;
    const bodies = Array.from({ length: 64 }, () => randomBytes(o.size));
    let seq = 0;
    const uniq = (n: number): string => (0x20000000 + n).toString(16).toUpperCase().padStart(32, '0');
    await sleep(IDLE_BETWEEN_PHASES_MS);
    // single sends, round robin over the queues
    let clock = new PhaseClock(broker.pid);
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let i = next++; i < o.messages; i = next++) {
          const n = seq++;
          const r = await c.invoke(310, sendExt('ScalingSingle', i % QUEUES, `UNIQ_KEY\u0001${uniq(n)}\u0002KEYS\u0001order-${n} user-${n % 1000}\u0002WAIT\u0001true\u0002TAGS\u0001TagA\u0002`), bodies[i % bodies.length]);
          if (r.code !== 0) throw new Error(`send code ${r.code}: ${r.remark}`);
        }
      }),
    );
    const sendSingle = clock.end(o.messages);
    await sleep(IDLE_BETWEEN_PHASES_MS);
    const batchBody = (): Buffer =>
      encodeBatchBody(Array.from({ length: BATCH }, (_, k) => {
        const n = seq++;
        return { flag: 0, body: bodies[k % bodies.length]!, properties: new Map([['UNIQ_KEY', uniq(n)], ['KEYS', `order-${n} user-${n % 1000}`], ['TAGS', 'TagA']]) };
      }));
    const batches = Math.ceil(o.messages / BATCH);
    clock = new PhaseClock(broker.pid);
    for (let i = 0; i < batches; i += 16) {
      await Promise.all(
        Array.from({ length: Math.min(16, batches - i) }, async (_, k) => {
          const r = await c.invoke(320, sendExt('ScalingBatch', (i + k) % QUEUES, 'WAIT\u0001true\u0002', true), batchBody());
          if (r.code !== 0) throw new Error(`batch code ${r.code}: ${r.remark}`);
        }),
      );
    }
    const sendBatch = clock.end(batches * BATCH);
    // the index may lag the sends (built asynchronously): time until the last key is found
    const lastKey = `order-${seq - 1}`;
    const qt0 = nowMs();
    let queryLagMs = -1;
    for (let attempt = 0; attempt < 500; attempt++) {
      const r = await c.invoke(12, { topic: 'ScalingBatch', key: lastKey, maxNum: 32, beginTimestamp: 0, endTimestamp: Date.now() + 60_000 });
      if (r.code === 0 && countRecords(r.body) > 0) {
        queryLagMs = Math.round(nowMs() - qt0);
        break;
      }
      await sleep(10);
    }
    if (queryLagMs < 0) throw new Error(`QUERY_MESSAGE never found key ${lastKey}`);
    await sleep(IDLE_BETWEEN_PHASES_MS);
    clock = new PhaseClock(broker.pid);
    const pulled = (await pullAll(c, 'ScalingSingle', 'GID_SCALING_1')) + (await pullAll(c, 'ScalingBatch', 'GID_SCALING_2'));
    const pull = clock.end(pulled);
    await sleep(IDLE_BETWEEN_PHASES_MS);
    return { label: side.label, cpus: side.cpus, config: side.config, round, sendSingle, sendBatch, pull, queryLagMs, loadAvg: os.loadavg()[0] };
  } finally {
    client.c?.close();
    if (o.profileDir) await broker.stop();
    else await broker.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Runs every side `rounds` times, interleaved; returns the per-run results and the table of medians. */
async function measure(o: Opts, log: (line: string) => void): Promise<{ runs: Array<Record<string, unknown>>; table: string[]; medians: Array<{ side: Side; phase: string; msgsPerSec: number; brokerCpuUsPerMsg: number; mainThreadCpuUsPerMsg: number }> }> {
  execFileSync('taskset', ['-a', '-p', '-c', o.clientCpus, String(process.pid)], { stdio: 'ignore' });
  const all: Array<Record<string, unknown>> = [];
  for (let round = 1; round <= o.rounds; round++) {
    for (const side of o.sides) {
      const r = await oneSide(o, side, round);
      log(`SCALING ${JSON.stringify(r)}`);
      all.push(r);
    }
  }
  const table = ['| side | broker cpus | phase | msgs/s (median) | broker CPU µs/msg | main thread CPU µs/msg | runs (msgs/s) |', '|---|---|---|---|---|---|---|'];
  const medians = [];
  for (const side of o.sides) {
    for (const phase of ['sendSingle', 'sendBatch', 'pull'] as const) {
      const rs = all.filter((r) => r.label === side.label).map((r) => r[phase] as PhaseResult);
      const m = { side, phase, msgsPerSec: median(rs.map((r) => r.msgsPerSec)), brokerCpuUsPerMsg: median(rs.map((r) => r.brokerCpuUsPerMsg)), mainThreadCpuUsPerMsg: median(rs.map((r) => r.mainThreadCpuUsPerMsg)) };
      medians.push(m);
      table.push(`| ${side.label} | ${side.cpus} | ${phase} | ${m.msgsPerSec} | ${m.brokerCpuUsPerMsg} | ${m.mainThreadCpuUsPerMsg} | ${rs.map((r) => r.msgsPerSec).join(', ')} |`);
    }
  }
  return { runs: all, table, medians };
}

/**
 * Registry entry (`npm run bench -- --only broker-scaling`): 1 vs 2 broker cores, index on the
 * store thread vs in the worker. Options: --set scaling.messages=200000 --set scaling.rounds=2.
 */
export async function run(ctx: BenchContext): Promise<BenchOutput> {
  const cpus = os.cpus().length;
  const both = cpus >= 2 ? `0,1` : '0';
  const o: Opts = {
    root: ctx.repoRoot,
    sides: [
      { label: '1c-thread', cpus: '0', config: ['indexBuildInWorker=false'] },
      { label: '2c-thread', cpus: both, config: ['indexBuildInWorker=false'] },
      { label: '1c-worker', cpus: '0', config: ['indexBuildInWorker=true'] },
      { label: '2c-worker', cpus: both, config: ['indexBuildInWorker=true'] },
    ],
    rounds: Number(ctx.options['scaling.rounds'] ?? (ctx.mode === 'full' ? 3 : 1)),
    messages: Number(ctx.options['scaling.messages'] ?? 100_000),
    size: 1024,
    clientCpus: String(cpus - 1),
    dir: ctx.workDir,
    profileDir: null,
  };
  const { runs, table, medians } = await measure(o, (l) => ctx.log(l.slice(0, 200)));
  const metrics: Metric[] = medians.flatMap((m) => [
    { name: `${m.phase}, ${m.side.label} (broker cpus ${m.side.cpus})`, value: m.msgsPerSec, unit: 'msgs/s' },
    { name: `${m.phase}, ${m.side.label}: broker main thread CPU per message`, value: m.mainThreadCpuUsPerMsg, unit: 'µs' },
  ]);
  return {
    metrics,
    notes: [`load generator pinned to cpu ${o.clientCpus}; on a 2-core machine the broker's second core is shared with it`, ...table],
    details: runs,
  };
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const { table } = await measure(o, (l) => console.log(l));
  console.log(`\n${table.join('\n')}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}
