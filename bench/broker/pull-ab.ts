/**
 * A/B of the broker's pull serving: `tsmq start` from two source trees (e.g. an exported older
 * commit and this one), interleaved A, B, A, B, … with the same load, so that a change to the
 * pull path is measured against a baseline from the same run.
 *
 * Per side and round: a fresh broker (temp store, ASYNC_FLUSH); topic `AbSingle` (8 queues) loaded
 * with `messages` single SEND_MESSAGE_V2 (310) of `size` bytes round robin over its queues (records
 * of one queue interleaved in the CommitLog, as 16 producer threads leave them); topic `AbBatch`
 * (8 queues) loaded with SEND_BATCH_MESSAGE (320) of 32 (records of one queue adjacent); then for
 * each topic one connection pulls every queue from offset 0 to its end, one PULL_MESSAGE (11) of 32
 * in flight per queue (what a push consumer does). Reported per phase (sendSingle: the 310 load,
 * 64 in flight; sendBatch: the 320 load, 16 batches in flight; single / batch: the pulls of the
 * two topics): msgs/s and the broker's CPU µs per message (CPU of the broker process from /proc).
 *
 * Usage: npx tsx bench/broker/pull-ab.ts --a <root> --b <root> [--rounds 3] [--messages 300000]
 *        [--size 1024] [--dir <tmp parent>] [--label-a before] [--label-b after]
 *        [--profile-dir <dir>] (brokers run with --cpu-prof; profiles in <dir>/<label>-<round>/ at their clean exit)
 * Output: one `AB {json}` line per side and round (pull phases also split into the broker's user and system
 *         CPU µs per message, /proc utime / stime, in all and per thread name), then a summary table (medians) on stdout.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeBatchBody } from '../../src/common/message/batch-codec.js';
import { BenchChild } from '../lib/child.js';
import { cpuByThreadOf, cpuSecondsOf, cpuSplitOf, freePort } from '../lib/os.js';
import { countRecords, RawRemotingClient } from '../lib/remoting-client.js';
import { nowMs } from '../lib/stats.js';
import { median, parseRootAbArgs } from '../lib/ab-child.js';

interface Opts { a: string; b: string; rounds: number; messages: number; size: number; dir: string; labelA: string; labelB: string; profileDir: string | null }

function parseArgs(argv: string[]): Opts {
  const own = { dir: tmpdir(), profileDir: null as string | null };
  const o = parseRootAbArgs(argv, { rounds: 3, messages: 300_000 }, (k, v) => {
    if (k === '--dir') own.dir = v;
    else if (k === '--profile-dir') own.profileDir = v;
    else return false;
    return true;
  });
  return { ...o, ...own };
}

const QUEUES = 8;
const BATCH = 32;

function sendExt(topic: string, queueId: number, props: string, batch = false): Record<string, string | number | boolean> {
  return { a: 'PID_AB', b: topic, c: 'TBW102', d: QUEUES, e: queueId, f: 0, g: Date.now(), h: 0, i: props, j: 0, k: false, ...(batch ? { m: true } : {}) };
}

interface PhaseResult { msgsPerSec: number; brokerCpuUsPerMsg: number; messages: number; brokerUserUsPerMsg?: number; brokerSysUsPerMsg?: number; threadsUsPerMsg?: Record<string, string> }

function phaseOf(messages: number, t0: number, cpu0: number, brokerPid: number): PhaseResult {
  const s = (nowMs() - t0) / 1000;
  const cpu = cpuSecondsOf(brokerPid) - cpu0;
  return { msgsPerSec: Math.round(messages / s), brokerCpuUsPerMsg: Math.round((cpu / messages) * 1e6 * 100) / 100, messages };
}

async function pullAll(client: RawRemotingClient, brokerPid: number, topic: string, group: string): Promise<PhaseResult> {
  const cpu0 = cpuSecondsOf(brokerPid);
  const split0 = cpuSplitOf(brokerPid);
  const threads0 = cpuByThreadOf(brokerPid);
  const t0 = nowMs();
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
  const s = (nowMs() - t0) / 1000;
  const cpu = cpuSecondsOf(brokerPid) - cpu0;
  const split = cpuSplitOf(brokerPid);
  const usPerMsg = (seconds: number): number => Math.round((seconds / messages) * 1e6 * 100) / 100;
  // per thread name: "user/sys" µs per message (threads that used no CPU in the phase left out)
  const threadsUsPerMsg: Record<string, string> = {};
  for (const [name, t] of cpuByThreadOf(brokerPid)) {
    const t0s = threads0.get(name) ?? { userS: 0, sysS: 0 };
    if (t.userS + t.sysS > t0s.userS + t0s.sysS) threadsUsPerMsg[name] = `${usPerMsg(t.userS - t0s.userS)}/${usPerMsg(t.sysS - t0s.sysS)}`;
  }
  return { msgsPerSec: Math.round(messages / s), brokerCpuUsPerMsg: usPerMsg(cpu), messages, brokerUserUsPerMsg: usPerMsg(split.userS - split0.userS), brokerSysUsPerMsg: usPerMsg(split.sysS - split0.sysS), threadsUsPerMsg };
}

async function oneSide(o: Opts, root: string, label: string, round: number): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(o.dir, 'tsmq-pull-ab-'));
  const nsPort = await freePort();
  const brokerPort = await freePort();
  const broker = BenchChild.start(root, join(root, 'src/cli/main.ts'), ['start', '-n', String(nsPort), '-p', String(brokerPort), '--store', join(dir, 'store'), '-o', 'grpcListenPort=-1', '-o', 'metricsPromExporterPort=0', '-o', 'consolePort=-1'], {
    label: `tsmq ${label}`,
    // PULL_AB_NODE_ARGS: extra node flags for both brokers (space-separated, e.g. --single-threaded-gc)
    nodeArgs: [...(process.env.PULL_AB_NODE_ARGS ?? '').split(' ').filter(Boolean), ...(o.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(o.profileDir, `${label}-${round}`)}`] : [])],
  });
  const client = { c: null as RawRemotingClient | null };
  try {
    await broker.waitFor(/tsmq started/, 60_000);
    client.c = await RawRemotingClient.connect(`127.0.0.1:${brokerPort}`);
    const c = client.c;
    const bodies = Array.from({ length: 64 }, () => randomBytes(o.size));
    let uniq = 0;
    const nextUniq = (): string => (0x20000000 + uniq++).toString(16).toUpperCase().padStart(32, '0');
    // single sends, round robin over the queues
    const sendCpu0 = cpuSecondsOf(broker.pid);
    const sendT0 = nowMs();
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let i = next++; i < o.messages; i = next++) {
          const r = await c.invoke(310, sendExt('AbSingle', i % QUEUES, `UNIQ_KEY\u0001${nextUniq()}\u0002WAIT\u0001true\u0002TAGS\u0001TagA\u0002`), bodies[i % bodies.length]);
          if (r.code !== 0) throw new Error(`send code ${r.code}: ${r.remark}`);
        }
      }),
    );
    // batches of 32 per queue
    const batchBody = (): Buffer => encodeBatchBody(Array.from({ length: BATCH }, (_, k) => ({ flag: 0, body: bodies[k % bodies.length]!, properties: new Map([['UNIQ_KEY', nextUniq()], ['TAGS', 'TagA']]) })));
    const sendSingle = phaseOf(o.messages, sendT0, sendCpu0, broker.pid);
    const batches = Math.ceil(o.messages / BATCH);
    const batchCpu0 = cpuSecondsOf(broker.pid);
    const batchT0 = nowMs();
    for (let i = 0; i < batches; i += 16) {
      await Promise.all(
        Array.from({ length: Math.min(16, batches - i) }, async (_, k) => {
          const r = await c.invoke(320, sendExt('AbBatch', (i + k) % QUEUES, 'WAIT\u0001true\u0002', true), batchBody());
          if (r.code !== 0) throw new Error(`batch code ${r.code}: ${r.remark}`);
        }),
      );
    }
    const sendBatch = phaseOf(batches * BATCH, batchT0, batchCpu0, broker.pid);
    await new Promise((r) => setTimeout(r, 1000)); // dispatch and flush settle
    const single = await pullAll(c, broker.pid, 'AbSingle', 'GID_AB_SINGLE');
    const batch = await pullAll(c, broker.pid, 'AbBatch', 'GID_AB_BATCH');
    return { label, root, round, single, batch, sendSingle, sendBatch };
  } finally {
    client.c?.close();
    if (o.profileDir) await broker.stop();
    else await broker.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

const r2 = (x: number): number => Math.round(x * 100) / 100;

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const all: Array<Record<string, unknown>> = [];
  for (let round = 1; round <= o.rounds; round++) {
    for (const [root, label] of [[o.a, o.labelA], [o.b, o.labelB]] as const) {
      const r = await oneSide(o, root, label, round);
      console.log(`AB ${JSON.stringify(r)}`);
      all.push(r);
    }
  }
  console.log('\n| side | phase | msgs/s (median) | broker CPU µs/msg (median) | user / sys µs/msg (median) | runs |');
  console.log('|---|---|---|---|---|---|');
  for (const label of [o.labelA, o.labelB]) {
    for (const phase of ['sendSingle', 'sendBatch', 'single', 'batch'] as const) {
      const rs = all.filter((r) => r.label === label).map((r) => r[phase] as PhaseResult);
      console.log(`| ${label} | ${phase} | ${median(rs.map((r) => r.msgsPerSec))} | ${median(rs.map((r) => r.brokerCpuUsPerMsg))} | ${r2(median(rs.map((r) => r.brokerUserUsPerMsg ?? NaN)))} / ${r2(median(rs.map((r) => r.brokerSysUsPerMsg ?? NaN)))} | ${rs.map((r) => `${r.msgsPerSec}/${r.brokerCpuUsPerMsg}`).join(', ')} |`);
    }
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
