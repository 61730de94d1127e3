/**
 * Clock port: all code that needs "now" takes a `Clock` so tests can control time.
 */

/** Source of wall-clock time in epoch milliseconds. */
export interface Clock {
  nowMs(): number;
}

/** The real clock (`Date.now()`). */
export const systemClock: Clock = {
  nowMs: () => Date.now(),
};

/** A clock that only moves when told to; for tests. */
export class ManualClock implements Clock {
  private currentMs: number;

  constructor(startMs = 0) {
    ManualClock.assertTime(startMs);
    this.currentMs = startMs;
  }

  nowMs(): number {
    return this.currentMs;
  }

  /** Moves time forward by `ms` (≥ 0) and returns the new time. @throws RangeError for negative/non-finite ms. */
  advance(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`ManualClock.advance: ms must be a finite number >= 0, got ${ms}`);
    this.currentMs += ms;
    return this.currentMs;
  }

  /** Sets the time (may go backwards, to simulate clock jumps). @throws RangeError for non-finite values. */
  set(ms: number): void {
    ManualClock.assertTime(ms);
    this.currentMs = ms;
  }

  private static assertTime(ms: number): void {
    if (!Number.isFinite(ms)) throw new RangeError(`ManualClock: time must be a finite number, got ${ms}`);
  }
}
