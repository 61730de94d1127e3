/**
 * Rate limit for repetitive log lines: per key, at most one line every `intervalMs` of the given
 * clock. A caller asks `take(key)` before logging; null means "stay silent", a number means "log
 * now" and is how many lines of that key were suppressed since the last one logged (to put in the
 * line). Counting the events themselves stays the caller's job (a suppressed line is not a lost
 * event). Time comes from the Clock port, so tests with a ManualClock get exact line counts.
 */
import type { Clock } from '../time/clock.js';

export class LogRateLimiter {
  private readonly last = new Map<string, { atMs: number; suppressed: number }>();

  constructor(
    private readonly clock: Clock,
    /** Minimum time between two lines of one key, ms (0: never suppress). */
    readonly intervalMs: number,
  ) {}

  /** Null: suppress this line. Otherwise: log it; the value is the number of lines suppressed before it. */
  take(key: string): number | null {
    const now = this.clock.nowMs();
    const s = this.last.get(key);
    if (s && now - s.atMs < this.intervalMs && now >= s.atMs) {
      s.suppressed++;
      return null;
    }
    const suppressed = s?.suppressed ?? 0;
    this.last.set(key, { atMs: now, suppressed: 0 });
    return suppressed;
  }

  /** Forgets a key: its next line is logged at once. */
  reset(key: string): void {
    this.last.delete(key);
  }
}
