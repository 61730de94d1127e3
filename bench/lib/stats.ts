/**
 * Latency samples and summary statistics. Samples are kept exactly (Float64Array, grown by
 * doubling) and sorted once at the end, so percentiles are exact, not bucketed.
 */

export interface LatencySummary {
  count: number;
  minMs: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

export class LatencyRecorder {
  private samples: Float64Array;
  private n = 0;

  constructor(initialCapacity = 1 << 16) {
    this.samples = new Float64Array(initialCapacity);
  }

  /** Records one latency in milliseconds. */
  add(ms: number): void {
    if (this.n === this.samples.length) {
      const bigger = new Float64Array(this.samples.length * 2);
      bigger.set(this.samples);
      this.samples = bigger;
    }
    this.samples[this.n++] = ms;
  }

  get count(): number {
    return this.n;
  }

  summary(): LatencySummary {
    const s = this.samples.subarray(0, this.n).slice().sort();
    if (s.length === 0) return { count: 0, minMs: NaN, meanMs: NaN, p50Ms: NaN, p90Ms: NaN, p99Ms: NaN, p999Ms: NaN, maxMs: NaN };
    let sum = 0;
    for (const v of s) sum += v;
    return {
      count: s.length,
      minMs: s[0]!,
      meanMs: sum / s.length,
      p50Ms: quantile(s, 0.5),
      p90Ms: quantile(s, 0.9),
      p99Ms: quantile(s, 0.99),
      p999Ms: quantile(s, 0.999),
      maxMs: s[s.length - 1]!,
    };
  }
}

/** Nearest-rank quantile of sorted samples. */
export function quantile(sorted: Float64Array | number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[idx]!;
}

/** Milliseconds since an arbitrary origin, sub-microsecond resolution. */
export function nowMs(): number {
  return performance.now();
}

export const MiB = 1024 * 1024;
export const GiB = 1024 * MiB;

/** Bytes per second -> MB/s (10^6, as disk vendors and `dd` print). */
export function mbPerSec(bytes: number, ms: number): number {
  return bytes / 1e6 / (ms / 1000);
}

export function perSec(count: number, ms: number): number {
  return count / (ms / 1000);
}

/** Rounds to 3 significant digits for display and JSON (keeps integers >= 1000 whole). */
export function round3(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  if (Math.abs(x) >= 1000) return Math.round(x);
  const d = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(x))));
  return Number(x.toFixed(d));
}
