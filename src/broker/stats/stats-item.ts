/**
 * One counter of the broker statistics (mirrors Apache `StatsItem`): `value` is the running sum
 * of everything added (messages or bytes), `times` the number of additions (calls). Snapshots
 * {timestampMs, value, times} are kept for three windows, as Apache samples them:
 *   minute: every 10 s, the last 7 (one minute of history);
 *   hour:   every 10 min, the last 7;
 *   day:    every hour, the last 25.
 * A window's figures are computed from its oldest snapshot to *now* (the live counters):
 *   sum   = value now - value then
 *   tps   = sum * 1000 / (now - then)            (per second; 0 when no time elapsed)
 *   avgpt = sum / (times now - times then)       (per call; 0 when no call)
 * Apache computes them from oldest to newest *sampled* snapshot, so its rates lag up to one
 * sampling period; using the live point instead makes a fresh broker report real rates at once.
 */

/** The figures of one window (Apache `StatsSnapshot`: sum, tps, avgpt, times). */
export interface StatsSnapshot {
  sum: number;
  tps: number;
  avgpt: number;
  times: number;
}

interface Sample {
  timestampMs: number;
  value: number;
  times: number;
}

export const MINUTE_SAMPLE_MS = 10_000;
export const HOUR_SAMPLE_MS = 10 * 60_000;
export const DAY_SAMPLE_MS = 60 * 60_000;

const KEEP = { minute: 7, hour: 7, day: 25 } as const;
export type StatsWindow = keyof typeof KEEP;

export class StatsItem {
  value = 0;
  times = 0;
  private readonly samples: Record<StatsWindow, Sample[]>;
  private readonly lastSampleMs: Record<StatsWindow, number>;

  constructor(
    readonly statsName: string,
    readonly statsKey: string,
    createdMs: number,
  ) {
    const first = (): Sample[] => [{ timestampMs: createdMs, value: 0, times: 0 }];
    this.samples = { minute: first(), hour: first(), day: first() };
    this.lastSampleMs = { minute: createdMs, hour: createdMs, day: createdMs };
  }

  /** Adds `inc` (messages, bytes...) counted as `times` calls. */
  add(inc: number, times = 1): void {
    this.value += inc;
    this.times += times;
  }

  /** Takes the snapshots that are due at `nowMs` (call at least every 10 s). */
  sample(nowMs: number): void {
    this.sampleWindow('minute', MINUTE_SAMPLE_MS, nowMs);
    this.sampleWindow('hour', HOUR_SAMPLE_MS, nowMs);
    this.sampleWindow('day', DAY_SAMPLE_MS, nowMs);
  }

  /** Figures of a window, from its oldest snapshot to now. */
  stats(window: StatsWindow, nowMs: number): StatsSnapshot {
    const first = this.samples[window][0]!;
    const sum = this.value - first.value;
    const times = this.times - first.times;
    const elapsedMs = nowMs - first.timestampMs;
    return { sum, tps: elapsedMs > 0 ? (sum * 1000) / elapsedMs : 0, avgpt: times > 0 ? sum / times : 0, times };
  }

  private sampleWindow(window: StatsWindow, periodMs: number, nowMs: number): void {
    if (nowMs - this.lastSampleMs[window] < periodMs) return;
    this.lastSampleMs[window] = nowMs;
    const list = this.samples[window];
    list.push({ timestampMs: nowMs, value: this.value, times: this.times });
    if (list.length > KEEP[window]) list.shift();
  }
}
