/**
 * Pop consumption (RocketMQ 5 semantics; one instance per broker, owned by BrokerController and
 * used by both the gRPC front's ReceiveMessage & co. and the remoting POP_MESSAGE & co.
 * processors): per consumer group, hand
 * out messages that are neither acked nor invisible, make them invisible for a while, count
 * deliveries, accept acks / invisibility changes by receipt handle, and move messages that ran out
 * of attempts to `%DLQ%<group>`. State lives in PopStateStore (durable, see docs/internals/pop.md).
 *
 * Unlike Apache (which re-puts expired messages into a `%RETRY%` topic through its revive
 * service), a redelivery here comes from the original queue position: the entry's invisibility
 * simply ends and the next pop hands the message out again with attempt + 1. A pop that would
 * make attempt `maxDeliveryAttempts + 1` dead-letters the message instead (as Apache's proxy
 * does at pop time) and acks it.
 *
 * FIFO groups: within a queue, a message carrying a message group (`__SHARDINGKEY`) is not handed
 * out while an earlier message of the same group is in flight or waiting; one batch may carry
 * several messages of a group, in queue order.
 *
 * Start position of a queue (Apache `getPopOffset`): the larger of the pop state's ack offset and
 * the group's committed consumer offset, so offsets committed by others (a pull consumer of the
 * same group, UPDATE_CONSUMER_OFFSET) are not handed out again; in-flight deliveries below it
 * count as consumed. Admin resets, backwards or forwards, go through `resetOffset` (below).
 *
 * Each decision (check state, record) runs without an `await` in between, so concurrent pops of the
 * same group never hand out a message twice.
 *
 * Offset reset (`resetOffset`; Apache `ConsumerOffsetManager.assignResetOffset`, taken by the next
 * pop's `resetPopOffset`): the queue's pop start becomes exactly the new offset, backwards or
 * forwards, and the group's committed offset with it. Deliveries in flight are forgotten: from
 * the new offset on every message is handed out again as a first delivery, and the receipt handles
 * / extra info issued before no longer match (their ack or change answers "stale", nothing
 * changes). Apache keeps the old checkpoints and revives what was not acked through its retry
 * topic, a second copy; tsmq hands each message out once from the new start instead.
 *
 * Role (Apache `BrokerController.changeSpecialServiceStatus` → `setPopReviveServiceStatus`, which
 * runs the revive service only on a master): tsmq has no revive thread — its revive is the pop
 * itself (redelivery, dead-lettering) plus the ack/change writes — so `setMaster(false)` (classic
 * SLAVE, controller-mode replica not elected, a demoted master) makes pops hand out nothing and
 * write nothing (no pop state record, no dead-letter put, no consumer offset), NOTIFICATION answer
 * "no message", and ack / change / renew / forward-to-DLQ refuse with a reason; parked pops are
 * woken so they answer at once. `setMaster(true)` after false (promotion) first raises every queue's
 * ack offset to the group's committed offset, which slave synchronize copied from the previous
 * master (the replicated checkpoint): what was acked there is not handed out again. The pop state
 * itself (`<storePathRootDir>/pop`) is copied from the master by every replica (pop-state-sync.ts,
 * every second), so a promoted replica keeps the old master's in-flight deliveries invisible and
 * accepts their acks.
 */
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import type { MessageExt } from '../../common/message/message.js';
import { MessageConst } from '../../common/message/message-const.js';
import { decodeRecord } from '../../common/message/record-codec.js';
import type { MessageFilter } from '../../store/message-store.js';
import type { PopBroker } from './pop-broker.js';
import type { PopConfig } from './pop-config.js';
import { buildDlqMessage } from './pop-dlq.js';
import type { PopStateStore } from './pop-state-store.js';
import type { PopQueueState, PopRecord } from './pop-state-table.js';
import { PopWaitQueue } from './pop-wait-queue.js';
import { decodeReceiptHandle, encodeReceiptHandle, ReceiptHandleError, type ReceiptHandle } from './receipt-handle.js';

export interface PopRequest {
  group: string;
  topic: string;
  /** Tag filter (null = everything). */
  filter: MessageFilter | null;
  batchSize: number;
  invisibleMs: number;
  fifo: boolean;
  /** Only this queue (remoting POP_MESSAGE with queueId ≥ 0); undefined or < 0 = every readable queue. */
  queueId?: number;
  /**
   * Where a group that never consumed a queue (and has no committed offset) starts: true = min
   * offset (Apache ConsumeInitMode.MIN); false/undefined = the `popInitFromMin` config.
   */
  initFromMin?: boolean;
}

export interface PoppedMessage {
  message: MessageExt;
  /** The stored record as read from the CommitLog (remoting replies carry it, like a pull body). */
  record: Buffer;
  receiptHandle: string;
  /** Delivery attempt, 1 for the first delivery. */
  attempt: number;
  invisibleUntilMs: number;
}

export interface PopResult {
  messages: PoppedMessage[];
  /** Epoch ms the deliveries of this pop were made at: every one is invisible until popTimeMs + invisibleMs. */
  popTimeMs: number;
  /** Messages left in the looked-at queues after this pop (max offset − where the scan stopped), Apache's `restNum`. */
  restNum: number;
  /** Earliest time an in-flight message of this group/topic becomes visible again, if any was seen. */
  nextVisibleAtMs?: number;
}

/**
 * One delivery named by where the message is and when its invisibility ends, as Apache's remoting
 * clients name it (the `POP_CK` extra info: popTime + invisibleTime, queue id, queue offset).
 */
export interface DeliveryRef {
  topic: string;
  queueId: number;
  queueOffset: number;
  /** popTime + invisibleTime of the delivery (or of its last invisibility change). */
  invisibleUntilMs: number;
}

export type HandleCheck = { ok: true; handle: ReceiptHandle } | { ok: false; reason: string };

export interface PopServiceOptions {
  broker: PopBroker;
  state: PopStateStore;
  config: Pick<PopConfig, 'popInitFromMin' | 'popMaxScanMessages'>;
  clock: Clock;
  logger?: Logger;
}

/** Invisible time a dead-letter transfer claims its message for (retried after it if the put failed). */
const DLQ_CLAIM_MS = 30_000;
const READ_CHUNK = 32;
const NOT_MASTER = 'this broker is not the master of its group: pop state is written on the master only';

export class PopService {
  readonly waitQueue = new PopWaitQueue();
  private readonly logger: Logger;
  private readonly rotation = new Map<string, number>();
  /** Groups that popped in FIFO mode: their acks may unblock a message group, so they wake receives. */
  private readonly fifoGroups = new Set<string>();
  /** Apache `shouldRunPopRevive`: true on a master (see the file comment). */
  private master = true;
  /** Bumped by every resetOffset: a pop that read the log across a reset stops there. */
  private resetEpoch = 0;

  constructor(private readonly opts: PopServiceOptions) {
    this.logger = opts.logger ?? silentLogger;
  }

  private get broker(): PopBroker {
    return this.opts.broker;
  }

  /**
   * A deleted topic: its pop state (every group's ack offsets and deliveries in flight) is
   * forgotten (PopStateStore.forget) with the queue rotation of its groups. Resolves with the
   * number of queue states dropped.
   */
  forgetTopic(topic: string): Promise<number> {
    for (const key of [...this.rotation.keys()]) if (key.slice(key.indexOf('\u0001') + 1) === topic) this.rotation.delete(key);
    return this.opts.state.forget({ topic });
  }

  /**
   * A group whose offsets were deleted (DELETE_SUBSCRIPTIONGROUP with cleanOffset): its pop state
   * on every topic is forgotten, with its queue rotation and FIFO mark. Resolves with the number of
   * queue states dropped.
   */
  forgetGroup(group: string): Promise<number> {
    for (const key of [...this.rotation.keys()]) if (key.slice(0, key.indexOf('\u0001')) === group) this.rotation.delete(key);
    this.fifoGroups.delete(group);
    return this.opts.state.forget({ group });
  }

  /** True while this broker may pop and write pop state (a master). */
  get isMaster(): boolean {
    return this.master;
  }

  /**
   * Role change (see the file comment). Promotion (false → true) raises each queue's ack offset to
   * the committed offset first and returns how many queues moved; anything else returns 0.
   */
  setMaster(on: boolean): number {
    if (on === this.master) return 0;
    let moved = 0;
    if (on) {
      for (const st of [...this.opts.state.table.all()]) {
        const committed = this.broker.committedOffset(st.group, st.topic, st.queueId);
        if (committed > st.ackOffset) {
          void this.record({ type: 'MOVE', group: st.group, topic: st.topic, queueId: st.queueId, offset: committed });
          moved++;
        }
      }
    }
    this.master = on;
    this.logger.info(on ? `pop: master now; ${moved} queue ack offsets raised to the replicated consumer offsets` : 'pop: this broker is not the master; pops hand out nothing and pop state is not written');
    this.waitQueue.notifyAll();
    return moved;
  }

  /**
   * True when the group has pop state on the topic (it consumed it by POP, or a reset placed it):
   * admin resets then go to the pop state (see `resetOffset`).
   */
  hasPopState(group: string, topic: string): boolean {
    return this.opts.state.table.queuesOf(group, topic).size > 0;
  }

  /** Where the next pop of the queue starts (ack offset, or the committed offset ahead of it); -1 without pop state. */
  popStartOffset(group: string, topic: string, queueId: number): number {
    const st = this.opts.state.table.get(group, topic, queueId);
    if (!st) return -1;
    return this.committedAhead(group, topic, queueId, st.ackOffset) ?? st.ackOffset;
  }

  /**
   * Moves the pop start of (group, topic, queueId) to `offset`, backwards or forwards, durably (a
   * RESET record), commits it as the group's consumer offset and wakes parked pops (see the file
   * comment for what happens to deliveries in flight). Resolves when the record is written (after
   * its fdatasync with `popSyncFlush`) and the consumer offsets are persisted.
   * @throws Error when this broker is not the master (Apache: "Can not reset offset in slave
   * broker") or the offset is not a non-negative integer.
   */
  async resetOffset(group: string, topic: string, queueId: number, offset: number): Promise<void> {
    if (!this.master) throw new Error('Can not reset offset in slave broker');
    if (!Number.isSafeInteger(offset) || offset < 0) throw new Error(`reset offset must be a non-negative integer, got ${offset}`);
    if (!Number.isSafeInteger(queueId) || queueId < 0) throw new Error(`reset queue id must be a non-negative integer, got ${queueId}`);
    this.resetEpoch++;
    const written = this.opts.state.record({ type: 'RESET', group, topic, queueId, offset });
    this.broker.commitOffset(group, topic, queueId, offset);
    this.logger.info(`pop: offset of ${group} on ${topic} queue ${queueId} reset to ${offset}`);
    this.waitQueue.notifyTopic(topic);
    await written;
    // the pop start is max(ack offset, committed offset): a committed offset left higher on disk
    // (the periodic flush ran before this reset) would undo a backward reset after a crash
    await this.broker.persistOffsets?.();
  }

  /** Pops up to `batchSize` messages over all readable queues of the topic (or the one `req.queueId`). */
  async pop(req: PopRequest): Promise<PopResult> {
    const queueNums = this.broker.readQueueNums(req.topic) ?? 0;
    const out: PoppedMessage[] = [];
    const result: PopResult = { messages: out, popTimeMs: this.opts.clock.nowMs(), restNum: 0 };
    if (queueNums <= 0 || req.batchSize <= 0 || !this.master) return result;
    if (req.fifo) this.fifoGroups.add(req.group);
    if (req.queueId !== undefined && req.queueId >= 0) {
      if (req.queueId < queueNums) await this.popQueue(req, req.queueId, result);
      return result;
    }
    const rotKey = `${req.group}\u0001${req.topic}`;
    const start = (this.rotation.get(rotKey) ?? 0) % queueNums;
    this.rotation.set(rotKey, start + 1);
    for (let i = 0; i < queueNums; i++) {
      const queueId = (start + i) % queueNums;
      if (out.length < req.batchSize) await this.popQueue(req, queueId, result);
      else {
        const from = this.opts.state.table.get(req.group, req.topic, queueId)?.ackOffset ?? this.broker.store.getMinOffsetInQueue(req.topic, queueId);
        result.restNum += Math.max(0, this.broker.store.getMaxOffsetInQueue(req.topic, queueId) - from);
      }
    }
    return result;
  }

  /**
   * Reads up to `max` messages from the group's consume position (its ack offset) on, without
   * changing any state (Apache PEEK_MESSAGE): in-flight messages are included.
   * queueId < 0: every readable queue in turn.
   */
  async peek(group: string, topic: string, queueId: number, max: number, filter: MessageFilter | null): Promise<{ messages: Array<{ message: MessageExt; record: Buffer }>; restNum: number }> {
    const queueNums = this.broker.readQueueNums(topic) ?? 0;
    const out: Array<{ message: MessageExt; record: Buffer }> = [];
    let restNum = 0;
    const ids = queueId >= 0 ? (queueId < queueNums ? [queueId] : []) : Array.from({ length: queueNums }, (_, i) => i);
    for (const q of ids) {
      const store = this.broker.store;
      const st = this.opts.state.table.get(group, topic, q);
      const committed = this.broker.committedOffset(group, topic, q);
      let offset = Math.max(st?.ackOffset ?? 0, committed, store.getMinOffsetInQueue(topic, q));
      const maxOffset = store.getMaxOffsetInQueue(topic, q);
      while (out.length < max && offset < maxOffset) {
        const got = await store.getMessage(group, topic, q, offset, Math.min(READ_CHUNK, max - out.length), filter);
        for (const rec of got.messages) out.push({ message: decodeRecord(rec, 0), record: rec });
        if (got.nextBeginOffset <= offset) break;
        offset = got.nextBeginOffset;
      }
      restNum += Math.max(0, maxOffset - offset);
    }
    return { messages: out, restNum };
  }

  /**
   * True when a pop of the group on the topic (or on one queue) could hand something out right now
   * without reading the log: some queue has an offset ≥ its ack offset that was never delivered or
   * whose invisibility is over (Apache NOTIFICATION's `hasMsg`; filters are not applied).
   */
  hasVisibleMessage(group: string, topic: string, queueId: number): boolean {
    if (!this.master) return false;
    const queueNums = this.broker.readQueueNums(topic) ?? 0;
    const now = this.opts.clock.nowMs();
    const ids = queueId >= 0 ? (queueId < queueNums ? [queueId] : []) : Array.from({ length: queueNums }, (_, i) => i);
    for (const q of ids) {
      const maxOffset = this.broker.store.getMaxOffsetInQueue(topic, q);
      const st = this.opts.state.table.get(group, topic, q);
      if (!st) {
        if (maxOffset > Math.max(0, this.broker.committedOffset(group, topic, q), this.opts.config.popInitFromMin ? this.broker.store.getMinOffsetInQueue(topic, q) : maxOffset)) return true;
        continue;
      }
      let cursor = Math.max(st.ackOffset, this.committedAhead(group, topic, q, st.ackOffset) ?? 0, this.broker.store.getMinOffsetInQueue(topic, q));
      for (let e = st.entries.get(cursor); cursor < maxOffset && e && (e.acked || e.invisibleUntilMs > now); e = st.entries.get(cursor)) cursor++;
      if (cursor < maxOffset) return true;
    }
    return false;
  }

  private queueState(group: string, topic: string, queueId: number, initFromMin = false): PopQueueState {
    const existing = this.opts.state.table.get(group, topic, queueId);
    if (existing) return existing;
    const store = this.broker.store;
    const committed = this.broker.committedOffset(group, topic, queueId);
    const fromMin = initFromMin || this.opts.config.popInitFromMin;
    const start = committed >= 0 ? committed : fromMin ? store.getMinOffsetInQueue(topic, queueId) : store.getMaxOffsetInQueue(topic, queueId);
    this.record({ type: 'MOVE', group, topic, queueId, offset: Math.max(0, start) });
    return this.opts.state.table.get(group, topic, queueId)!;
  }

  private async popQueue(req: PopRequest, queueId: number, result: PopResult): Promise<void> {
    if (!this.master) return; // demoted during an earlier queue's read
    const { group, topic } = req;
    const store = this.broker.store;
    let st = this.queueState(group, topic, queueId, req.initFromMin);
    const minOffset = store.getMinOffsetInQueue(topic, queueId);
    if (st.ackOffset < minOffset) this.move(group, topic, queueId, minOffset);
    // Apache getPopOffset: the larger of the committed consumer offset and the pop's own progress.
    // A pull consumer or UPDATE_CONSUMER_OFFSET that committed further is not re-delivered.
    const ahead = this.committedAhead(group, topic, queueId, st.ackOffset);
    if (ahead !== null) this.move(group, topic, queueId, ahead);
    const deliveredBefore = result.messages.length;
    let cursor = st.ackOffset;
    let frontDone = true;
    const blocked = new Set<string>();
    const maxAttempts = this.broker.maxDeliveryAttempts(group);
    let scanned = 0;
    let cursorAfterLast = -1;
    const epoch = this.resetEpoch;
    while (result.messages.length < req.batchSize && scanned < this.opts.config.popMaxScanMessages) {
      const maxOffset = store.getMaxOffsetInQueue(topic, queueId);
      if (!req.fifo) {
        // Skip runs of in-flight / acked entries without reading them.
        const now = this.opts.clock.nowMs();
        for (let e = st.entries.get(cursor); cursor < maxOffset && e && (e.acked || e.invisibleUntilMs > now); e = st.entries.get(cursor)) {
          if (!e.acked) {
            frontDone = false;
            result.nextVisibleAtMs = Math.min(result.nextVisibleAtMs ?? Infinity, e.invisibleUntilMs);
          }
          cursor++;
        }
      }
      if (cursor >= maxOffset) break;
      const got = await store.getMessage(group, topic, queueId, cursor, READ_CHUNK, req.filter);
      if (!this.master) break; // demoted while reading
      if (epoch !== this.resetEpoch) break; // offset reset while reading: the next pop starts at the new offset
      st = this.opts.state.table.get(group, topic, queueId)!;
      if (got.status === 'OFFSET_TOO_SMALL') {
        this.move(group, topic, queueId, got.nextBeginOffset);
        cursor = Math.max(cursor, got.nextBeginOffset);
        continue;
      }
      if (got.messages.length === 0) {
        const skippable = got.status === 'NO_MATCHED_MESSAGE' || got.status === 'OFFSET_FOUND_NULL' || got.status === 'MESSAGE_WAS_REMOVING';
        if (!skippable || got.nextBeginOffset <= cursor) break;
        if (frontDone) this.move(group, topic, queueId, got.nextBeginOffset);
        cursor = got.nextBeginOffset;
        continue;
      }
      const now = this.opts.clock.nowMs();
      for (let i = 0; i < got.messages.length && result.messages.length < req.batchSize; i++) {
        const offset = got.messageQueueOffsets[i]!;
        scanned++;
        if (frontDone && offset > st.ackOffset) this.move(group, topic, queueId, offset);
        const entry = st.entries.get(offset);
        if (entry?.acked || offset < st.ackOffset) continue;
        const inFlight = entry !== undefined && entry.invisibleUntilMs > now;
        if (inFlight && !req.fifo) {
          frontDone = false;
          result.nextVisibleAtMs = Math.min(result.nextVisibleAtMs ?? Infinity, entry.invisibleUntilMs);
          continue;
        }
        const message = decodeRecord(got.messages[i]!, 0);
        const msgGroup = req.fifo ? message.properties.get(MessageConst.SHARDING_KEY) : undefined;
        frontDone = false;
        if (inFlight) {
          result.nextVisibleAtMs = Math.min(result.nextVisibleAtMs ?? Infinity, entry.invisibleUntilMs);
          if (msgGroup !== undefined) blocked.add(msgGroup);
          continue;
        }
        if (msgGroup !== undefined && blocked.has(msgGroup)) continue;
        const attempt = (entry?.attempts ?? 0) + 1;
        if (attempt > maxAttempts) {
          this.deadLetterInBackground(group, message, offset, queueId, entry?.attempts ?? 0);
          if (msgGroup !== undefined) blocked.add(msgGroup);
          continue;
        }
        result.messages.push(this.deliver(group, message, got.messages[i]!, queueId, offset, attempt, result.popTimeMs + req.invisibleMs));
        cursorAfterLast = offset + 1;
      }
      if (got.nextBeginOffset <= cursor) break;
      cursor = got.nextBeginOffset;
    }
    const delivered = result.messages.length - deliveredBefore;
    if (delivered > 0) {
      let sizeBytes = 0;
      for (let i = deliveredBefore; i < result.messages.length; i++) sizeBytes += result.messages[i]!.record.length;
      this.broker.recordPopped?.(group, topic, delivered, sizeBytes);
    }
    // Apache restNum: what is left after where this pop stopped (the whole chunk read counts as looked at).
    const stoppedAt = result.messages.length >= req.batchSize && cursorAfterLast >= 0 ? cursorAfterLast : cursor;
    result.restNum += Math.max(0, store.getMaxOffsetInQueue(topic, queueId) - stoppedAt);
  }

  private deliver(group: string, message: MessageExt, record: Buffer, queueId: number, offset: number, attempt: number, invisibleUntilMs: number): PoppedMessage {
    const version = this.opts.state.nextVersion();
    this.record({ type: 'POP', group, topic: message.topic, queueId, offset, attempts: attempt, invisibleUntilMs, version });
    const receiptHandle = encodeReceiptHandle({
      brokerName: this.broker.brokerName,
      topic: message.topic,
      queueId,
      queueOffset: offset,
      commitLogOffset: message.commitLogOffset,
      version,
      invisibleUntilMs,
      attempt,
    });
    return { message, record, receiptHandle, attempt, invisibleUntilMs };
  }

  /** Claims the message (so no other pop takes it), stores the DLQ copy, then acks it. */
  private deadLetterInBackground(group: string, message: MessageExt, offset: number, queueId: number, attempts: number): void {
    const version = this.opts.state.nextVersion();
    const topic = message.topic;
    this.record({ type: 'POP', group, topic, queueId, offset, attempts, invisibleUntilMs: this.opts.clock.nowMs() + DLQ_CLAIM_MS, version });
    void this.putDlq(group, message, attempts)
      .then((ok) => {
        // not when the claim is gone (an offset reset in between): the ack would mark a message done that is to be delivered again
        const claim = this.opts.state.table.get(group, topic, queueId)?.entries.get(offset);
        if (ok && claim?.version === version && !claim.acked) void this.record({ type: 'ACK', group, topic, queueId, offset, version });
      })
      .catch((e: Error) => this.logger.error(`dead-lettering ${topic} q${queueId} @${offset} for ${group} failed: ${e.message}`));
  }

  private async putDlq(group: string, message: MessageExt, attempts: number): Promise<boolean> {
    const dlq = this.broker.ensureDlqTopic(group);
    const r = await this.broker.putMessage(buildDlqMessage(message, dlq, attempts, this.broker.storeHost));
    if (r.status !== 'PUT_OK' && !r.appendResult) {
      this.logger.warn(`dead-letter put of ${message.msgId} to ${dlq} failed: ${r.status} ${r.remark ?? ''}`);
      return false;
    }
    this.logger.info(`message ${message.properties.get(MessageConst.UNIQ_KEY) ?? message.msgId} of ${message.topic} moved to ${dlq} after ${attempts} deliveries`);
    this.broker.recordDeadLettered?.(group, message.topic);
    this.waitQueue.notifyTopic(dlq);
    return true;
  }

  /**
   * Validates a handle against the group's state: decodable (when text), message still in flight,
   * current version.
   */
  checkHandle(group: string, handle: string | ReceiptHandle): HandleCheck {
    if (!this.master) return { ok: false, reason: NOT_MASTER };
    let h: ReceiptHandle;
    if (typeof handle === 'string') {
      try {
        h = decodeReceiptHandle(handle);
      } catch (e) {
        return { ok: false, reason: (e as ReceiptHandleError).message };
      }
    } else {
      h = handle;
    }
    const st = this.opts.state.table.get(group, h.topic, h.queueId);
    if (!st) return { ok: false, reason: `group ${group} never received from ${h.topic} queue ${h.queueId}` };
    if (h.queueOffset < st.ackOffset) return { ok: false, reason: `message at offset ${h.queueOffset} is already acked` };
    const e = st.entries.get(h.queueOffset);
    if (!e) return { ok: false, reason: `message at offset ${h.queueOffset} was not delivered to ${group}` };
    if (e.acked) return { ok: false, reason: `message at offset ${h.queueOffset} is already acked` };
    if (e.version !== h.version) return { ok: false, reason: 'receipt handle is stale: the message was redelivered or its invisible time changed since' };
    return { ok: true, handle: h };
  }

  /**
   * checkHandle, and the delivery must still be invisible: once its invisible time is over the
   * handle is expired (Apache's proxy refuses ack / changeInvisibleDuration of an expired handle
   * with INVALID_RECEIPT_HANDLE "receipt handle is expired", since the message may already be
   * handed to another consumer). The entry's current invisible-until time is used, so deliveries
   * kept alive by renew() stay valid under their original handle.
   */
  checkLiveHandle(group: string, text: string | ReceiptHandle): HandleCheck {
    const c = this.checkHandle(group, text);
    if (!c.ok) return c;
    const entry = this.opts.state.table.get(group, c.handle.topic, c.handle.queueId)!.entries.get(c.handle.queueOffset)!;
    const overMs = this.opts.clock.nowMs() - entry.invisibleUntilMs;
    if (overMs >= 0) return { ok: false, reason: `receipt handle is expired: the invisible time ended ${overMs} ms ago` };
    return c;
  }

  /**
   * The current handle of a delivery named the remoting way (DeliveryRef): valid only while that
   * message is in flight to the group with exactly that invisible-until time, i.e. it was not
   * redelivered, acked or changed since. The returned handle has commitLogOffset -1 (unknown).
   */
  resolveDelivery(group: string, ref: DeliveryRef): HandleCheck {
    if (!this.master) return { ok: false, reason: NOT_MASTER };
    const st = this.opts.state.table.get(group, ref.topic, ref.queueId);
    if (!st) return { ok: false, reason: `group ${group} never received from ${ref.topic} queue ${ref.queueId}` };
    if (ref.queueOffset < st.ackOffset) return { ok: false, reason: `message at offset ${ref.queueOffset} is already acked` };
    const e = st.entries.get(ref.queueOffset);
    if (!e) return { ok: false, reason: `message at offset ${ref.queueOffset} was not delivered to ${group}` };
    if (e.acked) return { ok: false, reason: `message at offset ${ref.queueOffset} is already acked` };
    if (e.invisibleUntilMs !== ref.invisibleUntilMs) {
      return { ok: false, reason: 'the pop check point is stale: the message was redelivered or its invisible time changed since' };
    }
    const handle: ReceiptHandle = {
      brokerName: this.broker.brokerName,
      topic: ref.topic,
      queueId: ref.queueId,
      queueOffset: ref.queueOffset,
      commitLogOffset: -1,
      version: e.version,
      invisibleUntilMs: e.invisibleUntilMs,
      attempt: Math.max(1, e.attempts),
    };
    return { ok: true, handle };
  }

  /** Acks one delivery (receipt handle text, or a handle from resolveDelivery; it must be current and not expired). Resolves with a HandleCheck (ok false = INVALID_RECEIPT_HANDLE). */
  async ack(group: string, text: string | ReceiptHandle): Promise<HandleCheck> {
    const c = this.checkLiveHandle(group, text);
    if (!c.ok) return c;
    const h = c.handle;
    await this.record({ type: 'ACK', group, topic: h.topic, queueId: h.queueId, offset: h.queueOffset, version: h.version });
    if (this.fifoGroups.has(group)) this.waitQueue.notifyTopic(h.topic);
    return c;
  }

  /**
   * Moves the invisible-until time to now + invisibleMs and issues a new handle; `invisibleUntilMs`
   * is the new end (so now = invisibleUntilMs − invisibleMs, Apache's new popTime). The handle must
   * be current and not expired.
   */
  async changeInvisibleDuration(group: string, text: string | ReceiptHandle, invisibleMs: number): Promise<HandleCheck & { receiptHandle?: string; invisibleUntilMs?: number }> {
    const c = this.checkLiveHandle(group, text);
    if (!c.ok) return c;
    const h = c.handle;
    const entry = this.opts.state.table.get(group, h.topic, h.queueId)!.entries.get(h.queueOffset)!;
    const version = this.opts.state.nextVersion();
    const invisibleUntilMs = this.opts.clock.nowMs() + invisibleMs;
    await this.record({ type: 'POP', group, topic: h.topic, queueId: h.queueId, offset: h.queueOffset, attempts: entry.attempts, invisibleUntilMs, version });
    if (invisibleMs <= 0) this.waitQueue.notifyTopic(h.topic);
    const receiptHandle = encodeReceiptHandle({ ...h, commitLogOffset: Math.max(0, h.commitLogOffset), version, invisibleUntilMs, attempt: Math.max(1, entry.attempts) });
    return { ...c, receiptHandle, invisibleUntilMs };
  }

  /**
   * Extends the invisibility of a delivery to at least now + invisibleMs WITHOUT issuing a new
   * handle (the version stays), so the consumer's handle remains valid. Used to auto-renew
   * deliveries of push consumers that are still consuming (Apache proxy's receipt-handle renewal).
   */
  async renew(group: string, text: string, invisibleMs: number): Promise<HandleCheck> {
    const c = this.checkHandle(group, text);
    if (!c.ok) return c;
    const h = c.handle;
    const entry = this.opts.state.table.get(group, h.topic, h.queueId)!.entries.get(h.queueOffset)!;
    const invisibleUntilMs = Math.max(entry.invisibleUntilMs, this.opts.clock.nowMs() + invisibleMs);
    if (invisibleUntilMs === entry.invisibleUntilMs) return c;
    await this.record({ type: 'POP', group, topic: h.topic, queueId: h.queueId, offset: h.queueOffset, attempts: entry.attempts, invisibleUntilMs, version: h.version });
    return c;
  }

  /** Invisible-until time of a delivery named by a handle, if the handle is still current. */
  invisibleUntilOf(group: string, text: string): number | undefined {
    const c = this.checkHandle(group, text);
    if (!c.ok) return undefined;
    return this.opts.state.table.get(group, c.handle.topic, c.handle.queueId)!.entries.get(c.handle.queueOffset)!.invisibleUntilMs;
  }

  /** Stores the message in `%DLQ%<group>` and acks it (client-side max attempts reached, FIFO). */
  async forwardToDeadLetterQueue(group: string, text: string): Promise<HandleCheck> {
    const c = this.checkHandle(group, text);
    if (!c.ok) return c;
    const h = c.handle;
    const message = await this.broker.store.lookMessageByOffset(h.commitLogOffset);
    if (!message || message.topic !== h.topic || message.queueOffset !== h.queueOffset) {
      return { ok: false, reason: `message at commit log offset ${h.commitLogOffset} is gone` };
    }
    const again = this.checkHandle(group, text);
    if (!again.ok) return again;
    const attempts = this.opts.state.table.get(group, h.topic, h.queueId)!.entries.get(h.queueOffset)!.attempts;
    if (!(await this.putDlq(group, message, attempts))) return { ok: false, reason: 'dead-letter queue put failed' };
    // an offset reset during the put dropped the delivery: nothing to ack (the message is delivered again from the new start)
    if (this.checkHandle(group, text).ok) await this.record({ type: 'ACK', group, topic: h.topic, queueId: h.queueId, offset: h.queueOffset, version: h.version });
    this.waitQueue.notifyTopic(h.topic);
    return c;
  }

  /** A put landed on `topic`: wake parked receives. */
  notifyMessageArrived(topic: string): void {
    this.waitQueue.notifyTopic(topic);
  }

  /**
   * The group's committed consumer offset of the queue when it is beyond `ackOffset` (capped at
   * the queue's max offset, as Apache corrects an overflowing pop offset), else null.
   */
  private committedAhead(group: string, topic: string, queueId: number, ackOffset: number): number | null {
    const committed = Math.min(this.broker.committedOffset(group, topic, queueId), this.broker.store.getMaxOffsetInQueue(topic, queueId));
    return committed > ackOffset ? committed : null;
  }

  private move(group: string, topic: string, queueId: number, offset: number): void {
    const st = this.opts.state.table.get(group, topic, queueId);
    if (st && offset <= st.ackOffset) return;
    void this.record({ type: 'MOVE', group, topic, queueId, offset });
  }

  private record(rec: PopRecord): Promise<void> {
    const before = this.opts.state.table.get(rec.group, rec.topic, rec.queueId)?.ackOffset;
    const p = this.opts.state.record(rec);
    const after = this.opts.state.table.get(rec.group, rec.topic, rec.queueId)!.ackOffset;
    if (after !== before) this.broker.commitOffset(rec.group, rec.topic, rec.queueId, after);
    return p;
  }
}
