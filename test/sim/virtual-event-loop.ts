/**
 * A deterministic event loop for the store simulation: while installed, the global
 * `setTimeout`/`setInterval`/`setImmediate` (and their `clear*`) and `Date.now` are replaced, so
 * every timer the store arms lands in one queue that only this class runs, in a fixed order, on
 * virtual time kept by a ManualClock.
 *
 * - Immediates run in FIFO order; timers by (due time, creation order). Between two callbacks
 *   the real event loop is given one `setImmediate` turn, which drains every pending microtask
 *   (promise continuations, process.nextTick) — and nothing else can be pending, because the
 *   simulated file system does no real I/O. So the interleaving depends only on the seed.
 * - `unref` is recorded but ignored: a virtual timer runs when virtual time reaches it.
 * - `Date.now()` returns the clock's time, so code that reads Date.now directly (flush deadlines,
 *   thorough-flush intervals) sees the same virtual time as code that takes the Clock port.
 * - `reset()` drops every pending callback: what a process crash does to its timers.
 *
 * Only one loop may be installed at a time; `uninstall()` restores the real functions.
 */
import type { ManualClock } from '../../src/common/time/clock.js';

type Callback = (...args: unknown[]) => void;

interface Task {
  seq: number;
  dueMs: number;
  cb: Callback;
  args: unknown[];
  /** Repeat period for setInterval, null for one-shot. */
  intervalMs: number | null;
  cancelled: boolean;
  immediate: boolean;
}

/** The handle returned in place of a Node Timeout/Immediate. */
class VirtualHandle {
  refed = true;
  constructor(readonly task: Task) {}
  unref(): this {
    this.refed = false;
    return this;
  }
  ref(): this {
    this.refed = true;
    return this;
  }
  hasRef(): boolean {
    return this.refed;
  }
  refresh(): this {
    return this;
  }
  [Symbol.toPrimitive](): number {
    return this.task.seq;
  }
}

const real = {
  setTimeout: globalThis.setTimeout,
  setInterval: globalThis.setInterval,
  setImmediate: globalThis.setImmediate,
  clearTimeout: globalThis.clearTimeout,
  clearInterval: globalThis.clearInterval,
  clearImmediate: globalThis.clearImmediate,
  dateNow: Date.now,
};

/** One real event-loop turn: every pending microtask has run when this resolves. */
export function drainMicrotasks(): Promise<void> {
  return new Promise((resolve) => real.setImmediate(resolve));
}

let installed: VirtualEventLoop | null = null;

/** advance() spans above this many ms run in coarse steps. */
const COARSE_ABOVE_MS = 5_000;
/** Smallest coarse step, ms. */
const COARSE_STEP_MS = 1_000;

export class VirtualEventLoop {
  private seq = 0;
  private immediates: Task[] = [];
  private timers: Task[] = [];
  /** Callbacks run so far (a cheap measure of simulated work). */
  callbacksRun = 0;
  /** Told about an exception a timer or immediate callback threw (Node would exit); unset: it propagates. */
  onUncaught: ((e: unknown) => void) | null = null;

  constructor(readonly clock: ManualClock) {}

  install(): void {
    if (installed) throw new Error('a VirtualEventLoop is already installed');
    installed = this;
    const g = globalThis as unknown as Record<string, unknown>;
    g.setTimeout = (cb: Callback, ms?: number, ...args: unknown[]) => this.addTimer(cb, ms, args, null);
    g.setInterval = (cb: Callback, ms?: number, ...args: unknown[]) => this.addTimer(cb, ms, args, Math.max(1, Math.ceil(Number(ms)) || 1));
    g.setImmediate = (cb: Callback, ...args: unknown[]) => this.addImmediate(cb, args);
    const clear = (h: unknown): void => {
      if (h instanceof VirtualHandle) h.task.cancelled = true;
    };
    g.clearTimeout = clear;
    g.clearInterval = clear;
    g.clearImmediate = clear;
    Date.now = () => this.clock.nowMs();
  }

  uninstall(): void {
    if (installed !== this) return;
    installed = null;
    const g = globalThis as unknown as Record<string, unknown>;
    g.setTimeout = real.setTimeout;
    g.setInterval = real.setInterval;
    g.setImmediate = real.setImmediate;
    g.clearTimeout = real.clearTimeout;
    g.clearInterval = real.clearInterval;
    g.clearImmediate = real.clearImmediate;
    Date.now = real.dateNow;
    this.reset();
  }

  /** Drops every pending timer and immediate (a crashed process's timers die with it). */
  reset(): void {
    for (const t of this.immediates) t.cancelled = true;
    for (const t of this.timers) t.cancelled = true;
    this.immediates = [];
    this.timers = [];
  }

  /** Pending (not cancelled) timers and immediates. */
  pendingCount(): number {
    return this.immediates.filter((t) => !t.cancelled).length + this.timers.filter((t) => !t.cancelled).length;
  }

  private addTimer(cb: Callback, ms: number | undefined, args: unknown[], intervalMs: number | null): VirtualHandle {
    // Node: 0 and bad values become 1; libuv keeps whole milliseconds (so does the virtual clock)
    const delay = Math.max(1, Number.isFinite(Number(ms)) ? Math.ceil(Number(ms)) : 1);
    const task: Task = { seq: this.seq++, dueMs: this.clock.nowMs() + delay, cb, args, intervalMs, cancelled: false, immediate: false };
    this.insertTimer(task);
    return new VirtualHandle(task);
  }

  private insertTimer(task: Task): void {
    // keep sorted by (dueMs, seq); binary search for the insertion point
    let lo = 0;
    let hi = this.timers.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const m = this.timers[mid]!;
      if (m.dueMs < task.dueMs || (m.dueMs === task.dueMs && m.seq < task.seq)) lo = mid + 1;
      else hi = mid;
    }
    this.timers.splice(lo, 0, task);
  }

  private addImmediate(cb: Callback, args: unknown[]): VirtualHandle {
    const task: Task = { seq: this.seq++, dueMs: 0, cb, args, intervalMs: null, cancelled: false, immediate: true };
    this.immediates.push(task);
    return new VirtualHandle(task);
  }

  private async run(task: Task): Promise<void> {
    if (task.cancelled) return;
    if (task.intervalMs !== null) {
      // like Node: an interval is re-armed from the time its callback runs, so after a long
      // block (a coarse step, see advance) it fires once, not once per missed period
      task.dueMs = this.clock.nowMs() + task.intervalMs;
      task.seq = this.seq++;
      this.insertTimer(task);
    }
    this.callbacksRun++;
    try {
      task.cb(...task.args);
    } catch (e) {
      // in Node this is an uncaughtException: the process dies
      if (!this.onUncaught) throw e;
      this.onUncaught(e);
    }
    await drainMicrotasks();
  }

  /** Runs microtasks and immediates (not timers) until none is left. `maxSteps` guards against livelock. */
  async settle(maxSteps = 1_000_000): Promise<void> {
    await drainMicrotasks();
    let steps = 0;
    while (this.immediates.length > 0) {
      const batch = this.immediates;
      this.immediates = [];
      for (const t of batch) {
        if (++steps > maxSteps) throw new Error(`VirtualEventLoop.settle: more than ${maxSteps} immediates (livelock?)`);
        await this.run(t);
      }
    }
  }

  /**
   * Advances virtual time by `ms` (or until `stop()` holds), running every timer that falls due on the way at its due
   * time (the clock is set to it first), settling immediates after each. Spans longer than
   * `COARSE_ABOVE_MS` go in steps of at least `COARSE_STEP_MS` (or 1/200 of the span): within a
   * step each timer runs at most once, as on a Node process whose loop was blocked for that long
   * — an idle hour then costs a few hundred callbacks instead of one per 10 ms flush period.
   */
  async advance(ms: number, stop: () => boolean = () => false): Promise<void> {
    const end = this.clock.nowMs() + ms;
    await this.settle();
    if (ms > COARSE_ABOVE_MS) {
      const step = Math.max(COARSE_STEP_MS, Math.ceil(ms / 200));
      while (this.clock.nowMs() < end && !stop()) {
        this.clock.set(Math.min(end, this.clock.nowMs() + step));
        await this.runDue(this.clock.nowMs(), true, stop);
      }
      return;
    }
    await this.runDue(end, false, stop);
    if (end > this.clock.nowMs() && !stop()) this.clock.set(end);
  }

  /** Runs timers due at or before `end` in order; `atNow` runs them at the current time (a blocked loop catching up). */
  private async runDue(end: number, atNow: boolean, stop: () => boolean): Promise<void> {
    const ran = new Set<Task>();
    while (!stop()) {
      while (this.timers.length > 0 && this.timers[0]!.cancelled) this.timers.shift();
      const next = this.timers[0];
      if (!next || next.dueMs > end) break;
      if (atNow && ran.has(next)) break; // an interval re-armed into this step runs in the next one
      this.timers.shift();
      ran.add(next);
      if (!atNow && next.dueMs > this.clock.nowMs()) this.clock.set(next.dueMs);
      await this.run(next);
      await this.settle();
    }
  }

  /**
   * Runs until `done()` holds, advancing virtual time timer by timer (at most `maxMs` of it).
   * @returns whether `done()` held.
   */
  async runUntil(done: () => boolean, maxMs: number): Promise<boolean> {
    const end = this.clock.nowMs() + maxMs;
    await this.settle();
    while (!done()) {
      while (this.timers.length > 0 && this.timers[0]!.cancelled) this.timers.shift();
      const next = this.timers[0];
      if (!next || next.dueMs > end) return done();
      this.timers.shift();
      if (next.dueMs > this.clock.nowMs()) this.clock.set(next.dueMs);
      await this.run(next);
      await this.settle();
    }
    return true;
  }
}
