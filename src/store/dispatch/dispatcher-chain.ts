/**
 * The ordered list of CommitLogDispatchers one record goes through, and what a failure does
 * (RocketMQ `DefaultMessageStore.doDispatch` over its dispatcher list; failure policy after
 * RocketMQ's LOGICS_QUEUE_ERROR for ConsumeQueue writes and its logged index-build errors):
 *
 * - required dispatchers (the ConsumeQueue builder) run first, in registration order. One that
 *   throws ends the record's dispatch: `run` throws a DispatchBlockedError (the optional
 *   dispatchers did not see the record, so a retry does not feed them twice).
 * - optional dispatchers (index, plugins, stateless extras) run next. One that throws is counted
 *   (`failureCounts()`, by dispatcher name) and logged at most once per `logIntervalMs` per
 *   dispatcher (the line carries the count and how many lines were suppressed); the others and
 *   the record's ConsumeQueue entry are unaffected.
 * - `deferrable` optional dispatchers (the index) are fed the records of a prepared block
 *   (`runBlock`) later, from a DeferredDispatchQueue (deferred-dispatch-queue.ts): once no block
 *   was dispatched for `quietMs`, a chunk per event-loop turn; while anything is queued, records
 *   of `run` queue behind it (CommitLog order is kept). `drainDeferred()` feeds everything queued
 *   at once (queries, shutdown, repositioning).
 */
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import { LogRateLimiter } from '../../common/logging/log-rate-limiter.js';
import { describeWriteError } from '../../common/fs/write-error.js';
import type { DispatchRequest } from '../../common/message/record-codec.js';
import type { CommitLogDispatcher } from './commit-log-dispatcher.js';
import { DEFERRED_CHUNK_RECORDS, DEFERRED_MAX_RECORDS, DEFERRED_QUIET_MS, DeferredDispatchQueue } from './deferred-dispatch-queue.js';

/** Default minimum time between two failure lines of one dispatcher, ms. */
export const DISPATCH_FAILURE_LOG_INTERVAL_MS = 10_000;

/** A required dispatcher failed on `request`; dispatch must stop there and retry it. */
export class DispatchBlockedError extends Error {
  /**
   * `reason`: "<dispatcher> dispatch failed at CommitLog offset <o> (topic <t>, queue <q>,
   * queue offset <qo>): <describeWriteError(cause)>".
   */
  readonly reason: string;

  constructor(
    readonly dispatcher: string,
    readonly request: DispatchRequest,
    cause: unknown,
  ) {
    const reason =
      `${dispatcher} dispatch failed at CommitLog offset ${request.commitLogOffset} ` +
      `(topic ${request.topic}, queue ${request.queueId}, queue offset ${request.consumeQueueOffset}): ${describeWriteError(cause)}`;
    super(reason, { cause });
    this.name = 'DispatchBlockedError';
    this.reason = reason;
  }
}

/** When the deferred records of prepared blocks are worked off (DeferredDispatchQueue). */
export interface DeferOptions {
  /** Work the queue off once no block was dispatched for this many ms (default DEFERRED_QUIET_MS). */
  quietMs?: number;
  /** Records fed per event-loop turn (default DEFERRED_CHUNK_RECORDS). */
  chunkRecords?: number;
  /** Work the queue off even during a burst once it holds this many records (default DEFERRED_MAX_RECORDS). */
  maxRecords?: number;
}

export class DispatcherChain {
  private readonly required: CommitLogDispatcher[] = [];
  private readonly optional: CommitLogDispatcher[] = [];
  /** Optional dispatchers that may be fed later (`deferrable`), a subset kept apart from `optional`. */
  private readonly deferrable: CommitLogDispatcher[] = [];
  private readonly deferred = new DeferredDispatchQueue();
  private lastBlockAtMs = 0;
  private drainTimer: NodeJS.Timeout | null = null;
  private drainImmediate: NodeJS.Immediate | null = null;
  private stopped = false;
  private readonly quietMs: number;
  private readonly chunkRecords: number;
  private readonly maxRecords: number;
  private readonly failures = new Map<string, number>();
  private readonly limiter: LogRateLimiter;

  constructor(
    private readonly logger: Logger,
    clock: Clock,
    logIntervalMs = DISPATCH_FAILURE_LOG_INTERVAL_MS,
    defer: DeferOptions = {},
  ) {
    this.limiter = new LogRateLimiter(clock, logIntervalMs);
    this.quietMs = defer.quietMs ?? DEFERRED_QUIET_MS;
    this.chunkRecords = defer.chunkRecords ?? DEFERRED_CHUNK_RECORDS;
    this.maxRecords = defer.maxRecords ?? DEFERRED_MAX_RECORDS;
  }

  add(d: CommitLogDispatcher): void {
    if (d.required) this.required.push(d);
    else if (d.deferrable) this.deferrable.push(d);
    else this.optional.push(d);
  }

  /** Required dispatchers first, then optional ones, deferrable ones last (the order `run` uses). */
  list(): readonly CommitLogDispatcher[] {
    return [...this.required, ...this.optional, ...this.deferrable];
  }

  /** Records of prepared blocks whose deferrable dispatchers (the index) have not been fed yet. */
  get deferredRecords(): number {
    return this.deferred.length;
  }

  /** Feeds every deferred record to the deferrable dispatchers now (before a query, shutdown, repositioning). */
  drainDeferred(): void {
    this.cancelDrain();
    if (this.deferred.length > 0) this.deferred.shift(this.feedDeferrable);
  }

  /** Crash simulation: forgets the deferred records (recovery dispatches them again) and stops scheduling. */
  dropDeferred(): void {
    this.cancelDrain();
    this.deferred.clear();
  }

  /** Shutdown or crash simulation: schedules nothing any more (later records are fed at once; what is queued stays until drainDeferred or dropDeferred). */
  stop(): void {
    this.cancelDrain();
    this.stopped = true;
  }

  /** Feeds `req` to every dispatcher. @throws DispatchBlockedError when a required one fails. */
  run(req: DispatchRequest): void {
    for (const d of this.required) {
      try {
        d.dispatch(req);
      } catch (e) {
        throw new DispatchBlockedError(d.name, req, e);
      }
    }
    for (const d of this.optional) {
      try {
        d.dispatch(req);
      } catch (e) {
        this.optionalFailed(d.name, req, e);
      }
    }
    if (this.deferrable.length === 0) return;
    if (this.deferred.length > 0) this.deferred.push(req); // behind the queued records
    else this.feedDeferrable(req);
  }

  /**
   * Feeds the contiguous records of one prepared block to every dispatcher: required ones first
   * (their `dispatchBlock` when they have one, else `dispatch` per record), then the optional
   * ones per record as in `run`. Returns false, with no optional dispatcher fed, when a required
   * one failed: the caller then hands the records one by one with `run` (which blocks at the
   * record that fails; records already done are done again, idempotently).
   */
  runBlock(reqs: readonly DispatchRequest[]): boolean {
    try {
      for (const d of this.required) {
        if (d.dispatchBlock) d.dispatchBlock(reqs);
        else for (const r of reqs) d.dispatch(r);
      }
    } catch {
      return false;
    }
    for (const d of this.optional) {
      for (const r of reqs) {
        try {
          d.dispatch(r);
        } catch (e) {
          this.optionalFailed(d.name, r, e);
        }
      }
    }
    if (this.deferrable.length === 0) return true;
    if (this.stopped) {
      for (const r of reqs) this.feedDeferrable(r);
      return true;
    }
    for (const r of reqs) this.deferred.push(r);
    this.lastBlockAtMs = performance.now();
    this.scheduleDrain(this.quietMs);
    return true;
  }

  /** One record to every deferrable dispatcher (failures counted and logged as for optional ones). */
  private readonly feedDeferrable = (r: DispatchRequest): void => {
    for (const d of this.deferrable) {
      try {
        d.dispatch(r);
      } catch (e) {
        this.optionalFailed(d.name, r, e);
      }
    }
  };

  private scheduleDrain(ms: number): void {
    if (this.drainTimer !== null || this.drainImmediate !== null) return;
    this.drainTimer = setTimeout(this.drainStep, ms);
    this.drainTimer.unref();
  }

  private cancelDrain(): void {
    if (this.drainTimer !== null) clearTimeout(this.drainTimer);
    if (this.drainImmediate !== null) clearImmediate(this.drainImmediate);
    this.drainTimer = null;
    this.drainImmediate = null;
  }

  /** A chunk of the deferred records, unless a block was dispatched within quietMs (then later). */
  private readonly drainStep = (): void => {
    this.drainTimer = null;
    this.drainImmediate = null;
    if (this.deferred.length === 0) return;
    const sinceBlockMs = performance.now() - this.lastBlockAtMs;
    if (sinceBlockMs < this.quietMs && this.deferred.length < this.maxRecords) {
      this.scheduleDrain(Math.max(1, this.quietMs - sinceBlockMs));
      return;
    }
    this.deferred.shift(this.feedDeferrable, this.chunkRecords);
    if (this.deferred.length > 0) this.drainImmediate = setImmediate(this.drainStep);
  };

  /** Failures of optional dispatchers so far, by dispatcher name (names without failures absent). */
  failureCounts(): Record<string, number> {
    return Object.fromEntries(this.failures);
  }

  private optionalFailed(name: string, req: DispatchRequest, err: unknown): void {
    const failures = (this.failures.get(name) ?? 0) + 1;
    this.failures.set(name, failures);
    const suppressed = this.limiter.take(name);
    if (suppressed === null) return;
    this.logger.error(
      { err, dispatcher: name, offset: req.commitLogOffset, failures, suppressed },
      `${name} dispatch failed: ${describeWriteError(err)}; ConsumeQueue dispatch goes on (failures so far: ${failures}, lines suppressed since the last one: ${suppressed})`,
    );
  }
}
