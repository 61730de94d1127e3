/**
 * Child process of the timer benchmark (bench/timer/timer.ts). One JSON argument:
 *
 *   { "role": "burst", "root", "count", "bodyBytes", "precisionMs" }
 *     an in-process broker (real store, durable timer wheel); `count` timers due at the same
 *     instant D (a whole second) are put through the broker put path (timer hook), 64 in flight;
 *     once all are in the wheel it waits for D and for every delivery, then prints
 *     `RESULT {json}` with the lateness (store time of the delivered message − D; tsmq dispatches
 *     within the put, so store time = consumable) quantiles and the due-delivery throughput.
 *
 *   { "role": "pending", "root", "count", "bodyBytes", "spreadMs" }
 *     puts `count` timers due uniformly over [now + 10 min, now + 10 min + spreadMs], waits until
 *     the wheel holds them all and a checkpoint passed, prints `READY {json}` (RSS after a GC,
 *     timerlog bytes), then puts 20,000 more (the unchecked tail) and prints `TAIL {}`; it is
 *     then SIGKILLed by the parent.
 *
 *   { "role": "recover", "root" }
 *     times BrokerController.create (store + timer store recovery) and the timer service start
 *     (queue offset recovery), counts the timers pending in the wheel, prints `RESULT {json}`.
 */
import { statSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { BrokerController } from '../../src/broker/broker-controller.js';
import { silentLogger } from '../../src/common/logging/logger.js';
import type { MessageInner } from '../../src/common/message/message.js';
import { readStoreTimestamp } from '../../src/common/message/record-codec.js';

type Args =
  | { role: 'burst'; root: string; count: number; bodyBytes: number; precisionMs: number; brokerExtra?: Record<string, string> }
  | { role: 'pending'; root: string; count: number; bodyBytes: number; spreadMs: number }
  | { role: 'recover'; root: string };

const TOPIC = 'TIMER_BENCH';
const QUEUES = 8;
const host = { ip: Buffer.from([127, 0, 0, 1]), port: 10911 };

function brokerConfig(root: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    storePathRootDir: root,
    listenPort: '0',
    namesrvAddr: '',
    mappedFileSizeCommitLog: String(1024 * 1024 * 1024),
    autoCreateTopicEnable: 'true',
    ...extra,
  };
}

function message(body: Buffer, props: [string, string][], i: number): MessageInner {
  return {
    topic: TOPIC,
    queueId: i % QUEUES,
    flag: 0,
    body,
    properties: new Map([['UNIQ_KEY', `BENCH${i}`], ...props]),
    sysFlag: 0,
    bornTimestamp: Date.now(),
    bornHost: host,
    storeHost: host,
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
  };
}

async function putAll(broker: BrokerController, count: number, make: (i: number) => MessageInner): Promise<number> {
  const started = Date.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const r = await broker.ctx.putMessage(make(i));
      if (!r.appendResult) throw new Error(`put ${i} failed: ${r.status} ${r.remark ?? ''}`);
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
  return Date.now() - started;
}

async function waitUntil(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function dirBytes(dir: string): number {
  try {
    return readdirSync(dir).reduce((a, f) => a + statSync(join(dir, f)).size, 0);
  } catch {
    return 0;
  }
}

function rssAfterGc(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().rss;
}

async function burst(a: Extract<Args, { role: 'burst' }>): Promise<void> {
  const broker = await BrokerController.create({ brokerConfig: brokerConfig(a.root, { timerPrecisionMs: String(a.precisionMs), ...a.brokerExtra }), logger: silentLogger });
  await broker.start();
  broker.ctx.topicConfigManager.createTopicInSendMessageBackMethod(TOPIC, QUEUES, 6, 0);
  const body = Buffer.alloc(a.bodyBytes, 'x');
  // Due time: a whole second comfortably after the puts (measured on a first 20,000).
  const probe = Math.min(20_000, a.count);
  const estimateStart = Date.now();
  const dueGuess = Math.ceil((Date.now() + 600_000) / 1000) * 1000;
  await putAll(broker, probe, (i) => message(body, [['TIMER_DELIVER_MS', String(dueGuess)]], i)); // far timers, excluded below
  const perMs = probe / Math.max(1, Date.now() - estimateStart);
  const dueMs = Math.ceil((Date.now() + a.count / perMs + 8000) / 1000) * 1000;
  const putMs = await putAll(broker, a.count, (i) => message(body, [['TIMER_DELIVER_MS', String(dueMs)]], probe + i));
  const timer = broker.timerMessageService!;
  const maxQ = () => broker.ctx.store.getMaxOffsetInQueue('rmq_sys_wheel_timer', 0);
  await waitUntil(() => timer.stats.commitQueueOffset >= maxQ(), 600_000, 'enqueue');
  const enqueuedAt = Date.now();
  if (enqueuedAt >= dueMs) throw new Error(`puts and enqueue ended ${enqueuedAt - dueMs} ms after the due time; lower the count`);
  const delivered = () => {
    let n = 0;
    for (let q = 0; q < QUEUES; q++) n += broker.ctx.store.getMaxOffsetInQueue(TOPIC, q);
    return n;
  };
  await waitUntil(() => delivered() >= a.count, 600_000, 'delivery');
  const lateness = new Float64Array(a.count);
  let k = 0;
  let first = Infinity;
  let last = 0;
  for (let q = 0; q < QUEUES; q++) {
    let offset = 0;
    const max = broker.ctx.store.getMaxOffsetInQueue(TOPIC, q);
    while (offset < max) {
      const got = await broker.ctx.store.getMessage('BENCH', TOPIC, q, offset, 1000, null);
      for (const rec of got.messages) {
        const t = readStoreTimestamp(rec, 0);
        lateness[k++] = t - dueMs;
        first = Math.min(first, t);
        last = Math.max(last, t);
      }
      if (got.nextBeginOffset <= offset) break;
      offset = got.nextBeginOffset;
    }
  }
  const sorted = lateness.subarray(0, k).sort();
  const q = (p: number) => sorted[Math.min(k - 1, Math.floor(p * k))]!;
  const result = {
    count: k,
    putMs,
    putPerSec: Math.round((a.count / putMs) * 1000),
    slackBeforeDueMs: dueMs - enqueuedAt,
    latenessP50Ms: q(0.5),
    latenessP99Ms: q(0.99),
    latenessMaxMs: sorted[k - 1]!,
    earliestMs: sorted[0]!,
    deliverySpanMs: last - first,
    deliveredPerSec: Math.round((k / Math.max(1, last - Math.max(first, dueMs))) * 1000),
    rssBytes: process.memoryUsage().rss,
    stats: timer.stats,
    prefetch: timer.prefetchStats,
  };
  await broker.shutdown();
  console.log(`RESULT ${JSON.stringify(result)}`);
}

async function pending(a: Extract<Args, { role: 'pending' }>): Promise<void> {
  const broker = await BrokerController.create({ brokerConfig: brokerConfig(a.root, { timerFlushIntervalMs: '600000' }), logger: silentLogger }); // checkpoints only when asked: the tail stays unchecked
  await broker.start();
  broker.ctx.topicConfigManager.createTopicInSendMessageBackMethod(TOPIC, QUEUES, 6, 0);
  const body = Buffer.alloc(a.bodyBytes, 'p');
  const base = Date.now() + 600_000;
  const putMs = await putAll(broker, a.count, (i) => message(body, [['TIMER_DELIVER_MS', String(base + Math.floor((i * 7919) % a.spreadMs))]], i));
  const timer = broker.timerMessageService!;
  await waitUntil(() => timer.stats.commitQueueOffset >= broker.ctx.store.getMaxOffsetInQueue('rmq_sys_wheel_timer', 0), 1_800_000, 'enqueue');
  await timer.checkpoint();
  const rss = rssAfterGc();
  console.log(`READY ${JSON.stringify({ putMs, rssBytes: rss, heapUsedBytes: process.memoryUsage().heapUsed, timerLogBytes: dirBytes(join(a.root, 'timerlog')), pendingInWheel: timer.pendingCount() })}`);
  await putAll(broker, 20_000, (i) => message(body, [['TIMER_DELIVER_MS', String(base + Math.floor((i * 104729) % a.spreadMs))]], a.count + i));
  await waitUntil(() => timer.stats.commitQueueOffset >= broker.ctx.store.getMaxOffsetInQueue('rmq_sys_wheel_timer', 0), 600_000, 'tail enqueue');
  console.log('TAIL {}');
  await new Promise(() => undefined); // SIGKILLed by the parent
}

async function recover(a: Extract<Args, { role: 'recover' }>): Promise<void> {
  const t0 = performance.now();
  const broker = await BrokerController.create({ brokerConfig: brokerConfig(a.root), logger: silentLogger });
  const createMs = performance.now() - t0;
  const t1 = performance.now();
  await broker.start();
  const startMs = performance.now() - t1;
  const timer = broker.timerMessageService!;
  const pendingInWheel = timer.pendingCount();
  const rss = rssAfterGc();
  await broker.shutdown();
  const timerRecoveryMs = timer.stats.timerStoreOpenMs + timer.stats.positionRecoveryMs;
  const report = (broker as unknown as { timerStore: { recovery: object } }).timerStore.recovery;
  console.log(`RESULT ${JSON.stringify({ createMs, startMs, timerRecoveryMs, pendingInWheel, rssBytes: rss, stats: timer.stats, report: { ...report, lastUnit: undefined } })}`);
}

const args = JSON.parse(process.argv[2]!) as Args;
const main = args.role === 'burst' ? burst(args) : args.role === 'pending' ? pending(args) : recover(args);
main.catch((e: Error) => {
  console.log(`ERROR ${JSON.stringify({ message: e.message, stack: e.stack })}`);
  process.exit(1);
});
