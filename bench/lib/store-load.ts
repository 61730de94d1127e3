/**
 * Load for the embedded store: a rotating pool of 1 KiB messages over 4 topics × 4 queues
 * (properties as ali-ons sends them: TAGS, UNIQ_KEY, WAIT), and windowed puts that keep a fixed
 * number of putMessage calls in flight, as a broker serving many producers would.
 */
import { randomBytes } from 'node:crypto';
import { silentLogger } from '../../src/common/logging/logger.js';
import type { MessageInner } from '../../src/common/message/message.js';
import { ipv4Address } from '../../src/common/message/msgid.js';
import { DefaultMessageStore } from '../../src/store/default-message-store.js';
import type { PutMessageResult } from '../../src/store/message-store.js';
import type { StoreConfig } from '../../src/store/store-config.js';
import { LatencyRecorder, nowMs } from './stats.js';

export interface LoadShape {
  topics: number;
  queuesPerTopic: number;
  bodyBytes: number;
}

export const DEFAULT_SHAPE: LoadShape = { topics: 4, queuesPerTopic: 4, bodyBytes: 1024 };

export function topicName(t: number): string {
  return `BenchTopic${t}`;
}

/**
 * `size` distinct messages cycling over topics and queues. The store does not mutate what it is
 * given, so the pool is reused round-robin; bodies are random (incompressible) and distinct.
 */
export function messagePool(shape: LoadShape = DEFAULT_SHAPE, size = 4096): MessageInner[] {
  const bornHost = ipv4Address(127, 0, 0, 1, 50000);
  const storeHost = ipv4Address(127, 0, 0, 1, 10911);
  const out: MessageInner[] = [];
  const lanes = shape.topics * shape.queuesPerTopic;
  for (let i = 0; i < size; i++) {
    const lane = i % lanes;
    const properties = new Map<string, string>([
      ['UNIQ_KEY', randomBytes(16).toString('hex').toUpperCase()],
      ['WAIT', 'true'],
      ['TAGS', 'TagA'],
    ]);
    out.push({
      topic: topicName(Math.floor(lane / shape.queuesPerTopic)),
      queueId: lane % shape.queuesPerTopic,
      flag: 0,
      body: randomBytes(shape.bodyBytes),
      properties,
      sysFlag: 0,
      bornTimestamp: Date.now(),
      bornHost,
      storeHost,
      reconsumeTimes: 0,
      preparedTransactionOffset: 0,
    });
  }
  return out;
}

/** One consumer position per queue of the bench shape: the lanes the pull loads walk round robin. */
export interface PullLane {
  topic: string;
  queueId: number;
  /** Next queue offset to pull. */
  offset: number;
  /** The queue's max offset when the lane was made (exclusive end). */
  max: number;
}

/** A lane per topic × queue of `shape`, each from offset 0 to the queue's current max offset. */
export function pullLanes(store: Pick<DefaultMessageStore, 'getMaxOffsetInQueue'>, shape: LoadShape = DEFAULT_SHAPE): PullLane[] {
  const lanes: PullLane[] = [];
  for (let t = 0; t < shape.topics; t++) {
    const topic = topicName(t);
    for (let q = 0; q < shape.queuesPerTopic; q++) lanes.push({ topic, queueId: q, offset: 0, max: store.getMaxOffsetInQueue(topic, q) });
  }
  return lanes;
}

export async function openBenchStore(root: string, overrides: Partial<StoreConfig> = {}): Promise<DefaultMessageStore> {
  return await DefaultMessageStore.open({ storePathRootDir: root, ...overrides }, { logger: silentLogger });
}

export interface PutRun {
  count: number;
  ok: number;
  notOk: Map<string, number>;
  recordBytes: number;
  bodyBytes: number;
  elapsedMs: number;
}

/**
 * How the windowed load puts: `promise` awaits putMessage's promises a window at a time (what the
 * broker's send processor does per request); `callback` uses putMessageWithCallback (no promise per
 * put) and waits for the window's last answer.
 */
export type PutApi = 'promise' | 'callback';

/**
 * Puts `count` messages from the pool with at most `window` calls in flight and waits for all
 * of them.
 */
export async function putWindowed(
  store: DefaultMessageStore,
  pool: MessageInner[],
  count: number,
  window: number,
  startIndex = 0,
  api: PutApi = 'promise',
): Promise<PutRun> {
  const run: PutRun = { count, ok: 0, notOk: new Map(), recordBytes: 0, bodyBytes: 0, elapsedMs: 0 };
  const account = (r: PutMessageResult, body: number): void => {
    if (r.status === 'PUT_OK') {
      run.ok++;
      run.recordBytes += r.appendResult?.wroteBytes ?? 0;
      run.bodyBytes += body;
    } else run.notOk.set(r.status, (run.notOk.get(r.status) ?? 0) + 1);
  };
  if (api === 'callback') {
    const t0 = nowMs();
    let answered = 0;
    let wake: (() => void) | null = null;
    const done = (r: PutMessageResult, msg: MessageInner): void => {
      account(r, msg.body.length);
      answered++;
      if (wake !== null) wake();
    };
    const windowDone = (target: number): Promise<void> | null =>
      answered >= target
        ? null
        : new Promise<void>((resolve) => {
            wake = () => {
              if (answered < target) return;
              wake = null;
              resolve();
            };
          });
    for (let i = 0; i < count; ) {
      const end = Math.min(count, i + window);
      for (; i < end; i++) store.putMessageWithCallback(pool[(startIndex + i) % pool.length]!, done);
      const w = windowDone(end);
      if (w !== null) await w;
    }
    run.elapsedMs = nowMs() - t0;
    return run;
  }
  const t0 = nowMs();
  let pending: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const msg = pool[(startIndex + i) % pool.length]!;
    pending.push(store.putMessage(msg).then((r) => account(r, msg.body.length)));
    if (pending.length >= window) {
      await Promise.all(pending);
      pending = [];
    }
  }
  await Promise.all(pending);
  run.elapsedMs = nowMs() - t0;
  return run;
}

/**
 * `producers` independent loops, each putting one message and awaiting its result before the
 * next (a synchronous-send producer), for `durationMs`. Latency is per putMessage call.
 */
export async function putClosedLoop(
  store: DefaultMessageStore,
  pool: MessageInner[],
  producers: number,
  durationMs: number,
): Promise<PutRun & { latency: LatencyRecorder }> {
  const latency = new LatencyRecorder(1 << 20);
  const run: PutRun = { count: 0, ok: 0, notOk: new Map(), recordBytes: 0, bodyBytes: 0, elapsedMs: 0 };
  const t0 = nowMs();
  const deadline = t0 + durationMs;
  let next = 0;
  const producer = async (): Promise<void> => {
    while (nowMs() < deadline) {
      const msg = pool[next++ % pool.length]!;
      const s = nowMs();
      const r = await store.putMessage(msg);
      latency.add(nowMs() - s);
      run.count++;
      if (r.status === 'PUT_OK') {
        run.ok++;
        run.recordBytes += r.appendResult?.wroteBytes ?? 0;
        run.bodyBytes += msg.body.length;
      } else run.notOk.set(r.status, (run.notOk.get(r.status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: producers }, producer));
  run.elapsedMs = nowMs() - t0;
  return { ...run, latency };
}

export function describeFailures(notOk: Map<string, number>): string {
  return notOk.size === 0 ? 'all PUT_OK' : [...notOk].map(([k, v]) => `${k}: ${v}`).join(', ');
}

/** Waits until the store has dispatched everything written to the ConsumeQueues. */
export async function waitDispatched(store: DefaultMessageStore, timeoutMs = 120_000): Promise<number> {
  const t0 = nowMs();
  while (store.dispatchBehindBytes() > 0) {
    if (nowMs() - t0 > timeoutMs) throw new Error(`dispatch still ${store.dispatchBehindBytes()} bytes behind after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return nowMs() - t0;
}
