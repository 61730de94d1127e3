/**
 * The console's chart data: every `periodMs` (default 5 s) one sample of the broker totals
 * (messages put and pulled, from BrokerStatsManager), each topic's stored message count and each
 * (topic, group)'s lag; the last `keep` samples (default 120 = 10 minutes) are served. Rates are
 * computed between consecutive samples (messages per second).
 */
import type { BrokerController } from '../broker/broker-controller.js';
import { Stats } from '../broker/stats/broker-stats-manager.js';
import { consumerLags } from '../metrics/consumer-lag.js';

export interface RateSample {
  timestampMs: number;
  putTotal: number;
  getTotal: number;
  /** Messages put per topic since boot (TOPIC_PUT_NUMS). */
  topicPut: Record<string, number>;
  /** Lag per `topic@group`. */
  lag: Record<string, number>;
}

export interface RateSeries {
  timestampsMs: number[];
  putTps: number[];
  getTps: number[];
  topicPutTps: Record<string, number[]>;
  lag: Record<string, number[]>;
}

export class RateHistory {
  private readonly samples: RateSample[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly broker: BrokerController,
    private readonly periodMs = 5000,
    private readonly keep = 120,
  ) {}

  start(): void {
    void this.sample();
    this.timer = setInterval(() => void this.sample(), this.periodMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Takes one sample now (the timer's job; tests call it). */
  async sample(): Promise<void> {
    const ctx = this.broker.ctx;
    const topicPut: Record<string, number> = {};
    for (const item of ctx.brokerStats.itemsOf(Stats.TOPIC_PUT_NUMS)) topicPut[item.statsKey] = item.value;
    const lag: Record<string, number> = {};
    try {
      for (const l of await consumerLags(this.broker, ctx.clock.nowMs(), false)) if (!l.topic.startsWith('%RETRY%')) lag[`${l.topic}@${l.group}`] = l.lagMessages;
    } catch {
      // store shutting down: keep the sample without lag
    }
    this.samples.push({ timestampMs: ctx.clock.nowMs(), putTotal: ctx.brokerStats.totals.putMessageTimesTotal, getTotal: ctx.brokerStats.totals.getTransferredMsgCount, topicPut, lag });
    if (this.samples.length > this.keep) this.samples.shift();
  }

  /** Rates between consecutive samples and the lag at each sample (the first sample has no rate). */
  series(): RateSeries {
    const s = this.samples;
    const out: RateSeries = { timestampsMs: [], putTps: [], getTps: [], topicPutTps: {}, lag: {} };
    for (let i = 1; i < s.length; i++) {
      const a = s[i - 1]!;
      const b = s[i]!;
      const sec = Math.max(0.001, (b.timestampMs - a.timestampMs) / 1000);
      out.timestampsMs.push(b.timestampMs);
      out.putTps.push((b.putTotal - a.putTotal) / sec);
      out.getTps.push((b.getTotal - a.getTotal) / sec);
      for (const topic of Object.keys(b.topicPut)) (out.topicPutTps[topic] ??= []).push(Math.max(0, (b.topicPut[topic]! - (a.topicPut[topic] ?? 0)) / sec));
      for (const key of Object.keys(b.lag)) (out.lag[key] ??= []).push(b.lag[key]!);
    }
    return out;
  }
}
