/**
 * In-memory stand-in for the broker services pop consumption uses (store reads, put, topic
 * table), for unit tests of PopService and the gRPC handlers.
 */
import type { MessageInner } from '../../../src/common/message/message.js';
import { decodeRecord, encodeRecord, patchRecord } from '../../../src/common/message/record-codec.js';
import { socketAddressOf } from '../../../src/common/message/msgid.js';
import type { GetMessageResult, MessageFilter, PutMessageResult } from '../../../src/store/message-store.js';
import type { PopBroker } from '../../../src/broker/pop/pop-broker.js';
import { dlqTopicOf } from '../../../src/common/message/topic-validator.js';

export class FakePopBroker implements PopBroker {
  readonly brokerName = 'broker-a';
  readonly storeHost = socketAddressOf('127.0.0.1', 10911);
  readonly queues = new Map<string, Buffer[][]>();
  readonly byPhysical = new Map<number, Buffer>();
  readonly committed = new Map<string, number>();
  maxAttempts = 17;
  /** `<group>@<topic>` of every recordDeadLettered call. */
  readonly deadLettered: string[] = [];
  private nextPhysical = 0;

  constructor(private readonly now: () => number) {}

  createTopic(topic: string, queueNums: number): void {
    if (!this.queues.has(topic)) this.queues.set(topic, Array.from({ length: queueNums }, () => []));
  }

  readQueueNums(topic: string): number | undefined {
    return this.queues.get(topic)?.length;
  }

  ensureDlqTopic(group: string): string {
    const t = dlqTopicOf(group);
    this.createTopic(t, 1);
    return t;
  }

  recordDeadLettered(group: string, topic: string): void {
    this.deadLettered.push(`${group}@${topic}`);
  }

  maxDeliveryAttempts(): number {
    return this.maxAttempts;
  }

  committedOffset(group: string, topic: string, queueId: number): number {
    return this.committed.get(`${group}/${topic}/${queueId}`) ?? -1;
  }

  commitOffset(group: string, topic: string, queueId: number, offset: number): void {
    this.committed.set(`${group}/${topic}/${queueId}`, offset);
  }

  /** The committed offsets as last made durable (consumerOffset.json): what a crash leaves. */
  persisted = new Map<string, number>();

  async persistOffsets(): Promise<void> {
    this.persisted = new Map(this.committed);
  }

  /** A crash: the committed offsets are those last persisted. */
  crashOffsets(): void {
    this.committed.clear();
    for (const [k, v] of this.persisted) this.committed.set(k, v);
  }

  /** Appends a simple message; returns its queue offset. */
  send(topic: string, queueId: number, body: string, props: Record<string, string> = {}): number {
    const r = this.append({
      topic,
      queueId,
      flag: 0,
      body: Buffer.from(body),
      properties: new Map(Object.entries({ UNIQ_KEY: `U-${body}`, ...props })),
      sysFlag: 0,
      bornTimestamp: this.now(),
      bornHost: socketAddressOf('127.0.0.1', 5000),
      storeHost: this.storeHost,
      reconsumeTimes: 0,
      preparedTransactionOffset: 0,
    });
    return r.appendResult!.queueOffset;
  }

  private append(msg: MessageInner): PutMessageResult {
    this.createTopic(msg.topic, msg.queueId + 1);
    const q = this.queues.get(msg.topic)![msg.queueId]!;
    const rec = encodeRecord(msg);
    const physical = this.nextPhysical;
    this.nextPhysical += rec.length;
    patchRecord(rec, 0, q.length, physical, this.now());
    q.push(rec);
    this.byPhysical.set(physical, rec);
    return { status: 'PUT_OK', appendResult: { wroteOffset: physical, wroteBytes: rec.length, msgId: '', queueOffset: q.length - 1, storeTimestamp: this.now() } };
  }

  async putMessage(msg: MessageInner): Promise<PutMessageResult> {
    return this.append(msg);
  }

  readonly store = {
    getMaxOffsetInQueue: (topic: string, queueId: number): number => this.queues.get(topic)?.[queueId]?.length ?? 0,
    getMinOffsetInQueue: (): number => 0,
    lookMessageByOffset: async (offset: number) => {
      const rec = this.byPhysical.get(offset);
      return rec ? decodeRecord(rec) : null;
    },
    getMessage: async (_group: string, topic: string, queueId: number, offset: number, maxNums: number, filter?: MessageFilter | null): Promise<GetMessageResult> => {
      const q = this.queues.get(topic)?.[queueId] ?? [];
      const base = { minOffset: 0, maxOffset: q.length, bufferTotalSizeBytes: 0, suggestPullingFromSlave: false };
      if (offset >= q.length) return { ...base, status: 'OFFSET_OVERFLOW_ONE', nextBeginOffset: offset, messages: [], messageQueueOffsets: [] };
      const messages: Buffer[] = [];
      const offsets: number[] = [];
      let i = offset;
      for (; i < q.length && messages.length < maxNums; i++) {
        const m = decodeRecord(q[i]!, 0, { readBody: false });
        const tags = m.properties.get('TAGS');
        const code = tags ? javaHash(tags) : 0;
        if (filter && !filter.isMatchedByConsumeQueue(code)) continue;
        messages.push(q[i]!);
        offsets.push(i);
      }
      return { ...base, status: messages.length ? 'FOUND' : 'NO_MATCHED_MESSAGE', nextBeginOffset: i, messages, messageQueueOffsets: offsets };
    },
  };
}

function javaHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}
