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
 */
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import { LogRateLimiter } from '../../common/logging/log-rate-limiter.js';
import { describeWriteError } from '../../common/fs/write-error.js';
import type { DispatchRequest } from '../../common/message/record-codec.js';
import type { CommitLogDispatcher } from './commit-log-dispatcher.js';
import type { PreparedDispatchBlock } from './prepared-dispatch-block.js';

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

export class DispatcherChain {
  private readonly required: CommitLogDispatcher[] = [];
  private readonly optional: CommitLogDispatcher[] = [];
  private readonly failures = new Map<string, number>();
  private readonly limiter: LogRateLimiter;

  constructor(
    private readonly logger: Logger,
    clock: Clock,
    logIntervalMs = DISPATCH_FAILURE_LOG_INTERVAL_MS,
  ) {
    this.limiter = new LogRateLimiter(clock, logIntervalMs);
  }

  add(d: CommitLogDispatcher): void {
    (d.required ? this.required : this.optional).push(d);
  }

  /** Required dispatchers first, then optional ones (the order `run` uses). */
  list(): readonly CommitLogDispatcher[] {
    return [...this.required, ...this.optional];
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
  }

  /** Tells every dispatcher with a `willDispatch` hint that `reqs[from, to)` come next; a failing hint is ignored. */
  willDispatch(reqs: readonly DispatchRequest[], from: number, to: number): void {
    for (const d of this.optional) {
      if (!d.willDispatch) continue;
      try {
        d.willDispatch(reqs, from, to);
      } catch {
        // a hint only: dispatch itself reports what fails
      }
    }
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
    for (const d of this.optional) this.eachOptional(d, reqs);
    return true;
  }

  /**
   * `runBlock` for the columns of a prepared block: dispatchers with `dispatchPrepared` take the
   * columns, the others the block's records as DispatchRequests (made once, only then). Returns
   * false, with no optional dispatcher fed, when a required one failed (the caller then hands the
   * records one by one with `run`).
   */
  runPrepared(block: PreparedDispatchBlock): boolean {
    let reqs: DispatchRequest[] | null = null;
    try {
      for (const d of this.required) {
        if (d.dispatchPrepared) {
          d.dispatchPrepared(block, (_k, e) => {
            throw e;
          });
        } else {
          reqs ??= block.requests();
          if (d.dispatchBlock) d.dispatchBlock(reqs);
          else for (const r of reqs) d.dispatch(r);
        }
      }
    } catch {
      return false;
    }
    for (const d of this.optional) {
      if (d.dispatchPrepared) d.dispatchPrepared(block, (k, e) => this.optionalFailed(d.name, block.request(k), e));
      else this.eachOptional(d, (reqs ??= block.requests()));
    }
    return true;
  }

  /** Feeds `reqs` one by one to optional dispatcher `d`; a failure is counted and logged and the next record goes on. */
  private eachOptional(d: CommitLogDispatcher, reqs: readonly DispatchRequest[]): void {
    for (const r of reqs) {
      try {
        d.dispatch(r);
      } catch (e) {
        this.optionalFailed(d.name, r, e);
      }
    }
  }

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
