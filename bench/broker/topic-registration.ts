/**
 * Cost of a topic change on the broker and the nameserver (REGISTER_BROKER after
 * UPDATE_AND_CREATE_TOPIC), for one or two tsmq checkouts in one run:
 *
 *   tsx bench/broker/topic-registration.ts [--before <root>] [--after <root>] [--topics 6000]
 *
 * Per checkout: a nameserver and a broker, each in its own process (CPU read from /proc as
 * utime+stime of the process tree, 10 ms ticks); one lean remoting client in this process
 * creates topics one by one with UPDATE_AND_CREATE_TOPIC (4 queues, perm 6) and, at 1,000 and at
 * --topics topics, updates one topic `--updates` times (queue count toggling 4/8), each call
 * awaited: "paced" with --pause-ms (100) between calls, so every change's registration runs on
 * its own (an operator's updateTopic calls), and "tight" back to back (changes arriving during a
 * registration are folded into the next one). wallMsPerUpdate is the call's reply time. CPU per update = CPU of the loop plus a settle (registrations run after the reply)
 * minus the idle CPU over the same time. Also the wall time to create the first 5,000 topics.
 * Prints a JSON summary per checkout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { RawRemotingClient } from '../lib/remoting-client.js';
import { treePids } from '../vs-apache/cpu.js';
import { readFileSync } from 'node:fs';

const arg = (name: string, def?: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
};
const TOTAL = Number(arg('topics', '6000'));
const UPDATES = Number(arg('updates', '200'));
const SETTLE_MS = 1500;
/** Pause between updates in the paced loop: each change's registration runs on its own (an operator's mqadmin calls). */
const PAUSE_MS = Number(arg('pause-ms', '100'));
const roots: Array<[string, string]> = [];
if (arg('before')) roots.push(['before', resolve(arg('before')!)]);
roots.push(['after', resolve(arg('after', process.cwd())!)]);

function ticksOf(root: number): number {
  let t = 0;
  for (const pid of treePids(root)) {
    try {
      const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      t += Number(f[11]) + Number(f[12]);
    } catch { /* gone */ }
  }
  return t;
}
const cpuMs = (p: ChildProcess): number => ticksOf(p.pid!) * 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const procs: ChildProcess[] = [];
function startServer(root: string, args: string[]): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', join(process.cwd(), 'bench/broker/topic-registration-server.ts'), root, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  procs.push(proc);
  return new Promise((res, rej) => {
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /READY (\d+)/.exec(out);
      if (m) res({ proc, port: Number(m[1]) });
    });
    proc.once('exit', (c) => rej(new Error(`${args[0]} exited ${c}`)));
  });
}
function killAll(): void {
  for (const p of procs) if (p.exitCode === null && p.pid) try { process.kill(-p.pid, 'SIGKILL'); } catch { /* gone */ }
}
process.on('exit', killAll);

async function runOne(label: string, root: string): Promise<Record<string, unknown>> {
  const store = mkdtempSync(join(tmpdir(), 'tsmq-topicreg-bench-'));
  try {
    const ns = await startServer(root, ['namesrv']);
    const br = await startServer(root, ['broker', `127.0.0.1:${ns.port}`, store]);
    const client = await RawRemotingClient.connect(`127.0.0.1:${br.port}`);
    await sleep(1000);
    const idle0 = [cpuMs(br.proc), cpuMs(ns.proc)];
    const idleStart = Date.now();
    await sleep(3000);
    const idleRate = [(cpuMs(br.proc) - idle0[0]!) / (Date.now() - idleStart), (cpuMs(ns.proc) - idle0[1]!) / (Date.now() - idleStart)];
    const create = async (topic: string, queues = 4): Promise<void> => {
      const r = await client.invoke(17, { topic, readQueueNums: queues, writeQueueNums: queues, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false });
      if (r.code !== 0) throw new Error(`create ${topic}: ${r.code} ${r.remark ?? ''}`);
    };
    const updateLoop = async (pauseMs: number): Promise<Record<string, number>> => {
      await sleep(SETTLE_MS);
      const c0 = [cpuMs(br.proc), cpuMs(ns.proc)];
      const t0 = Date.now();
      let callMs = 0;
      for (let i = 0; i < UPDATES; i++) {
        const c = Date.now();
        await create('BenchUpdated', i % 2 === 0 ? 8 : 4);
        callMs += Date.now() - c;
        if (pauseMs > 0) await sleep(pauseMs);
      }
      const loopMs = callMs;
      await sleep(SETTLE_MS);
      const spanMs = Date.now() - t0;
      const b = (cpuMs(br.proc) - c0[0]! - idleRate[0]! * spanMs) / UPDATES;
      const n = (cpuMs(ns.proc) - c0[1]! - idleRate[1]! * spanMs) / UPDATES;
      return { brokerCpuMsPerUpdate: +b.toFixed(2), namesrvCpuMsPerUpdate: +n.toFixed(2), wallMsPerUpdate: +(loopMs / UPDATES).toFixed(2) };
    };
    const result: Record<string, unknown> = { label, root };
    let created = 0;
    const createUpTo = async (n: number): Promise<void> => {
      for (; created < n; created++) await create(`BenchTopic${created}`);
    };
    // the first 5,000 topics: wall and CPU of the creation calls (the update loop at 1,000 excluded)
    const create5000 = { wallMs: 0, brokerCpuMs: 0, namesrvCpuMs: 0 };
    const timedCreate = async (n: number): Promise<void> => {
      const c0 = [cpuMs(br.proc), cpuMs(ns.proc)];
      const t0 = Date.now();
      await createUpTo(n);
      create5000.wallMs += Date.now() - t0;
      create5000.brokerCpuMs += cpuMs(br.proc) - c0[0]!;
      create5000.namesrvCpuMs += cpuMs(ns.proc) - c0[1]!;
    };
    await timedCreate(Math.min(1000, TOTAL));
    await create('BenchUpdated');
    console.error(`${label}: ${JSON.stringify(create5000)} for the first 1000`);
    result.at1000 = { paced: await updateLoop(PAUSE_MS), tight: await updateLoop(0) };
    await timedCreate(Math.min(5000, TOTAL));
    result.create5000 = create5000;
    console.error(`${label}: ${JSON.stringify(result)}`);
    await createUpTo(TOTAL);
    result.atTotal = { paced: await updateLoop(PAUSE_MS), tight: await updateLoop(0) };
    // route check: every created topic is served by the nameserver
    const nsClient = await RawRemotingClient.connect(`127.0.0.1:${ns.port}`); // now: an idle connection is closed after 120 s
    let missing = 0;
    for (let i = 0; i < TOTAL; i += Math.max(1, Math.floor(TOTAL / 200))) {
      const r = await nsClient.invoke(105, { topic: `BenchTopic${i}` });
      if (r.code !== 0) missing++;
    }
    result.routesMissingOfSampled = missing;
    console.error(`${label}: ${JSON.stringify(result)}`);
    client.close();
    nsClient.close();
    return result;
  } finally {
    killAll();
    procs.length = 0;
    await sleep(500);
    rmSync(store, { recursive: true, force: true });
  }
}

const out: Record<string, unknown>[] = [];
for (const [label, root] of roots) out.push(await runOne(label, root));
console.log(JSON.stringify(out, null, 2));
