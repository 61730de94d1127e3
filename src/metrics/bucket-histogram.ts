/**
 * A Prometheus histogram for hot paths, registered in a prom-client Registry (which formats it):
 * one series per label tuple, found through a caller-held handle, so an observation is a bucket
 * scan and three additions. prom-client's own Histogram hashes its label object on every
 * observe(), which the broker's per-message path cannot afford (bench broker-e2e-metrics).
 *
 *   const h = new BucketHistogram('rocketmq_message_size', 'help', ['topic'], [1024, 4096], registry);
 *   const s = h.series({ topic: 'T' });   // keep s; creating it is the slow part
 *   s.observe(300);
 * Exposition as prom-client's: name_bucket{le="..."} cumulative, name_bucket{le="+Inf"}, name_sum, name_count.
 */
import type { Registry } from 'prom-client';

export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Record<string, string>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number, times = 1): void {
    const b = this.bounds;
    for (let i = 0; i < b.length; i++) {
      if (value <= b[i]!) {
        this.counts[i]! += times;
        break;
      }
    }
    this.sum += value * times;
    this.count += times;
  }
}

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName: string;
}

export class BucketHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly all = new Map<string, HistogramSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The series of these labels (created on first use). */
  series(labels: Record<string, string>): HistogramSeries {
    const key = this.labelNames.map((n) => labels[n] ?? '').join('\u0001');
    let s = this.all.get(key);
    if (!s) {
      s = new HistogramSeries(labels, this.bounds);
      this.all.set(key, s);
    }
    return s;
  }

  /** Forgets every series whose labels match `pred` (a deleted topic). */
  remove(pred: (labels: Record<string, string>) => boolean): void {
    for (const [k, s] of this.all) if (pred(s.labels)) this.all.delete(k);
  }

  /** prom-client's metric shape. */
  get(): { name: string; help: string; type: string; aggregator: string; values: MetricValue[] } {
    const values: MetricValue[] = [];
    for (const s of this.all.values()) {
      let acc = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        acc += s.counts[i]!;
        values.push({ value: acc, labels: { ...s.labels, le: this.bounds[i]! }, metricName: `${this.name}_bucket` });
      }
      values.push({ value: s.count, labels: { ...s.labels, le: '+Inf' }, metricName: `${this.name}_bucket` });
      values.push({ value: s.sum, labels: s.labels, metricName: `${this.name}_sum` });
      values.push({ value: s.count, labels: s.labels, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.all.clear();
  }
}
