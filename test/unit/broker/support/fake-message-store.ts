/**
 * In-memory MessageStore for broker unit tests (not a test file). Records are real CommitLog
 * bytes (encodeRecord + patchRecord); the pull statuses follow store-format.md §7 on a master.
 * Test hooks: setMinOffset (expired head), truncateQueue (lost tail), nextPutStatus (forced
 * failure), puts (every stored message, decoded).
 */
import type { MessageExt, MessageInner } from '../../../../src/common/message/message.js';
import { encodeRecord, decodeRecord, patchRecord } from '../../../../src/common/message/record-codec.js';
import { createMessageId } from '../../../../src/common/message/msgid.js';
import { tagsCode as tagsCodeOf } from '../../../../src/common/message/java-hash.js';
import { MessageConst } from '../../../../src/common/message/message-const.js';
import { TopicValidator } from '../../../../src/common/message/topic-validator.js';
import type { Clock } from '../../../../src/common/time/clock.js';
import type {
  BoundaryType,
  ConsumeQueueEntryView,
  GetMessageResult,
  GetMessageStatus,
  MessageArrivingListener,
  MessageFilter,
  MessageStore,
  PutMessageCallback,
  PutMessageFailure,
  PutMessageResult,
  PutMessagesResult,
  PutMessageStatus,
  QueryMessageResult,
} from '../../../../src/store/message-store.js';
import { DelayLevelTable } from '../../../../src/broker/schedule/delay-level-table.js';
import { DEFAULT_MESSAGE_DELAY_LEVEL } from '../../../../src/broker/broker-config.js';

interface Entry {
  phys: number;
  size: number;
  tagsCode: number;
  storeTimestamp: number;
}

interface Queue {
  min: number;
  entries: Entry[];
}

export class FakeMessageStore implements MessageStore {
  maxMessageSize = 4 * 1024 * 1024;
  readonly records = new Map<number, Buffer>();
  readonly puts: MessageExt[] = [];
  nextPutStatus: { status: PutMessageStatus; remark?: string } | null = null;
  shutdownCalled = false;
  private readonly queues = new Map<string, Queue>();
  private nextPhys = 0;
  private listener: MessageArrivingListener | null = null;
  private readonly delays: DelayLevelTable;

  constructor(private readonly clock: Clock, delayLevel = DEFAULT_MESSAGE_DELAY_LEVEL) {
    this.delays = new DelayLevelTable(delayLevel);
  }

  private queue(topic: string, queueId: number, create = false): Queue | undefined {
    const key = `${topic}\u0000${queueId}`;
    let q = this.queues.get(key);
    if (!q && create) {
      q = { min: 0, entries: [] };
      this.queues.set(key, q);
    }
    return q;
  }

  /** `putMessage` told through callbacks (as the real store: the broker's single sends use it); goes through `this.putMessage`, so a test replacing that sees these puts too. */
  putMessageWithCallback(msg: MessageInner, done: PutMessageCallback, fail?: PutMessageFailure): void {
    this.putMessage(msg).then(
      (r) => done(r, msg),
      (e: unknown) => {
        if (!fail) throw e;
        fail(e, msg);
      },
    );
  }

  async putMessage(msg: MessageInner): Promise<PutMessageResult> {
    if (this.nextPutStatus) {
      const forced = this.nextPutStatus;
      this.nextPutStatus = null;
      return forced;
    }
    if (msg.body.length > this.maxMessageSize) {
      return { status: 'MESSAGE_ILLEGAL', remark: `message body size ${msg.body.length} exceeds maxMessageSize ${this.maxMessageSize}` };
    }
    let buf: Buffer;
    try {
      buf = encodeRecord(msg);
    } catch (e) {
      return { status: 'MESSAGE_ILLEGAL', remark: (e as Error).message };
    }
    const q = this.queue(msg.topic, msg.queueId, true)!;
    const queueOffset = q.entries.length;
    const phys = this.nextPhys;
    const now = this.clock.nowMs();
    patchRecord(buf, 0, queueOffset, phys, now);
    this.nextPhys += buf.length;
    this.records.set(phys, buf);
    let tagsCode = tagsCodeOf(msg.properties.get(MessageConst.TAGS));
    const delay = Number(msg.properties.get(MessageConst.DELAY) ?? 0);
    if (msg.topic === TopicValidator.RMQ_SYS_SCHEDULE_TOPIC && delay > 0) {
      tagsCode = now + (this.delays.delayMs(Math.min(delay, this.delays.maxLevel)) ?? 1000);
    }
    q.entries.push({ phys, size: buf.length, tagsCode, storeTimestamp: now });
    this.puts.push(decodeRecord(buf));
    const msgId = createMessageId(msg.storeHost, phys);
    this.listener?.(msg.topic, msg.queueId, queueOffset + 1, tagsCode, now, new Map(msg.properties));
    return { status: 'PUT_OK', appendResult: { wroteOffset: phys, wroteBytes: buf.length, msgId, queueOffset, storeTimestamp: now } };
  }

  /** Batch put: checked whole first, then the messages are put back to back (no await between them). */
  async putMessages(msgs: readonly MessageInner[]): Promise<PutMessagesResult> {
    const tooBig = msgs.findIndex((m) => m.body.length > this.maxMessageSize);
    if (tooBig >= 0) return { status: 'MESSAGE_ILLEGAL', remark: `batch message ${tooBig}: body exceeds maxMessageSize ${this.maxMessageSize}` };
    const results = await Promise.all(msgs.map((m) => this.putMessage(m)));
    const failed = results.find((r) => r.status !== 'PUT_OK');
    if (failed) return failed;
    const appendResults = results.map((r) => r.appendResult!);
    const first = appendResults[0]!;
    const wroteBytes = appendResults.reduce((n, a) => n + a.wroteBytes, 0);
    const msgId = appendResults.map((a) => a.msgId).join(',');
    return { status: 'PUT_OK', appendResult: { ...first, wroteBytes, msgId }, appendResults };
  }

  async getMessage(_group: string, topic: string, queueId: number, offset: number, maxMsgNums: number, filter?: MessageFilter | null): Promise<GetMessageResult> {
    const q = this.queue(topic, queueId);
    const min = q?.min ?? 0;
    const max = q?.entries.length ?? 0;
    const result = (status: GetMessageStatus, next: number): GetMessageResult => ({
      status,
      nextBeginOffset: next,
      minOffset: min,
      maxOffset: max,
      messages: [],
      messageQueueOffsets: [],
      bufferTotalSizeBytes: 0,
      suggestPullingFromSlave: false,
    });
    if (max === 0) return result('NO_MESSAGE_IN_QUEUE', 0);
    if (offset < min) return result('OFFSET_TOO_SMALL', min);
    if (offset === max) return result('OFFSET_OVERFLOW_ONE', offset);
    if (offset > max) return result('OFFSET_OVERFLOW_BADLY', max);
    const r = result('NO_MATCHED_MESSAGE', offset);
    const window = Math.max(16000, maxMsgNums * 20) / 20;
    for (let o = offset; o < max && o - offset < window; o++) {
      if (r.messages.length >= maxMsgNums) break;
      r.nextBeginOffset = o + 1;
      const e = q!.entries[o]!;
      if (filter && !filter.isMatchedByConsumeQueue(e.tagsCode)) continue;
      const rec = this.records.get(e.phys)!;
      if (filter?.isMatchedByCommitLog && !filter.isMatchedByCommitLog(rec)) continue;
      r.messages.push(rec);
      r.messageQueueOffsets.push(o);
      r.bufferTotalSizeBytes += rec.length;
      r.status = 'FOUND';
    }
    return r;
  }

  getMaxOffsetInQueue(topic: string, queueId: number): number {
    return this.queue(topic, queueId)?.entries.length ?? 0;
  }

  getMinOffsetInQueue(topic: string, queueId: number): number {
    return this.queue(topic, queueId)?.min ?? 0;
  }

  getCommitLogOffsetInQueue(topic: string, queueId: number, cqOffset: number): number {
    return this.queue(topic, queueId)?.entries[cqOffset]?.phys ?? 0;
  }

  getConsumeQueueEntries(topic: string, queueId: number, fromOffset: number, maxCount: number): ConsumeQueueEntryView[] | null {
    const q = this.queue(topic, queueId);
    if (!q) return null;
    const from = Math.max(fromOffset, q.min);
    return q.entries.slice(from, from + Math.max(0, maxCount)).map((e, i) => ({ queueOffset: from + i, phyOffset: e.phys, sizeBytes: e.size, tagsCode: e.tagsCode }));
  }

  async getOffsetInQueueByTime(topic: string, queueId: number, ts: number, boundary: BoundaryType = 'LOWER'): Promise<number> {
    const q = this.queue(topic, queueId);
    if (!q) return 0;
    const es = q.entries;
    if (boundary === 'LOWER') {
      for (let o = q.min; o < es.length; o++) if (es[o]!.storeTimestamp >= ts) return o;
      return es.length;
    }
    for (let o = es.length - 1; o >= q.min; o--) if (es[o]!.storeTimestamp <= ts) return o;
    return 0;
  }

  async getEarliestMessageTime(topic: string, queueId: number): Promise<number> {
    const q = this.queue(topic, queueId);
    return q && q.entries.length > q.min ? q.entries[q.min]!.storeTimestamp : -1;
  }

  async getMessageStoreTimeStamp(topic: string, queueId: number, cqOffset: number): Promise<number> {
    return this.queue(topic, queueId)?.entries[cqOffset]?.storeTimestamp ?? -1;
  }

  async lookMessageByOffset(phys: number): Promise<MessageExt | null> {
    const rec = this.records.get(phys);
    return rec ? decodeRecord(rec) : null;
  }

  async selectOneMessageByOffset(phys: number): Promise<Buffer | null> {
    return this.records.get(phys) ?? null;
  }

  async queryMessage(topic: string, key: string, maxNum: number, beginMs: number, endMs: number): Promise<QueryMessageResult> {
    const messages: Buffer[] = [];
    for (const [, rec] of [...this.records].sort((a, b) => a[0] - b[0])) {
      const m = decodeRecord(rec, 0, { readBody: false });
      if (m.topic !== topic || m.storeTimestamp < beginMs || m.storeTimestamp > endMs) continue;
      const keys = (m.properties.get(MessageConst.KEYS) ?? '').split(' ');
      if (keys.includes(key) || m.properties.get(MessageConst.UNIQ_KEY) === key) messages.push(rec);
      if (messages.length >= maxNum) break;
    }
    return { messages, indexLastUpdateTimestamp: this.clock.nowMs(), indexLastUpdatePhyOffset: this.nextPhys };
  }

  getMinPhyOffset(): number {
    return 0;
  }

  getMaxPhyOffset(): number {
    return this.nextPhys;
  }

  getTopicQueueTable(): Map<string, Map<number, number>> {
    const out = new Map<string, Map<number, number>>();
    for (const [key, q] of this.queues) {
      const [topic, id] = key.split('\u0000') as [string, string];
      if (!out.has(topic)) out.set(topic, new Map());
      out.get(topic)!.set(Number(id), q.entries.length);
    }
    return out;
  }

  setMessageArrivingListener(listener: MessageArrivingListener | null): void {
    this.listener = listener;
  }

  async deleteTopics(topics: string[]): Promise<void> {
    for (const key of [...this.queues.keys()]) if (topics.includes(key.split('\u0000')[0]!)) this.queues.delete(key);
  }

  async shutdown(): Promise<void> {
    this.shutdownCalled = true;
  }

  /** Test hook: entries below `min` are expired. */
  setMinOffset(topic: string, queueId: number, min: number): void {
    this.queue(topic, queueId, true)!.min = min;
  }

  /** Test hook: drops entries at and above `newMax` (a lost tail). */
  truncateQueue(topic: string, queueId: number, newMax: number): void {
    const q = this.queue(topic, queueId, true)!;
    q.entries.length = Math.min(q.entries.length, newMax);
  }

  /** Test hook: appends `n` messages built by `make` to topic/queueId. */
  async fill(topic: string, queueId: number, n: number, make: (i: number) => MessageInner): Promise<void> {
    for (let i = 0; i < n; i++) await this.putMessage({ ...make(i), topic, queueId });
  }
}
