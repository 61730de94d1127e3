/**
 * Child process of the timer benchmark (bench/timer/timer.ts). One JSON argument:
 *
 *   { "role": "burst", "root", "count", "bodyBytes", "precisionMs" }
 *     an in-process broker (real store, durable timer wheel); `count` timers due at the same
 *     instant D (a whole second) are put through the broker put path (timer hook), 64 in flight;
 *     once all are in the wheel it waits for D and for every delivery, then prints
 *     `RESULT {json}` with the lateness (store time of the delivered message − D; tsmq dispatches
 *     within the put, so store time = consumable) quantiles and the due-delivery throughput, the
 *     memory just before D (prepared deliveries), and the store's ceiling (appendCeiling).
 *     D is 30 s (`leadMs`) after the expected end of the puts; `brokerExtra` is extra broker config.
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
 *   { "role": "ceiling", "root", "count", "bodyBytes", "brokerExtra"? }
 *     Only the store ceiling (below) in a fresh broker: the due-time append path in seconds.
 */
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { PerformanceObserver } from 'node:perf_hooks';
import { join } from 'node:path';
import { BrokerController } from '../../src/broker/broker-controller.js';
import { silentLogger } from '../../src/common/logging/logger.js';
import type { MessageInner } from '../../src/common/message/message.js';
import type { PreparedMessage } from '../../src/store/message-store.js';
import { readStoreTimestamp } from '../../src/common/message/record-codec.js';

type Args =
  | { role: 'burst'; root: string; count: number; bodyBytes: number; precisionMs: number; brokerExtra?: Record<string, string>; leadMs?: number; profileDueWindow?: string; allocDueWindow?: boolean }
  | { role: 'pending'; root: string; count: number; bodyBytes: number; spreadMs: number }
  | { role: 'recover'; root: string }
  | { role: 'ceiling'; root: string; count: number; bodyBytes: number; brokerExtra?: Record<string, string> };

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

/**
 * CPU time (user + system, ms) of the main (event-loop) thread alone, from /proc (Linux; null
 * elsewhere): process.cpuUsage also counts the libuv pool's threads, which run on the other core.
 */
function mainThreadCpuMs(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields 14 and 15 of stat (utime, stime) are at 11 and 12 after the command name
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

/** The main thread's CPU profile (node:inspector) from now to `stop()` (`profileDueWindow`: the due window only). */
async function startProfiler(): Promise<{ stop: () => Promise<unknown> }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object): Promise<unknown> =>
    new Promise((resolve, reject) => session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 500 });
  await post('Profiler.start');
  return {
    stop: async () => {
      const r = (await post('Profiler.stop')) as { profile: unknown };
      session.disconnect();
      return r.profile;
    },
  };
}

/**
 * Bytes allocated on the JS heap from now to `stop()` (node:inspector sampling heap profiler,
 * counting objects already collected too: every allocation, sampled every 16 KiB on average),
 * total and the top allocating functions.
 */
async function startAllocationSampling(): Promise<{ stop: () => Promise<{ sampledBytes: number; top: { fn: string; bytes: number }[] }> }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object): Promise<unknown> =>
    new Promise((resolve, reject) => session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))));
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  return {
    stop: async () => {
      const r = (await post('HeapProfiler.stopSampling')) as { profile: { head: SamplingNode } };
      session.disconnect();
      const byFn = new Map<string, number>();
      let total = 0;
      const walk = (n: SamplingNode): void => {
        const bytes = n.selfSize;
        if (bytes > 0) {
          total += bytes;
          const cf = n.callFrame;
          const key = `${cf.functionName || '(anon)'} ${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber + 1}`;
          byFn.set(key, (byFn.get(key) ?? 0) + bytes);
        }
        for (const c of n.children) walk(c);
      };
      walk(r.profile.head);
      const top = [...byFn].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([fn, bytes]) => ({ fn, bytes }));
      return { sampledBytes: total, top };
    },
  };
}
interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/** Garbage collections (count, ms) while observed. */
function observeGc(): { stop: () => { count: number; ms: number; byKind: Record<string, { count: number; ms: number }> } } {
  let count = 0;
  let ms = 0;
  // perf_hooks NODE_PERFORMANCE_GC_* kinds
  const kinds: Record<number, string> = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weakcb' };
  const byKind: Record<string, { count: number; ms: number }> = {};
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      count++;
      ms += e.duration;
      const kind = kinds[(e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0] ?? 'other';
      const k = (byKind[kind] ??= { count: 0, ms: 0 });
      k.count++;
      k.ms += e.duration;
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  return {
    stop: () => {
      obs.disconnect();
      for (const k of Object.values(byKind)) k.ms = Math.round(k.ms);
      return { count, ms: Math.round(ms), byKind };
    },
  };
}

/**
 * When the burst became consumable, sampled every 5 ms on the event loop (so between the broker's
 * own tasks, when a consumer's pull would be served too): ms after `dueMs` at which the sum of the
 * topic's queue max offsets first reached 50 %, 99 % and 100 % of `count`. Independent of the
 * store time written into the records.
 */
function observeConsumable(delivered: () => number, count: number, dueMs: number): { stop: () => { p50Ms: number | null; p99Ms: number | null; allMs: number | null; samples: number } } {
  const marks = [0.5, 0.99, 1];
  const at: (number | null)[] = [null, null, null];
  let samples = 0;
  const t = setInterval(() => {
    samples++;
    const n = delivered();
    const now = Date.now();
    for (let k = 0; k < marks.length; k++) if (at[k] === null && n >= Math.ceil(marks[k]! * count)) at[k] = now - dueMs;
  }, 5);
  return {
    stop: () => {
      clearInterval(t);
      return { p50Ms: at[0]!, p99Ms: at[1]!, allMs: at[2]!, samples };
    },
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
  // due 30 s after the expected end of the puts: timers of a burst are put well ahead (the
  // prefetch, timerPrefetchWindowMs = 30 s by default, prepares them meanwhile)
  const dueMs = Math.ceil((Date.now() + a.count / perMs + (a.leadMs ?? 30_000)) / 1000) * 1000;
  const putMs = await putAll(broker, a.count, (i) => message(body, [['TIMER_DELIVER_MS', String(dueMs)]], probe + i));
  const timer = broker.timerMessageService!;
  const maxQ = () => broker.ctx.store.getMaxOffsetInQueue('rmq_sys_wheel_timer', 0);
  await waitUntil(() => timer.stats.commitQueueOffset >= maxQ(), 600_000, 'enqueue');
  const enqueuedAt = Date.now();
  if (enqueuedAt >= dueMs) throw new Error(`puts and enqueue ended ${enqueuedAt - dueMs} ms after the due time; lower the count`);
  // memory just before due: what the prepared deliveries hold (prefetch estimate vs process)
  const gcNow = (globalThis as { gc?: () => void }).gc;
  // (taken ≥ 2 s before due, so the forced GC does not delay the deliveries)
  const pf = () => timer.prefetchStats;
  while (pf() && Date.now() < dueMs - 3000 && pf()!.prepared + pf()!.overBudget < a.count) await new Promise((r) => setTimeout(r, 50));
  if (dueMs - Date.now() > 2000) gcNow?.();
  const mem = process.memoryUsage();
  const preparedAtMsBeforeDue = dueMs - Date.now();
  // the due window's CPU is counted from 1 s before due whenever the prefetch finished (from the
  // prefetch's end it also counted the idle broker's seconds before due: 14 s in one run, 65 s in
  // another, ~18 ms of CPU each)
  if (dueMs - 1000 > Date.now()) await new Promise((r) => setTimeout(r, dueMs - 1000 - Date.now()));
  const cpuBeforeDue = process.cpuUsage();
  const mainBeforeDue = mainThreadCpuMs();
  const profiler = a.profileDueWindow ? await startProfiler() : null;
  const alloc = a.allocDueWindow ? await startAllocationSampling() : null;
  const gc = observeGc();
  const beforeDue = { atMsBeforeDue: preparedAtMsBeforeDue, cpuFromMsBeforeDue: dueMs - Date.now(), rssBytes: mem.rss, heapUsedBytes: mem.heapUsed, arrayBuffersBytes: mem.arrayBuffers, prefetch: timer.prefetchStats ?? null };
  const delivered = () => {
    let n = 0;
    for (let q = 0; q < QUEUES; q++) n += broker.ctx.store.getMaxOffsetInQueue(TOPIC, q);
    return n;
  };
  const consumableObs = observeConsumable(delivered, a.count, dueMs);
  await waitUntil(() => delivered() >= a.count, 600_000, 'delivery');
  const consumable = consumableObs.stop();
  // CPU time of this process from just before due to the last delivery (user + system, ms):
  // less sensitive than wall time to the other work on the shared cores
  const cpu = process.cpuUsage(cpuBeforeDue);
  const deliveryCpuMs = Math.round((cpu.user + cpu.system) / 1000);
  const deliveryMainThreadCpuMs = mainBeforeDue === null ? null : mainThreadCpuMs()! - mainBeforeDue;
  const gcDueWindow = gc.stop();
  const allocation = alloc ? await alloc.stop() : null;
  if (profiler) writeFileSync(a.profileDueWindow!, JSON.stringify(await profiler.stop()));
  // the index entries of the burst (deferred past the ConsumeQueue entries): when they are all written
  const deferred = (): number => (broker.ctx.store as unknown as { getDispatchStats(): { deferredRecords?: number } }).getDispatchStats().deferredRecords ?? 0;
  const deferredAtEnd = deferred();
  const mainAtEnd = mainThreadCpuMs();
  const indexDone0 = Date.now();
  await waitUntil(() => deferred() === 0, 600_000, 'deferred index');
  const deferredIndex = { recordsAtLastDelivery: deferredAtEnd, doneMsAfterLastDelivery: Date.now() - indexDone0, mainThreadCpuMs: mainAtEnd === null ? null : mainThreadCpuMs()! - mainAtEnd };
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
  const store = broker.ctx.store;
  const q = (p: number) => sorted[Math.min(k - 1, Math.floor(p * k))]!;
  const result = {
    count: k,
    putMs,
    putPerSec: Math.round((a.count / putMs) * 1000),
    slackBeforeDueMs: dueMs - enqueuedAt,
    latenessP50Ms: q(0.5),
    latenessP99Ms: q(0.99),
    latenessMaxMs: sorted[k - 1]!,
    consumable,
    earliestMs: sorted[0]!,
    deliverySpanMs: last - first,
    deliveredPerSec: Math.round((k / Math.max(1, last - Math.max(first, dueMs))) * 1000),
    deliveryCpuMs,
    deliveryCpuSystemMs: Math.round(cpu.system / 1000),
    deliveryMainThreadCpuMs,
    gcDueWindow,
    allocation: allocation ? { ...allocation, bytesPerDelivery: Math.round(allocation.sampledBytes / a.count) } : null,
    deferredIndex,
    rssBytes: process.memoryUsage().rss,
    stats: timer.stats,
    prefetch: timer.prefetchStats ?? null,
    beforeDue,
    ceiling: store.prepareMessage ? await appendCeiling(broker, a.count, body) : null,
  };
  await broker.shutdown();
  console.log(`RESULT ${JSON.stringify(result)}`);
}

/**
 * The store's own ceiling for the due deliveries, in the same broker right after them: `count`
 * records like the delivered ones (same body, the properties a delivery carries, 8 queues)
 * prepared ahead (carved back to back out of 4 MiB blocks, as the timer prefetch does), then
 * appended through MessageStore.putPreparedMessages in the blocks the timer service uses (4 MiB) — the due-time part of the prepared path with nothing before it.
 */
async function appendCeiling(broker: BrokerController, count: number, body: Buffer): Promise<{ count: number; ms: number; perSec: number; bytes: number; cpuMs: number }> {
  const store = broker.ctx.store;
  const now = String(Date.now());
  const records: PreparedMessage[] = [];
  // records carved back to back out of 4 MiB blocks, as the timer prefetch carves them
  let block = Buffer.allocUnsafeSlow(0);
  let used = 0;
  const carve = (n: number): Buffer => {
    if (used + n > block.length) {
      block = Buffer.allocUnsafeSlow(4 * 1024 * 1024);
      used = 0;
    }
    return block.subarray(used, (used += n));
  };
  for (let i = 0; i < count; i++) {
    const m = message(body, [['TIMER_DELIVER_MS', now], ['REAL_TOPIC', 'CEILING_BENCH'], ['REAL_QID', String(i % QUEUES)], ['TIMER_OUT_MS', now], ['TIMER_ENQUEUE_MS', now], ['TIMER_DEQUEUE_MS', now]], i);
    const p = store.prepareMessage!({ ...m, topic: 'CEILING_BENCH' }, carve);
    if (!('record' in p)) throw new Error(`prepare failed: ${p.remark}`);
    records.push(p);
  }
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let bytes = 0;
  for (let i = 0; i < records.length; ) {
    let j = i;
    let blockBytes = 0;
    while (j < records.length && j - i < 4096 && blockBytes < 4 * 1024 * 1024) blockBytes += records[j++]!.record.length;
    const r = await store.putPreparedMessages!(records.slice(i, j));
    if (r.appended !== j - i) throw new Error(`ceiling append: ${r.status} ${r.remark ?? ''}`);
    bytes += blockBytes;
    i = j;
    await new Promise((res) => setImmediate(res));
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { count, ms: Math.round(ms), perSec: Math.round((count / ms) * 1000), bytes, cpuMs: Math.round((cpu.user + cpu.system) / 1000) };
}

/** The store ceiling alone (appendCeiling in a fresh broker): the due-time append path without the minutes of a burst. */
async function ceilingOnly(a: Extract<Args, { role: 'ceiling' }>): Promise<void> {
  const broker = await BrokerController.create({ brokerConfig: brokerConfig(a.root, a.brokerExtra), logger: silentLogger });
  await broker.start();
  const ceiling = await appendCeiling(broker, a.count, Buffer.alloc(a.bodyBytes, 'x'));
  await broker.shutdown();
  console.log(`RESULT ${JSON.stringify({ ceiling })}`);
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
const main = args.role === 'burst' ? burst(args) : args.role === 'pending' ? pending(args) : args.role === 'ceiling' ? ceilingOnly(args) : recover(args);
main.catch((e: Error) => {
  console.log(`ERROR ${JSON.stringify({ message: e.message, stack: e.stack })}`);
  process.exit(1);
});
