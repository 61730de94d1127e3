/**
 * The public shapes of the embedded-store API (src/index.ts): what goes in (`MessageInput`), what
 * a put answers (`PutResult`) and what reads give back (`StoredMessage`), plus the conversions
 * from and to the store's internal `MessageInner` / `MessageExt`.
 */
import { TsmqError } from '../common/errors.js';
import type { MessageExt, MessageInner, SocketAddress } from '../common/message/message.js';
import { MessageConst } from '../common/message/message-const.js';
import { validateTopic } from '../common/message/topic-validator.js';
import type { PutMessageStatus } from '../store/message-store.js';

/** A message to append. */
export interface MessageInput {
  /** Topic name: `[%|a-zA-Z0-9_-]`, at most 127 characters (RocketMQ's rule). */
  topic: string;
  /** Queue id, an integer ≥ 0; default 0. The store keeps one ConsumeQueue per topic and queue id. */
  queueId?: number;
  /** The body; a string is stored as UTF-8. Empty bodies are refused (MESSAGE_ILLEGAL), as RocketMQ's clients do. */
  body: Buffer | Uint8Array | string;
  /** The TAGS property (one tag; consumers filter on it). */
  tags?: string;
  /** The KEYS property, indexed for `queryMessage`: an array or one string of space-separated keys. */
  keys?: string | string[];
  /** User properties (`name` → `value`); names and values must not contain the characters \u0001 and \u0002. */
  properties?: Record<string, string>;
  /** BORNTIMESTAMP in epoch ms; default now. */
  bornTimestampMs?: number;
}

/** Statuses with which the message was stored (the record is in the CommitLog). */
export type StoredPutStatus = Extract<PutMessageStatus, 'PUT_OK' | 'FLUSH_DISK_TIMEOUT' | 'FLUSH_SLAVE_TIMEOUT' | 'SLAVE_NOT_AVAILABLE'>;

/** Where a put landed (RocketMQ `PutMessageResult` + `AppendMessageResult`). */
export interface PutResult {
  /** PUT_OK, or a wait that failed after the record was appended (FLUSH_DISK_TIMEOUT under SYNC_FLUSH...). */
  status: StoredPutStatus;
  /** Offset message id: store host + physical offset, 32 uppercase hex characters (RocketMQ's `offsetMsgId`). */
  msgId: string;
  /** Position in the topic's queue (0, 1, 2, ...). */
  queueOffset: number;
  /** Byte offset of the record in the CommitLog. */
  physicalOffset: number;
  /** STORETIMESTAMP written in the record, epoch ms. */
  storeTimestampMs: number;
}

/** A message read back from the store (decoded CommitLog record, RocketMQ `MessageExt`). */
export interface StoredMessage {
  topic: string;
  queueId: number;
  queueOffset: number;
  physicalOffset: number;
  /** Offset message id (see PutResult.msgId). */
  msgId: string;
  body: Buffer;
  /** TAGS property, undefined when the message has none. */
  tags: string | undefined;
  /** KEYS property split on spaces ([] when none). */
  keys: string[];
  /** Every property of the record, system ones (TAGS, KEYS, UNIQ_KEY, ...) included. */
  properties: Record<string, string>;
  bornTimestampMs: number;
  storeTimestampMs: number;
  /** Record size (TOTALSIZE) in bytes. */
  storeSizeBytes: number;
  reconsumeTimes: number;
}

/**
 * Error of the embedded API. `code` is a RocketMQ status name where one applies
 * (`MESSAGE_ILLEGAL`, `SERVICE_NOT_AVAILABLE`, `PROPERTIES_SIZE_EXCEEDED`, ...).
 */
export class MessageStoreError extends TsmqError {}

const LOCALHOST: SocketAddress = { ip: Buffer.from([127, 0, 0, 1]), port: 0 };

function illegal(why: string): MessageStoreError {
  return new MessageStoreError('MESSAGE_ILLEGAL', why);
}

function checkPropertyText(what: string, s: string): void {
  if (typeof s !== 'string') throw illegal(`${what} must be a string`);
  if (s.includes('\u0001') || s.includes('\u0002')) throw illegal(`${what} contains \\u0001 or \\u0002, which separate properties in a record`);
}

/**
 * Builds the store's message from the public input.
 * @throws MessageStoreError MESSAGE_ILLEGAL for a bad topic, queue id, body, tag, key or property.
 */
export function toMessageInner(m: MessageInput, storeHost: SocketAddress = LOCALHOST): MessageInner {
  if (m === null || typeof m !== 'object') throw illegal('message must be an object');
  const bad = validateTopic(m.topic);
  if (bad) throw illegal(bad);
  const queueId = m.queueId ?? 0;
  if (!Number.isInteger(queueId) || queueId < 0 || queueId > 0x7fffffff) throw illegal(`queueId must be an integer >= 0, got ${String(m.queueId)}`);
  const body = typeof m.body === 'string' ? Buffer.from(m.body, 'utf8') : m.body instanceof Uint8Array ? Buffer.from(m.body.buffer, m.body.byteOffset, m.body.byteLength) : null;
  if (!body) throw illegal('body must be a Buffer, Uint8Array or string');
  if (body.length === 0) throw illegal('body is empty');
  const props = new Map<string, string>();
  if (m.tags !== undefined) {
    checkPropertyText('tags', m.tags);
    props.set(MessageConst.TAGS, m.tags);
  }
  if (m.keys !== undefined) {
    const keys = Array.isArray(m.keys) ? m.keys : [m.keys];
    for (const k of keys) checkPropertyText('key', k);
    if (keys.length > 0) props.set(MessageConst.KEYS, keys.join(' '));
  }
  for (const [k, v] of Object.entries(m.properties ?? {})) {
    checkPropertyText(`property name ${JSON.stringify(k)}`, k);
    checkPropertyText(`property ${k}`, v);
    if (k.length === 0) throw illegal('property name is empty');
    props.set(k, v);
  }
  const born = m.bornTimestampMs ?? Date.now();
  if (!Number.isSafeInteger(born) || born < 0) throw illegal(`bornTimestampMs must be epoch ms, got ${String(born)}`);
  return {
    topic: m.topic,
    queueId,
    flag: 0,
    body,
    properties: props,
    sysFlag: 0,
    bornTimestamp: born,
    bornHost: LOCALHOST,
    storeHost,
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
  };
}

/** The public view of a decoded record. */
export function toStoredMessage(m: MessageExt): StoredMessage {
  const keys = m.properties.get(MessageConst.KEYS);
  return {
    topic: m.topic,
    queueId: m.queueId,
    queueOffset: m.queueOffset,
    physicalOffset: m.commitLogOffset,
    msgId: m.msgId,
    body: m.body,
    tags: m.properties.get(MessageConst.TAGS),
    keys: keys ? keys.split(' ').filter((k) => k.length > 0) : [],
    properties: Object.fromEntries(m.properties),
    bornTimestampMs: m.bornTimestamp,
    storeTimestampMs: m.storeTimestamp,
    storeSizeBytes: m.storeSize,
    reconsumeTimes: m.reconsumeTimes,
  };
}
