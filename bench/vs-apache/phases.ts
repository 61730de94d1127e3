/**
 * The measured phases of bench/vs-apache against one running system (Apache or tsmq) and its load
 * generator JVMs:
 * - produce (`single`, `batch`, `sync-flush`): every generator's senders run through a warm-up and
 *   then a measured window of `seconds`; msgs/s, latency per send call, CPU of broker and generators
 *   over the window;
 * - consume (`push`, `lite`): a fixed set of messages is preloaded, a warm-up consumes a second topic
 *   over and over with new groups, then each generator consumes the whole set once with a new push
 *   consumer group, then once with a new lite pull consumer group.
 * Warm-up (warmup.ts): at least `minWarmupSeconds`, for a JVM broker until its JIT compiler threads
 * are quiet, and until the throughput is steady (capped at `maxWarmupSeconds`).
 */
import { machineBusySeconds, treeCpuSeconds } from './cpu.js';
import type { GenEvent, Generator } from './generators.js';
import { produceTick, warmUp, type WarmupEnv, type WarmupInfo } from './warmup.js';

export { JIT_QUIET_SHARE, JIT_WINDOW_SECONDS } from './warmup.js';

export interface CpuWindow {
  wallSeconds: number;
  brokerCpuSeconds: number;
  generatorCpuSeconds: number;
  /** CPU-seconds per wall second (1.0 = one core busy) */
  brokerCoresUsed: number;
  generatorCoresUsed: number;
  brokerCores: number;
  generatorCores: number;
  /** cores used by everything else on the machine meanwhile (other engineers' work: noise) */
  otherCoresUsed: number;
  bottleneck: string;
}

export interface PhaseResult {
  phase: string;
  warmup: WarmupInfo;
  msgs: number;
  msgsPerSec: number;
  /** per send call (a batch is one call); null for consume phases */
  latencyMs: { p50: number; p90: number; p99: number; p999: number; max: number } | null;
  calls: number | null;
  notOk: number;
  errors: number;
  cpu: CpuWindow;
  msgsPerBrokerCpuSecond: number;
  complete: boolean;
  raw: GenEvent[];
}

export interface PhaseEnv extends WarmupEnv {
  brokerCores: number;
  generatorCores: number;
  /** machine cores (for the "both together saturate the machine" reading) */
  machineCores: number;
}

/**
 * CPU of broker and generators from now until the returned function is called. Cores used = CPU-s
 * ÷ wall s, or ÷ `busySeconds` when given (consume phases: first delivered message to the last
 * new one — the window also holds the consumers' start and rebalance wait, ~1 s of a 6–9 s window,
 * which made saturated consumers read as "neither").
 */
function cpuStart(env: PhaseEnv): (busySeconds?: number) => CpuWindow {
  const t0 = Date.now();
  const b0 = treeCpuSeconds(env.sys.cpuRoots);
  const g0 = env.gens.cpuSeconds();
  const m0 = machineBusySeconds();
  return (busySeconds?: number) => {
    const wall = (Date.now() - t0) / 1000;
    const b = treeCpuSeconds(env.sys.cpuRoots) - b0;
    const g = env.gens.cpuSeconds() - g0;
    const span = busySeconds !== undefined && busySeconds > 0 ? Math.min(busySeconds, wall) : wall;
    const bc = b / span;
    const gc = g / span;
    const oc = Math.max(0, (machineBusySeconds() - m0 - b - g) / wall);
    // tsmq runs its JavaScript on one thread: one busy core is its ceiling whatever it is given
    const brokerCeiling = env.sys.system === 'tsmq' ? Math.min(1, env.brokerCores) : env.brokerCores;
    let bottleneck = 'neither (latency-bound)';
    if (gc >= 0.9 * env.generatorCores) bottleneck = 'generator';
    else if (bc >= 0.9 * brokerCeiling) bottleneck = 'broker';
    else if (bc + gc + oc >= 0.9 * env.machineCores) bottleneck = oc >= 0.2 * env.machineCores ? 'shared cores (other processes)' : 'shared cores';
    const r2 = (x: number): number => Math.round(x * 100) / 100;
    return { wallSeconds: r2(wall), brokerCpuSeconds: r2(b), generatorCpuSeconds: r2(g), brokerCoresUsed: r2(bc), generatorCoresUsed: r2(gc), brokerCores: env.brokerCores, generatorCores: env.generatorCores, otherCoresUsed: r2(oc), bottleneck };
  };
}

/** Merged percentiles of the generators' [bucketLowUs, count] histograms, in ms. */
export function percentiles(hists: Array<Array<[number, number]>>): { p50: number; p90: number; p99: number; p999: number; max: number; calls: number } {
  const m = new Map<number, number>();
  for (const h of hists) for (const [lo, c] of h) m.set(lo, (m.get(lo) ?? 0) + c);
  const buckets = [...m.entries()].sort((a, b) => a[0] - b[0]);
  const total = buckets.reduce((s, [, c]) => s + c, 0);
  const at = (p: number): number => {
    if (total === 0) return NaN;
    const rank = Math.max(1, Math.ceil(p * total));
    let seen = 0;
    for (const [lo, c] of buckets) {
      seen += c;
      if (seen >= rank) return lo / 1000;
    }
    return buckets[buckets.length - 1]![0] / 1000;
  };
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), p999: at(0.999), max: total ? buckets[buckets.length - 1]![0] / 1000 : NaN, calls: total };
}

export interface ProduceLoad {
  phase: string;
  /** single: DefaultMQProducer.send(Message); batch: send(Collection); raw: SEND_MESSAGE_V2 through the client's remoting layer (LoadGen produce mode=raw) */
  mode: 'single' | 'batch' | 'raw';
  threads: number;
  batch: number;
  size: number;
  queues: number;
  seconds: number;
  topic: string;
}

export async function producePhase(env: PhaseEnv, l: ProduceLoad): Promise<PhaseResult> {
  env.log(`  ${l.phase}: ${env.gens.gens.length} × ${l.threads} threads of ${l.mode === 'batch' ? `send(${l.batch} messages)` : l.mode === 'raw' ? 'raw SEND_MESSAGE_V2 (client remoting layer)' : 'send(message)'} ...`);
  const started = await env.gens.all(() => `produce mode=${l.mode} threads=${l.threads} batch=${l.batch} size=${l.size} queues=${l.queues} topic=${l.topic}`, 'producing', 120_000);
  env.log(`    topic ${l.topic}: ${String(started[0]!.queues)} queues`);
  const warmup = await warmUp(env, produceTick(env.gens, env.steady.intervalSeconds));
  const cpuEnd = cpuStart(env);
  const raw = await env.gens.all(() => `measure seconds=${l.seconds}`, 'produced', (l.seconds + 120) * 1000);
  const cpu = cpuEnd();
  const msgs = raw.reduce((s, e) => s + Number(e.msgs), 0);
  const msgsPerSec = raw.reduce((s, e) => s + Number(e.msgsPerSec), 0);
  const pc = percentiles(raw.map((e) => e.histUs as Array<[number, number]>));
  const { calls, ...latencyMs } = pc;
  const r: PhaseResult = {
    phase: l.phase, warmup,
    msgs, msgsPerSec, latencyMs, calls, notOk: raw.reduce((s, e) => s + Number(e.notOk), 0), errors: raw.reduce((s, e) => s + Number(e.errors), 0),
    cpu, msgsPerBrokerCpuSecond: Math.round(msgs / cpu.brokerCpuSeconds), complete: true,
    raw: raw.map(({ histUs: _h, ...rest }) => rest as GenEvent),
  };
  const firstError = raw.map((e) => e.firstError).find((x) => typeof x === 'string');
  if (firstError) env.log(`    ${r.errors} errors, ${r.notOk} not-OK; first: ${String(firstError)}`);
  env.log(`    ${Math.round(msgsPerSec)} msgs/s, p50 ${latencyMs.p50} ms, p99 ${latencyMs.p99} ms; broker ${cpu.brokerCoresUsed} cores, generators ${cpu.generatorCoresUsed} cores (${cpu.bottleneck})`);
  return r;
}

export interface ConsumeLoad {
  messages: number;
  size: number;
  queues: number;
  timeoutSeconds: number;
  /** a run-unique prefix for topics and groups */
  tag: string;
  /** pullBatchSize of both consumers (the brokers cap a pull at maxTransferCountOnMessageInMemory = 32) */
  pullBatch: number;
  /** the push consumer's consumeMessageBatchMaxSize (messages per listener call) */
  consumeBatch: number;
  /** pullThresholdForQueue of both consumers (cached messages per queue before the client pauses it) */
  queueThreshold: number;
  /**
   * Also a third phase, "consume raw pull": the consumer JVMs send PULL_MESSAGE through the Apache
   * client's remoting layer and only walk each reply's records (LoadGen kind=raw), so the broker,
   * not the client's decoding and listener dispatch, bounds the phase.
   */
  raw: boolean;
}

/** Distinct messages over all consumers ÷ (last consumer's last new message − first consumer's first message). */
function consumeRate(raw: GenEvent[]): number {
  const distinct = raw.reduce((s, e) => s + Number(e.distinct), 0);
  const first = Math.min(...raw.map((e) => Number(e.firstEpochMs)));
  const last = Math.max(...raw.map((e) => Number(e.endEpochMs)));
  return last > first ? Math.round(distinct / ((last - first) / 1000)) : NaN;
}

/** Phase name of a consume kind. */
export function consumePhaseName(kind: 'push' | 'lite' | 'raw'): string {
  return kind === 'push' ? 'consume push' : kind === 'lite' ? 'consume lite pull' : 'consume raw pull';
}

/**
 * Preload (by `producer`), warm-up, then the push and the lite pull consumer over the same set: two
 * results. Every JVM of `env.gens` is one consumer on its own consumer group reading the whole set
 * (fan-out: the broker serves the set once per consumer JVM); msgs/s = distinct messages delivered
 * over all consumers ÷ (last consumer's last new message − first consumer's first message).
 */
export async function consumePhases(env: PhaseEnv, producer: Generator, l: ConsumeLoad): Promise<PhaseResult[]> {
  const topic = `${l.tag}Consume`;
  const warmTopic = `${l.tag}ConsumeWarm`;
  const warmMessages = Math.min(l.messages, 100_000);
  const consumers = env.gens.gens.length;
  const knobs = `pullBatch=${l.pullBatch} consumeBatch=${l.consumeBatch} queueThreshold=${l.queueThreshold}`;
  env.log(`  consume: preloading ${l.messages} + ${warmMessages} (warm-up topic) messages of ${l.size} B with async sends; ${consumers} consumer JVM(s), one group each; ${knobs} ...`);
  const pre = await producer.call(`preload topic=${topic} messages=${l.messages} size=${l.size} queues=${l.queues}`, 'preloaded', 1_800_000);
  const preWarm = await producer.call(`preload topic=${warmTopic} messages=${warmMessages} size=${l.size} queues=${l.queues}`, 'preloaded', 1_800_000);
  env.log(`    preloaded ${String(pre.ok)} in ${String(pre.seconds)} s (${String(pre.failed)} sends failed and were replaced)`);
  const expected = Number(pre.ok);
  const kinds = l.raw ? (['push', 'lite', 'raw'] as const) : (['push', 'lite'] as const);
  let cycle = 0;
  const warmup = await warmUp(env, async () => {
    const kind = kinds[cycle % kinds.length]!;
    const c = cycle++;
    const raw = await env.gens.all((i) => `consume kind=${kind} topic=${warmTopic} group=${l.tag}Warm${c}g${i} expected=${String(preWarm.ok)} timeoutSeconds=${l.timeoutSeconds} ${knobs}`, 'consumed', (l.timeoutSeconds + 60) * 1000);
    return { msgsPerSec: consumeRate(raw), latencyMs: null, series: kind };
  });
  const out: PhaseResult[] = [];
  for (const kind of kinds) {
    const phase = consumePhaseName(kind);
    const cpuEnd = cpuStart(env);
    const raw = await env.gens.all((i) => `consume kind=${kind} topic=${topic} group=${l.tag}${kind}g${i} expected=${expected} timeoutSeconds=${l.timeoutSeconds} ${knobs}`, 'consumed', (l.timeoutSeconds + 60) * 1000);
    const distinct = raw.reduce((s, e) => s + Number(e.distinct), 0);
    const first = Math.min(...raw.map((e) => Number(e.firstEpochMs)));
    const last = Math.max(...raw.map((e) => Number(e.endEpochMs)));
    // cores over the consuming seconds (see cpuStart)
    const cpu = cpuEnd(last > first ? (last - first) / 1000 : undefined);
    const msgsPerSec = consumeRate(raw);
    const complete = raw.every((e) => e.complete === true);
    out.push({
      phase, warmup,
      msgs: distinct, msgsPerSec, latencyMs: null, calls: null, notOk: 0, errors: 0, cpu,
      msgsPerBrokerCpuSecond: Math.round(distinct / cpu.brokerCpuSeconds), complete, raw,
    });
    env.log(`    ${kind}: ${distinct}/${expected * consumers}${complete ? '' : ' INCOMPLETE'} in ${((last - first) / 1000).toFixed(2)} s = ${msgsPerSec} msgs/s; broker ${cpu.brokerCpuSeconds} CPU-s (${cpu.brokerCoresUsed} cores), consumers ${cpu.generatorCoresUsed} cores (${cpu.bottleneck})`);
  }
  return out;
}
