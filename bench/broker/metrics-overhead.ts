/**
 * Cost of the metrics instrumentation on the broker hot path, in one run: the broker-e2e lean
 * load (SEND_MESSAGE_V2 frames, `window` in flight over `connections` sockets, 1 KiB bodies,
 * 4 topics × 4 queues) against `tsmq start` with metricsExporterType=DISABLE ("before") and with
 * metricsExporterType=PROM plus a Prometheus scrape every 5 s ("after"). Each variant runs in a
 * fresh broker child with its own store; the pair is run twice in the order off, on, on, off so
 * page-cache and disk drift hits both alike. Reported: msgs/s of each and the ratio after/before
 * (target >= 0.95, "a few percent"), with broker CPU µs per message.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { BenchChild } from '../lib/child.js';
import { cpuSecondsOf, freePort } from '../lib/os.js';
import { RawRemotingClient } from '../lib/remoting-client.js';
import { perSec, round3 } from '../lib/stats.js';
import type { BenchContext, BenchOutput, Metric } from '../lib/types.js';
import { runWindowed } from '../lib/window-load.js';
import { e2eLoadShape } from '../peer/redis-streams.js';

const TOPICS = ['BenchTopic0', 'BenchTopic1', 'BenchTopic2', 'BenchTopic3'];

interface Round {
  metrics: boolean;
  messages: number;
  elapsedMs: number;
  brokerCpuS: number;
  scrapes: number;
}

function sendExt(topic: string, queueId: number, uniq: string): Record<string, string | number | boolean> {
  return { a: 'PID_BENCH', b: topic, c: 'TBW102', d: 4, e: queueId, f: 0, g: Date.now(), h: 0, i: `UNIQ_KEY\u0001${uniq}\u0002WAIT\u0001true\u0002TAGS\u0001TagA\u0002`, j: 0, k: false };
}

async function oneRound(ctx: BenchContext, metrics: boolean, index: number): Promise<Round> {
  const shape = e2eLoadShape(ctx);
  const namesrvPort = await freePort();
  const brokerPort = await freePort();
  const args = ['start', '-n', String(namesrvPort), '-p', String(brokerPort), '--store', join(ctx.workDir, `store-${index}`), '-o', 'grpcListenPort=-1', '-o', 'consolePort=-1', '-o', `metricsExporterType=${metrics ? 'PROM' : 'DISABLE'}`, '-o', 'metricsPromExporterPort=0'];
  const broker = BenchChild.start(ctx.repoRoot, join(ctx.repoRoot, 'src/cli/main.ts'), args, { label: `tsmq start (metrics ${metrics ? 'on' : 'off'})` });
  const clients: RawRemotingClient[] = [];
  let scrapeTimer: NodeJS.Timeout | null = null;
  let scrapes = 0;
  try {
    await broker.waitFor(/tsmq started/, 60_000);
    const url = /metrics (http:\/\/\S+\/metrics)/.exec(broker.stdout)?.[1] ?? null;
    if (metrics && !url) throw new Error('metrics endpoint not announced');
    for (let i = 0; i < shape.connections; i++) clients.push(await RawRemotingClient.connect(`127.0.0.1:${brokerPort}`));
    const bodies = Array.from({ length: 256 }, () => randomBytes(1024));
    let uniq = 0;
    const sendOne = async (i: number): Promise<number> => {
      const lane = i % 16;
      const r = await clients[i % clients.length]!.invoke(310, sendExt(TOPICS[lane >> 2]!, lane & 3, (0x10000000 + uniq++).toString(16).toUpperCase().padStart(32, '0')), bodies[i % bodies.length]);
      if (r.code !== 0) throw new Error(`send code ${r.code}: ${r.remark}`);
      return 1;
    };
    await runWindowed(shape.window, 2000, sendOne); // warm-up: creates the topics
    if (url) {
      scrapeTimer = setInterval(() => {
        void fetch(url).then((r) => r.text()).then(() => scrapes++, () => undefined);
      }, 5000);
    }
    const cpu0 = cpuSecondsOf(broker.pid);
    const r = await runWindowed(shape.window, shape.seconds * 1000, sendOne);
    return { metrics, messages: r.messages, elapsedMs: r.elapsedMs, brokerCpuS: cpuSecondsOf(broker.pid) - cpu0, scrapes };
  } finally {
    if (scrapeTimer) clearInterval(scrapeTimer);
    for (const c of clients) c.close();
    await broker.stop(20_000);
  }
}

export async function run(ctx: BenchContext): Promise<BenchOutput> {
  const rounds: Round[] = [];
  const order = [false, true, true, false];
  for (const [i, m] of order.entries()) {
    ctx.log(`round ${i + 1}/4: metrics ${m ? 'on (PROM, scraped every 5 s)' : 'off'}`);
    rounds.push(await oneRound(ctx, m, i));
  }
  const sum = (on: boolean): { perSec: number; cpuUsPerMsg: number } => {
    const rs = rounds.filter((r) => r.metrics === on);
    const messages = rs.reduce((s, r) => s + r.messages, 0);
    const ms = rs.reduce((s, r) => s + r.elapsedMs, 0);
    const cpu = rs.reduce((s, r) => s + r.brokerCpuS, 0);
    return { perSec: perSec(messages, ms), cpuUsPerMsg: messages > 0 ? (cpu / messages) * 1e6 : 0 };
  };
  const off = sum(false);
  const on = sum(true);
  const metrics: Metric[] = [
    {
      name: 'SEND_MESSAGE_V2 with metrics on (PROM, scraped every 5 s)',
      value: on.perSec,
      unit: 'msgs/s',
      reference: { key: 'broker-e2e-metrics.offPerSec', label: 'same load, metricsExporterType=DISABLE', value: off.perSec, unit: 'msgs/s' },
      target: { op: '>=', limit: 0.95, on: 'ratio' },
      note: `broker CPU ${round3(on.cpuUsPerMsg)} µs/msg on vs ${round3(off.cpuUsPerMsg)} µs/msg off`,
    },
  ];
  return {
    metrics,
    notes: [
      `Rounds (order off, on, on, off; each a fresh tsmq start and store): ${rounds.map((r) => `${r.metrics ? 'on' : 'off'} ${Math.round(perSec(r.messages, r.elapsedMs))} msgs/s${r.metrics ? ` (${r.scrapes} scrapes)` : ''}`).join(', ')}.`,
    ],
    figures: { offPerSec: off.perSec, onPerSec: on.perSec, ratio: off.perSec > 0 ? on.perSec / off.perSec : 0 },
    details: rounds,
  };
}
