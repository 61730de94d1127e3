/**
 * Transactional messages, shared by the remoting side (SEND with TRAN_MSG, END_TRANSACTION 37,
 * CHECK_TRANSACTION_STATE 39) and the gRPC side (SendMessage TRANSACTION, EndTransaction,
 * RecoverOrphanedTransactionCommand). Mirrors Apache's `TransactionalMessageServiceImpl` and
 * `TransactionalMessageCheckService` with the on-disk layout of spec §10 (half topic, op topic).
 *
 * State: the half messages not yet resolved ("pending") are kept in memory, keyed by half queue
 * offset. At start they are rebuilt from the store: every op record (RMQ_SYS_TRANS_OP_HALF_TOPIC,
 * read from its min offset) names resolved half offsets; half messages from the saved check
 * progress (consumer offset of group CID_RMQ_SYS_TRANS on the half topic) that no op names are
 * pending. The progress is the lowest pending offset.
 *
 * Check (every `transactionCheckInterval`): a pending half message older than
 * `transactionTimeOut` (or its CHECK_IMMUNITY_TIME_IN_SECONDS) and not checked within the last
 * `transactionTimeOut` is checked back with a producer through the registered checkers (the first
 * that accepts wins); after `transactionCheckMax` checks it is discarded into
 * TRANS_CHECK_MAX_TIME_TOPIC and resolved. Unlike Apache, tsmq does not re-put a checked half
 * message: its check count lives in memory (a restart starts again from the count stored with the
 * half message, TRANSACTION_CHECK_TIMES, which Apache's re-puts raise; 0 for tsmq's own).
 */
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import type { MessageExt, MessageInner } from '../../common/message/message.js';
import { MessageConst } from '../../common/message/message-const.js';
import { decodeRecord } from '../../common/message/record-codec.js';
import type { PutMessageResult } from '../../store/message-store.js';
import { checkView, HALF_TOPIC, OP_TOPIC, CHECK_MAX_TIME_TOPIC, opMessage, parseOpBody, toCheckMaxTimeMessage, toCommitMessage, toHalfMessage } from './half-message.js';
import type { TransactionBroker } from './transaction-broker.js';
import type { TransactionConfig } from './transaction-config.js';

export interface PendingHalf {
  halfQueueOffset: number;
  commitLogOffset: number;
  storeTimestamp: number;
  producerGroup: string;
  /** UNIQ_KEY of the half message (the producer's message id). */
  uniqKey: string;
  /** The topic the message is for (REAL_TOPIC of the half message). */
  realTopic: string;
  checkTimes: number;
  lastCheckMs: number;
  immunityMs: number;
}

export interface CheckRequest {
  /** The half message with topic/queue restored to REAL_TOPIC/REAL_QID. */
  message: MessageExt;
  producerGroup: string;
  transactionId: string;
  halfQueueOffset: number;
  commitLogOffset: number;
}

/** Sends a check-back to some producer; returns false when it has nobody to ask. */
export type TransactionChecker = (req: CheckRequest) => boolean;

export type Resolution = 'COMMIT' | 'ROLLBACK';

export interface EndTransactionRequest {
  commitLogOffset: number;
  /** Half queue offset (remoting: tranStateTableOffset); checked when given. */
  halfQueueOffset?: number;
  /** Checked against PGROUP when given (remoting). */
  producerGroup?: string;
  /** Checked against UNIQ_KEY when given. */
  messageId?: string;
  resolution: Resolution;
  fromCheck: boolean;
}

export type EndTransactionResult =
  | { ok: true; alreadyResolved: boolean; committed?: PutMessageResult }
  | { ok: false; reason: 'NOT_FOUND' | 'MISMATCH' | 'PUT_FAILED'; message: string };

export interface TransactionalMessageServiceOptions {
  broker: TransactionBroker;
  config: TransactionConfig;
  clock: Clock;
  logger?: Logger;
  /** Called after a commit stored the real message (wakes long polls). */
  onCommitted?: (topic: string, queueId: number) => void;
}

const SCAN_GROUP = 'CID_RMQ_SYS_TRANS';

/**
 * Checks already made of a half message found in the store: Apache's check service re-puts a half
 * message with TRANSACTION_CHECK_TIMES raised (putBackHalfMsgQueue), so a store taken over from
 * Apache keeps counting towards transactionCheckMax. 0 when absent or not a non-negative integer.
 */
function checkTimesOf(m: MessageExt): number {
  const n = Number(m.properties.get(MessageConst.TRANSACTION_CHECK_TIMES) ?? '0');
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}
const CHUNK = 32;

/** gRPC transaction id: "<half CommitLog offset>:<half queue offset>" (what EndTransaction needs). */
export function encodeTransactionId(commitLogOffset: number, halfQueueOffset: number): string {
  return `${commitLogOffset}:${halfQueueOffset}`;
}

export function decodeTransactionId(text: string): { commitLogOffset: number; halfQueueOffset: number } | null {
  const m = /^(\d{1,16}):(\d{1,16})$/.exec(text ?? '');
  return m ? { commitLogOffset: Number(m[1]), halfQueueOffset: Number(m[2]) } : null;
}

export class TransactionalMessageService {
  private readonly pending = new Map<number, PendingHalf>();
  private readonly checkers: TransactionChecker[] = [];
  private readonly logger: Logger;
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private loaded = false;

  constructor(private readonly opts: TransactionalMessageServiceOptions) {
    this.logger = opts.logger ?? silentLogger;
  }

  addChecker(checker: TransactionChecker): void {
    this.checkers.push(checker);
  }

  /** Unresolved half messages (copy, by half queue offset). */
  /** Half messages not yet resolved, per real topic (the rocketmq_half_messages gauge). */
  pendingByTopic(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const p of this.pending.values()) counts.set(p.realTopic, (counts.get(p.realTopic) ?? 0) + 1);
    return counts;
  }

  pendingHalves(): PendingHalf[] {
    return [...this.pending.values()].sort((a, b) => a.halfQueueOffset - b.halfQueueOffset);
  }

  /** Rebuilds the pending set from the store and starts the periodic check. */
  async start(): Promise<void> {
    await this.load();
    this.timer = setInterval(() => void this.check(), this.opts.config.transactionCheckInterval);
    this.timer.unref();
  }

  async shutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.checking?.catch(() => undefined);
    this.saveProgress();
  }

  private async load(): Promise<void> {
    const { broker } = this.opts;
    broker.ensureTopic(HALF_TOPIC, 1);
    broker.ensureTopic(OP_TOPIC, 1);
    const resolved = new Set<number>();
    await this.scan(OP_TOPIC, broker.store.getMinOffsetInQueue(OP_TOPIC, 0), (m) => {
      for (const off of parseOpBody(m.body)) resolved.add(off);
    });
    const saved = broker.loadProgress(HALF_TOPIC);
    const from = Math.max(saved, broker.store.getMinOffsetInQueue(HALF_TOPIC, 0), 0);
    await this.scan(HALF_TOPIC, from, (m) => {
      if (!resolved.has(m.queueOffset)) this.track(m);
    });
    this.loaded = true;
    this.logger.info(`transactions: ${this.pending.size} half messages pending from offset ${from}`);
  }

  private async scan(topic: string, from: number, each: (m: MessageExt) => void): Promise<void> {
    const store = this.opts.broker.store;
    let offset = from;
    while (offset < store.getMaxOffsetInQueue(topic, 0)) {
      const got = await store.getMessage(SCAN_GROUP, topic, 0, offset, CHUNK, null);
      for (const rec of got.messages) {
        try {
          each(decodeRecord(rec, 0));
        } catch (e) {
          this.logger.error(`${topic}: undecodable record skipped: ${(e as Error).message}`);
        }
      }
      if (got.nextBeginOffset <= offset) break;
      offset = got.nextBeginOffset;
    }
  }

  private track(m: MessageExt): PendingHalf {
    const p: PendingHalf = {
      halfQueueOffset: m.queueOffset,
      commitLogOffset: m.commitLogOffset,
      storeTimestamp: m.storeTimestamp,
      producerGroup: m.properties.get(MessageConst.PGROUP) ?? '',
      uniqKey: m.properties.get(MessageConst.UNIQ_KEY) ?? m.msgId,
      realTopic: m.properties.get(MessageConst.REAL_TOPIC) ?? '',
      checkTimes: checkTimesOf(m),
      lastCheckMs: 0,
      immunityMs: this.immunityMsOf(m.properties),
    };
    this.pending.set(p.halfQueueOffset, p);
    return p;
  }

  /**
   * Stores a producer's transactional message as a half message. Returns the put result (with the
   * half's offsets) and the transaction id to hand back to gRPC producers.
   */
  async prepare(msg: MessageInner): Promise<{ result: PutMessageResult; transactionId?: string }> {
    const half = toHalfMessage(msg);
    this.opts.broker.ensureTopic(HALF_TOPIC, 1);
    const result = await this.opts.broker.putHalfMessage(half);
    const a = result.appendResult;
    if (!a) return { result };
    this.pending.set(a.queueOffset, {
      halfQueueOffset: a.queueOffset,
      commitLogOffset: a.wroteOffset,
      storeTimestamp: a.storeTimestamp,
      producerGroup: half.properties.get(MessageConst.PGROUP) ?? '',
      uniqKey: half.properties.get(MessageConst.UNIQ_KEY) ?? a.msgId,
      realTopic: half.properties.get(MessageConst.REAL_TOPIC) ?? msg.topic,
      checkTimes: 0,
      lastCheckMs: 0,
      immunityMs: this.immunityMsOf(half.properties),
    });
    return { result, transactionId: encodeTransactionId(a.wroteOffset, a.queueOffset) };
  }

  /**
   * How long a half message is left alone before its first check-back, ms: its
   * CHECK_IMMUNITY_TIME_IN_SECONDS × 1000 when that is a whole number ≥ 0, else `transactionTimeOut`
   * (Apache TransactionalMessageServiceImpl.getImmunityTime).
   */
  private immunityMsOf(properties: ReadonlyMap<string, string>): number {
    const text = properties.get(MessageConst.CHECK_IMMUNITY_TIME_IN_SECONDS);
    const seconds = text !== undefined && /^\d{1,15}$/.test(text.trim()) ? Number(text.trim()) : -1;
    return seconds >= 0 ? seconds * 1000 : this.opts.config.transactionTimeOut;
  }

  /** Commits or rolls back a half message (idempotent: a resolved one answers ok/alreadyResolved). */
  async end(req: EndTransactionRequest): Promise<EndTransactionResult> {
    const half = await this.opts.broker.store.lookMessageByOffset(req.commitLogOffset);
    if (!half || half.topic !== HALF_TOPIC) {
      return { ok: false, reason: 'NOT_FOUND', message: `no half message at commit log offset ${req.commitLogOffset}` };
    }
    if (req.halfQueueOffset !== undefined && req.halfQueueOffset !== half.queueOffset) {
      return { ok: false, reason: 'MISMATCH', message: `half message at ${req.commitLogOffset} has queue offset ${half.queueOffset}, not ${req.halfQueueOffset}` };
    }
    const uniq = half.properties.get(MessageConst.UNIQ_KEY);
    if (req.messageId && uniq && req.messageId !== uniq && req.messageId !== half.msgId) {
      return { ok: false, reason: 'MISMATCH', message: `message id ${req.messageId} does not match the half message (${uniq})` };
    }
    const pgroup = half.properties.get(MessageConst.PGROUP);
    if (req.producerGroup !== undefined && pgroup !== undefined && req.producerGroup !== pgroup) {
      return { ok: false, reason: 'MISMATCH', message: 'The producer group wrong' };
    }
    const pending = this.pending.get(half.queueOffset);
    if (!pending && this.loaded) return { ok: true, alreadyResolved: true };
    this.pending.delete(half.queueOffset);
    let committed: PutMessageResult | undefined;
    if (req.resolution === 'COMMIT') {
      const msg = toCommitMessage(half);
      committed = await this.opts.broker.putCommittedMessage(msg);
      if (!committed.appendResult) {
        if (pending) this.pending.set(half.queueOffset, pending);
        return { ok: false, reason: 'PUT_FAILED', message: `commit put failed: ${committed.status} ${committed.remark ?? ''}` };
      }
      this.opts.onCommitted?.(msg.topic, msg.queueId);
    }
    await this.writeOp([half.queueOffset]);
    this.opts.broker.recordEnd?.(half.properties.get(MessageConst.REAL_TOPIC) ?? half.topic, req.resolution, half.bornTimestamp);
    this.logger.info(`transaction ${uniq ?? half.msgId} ${req.resolution === 'COMMIT' ? 'committed' : 'rolled back'}${req.fromCheck ? ' (check)' : ''}`);
    return { ok: true, alreadyResolved: false, ...(committed ? { committed } : {}) };
  }

  private async writeOp(offsets: number[]): Promise<void> {
    const r = await this.opts.broker.putSystemMessage(opMessage(offsets, this.opts.broker.storeHost, this.opts.clock.nowMs()));
    if (!r.appendResult) this.logger.error(`op record for half offsets ${offsets.join(',')} not stored: ${r.status}`);
    this.saveProgress();
  }

  private saveProgress(): void {
    let min = this.opts.broker.store.getMaxOffsetInQueue(HALF_TOPIC, 0);
    for (const off of this.pending.keys()) min = Math.min(min, off);
    this.opts.broker.saveProgress(HALF_TOPIC, min);
  }

  /** One check pass (also run by the timer). Never rejects. */
  check(): Promise<void> {
    this.checking ??= this.checkOnce()
      .catch((e: Error) => this.logger.error(`transaction check failed: ${e.message}`))
      .finally(() => (this.checking = null));
    return this.checking;
  }

  private async checkOnce(): Promise<void> {
    const { config, clock } = this.opts;
    for (const p of this.pendingHalves()) {
      const now = clock.nowMs();
      if (now - p.storeTimestamp < p.immunityMs || now - p.lastCheckMs < config.transactionTimeOut) continue;
      const half = await this.opts.broker.store.lookMessageByOffset(p.commitLogOffset);
      if (!this.pending.has(p.halfQueueOffset)) continue;
      if (!half) {
        this.logger.warn(`half message at ${p.commitLogOffset} is gone from the store; dropped`);
        this.pending.delete(p.halfQueueOffset);
        continue;
      }
      if (p.checkTimes >= config.transactionCheckMax) {
        this.pending.delete(p.halfQueueOffset);
        this.opts.broker.ensureTopic(CHECK_MAX_TIME_TOPIC, 1);
        await this.opts.broker.putSystemMessage(toCheckMaxTimeMessage(half));
        await this.writeOp([p.halfQueueOffset]);
        this.logger.warn(`half message ${p.uniqKey} checked ${p.checkTimes} times; discarded into ${CHECK_MAX_TIME_TOPIC}`);
        continue;
      }
      p.checkTimes++;
      p.lastCheckMs = now;
      const req: CheckRequest = {
        message: checkView(half),
        producerGroup: p.producerGroup,
        transactionId: encodeTransactionId(p.commitLogOffset, p.halfQueueOffset),
        halfQueueOffset: p.halfQueueOffset,
        commitLogOffset: p.commitLogOffset,
      };
      const sent = this.checkers.some((c) => {
        try {
          return c(req);
        } catch (e) {
          this.logger.error(`transaction checker failed: ${(e as Error).message}`);
          return false;
        }
      });
      if (!sent) this.logger.warn(`no producer to check transaction ${p.uniqKey} (group ${p.producerGroup || '-'})`);
    }
  }
}
