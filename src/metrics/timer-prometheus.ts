/**
 * Timer metrics on the Prometheus endpoint, named and labelled as Apache 5.3.3's
 * DefaultStoreMetricsManager as its PROM exporter prints them (a metric with a unit gets it
 * appended: _milliseconds, _seconds; its store metrics also carry storage_type="local",
 * storage_medium="disk"; the common labels cluster/node_type/node_id come from the registry).
 * Read from the broker when Prometheus scrapes; absent values (timerWheelEnable=false) give no series.
 *
 *   rocketmq_timer_enqueue_lag                 gauge    rmq_sys_wheel_timer entries not yet read into the wheel
 *   rocketmq_timer_enqueue_latency_milliseconds gauge ms now − store time of the entry read last, when one was
 *                                                       read in the last 2 s (else 0)
 *   rocketmq_timer_dequeue_lag                 gauge    timers in the wheel from the read time on (Apache getAllNum)
 *   rocketmq_timer_dequeue_latency_milliseconds gauge ms now − the read time (Apache reports seconds under unit
 *                                                       "milliseconds"; tsmq reports milliseconds)
 *   rocketmq_timing_messages{topic}            gauge    TimerMetrics timingCount (config/timermetrics)
 *   rocketmq_timer_enqueue_total{topic}        counter  entries read from rmq_sys_wheel_timer by this process
 *   rocketmq_timer_dequeue_total{topic}        counter  messages put back (delivered or rolled) by this process
 *   rocketmq_timer_message_snapshot{timer_bound_s}  gauge timers due in (previous bound, bound] s from now,
 *                                                       bounds 5, 60, 300, 900, 3600, 14400, 28800, 86400
 *   rocketmq_delay_message_latency_seconds{topic} histogram s  (due time − born time) of entries read,
 *                                                       buckets 60, 600, 3600, 43200, 86400, 259200
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { BrokerController } from '../broker/broker-controller.js';
import { TIMER_TOPIC } from '../broker/timer/timer-put-hook.js';
import { DELAY_LATENCY_BUCKETS_S, TIMER_DIST_BOUNDS_S } from '../broker/timer/timer-metrics.js';

const STORE_LABELS = { storage_type: 'local', storage_medium: 'disk' } as const;
/** Apache getEnqueueBehindMillis: the latency is reported only this long after the last enqueue. */
const ENQUEUE_LATENCY_WINDOW_MS = 2000;

/** Registers the timer metrics in `registry`; `broker()` is read at every scrape (null: none). */
export function defineTimerMetrics(registry: Registry, broker: () => BrokerController | null): void {
  const r = [registry];
  const storeLabelNames = ['storage_type', 'storage_medium'];
  const timerGauge = (name: string, help: string, read: (b: BrokerController) => number | null): void => {
    new Gauge({
      name,
      help,
      labelNames: storeLabelNames,
      registers: r,
      collect() {
        this.reset();
        const b = broker();
        const v = b ? read(b) : null;
        if (v !== null) this.set(STORE_LABELS, v);
      },
    });
  };
  timerGauge('rocketmq_timer_enqueue_lag', 'Timer enqueue messages lag', (b) => {
    const s = b.timerMessageService?.stats;
    return s ? Math.max(0, b.ctx.store.getMaxOffsetInQueue(TIMER_TOPIC, 0) - s.currQueueOffset) : null;
  });
  timerGauge('rocketmq_timer_enqueue_latency_milliseconds', 'Timer enqueue latency', (b) => {
    const m = b.timerMetrics;
    if (!m) return null;
    const now = b.ctx.clock.nowMs();
    return now - m.lastEnqueueReadAtMs < ENQUEUE_LATENCY_WINDOW_MS ? Math.max(0, now - m.lastEnqueueStoreTimestampMs) : 0;
  });
  timerGauge('rocketmq_timer_dequeue_lag', 'Timer dequeue messages lag', (b) => b.timerMessageService?.pendingCount() ?? null);
  timerGauge('rocketmq_timer_dequeue_latency_milliseconds', 'Timer dequeue latency', (b) => {
    const s = b.timerMessageService?.stats;
    return s ? Math.max(0, b.ctx.clock.nowMs() - s.currReadTimeMs) : null;
  });
  new Gauge({
    name: 'rocketmq_timing_messages',
    help: 'Current message number in timing',
    labelNames: [...storeLabelNames, 'topic'],
    registers: r,
    collect() {
      this.reset();
      for (const [topic, e] of broker()?.timerMetrics?.timingCounts() ?? []) this.set({ ...STORE_LABELS, topic }, e.count);
    },
  });
  const total = (name: string, help: string, pick: 'enqueueTotal' | 'dequeueTotal'): void => {
    new Counter({
      name,
      help,
      labelNames: [...storeLabelNames, 'topic'],
      registers: r,
      collect() {
        this.reset();
        for (const [topic, n] of broker()?.timerMetrics?.[pick] ?? []) this.inc(topic === '' ? { ...STORE_LABELS } : { ...STORE_LABELS, topic }, n);
      },
    });
  };
  total('rocketmq_timer_enqueue_total', 'Total number of timer enqueue', 'enqueueTotal');
  total('rocketmq_timer_dequeue_total', 'Total number of timer dequeue', 'dequeueTotal');
  new Gauge({
    name: 'rocketmq_timer_message_snapshot',
    help: 'Timer message distribution snapshot, only count timing messages in 24h.',
    labelNames: [...storeLabelNames, 'timer_bound_s'],
    registers: r,
    collect() {
      this.reset();
      const b = broker();
      const ts = b?.timerStore;
      if (!b || !ts) return;
      const p = ts.precisionMs;
      const now = Math.floor(b.ctx.clock.nowMs() / p) * p;
      let prev = 0;
      for (const bound of TIMER_DIST_BOUNDS_S) {
        this.set({ ...STORE_LABELS, timer_bound_s: String(bound) }, ts.wheel.countBetween(now + prev * 1000, now + bound * 1000));
        prev = bound;
      }
    },
  });
  registry.registerMetric(new DelayLatencyHistogram(broker) as never);
}

/** rocketmq_delay_message_latency_seconds from TimerMetrics.delayLatency (prom-client's metric shape). */
class DelayLatencyHistogram {
  readonly name = 'rocketmq_delay_message_latency_seconds';
  readonly help = 'Timer message set latency distribution in seconds';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  constructor(private readonly broker: () => BrokerController | null) {}

  get(): { name: string; help: string; type: string; aggregator: string; values: Array<{ value: number; labels: Record<string, string | number>; metricName: string }> } {
    const values: Array<{ value: number; labels: Record<string, string | number>; metricName: string }> = [];
    for (const [topic, h] of this.broker()?.timerMetrics?.delayLatency ?? []) {
      const labels = { ...STORE_LABELS, topic };
      let acc = 0;
      DELAY_LATENCY_BUCKETS_S.forEach((le, i) => {
        acc += h.counts[i]!;
        values.push({ value: acc, labels: { ...labels, le }, metricName: `${this.name}_bucket` });
      });
      values.push({ value: h.count, labels: { ...labels, le: '+Inf' }, metricName: `${this.name}_bucket` });
      values.push({ value: h.sum, labels, metricName: `${this.name}_sum` });
      values.push({ value: h.count, labels, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {}
}
