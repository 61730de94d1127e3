/**
 * The put path (RocketMQ `DefaultMessageStore.asyncPutMessage` + `CommitLog.asyncPutMessage`
 * + `handleDiskFlushAndHA`). Never throws; every outcome is a PutMessageResult:
 *
 * 1. Refusals, in RocketMQ's `checkStoreStatus` order, all SERVICE_NOT_AVAILABLE:
 *    shut down → "message store has been shut down"; SLAVE role → "message store is a slave;
 *    puts are refused"; a running flag set (disk full, CommitLog write error, logics queue
 *    error) → "message store is not writable: <reason>"; the last CommitLog segment kept a
 *    failed background write → the write-error flag is set (see 3).
 * 2. Append (CommitLog.append: MESSAGE_ILLEGAL, PROPERTIES_SIZE_EXCEEDED, ... with a remark),
 *    then queue the record's DispatchRequest; under ASYNC_FLUSH dispatch runs at once up to the
 *    written offset (under SYNC_FLUSH the group commit drives it after the flush).
 * 3. A CommitLog write that throws (ENOSPC, EIO; also the end-of-file filler of a roll) sets the
 *    WRITE_ERROR running flag — logged once, cleared by the disk check when writes work again —
 *    and returns "message store is not writable: <describeWriteError>".
 * 4. Under ASYNC_FLUSH the result waits for the record to be committed (write of the write
 *    buffer into the page cache — a pwrite on this thread, or on the libuv pool with
 *    commitCommitLogAsync; one commit per event-loop turn shared by all its puts,
 *    MappedFile.notifyWhenCommitted: one waiter entry per turn, not per put), so no
 *    reply goes out for bytes that only this process holds: a process crash (SIGKILL, OOM kill)
 *    loses no acknowledged message, as with Apache's mapped CommitLog. Only a power loss may take
 *    the unflushed tail. When that commit fails (ENOSPC, EIO) the record stays appended in the
 *    write buffer (a later commit may still write it) but the answer is FLUSH_DISK_TIMEOUT
 *    ("stored, durability not confirmed"; Apache's clients report it as a send status, not an
 *    exception), never PUT_OK, and the failure refuses the next puts (1).
 * 5. Waits (skipped when the message's WAIT property is "false"): the disk flush covering the
 *    record (FLUSH_DISK_TIMEOUT after syncFlushTimeout under SYNC_FLUSH) and, on a SYNC_MASTER,
 *    a slave ack in parallel (FLUSH_SLAVE_TIMEOUT / SLAVE_NOT_AVAILABLE, 4.x semantics,
 *    docs/ha.md). The record is stored in every case; `appendResult` says where. After a failed
 *    fdatasync (fsyncgate) waiters get FLUSH_DISK_TIMEOUT at once with "sync flush failed:
 *    <reason>", and the running flag refuses every later put until restart.
 *
 * `putMessageWithCallback` is `putMessage` told through a callback instead of a promise (for
 * callers with many puts in flight that do not await each one: no promise per put).
 *
 * `putMessages` does the same for a batch (RocketMQ `asyncPutMessages`): one atomic append
 * (CommitLog.appendBatch), one flush/slave wait covering the whole block. `putPrepared` appends
 * records encoded ahead (CommitLog.prepare/appendPrepared, any topics and queues) the same way:
 * refusals of step 1, one dispatch, one flush/slave wait for the block (tsmq addition, used by
 * the timer service's due deliveries).
 */
import type { Logger } from '../../common/logging/logger.js';
import type { MessageInner } from '../../common/message/message.js';
import type { EncodedBatch } from '../../common/message/encoded-batch.js';
import { MessageConst } from '../../common/message/message-const.js';
import { describeWriteError } from '../../common/fs/write-error.js';
import { batchAppendResults, type AppendOutcome, type BatchAppendOutcome, type BatchAppendResultsSource, type CommitLog, type PreparedAppendOutcome } from '../commitlog/commit-log.js';
import type { FlushManager, FlushStatus } from '../commitlog/flush-services.js';
import type { QueueOffsetTable } from '../consumequeue/queue-offset-table.js';
import type { ReputMessageService } from '../dispatch/reput-message-service.js';
import type { HandleHAResult } from '../ha/ha-service.js';
import { preparedColumnsOf, type AppendResult, type PreparedColumns, type PreparedMessage, type PutMessageCallback, type PutMessageFailure, type PutMessageResult, type PutMessagesResult, type PutMessageStatus, type PutPreparedResult } from '../message-store.js';
import type { RunningFlags } from '../retention/running-flags.js';
import type { StoreConfig } from '../store-config.js';
import type { StoreState } from '../store-state.js';

/** What the put path needs of the replication role (StoreReplication). */
export interface ReplicaAck {
  /** Wakes the master's transfer loops after an append. */
  notifyAppended(): void;
  /** SYNC_MASTER: resolves when a slave acknowledged `nextOffset` (or why not). */
  handleHA(nextOffset: number): HandleHAResult | Promise<HandleHAResult>;
}

export interface PutPathParts {
  config: Pick<StoreConfig, 'brokerRole' | 'flushDiskType'>;
  state: StoreState;
  commitLog: CommitLog;
  queueOffsets: QueueOffsetTable;
  dispatch: Pick<ReputMessageService, 'enqueue' | 'enqueueBlock' | 'enqueuePrepared' | 'driveToLimit'>;
  flushManager: Pick<FlushManager, 'handleDiskFlush'>;
  /** The replication role once started (null before startHA). */
  replication: () => ReplicaAck | null;
  /** Controller mode: why puts are refused right now (a fenced master), or null (default: never). */
  fence?: () => string | null;
  flags: Pick<RunningFlags, 'hasWriteError' | 'setWriteError' | 'isSyncFailed' | 'reason'>;
  logger: Logger;
}

export type { PutMessageCallback, PutMessageFailure } from '../message-store.js';

/**
 * A single put appended under ASYNC_FLUSH whose bytes wait for the segment's commit: told by
 * MappedFile.notifyWhenCommitted (one waiter entry per commit, not per put), then answered through
 * `done(result, arg)`.
 */
interface PendingPut {
  appendResult: AppendResult;
  nextOffset: number;
  wait: boolean;
  done: (result: PutMessageResult, arg: never) => void;
  arg: unknown;
  /** A promise caller's reject: an internal error after the commit (a bug) rejects its promise. */
  reject: ((e: unknown) => void) | null;
  /** A callback caller's `fail`, told such an error with `arg`; null with `reject`: thrown (an uncaught exception). */
  fail: ((e: unknown, arg: never) => void) | null;
}

/** A PendingPut answered through a promise's resolve function (its `arg`). */
function resolvePut(result: PutMessageResult, resolve: (r: PutMessageResult) => void): void {
  resolve(result);
}

/** One promise per put: `run` is synchronous unless a commit, flush or slave ack is awaited. */
function onePromise<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    const r = run();
    return r instanceof Promise ? r : Promise.resolve(r);
  } catch (e) {
    return Promise.reject(e);
  }
}

export class PutMessageService {
  constructor(private readonly p: PutPathParts) {}

  /** Stores one message (the file comment's steps); one promise per call, never rejected by a refusal. */
  putMessage(msg: MessageInner): Promise<PutMessageResult> {
    let out: PutMessageResult | Promise<PutMessageResult> | PendingPut;
    try {
      out = this.putMessageNow(msg);
    } catch (e) {
      return Promise.reject(e);
    }
    if (out instanceof Promise) return out;
    if (isPendingPut(out)) {
      const pending = out;
      return new Promise<PutMessageResult>((resolve, reject) => {
        pending.done = resolvePut;
        pending.arg = resolve;
        pending.reject = reject;
      });
    }
    return Promise.resolve(out);
  }

  /**
   * `putMessage` without a promise, for callers that keep many puts in flight and do not await each
   * one: the same steps and outcomes, told to `done(result, msg)` exactly once — synchronously,
   * before this returns, when the outcome is known at once (a refusal; or no commit, flush or slave
   * ack to wait for), else later from the commit (a microtask after it) or the flush/slave wait.
   * Under ASYNC_FLUSH the puts of one event-loop turn share one commit waiter, so a put costs no
   * promise. An internal error after the call returned goes to `fail(err, msg)` (without `fail`: an
   * uncaught exception). `done` and `fail` must not throw.
   * @throws only what `putMessage` would reject with (an internal error; refusals are results).
   */
  putMessageWithCallback(msg: MessageInner, done: PutMessageCallback, fail?: PutMessageFailure): void {
    const out = this.putMessageNow(msg);
    if (out instanceof Promise) {
      out.then((r) => done(r, msg), fail ? (e: unknown) => fail(e, msg) : undefined);
      return;
    }
    if (isPendingPut(out)) {
      out.done = done;
      out.arg = msg;
      out.fail = fail ?? null;
      return;
    }
    done(out, msg);
  }

  /** The put up to its waits: a result, a promise of one (flush/slave waits), or a PendingPut waiting for the commit (its `done` set by the caller). */
  private putMessageNow(msg: MessageInner): PutMessageResult | Promise<PutMessageResult> | PendingPut {
    const refused = this.checkStoreStatus();
    if (refused) return refused;
    const { commitLog } = this.p;
    let out: AppendOutcome;
    try {
      out = commitLog.append(msg, this.p.queueOffsets);
    } catch (e) {
      return this.refuseAfterWriteError(e);
    }
    if (out.status !== 'PUT_OK') return this.appendRefusal(out);
    const r = out.appendResult;
    this.p.dispatch.enqueue(out.dispatch);
    const nextOffset = r.wroteOffset + r.wroteBytes;
    const wait = msg.properties.get(MessageConst.WAIT) !== 'false';
    if (this.p.config.flushDiskType !== 'ASYNC_FLUSH') return this.afterCommit(r, nextOffset, wait);
    this.p.dispatch.driveToLimit();
    // step 4 without a promise: one commit waiter entry is shared by the puts of the turn
    const f = commitLog.mfq.findMappedFileByOffset(nextOffset - 1);
    if (f === null) return this.afterCommit(r, nextOffset, wait); // deleted by retention meanwhile
    const pending: PendingPut = { appendResult: r, nextOffset, wait, done: unanswered, arg: null, reject: null, fail: null };
    return f.notifyWhenCommitted(nextOffset - f.fileFromOffset, this.onPutCommitted, pending) ? pending : this.afterCommit(r, nextOffset, wait);
  }

  /** Step 4's end for a single put: its answer once the commit wrote (or failed to write) its bytes. */
  private readonly onPutCommitted = (commitError: Error | null, pending: PendingPut): void => {
    const r = pending.appendResult;
    let out: PutMessageResult | Promise<PutMessageResult>;
    try {
      out = commitError === null ? this.afterCommit(r, pending.nextOffset, pending.wait) : commitFailed(r, commitError);
    } catch (e) {
      if (pending.reject !== null) pending.reject(e);
      else if (pending.fail !== null) pending.fail(e, pending.arg as never);
      else throw e;
      return;
    }
    if (out instanceof Promise) out.then((res) => pending.done(res, pending.arg as never), pending.reject ?? (pending.fail === null ? undefined : (e: unknown) => pending.fail!(e, pending.arg as never)));
    else pending.done(out, pending.arg as never);
  };

  /**
   * Stores a batch as one block (see CommitLog.appendBatch for the rules and refusals). On
   * success `appendResults` has one entry per message, in order, and `appendResult` sums the
   * batch the way RocketMQ's batch AppendMessageResult does: wroteOffset of the first record,
   * wroteBytes of the block, msgId = the records' offset ids comma-joined, queueOffset of the
   * first message, the batch's one storeTimestamp. The waits are skipped when the first
   * message's WAIT property is "false" (the batch's WAIT).
   */
  putMessages(msgs: readonly MessageInner[]): Promise<PutMessagesResult> {
    return onePromise(() => this.putMessagesNow(msgs));
  }

  private putMessagesNow(msgs: readonly MessageInner[]): PutMessagesResult | Promise<PutMessagesResult> {
    const refused = this.checkStoreStatus();
    if (refused) return refused;
    const { commitLog } = this.p;
    let out: BatchAppendOutcome;
    try {
      out = commitLog.appendBatch(msgs, this.p.queueOffsets);
    } catch (e) {
      return this.refuseAfterWriteError(e);
    }
    if (out.status !== 'PUT_OK') return this.appendRefusal(out);
    return this.afterBatchAppend(out, msgs[0]!.properties.get(MessageConst.WAIT) !== 'false');
  }

  /**
   * putMessages for a batch on the byte path (encoded-batch.ts; CommitLog.appendEncodedBatch):
   * the same block, dispatch, waits and result. The waits are skipped when the first item's
   * stored WAIT is "false" (`batch.waitStoreMsgOK`).
   */
  putEncodedBatch(batch: EncodedBatch): Promise<PutMessagesResult> {
    return onePromise(() => this.putEncodedBatchNow(batch));
  }

  private putEncodedBatchNow(batch: EncodedBatch): PutMessagesResult | Promise<PutMessagesResult> {
    const refused = this.checkStoreStatus();
    if (refused) return refused;
    let out: BatchAppendOutcome;
    try {
      out = this.p.commitLog.appendEncodedBatch(batch, this.p.queueOffsets);
    } catch (e) {
      return this.refuseAfterWriteError(e);
    }
    if (out.status !== 'PUT_OK') return this.appendRefusal(out);
    return this.afterBatchAppend(out, batch.waitStoreMsgOK);
  }

  /** The dispatch, waits and result of an appended batch (`wait`: its WAIT is not "false"). */
  private afterBatchAppend(out: Extract<BatchAppendOutcome, { status: 'PUT_OK' }>, wait: boolean): PutMessagesResult | Promise<PutMessagesResult> {
    const summary: AppendResult = { wroteOffset: out.wroteOffset, wroteBytes: out.wroteBytes, msgId: out.msgIds, queueOffset: out.firstQueueOffset, storeTimestamp: out.storeTimestamp };
    // one block: the ConsumeQueue takes the batch's entries in one append (DispatcherChain.runBlock)
    this.p.dispatch.enqueueBlock(out.dispatches);
    const put = this.handleDiskFlushAndHA(summary, out.wroteOffset + out.wroteBytes, wait);
    const source = out.appendResultsSource;
    return put instanceof Promise ? put.then((p) => withAppendResults(p, source)) : withAppendResults(put, source);
  }

  /**
   * Stores records made by CommitLog.prepare, in order (see CommitLog.appendPrepared). The waits
   * cover the whole block and are skipped when every record's WAIT property is "false". When a
   * roll fails midway, the records before it are stored and dispatched, `appended` counts them
   * and the status is the refusal (the write-error flag is set as for putMessage).
   */
  async putPrepared(input: readonly PreparedMessage[] | PreparedColumns): Promise<PutPreparedResult> {
    const records = isColumns(input) ? input : preparedColumnsOf(input);
    const refused = this.checkStoreStatus();
    if (refused) return { status: refused.status, remark: refused.remark ?? refused.status, appended: 0, wroteOffset: 0, wroteBytes: 0, storeTimestamp: 0 };
    const { commitLog } = this.p;
    let out: PreparedAppendOutcome;
    try {
      out = commitLog.appendPrepared(records, this.p.queueOffsets);
    } catch (e) {
      const r = this.refuseAfterWriteError(e);
      return { status: r.status, remark: r.remark ?? r.status, appended: 0, wroteOffset: 0, wroteBytes: 0, storeTimestamp: 0 };
    }
    this.p.dispatch.enqueuePrepared(out.block);
    const { appended, wroteOffset, wroteBytes, storeTimestamp } = out;
    let failed: PutMessageResult | null = null;
    if (out.failure) failed = this.appendRefusal(out.failure);
    if (appended === 0) {
      return { status: failed?.status ?? 'PUT_OK', remark: failed?.remark ?? 'no record', appended, wroteOffset, wroteBytes, storeTimestamp };
    }
    let wait = false;
    for (let k = 0; k < appended && !wait; k++) wait = records.wait[records.rows[k]!] === 1;
    const summary: AppendResult = { wroteOffset, wroteBytes, msgId: '', queueOffset: 0, storeTimestamp };
    const put = await this.handleDiskFlushAndHA(summary, wroteOffset + wroteBytes, wait);
    const status = failed ? failed.status : put.status;
    const remark = failed ? failed.remark : put.remark;
    return { status, appended, wroteOffset, wroteBytes, storeTimestamp, ...(remark !== undefined ? { remark } : {}) };
  }

  /**
   * After an append ending at `nextOffset` (RocketMQ `handleDiskFlushAndHA`): dispatch under
   * ASYNC_FLUSH, wake replication, then (when `wait`) the flush and, on a SYNC_MASTER, the slave ack.
   */
  private handleDiskFlushAndHA(r: AppendResult, nextOffset: number, wait: boolean): PutMessageResult | Promise<PutMessageResult> {
    const config = this.p.config;
    if (config.flushDiskType !== 'ASYNC_FLUSH') return this.afterCommit(r, nextOffset, wait);
    this.p.dispatch.driveToLimit();
    const pending = this.committed(nextOffset);
    if (pending === null) return this.afterCommit(r, nextOffset, wait);
    return pending.then((commitError) => (commitError === null ? this.afterCommit(r, nextOffset, wait) : commitFailed(r, commitError)));
  }

  /** Step 5 of the file comment: wake replication, then the flush and (SYNC_MASTER) slave waits. */
  private afterCommit(r: AppendResult, nextOffset: number, wait: boolean): PutMessageResult | Promise<PutMessageResult> {
    const config = this.p.config;
    const replication = this.p.replication();
    replication?.notifyAppended();
    const flush = this.p.flushManager.handleDiskFlush(nextOffset, wait);
    // SYNC_MASTER (4.x semantics, docs/ha.md): wait for a slave ack in parallel with the flush
    const replica = wait && config.brokerRole === 'SYNC_MASTER' ? (replication?.handleHA(nextOffset) ?? { status: 'SLAVE_NOT_AVAILABLE' as const, remark: 'HA service not started' }) : null;
    if (typeof flush === 'string' && !(replica instanceof Promise)) return this.putOutcome(r, flush, replica);
    return this.awaitFlushAndHA(r, flush, replica);
  }

  /** The waits of `handleDiskFlushAndHA` when one of them is pending: the flush first, then the slave ack. */
  private async awaitFlushAndHA(r: AppendResult, flush: FlushStatus | Promise<FlushStatus>, replica: HandleHAResult | Promise<HandleHAResult> | null): Promise<PutMessageResult> {
    const status = typeof flush === 'string' ? flush : await flush;
    if (status !== 'PUT_OK') return this.putOutcome(r, status, null);
    return this.putOutcome(r, status, replica instanceof Promise ? await replica : replica);
  }

  /** The put's result from the flush status and (SYNC_MASTER) the slave ack; a failed flush wins. */
  private putOutcome(r: AppendResult, status: FlushStatus, rs: HandleHAResult | null): PutMessageResult {
    if (status !== 'PUT_OK') {
      const remark = this.p.flags.isSyncFailed() ? `sync flush failed: ${this.p.flags.reason()}` : 'sync flush did not complete within syncFlushTimeout';
      return { status, appendResult: r, remark };
    }
    return rs === null || rs.status === 'PUT_OK' ? { status, appendResult: r } : { status: rs.status, appendResult: r, remark: rs.remark ?? rs.status };
  }

  /**
   * Step 4 of the file comment: null when the CommitLog bytes below `nextOffset` are in the page
   * cache, else a promise of null (once they are) or of the error of the commit that failed for
   * them. The segment commits everything buffered on the next setImmediate after an append (one
   * write shared by every put of the turn; with asyncCommit on the libuv pool, the event loop
   * goes on meanwhile). A failed commit is also kept in the segment's `commitError` (the next put
   * is refused, step 1); nothing is thrown here.
   */
  private committed(nextOffset: number): Promise<Error | null> | null {
    const f = this.p.commitLog.mfq.findMappedFileByOffset(nextOffset - 1);
    if (f === null) return null; // deleted by retention meanwhile
    return f.whenCommitted(nextOffset - f.fileFromOffset);
  }

  /**
   * Step 1 of the file comment: the refusal, or null when the put may go ahead. A failed
   * background write of the last CommitLog segment sets the write-error flag first, so the
   * remark is the flags' reason in their order (disk full, write error, logics queue error): a
   * full disk that also failed a ConsumeQueue write is reported as the CommitLog's failure.
   */
  private checkStoreStatus(): PutMessageResult | null {
    const { state, config, commitLog } = this.p;
    if (!state.isRunning()) return { status: 'SERVICE_NOT_AVAILABLE', remark: 'message store has been shut down' };
    if (config.brokerRole === 'SLAVE') return { status: 'SERVICE_NOT_AVAILABLE', remark: 'message store is a slave; puts are refused' };
    const fenced = this.p.fence?.() ?? null;
    if (fenced !== null) return { status: 'SERVICE_NOT_AVAILABLE', remark: fenced };
    const failedCommit = commitLog.mfq.getLastMappedFile()?.commitError;
    if (failedCommit) this.noteWriteError(failedCommit);
    if (state.notWritableReason !== null) return { status: 'SERVICE_NOT_AVAILABLE', remark: `message store is not writable: ${state.notWritableReason}` };
    return null;
  }

  /** A CommitLog write failed (e.g. ENOSPC): refuse puts until retention sees writes work again. */
  /**
   * The answer to an append the CommitLog refused. CREATE_MAPPED_FILE_FAILED after a failed
   * end-of-file filler of a roll is a write failure, not a file-creation one: the write-error flag
   * is set (puts refused until the disk check clears it), as for a throwing write.
   */
  private appendRefusal(out: { status: Exclude<PutMessageStatus, 'PUT_OK'>; remark: string; writeError?: unknown }): PutMessageResult {
    const failedWrite = out.writeError ?? (out.status === 'CREATE_MAPPED_FILE_FAILED' ? this.p.commitLog.mfq.getLastMappedFile()?.commitError : null);
    return failedWrite ? this.refuseAfterWriteError(failedWrite) : { status: out.status, remark: out.remark };
  }

  private refuseAfterWriteError(err: unknown): PutMessageResult {
    const reason = this.noteWriteError(err);
    return { status: 'SERVICE_NOT_AVAILABLE', remark: `message store is not writable: ${reason}` };
  }

  /** Sets the write-error flag (logged once) and returns its reason. */
  private noteWriteError(err: unknown): string {
    const reason = describeWriteError(err);
    if (!this.p.flags.hasWriteError()) this.p.logger.error({ err }, `CommitLog write failed; puts are refused until it works again: ${reason}`);
    this.p.flags.setWriteError(reason);
    return reason;
  }
}

function isPendingPut(x: PutMessageResult | PendingPut): x is PendingPut {
  return (x as PendingPut).nextOffset !== undefined;
}

/** Placeholder `done` of a PendingPut until its caller sets its own (set synchronously, before any commit). */
function unanswered(): void {}

/** Step 4's answer when the commit of the put's bytes failed. */
function isColumns(x: readonly PreparedMessage[] | PreparedColumns): x is PreparedColumns {
  return !Array.isArray(x);
}

function commitFailed(r: AppendResult, commitError: Error): PutMessageResult {
  return { status: 'FLUSH_DISK_TIMEOUT', appendResult: r, remark: `the CommitLog write into the page cache failed (${describeWriteError(commitError)}): the message is appended but only this process holds it` };
}

/**
 * Where a batch's result keeps the maker of its per-message results, then the results (a
 * non-enumerable own property: not copied by a spread, not serialised).
 */
const APPEND_RESULTS_SOURCE = Symbol('appendResultsSource');

type LazyAppendResults = PutMessagesResult & { [APPEND_RESULTS_SOURCE]: BatchAppendResultsSource | AppendResult[] };

/** The one `appendResults` getter of every batch result (see withAppendResults). */
function appendResultsOfResult(this: LazyAppendResults): AppendResult[] {
  const source = this[APPEND_RESULTS_SOURCE];
  if (Array.isArray(source)) return source;
  const results = batchAppendResults(source);
  this[APPEND_RESULTS_SOURCE] = results;
  return results;
}

const APPEND_RESULTS_PROPERTY: PropertyDescriptor = { get: appendResultsOfResult, enumerable: true, configurable: true };

/**
 * `put` with `appendResults` (one AppendResult per message) made on first read: the broker's
 * remoting batch path reads only the summary, and a batch's per-message results cost an object
 * and an id string per message. An own enumerable getter, so spreading or serialising the result
 * still gives the array (made once). The getter is one shared function and what the results are
 * made of sits in a hidden data property: a getter closure per result gave every result object a hidden class of
 * its own (V8 keeps an accessor in the hidden class), allocated in old space and holding the
 * batch's result objects (msgId list, offsets, closures) through every scavenge until the next
 * full GC — 5.6 % of all the put path's allocation was promoted that way.
 */
function withAppendResults(put: PutMessageResult, source: BatchAppendResultsSource): PutMessagesResult {
  Object.defineProperty(put, APPEND_RESULTS_SOURCE, { value: source, writable: true, enumerable: false, configurable: true });
  return Object.defineProperty(put as PutMessagesResult, 'appendResults', APPEND_RESULTS_PROPERTY);
}
