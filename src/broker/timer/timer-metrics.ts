/**
 * Timer metrics (mirrors Apache 5.x `TimerMetrics` and the timer counters of
 * `DefaultStoreMetricsManager`).
 *
 * Persisted, `<storePathRootDir>/config/timermetrics` (Apache `BrokerPathConfigHelper.getTimerMetricsPath`),
 * written every `timerFlushIntervalMs` while it changed and at shutdown, through the crash-safe
 * ConfigFile (.tmp, .bak):
 *   {"dataVersion":{"counter":N,"stateVersion":0,"timestamp":ms},
 *    "timingCount":{"<REAL_TOPIC>":{"count":N,"timeStamp":ms}}}
 * `timingCount[topic].count` = timers of that topic waiting in the wheel: +1 per unit enqueued
 * (a ROLL unit too), −1 per deletion marker (recall) and −1 per message put back when due
 * (Apache `addMetric`); messages without REAL_TOPIC and messages delivered at enqueue
 * (TIMER_ENQUEUE_MS = Long.MAX_VALUE) are not counted. Every change bumps dataVersion
 * (Apache `addAndGet` → `nextVersion`). GET_TIMER_METRICS (61) answers this document; a slave
 * replaces its table with its master's when the data versions differ (SlaveSynchronize).
 *
 * Process-local (not persisted, Prometheus counters; timer-prometheus.ts):
 *   enqueueTotal[topic]   messages read from rmq_sys_wheel_timer (Apache incTimerEnqueueCount)
 *   dequeueTotal[topic]   messages put back to their topic or rolled (incTimerDequeueCount)
 *   delayLatency[topic]   (due time − born time) / 1000 s per message read (rocketmq_delay_message_latency_seconds)
 *   lastEnqueue           wall and store time of the last message read (rocketmq_timer_enqueue_latency_milliseconds)
 */
import type { Clock } from '../../common/time/clock.js';
import * as path from 'node:path';
import { ConfigManager, asNumber, asObject, type ConfigManagerOptions } from '../config-file/config-manager.js';
import { ConfigFileCorruptError } from '../config-file/config-file.js';
import { DataVersion } from '../config-file/data-version.js';

export interface TimingCountEntry {
  count: number;
  timeStamp: number;
}

/** Apache `TimerMetrics.TimerMetricsSerializeWrapper` as JSON. */
export interface TimerMetricsDocument {
  dataVersion: { counter: number; stateVersion: number; timestamp: number };
  timingCount: Record<string, TimingCountEntry>;
}

/** Apache `TimerMetrics.timerDist`: the bounds (s) of rocketmq_timer_message_snapshot. */
export const TIMER_DIST_BOUNDS_S = [5, 60, 300, 900, 3600, 14400, 28800, 86400] as const;

/** Apache's bucket bounds (s) of rocketmq_delay_message_latency_seconds: 1 min, 10 min, 1 h, 12 h, 1 d, 3 d. */
export const DELAY_LATENCY_BUCKETS_S = [60, 600, 3600, 43200, 86400, 259200] as const;

/** Non-cumulative bucket counts (the last bucket is +Inf minus the rest: count − Σ counts). */
export interface DelayLatencySeries {
  counts: number[];
  sum: number;
  count: number;
}

/** What the timer service reports (TimerMessageService calls these; all cheap). */
export interface TimerMetricsListener {
  /** A message read from rmq_sys_wheel_timer; `storeTimestampMs`/`bornTimestampMs` of the timer-topic message. */
  onEnqueueRead(realTopic: string | undefined, delayedTimeMs: number, bornTimestampMs: number, storeTimestampMs: number): void;
  /** A unit written to the wheel (deletion marker: isDelete). */
  onWheelUnit(realTopic: string | undefined, isDelete: boolean): void;
  /**
   * `count` (default 1) messages of one REAL_TOPIC put back (delivered or rolled); `fromWheel`
   * false for delivery at enqueue (not timing-counted). Counts as `count` single calls.
   */
  onDequeue(realTopic: string | undefined, fromWheel: boolean, count?: number): void;
}

export function timerMetricsPath(storePathRootDir: string): string {
  return path.join(storePathRootDir, 'config', 'timermetrics');
}

export class TimerMetrics extends ConfigManager implements TimerMetricsListener {
  readonly dataVersion: DataVersion;
  private readonly timingCount = new Map<string, TimingCountEntry>();
  /** Process-local totals per REAL_TOPIC ('' when the message had none). */
  readonly enqueueTotal = new Map<string, number>();
  readonly dequeueTotal = new Map<string, number>();
  /** Per topic: rocketmq_delay_message_latency_seconds, (delay − born) in whole seconds, in DELAY_LATENCY_BUCKETS_S. */
  readonly delayLatency = new Map<string, DelayLatencySeries>();
  lastEnqueueReadAtMs = 0;
  lastEnqueueStoreTimestampMs = 0;
  private changedSincePersist = false;
  private persistTimer: NodeJS.Timeout | null = null;

  constructor(filePath: string, private readonly clock: Clock, opts: ConfigManagerOptions = {}) {
    super(filePath, opts);
    this.dataVersion = new DataVersion(clock);
  }

  /**
   * Loads config/timermetrics. An undecodable file (and backup) is logged and the metrics start
   * empty: they are statistics, the broker must not refuse to start over them.
   */
  loadOrEmpty(log: (message: string) => void): void {
    try {
      this.load();
    } catch (e) {
      if (!(e instanceof ConfigFileCorruptError)) throw e;
      log(`${this.filePath}: ${e.message}; timer metrics start empty`);
    }
  }

  override encode(): TimerMetricsDocument {
    const timingCount: Record<string, TimingCountEntry> = {};
    for (const [topic, e] of this.timingCount) timingCount[topic] = { count: e.count, timeStamp: e.timeStamp };
    return { dataVersion: this.dataVersion.toJSON(), timingCount };
  }

  protected override decode(doc: Record<string, unknown>): void {
    const table = this.decodeTable(doc);
    this.timingCount.clear();
    for (const [k, v] of table) this.timingCount.set(k, v);
    this.dataVersion.assign(doc.dataVersion);
  }

  /** Apache `getTimingCount(topic)`: 0 for a topic never counted. */
  getTimingCount(topic: string): number {
    return this.timingCount.get(topic)?.count ?? 0;
  }

  /** topic → count, for Prometheus (rocketmq_timing_messages). */
  timingCounts(): ReadonlyMap<string, TimingCountEntry> {
    return this.timingCount;
  }

  /**
   * Apache `addAndGet`: count += delta, timeStamp = now, dataVersion + 1; `changes` > 1 stands
   * for that many calls (dataVersion + changes), as a block of deliveries is counted at once.
   */
  addAndGet(topic: string, delta: number, changes = 1): number {
    let e = this.timingCount.get(topic);
    if (!e) {
      e = { count: 0, timeStamp: this.clock.nowMs() };
      this.timingCount.set(topic, e);
    }
    this.dataVersion.next();
    if (changes > 1) this.dataVersion.counter += changes - 1;
    e.timeStamp = this.clock.nowMs();
    e.count += delta;
    this.changedSincePersist = true;
    return e.count;
  }

  /** Apache `removeTimingCount` (topic deleted). */
  removeTimingCount(topic: string): void {
    if (this.timingCount.delete(topic)) this.changedSincePersist = true;
  }

  /**
   * A topic was deleted: forgets its process-local totals and delay-latency series, and its
   * timingCount entry (Apache `removeTimingCount`) when no timer of it waits in the wheel (count
   * ≤ 0). An entry with timers still waiting stays: those timers fire into the deleted topic and
   * decrement it, and removing it first would leave a negative count behind for good.
   */
  forgetTopic(topic: string): void {
    this.enqueueTotal.delete(topic);
    this.dequeueTotal.delete(topic);
    this.delayLatency.delete(topic);
    if ((this.timingCount.get(topic)?.count ?? 1) <= 0) this.removeTimingCount(topic);
  }

  /**
   * Slave sync (Apache `syncTimerMetrics`): when the master's dataVersion differs, adopt it and
   * replace the table. Returns whether anything changed. @throws Error for a malformed document.
   */
  replaceFromMaster(doc: Record<string, unknown>): boolean {
    const table = this.decodeTable(doc);
    const dv = asObject(doc.dataVersion ?? {}, 'dataVersion');
    const mine = this.dataVersion.toJSON();
    if (dv.counter === mine.counter && dv.timestamp === mine.timestamp && dv.stateVersion === mine.stateVersion) return false;
    this.dataVersion.assign(dv);
    this.timingCount.clear();
    for (const [k, v] of table) this.timingCount.set(k, v);
    this.changedSincePersist = true;
    return true;
  }

  onEnqueueRead(realTopic: string | undefined, delayedTimeMs: number, bornTimestampMs: number, storeTimestampMs: number): void {
    const t = realTopic ?? '';
    this.enqueueTotal.set(t, (this.enqueueTotal.get(t) ?? 0) + 1);
    this.lastEnqueueReadAtMs = this.clock.nowMs();
    this.lastEnqueueStoreTimestampMs = storeTimestampMs;
    if (realTopic !== undefined) {
      let h = this.delayLatency.get(realTopic);
      if (!h) this.delayLatency.set(realTopic, (h = { counts: new Array<number>(DELAY_LATENCY_BUCKETS_S.length).fill(0), sum: 0, count: 0 }));
      const s = Math.trunc((delayedTimeMs - bornTimestampMs) / 1000); // Apache: long division
      const i = DELAY_LATENCY_BUCKETS_S.findIndex((b) => s <= b);
      if (i >= 0) h.counts[i]!++;
      h.sum += s;
      h.count++;
    }
  }

  onWheelUnit(realTopic: string | undefined, isDelete: boolean): void {
    if (realTopic !== undefined) this.addAndGet(realTopic, isDelete ? -1 : 1);
  }

  onDequeue(realTopic: string | undefined, fromWheel: boolean, count = 1): void {
    const t = realTopic ?? '';
    this.dequeueTotal.set(t, (this.dequeueTotal.get(t) ?? 0) + count);
    if (fromWheel && realTopic !== undefined) this.addAndGet(realTopic, -count, count);
  }

  /** Persists every `intervalMs` while changed (Apache: the timer flush service, every timerFlushIntervalMs). */
  startPersisting(intervalMs: number, logError: (message: string) => void): void {
    if (this.persistTimer) return;
    this.persistTimer = setInterval(() => {
      if (!this.changedSincePersist) return;
      this.changedSincePersist = false;
      this.persist().catch((e: Error) => {
        this.changedSincePersist = true;
        logError(`persist ${this.filePath} failed: ${e.message}`);
      });
    }, intervalMs);
    this.persistTimer.unref();
  }

  /** Stops the periodic persist and writes the last state. */
  async shutdown(): Promise<void> {
    if (this.persistTimer) clearInterval(this.persistTimer);
    this.persistTimer = null;
    await this.persist();
  }

  private decodeTable(doc: Record<string, unknown>): Map<string, TimingCountEntry> {
    const out = new Map<string, TimingCountEntry>();
    for (const [topic, v] of Object.entries(asObject(doc.timingCount ?? {}, 'timingCount'))) {
      const o = asObject(v, `timingCount[${topic}]`);
      out.set(topic, { count: asNumber(o.count ?? 0, `timingCount[${topic}].count`), timeStamp: asNumber(o.timeStamp ?? 0, `timingCount[${topic}].timeStamp`) });
    }
    return out;
  }
}
