/**
 * Message lookups of the console, through the store reads the query codes use (QUERY_MESSAGE 12
 * = store.queryMessage over the index, VIEW_MESSAGE_BY_ID 33 = lookMessageByOffset, the pull
 * path's ConsumeQueue → CommitLog mapping for queue + offset, getOffsetInQueueByTime for a time
 * range). Each result is a MessageView with the body as text, hex and (when it parses) JSON.
 *
 *   by key / unique key   topic + key: the index (keys of KEYS and the UNIQ_KEY), newest 64
 *   by message id         the offset message id (store host + CommitLog offset, 32 hex digits)
 *   by queue + offset     topic, queueId, queue offset
 *   by time range         topic, begin..end ms: up to 64 messages over all queues, oldest first
 * Bad input (unknown topic, malformed id) is a SearchError with a readable message.
 */
import type { BrokerController } from '../broker/broker-controller.js';
import type { MessageExt } from '../common/message/message.js';
import { decodeMessageId } from '../common/message/msgid.js';
import { readLong } from '../common/message/record-parse.js';
import { socketAddressToString } from '../common/message/msgid.js';

export class SearchError extends Error {}

export interface MessageView {
  msgId: string;
  uniqKey: string | null;
  topic: string;
  queueId: number;
  queueOffset: number;
  commitLogOffset: number;
  storeTimestamp: number;
  bornTimestamp: number;
  bornHost: string;
  tags: string | null;
  keys: string | null;
  reconsumeTimes: number;
  properties: Record<string, string>;
  bodySizeBytes: number;
  /** The body as UTF-8 (replacement characters where it is not text), first 64 KiB. */
  bodyText: string;
  /** The body as hex, first 4 KiB. */
  bodyHex: string;
  /** The body pretty-printed when it is JSON, else null. */
  bodyJson: string | null;
}

const MAX_RESULTS = 64;
/** Offset of PHYSICALOFFSET in a CommitLog record (store-format.md). */
const PHYSICAL_OFFSET_AT = 28;

export function messageView(m: MessageExt): MessageView {
  const body = m.body ?? Buffer.alloc(0);
  const text = body.subarray(0, 64 * 1024).toString('utf8');
  let json: string | null = null;
  try {
    const t = text.trim();
    if (t.startsWith('{') || t.startsWith('[')) json = JSON.stringify(JSON.parse(t), null, 2);
  } catch {
    json = null;
  }
  return {
    msgId: m.msgId,
    uniqKey: m.properties.get('UNIQ_KEY') ?? null,
    topic: m.topic,
    queueId: m.queueId,
    queueOffset: m.queueOffset,
    commitLogOffset: m.commitLogOffset,
    storeTimestamp: m.storeTimestamp,
    bornTimestamp: m.bornTimestamp,
    bornHost: socketAddressToString(m.bornHost),
    tags: m.properties.get('TAGS') ?? null,
    keys: m.properties.get('KEYS') ?? null,
    reconsumeTimes: m.reconsumeTimes,
    properties: Object.fromEntries(m.properties),
    bodySizeBytes: body.length,
    bodyText: text,
    bodyHex: body.subarray(0, 4096).toString('hex'),
    bodyJson: json,
  };
}

export class MessageSearch {
  constructor(private readonly broker: BrokerController) {}

  private requireTopic(topic: string | undefined): string {
    if (!topic) throw new SearchError('topic is required');
    if (!this.broker.ctx.topicConfigManager.selectTopicConfig(topic)) throw new SearchError(`topic ${topic} does not exist on this broker`);
    return topic;
  }

  /** Messages of `topic` whose KEYS contain `key` or whose UNIQ_KEY is `key`, oldest first. */
  async byKey(topic: string | undefined, key: string | undefined, beginMs = 0, endMs = Number.MAX_SAFE_INTEGER): Promise<MessageView[]> {
    const t = this.requireTopic(topic);
    if (!key) throw new SearchError('key is required');
    const store = this.broker.ctx.store;
    const res = await store.queryMessage(t, key, MAX_RESULTS, beginMs, endMs);
    const out: MessageView[] = [];
    for (const record of res.messages) {
      const m = await store.lookMessageByOffset(readLong(record, PHYSICAL_OFFSET_AT));
      if (m) out.push(messageView(m));
    }
    return out.sort((a, b) => a.commitLogOffset - b.commitLogOffset);
  }

  /** The message with offset message id `msgId` (VIEW_MESSAGE_BY_ID). */
  async byId(msgId: string | undefined): Promise<MessageView[]> {
    if (!msgId || !/^[0-9A-Fa-f]{32}$|^[0-9A-Fa-f]{56}$/.test(msgId)) throw new SearchError('a message id is 32 hex digits (IPv4 store host + CommitLog offset), or 56 with an IPv6 host');
    const { commitLogOffset } = decodeMessageId(msgId.toUpperCase());
    const m = await this.broker.ctx.store.lookMessageByOffset(commitLogOffset);
    return m ? [messageView(m)] : [];
  }

  /** The message at `offset` of queue `queueId` of `topic`. */
  async byQueueOffset(topic: string | undefined, queueId: number, offset: number): Promise<MessageView[]> {
    const t = this.requireTopic(topic);
    if (!Number.isInteger(queueId) || queueId < 0 || !Number.isInteger(offset) || offset < 0) throw new SearchError('queueId and offset must be integers >= 0');
    const store = this.broker.ctx.store;
    const phy = store.getCommitLogOffsetInQueue(t, queueId, offset);
    if (phy < 0) return [];
    const m = await store.lookMessageByOffset(phy);
    return m ? [messageView(m)] : [];
  }

  /** Up to 64 messages of `topic` stored in [beginMs, endMs], oldest first. */
  async byTime(topic: string | undefined, beginMs: number, endMs: number): Promise<MessageView[]> {
    const t = this.requireTopic(topic);
    if (!(beginMs <= endMs)) throw new SearchError('begin must not be after end');
    const store = this.broker.ctx.store;
    const tc = this.broker.ctx.topicConfigManager.selectTopicConfig(t)!;
    const out: MessageView[] = [];
    for (let q = 0; q < tc.readQueueNums; q++) {
      const max = store.getMaxOffsetInQueue(t, q);
      let offset = Math.max(store.getMinOffsetInQueue(t, q), await store.getOffsetInQueueByTime(t, q, beginMs, 'LOWER'));
      for (let n = 0; offset < max && n < MAX_RESULTS; offset++, n++) {
        const phy = store.getCommitLogOffsetInQueue(t, q, offset);
        if (phy < 0) break;
        const m = await store.lookMessageByOffset(phy);
        if (!m || m.storeTimestamp > endMs) break;
        if (m.storeTimestamp >= beginMs) out.push(messageView(m));
      }
    }
    return out.sort((a, b) => a.storeTimestamp - b.storeTimestamp || a.commitLogOffset - b.commitLogOffset).slice(0, MAX_RESULTS);
  }
}
