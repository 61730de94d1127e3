/**
 * Conversions between `apache.rocketmq.v2.Message` and the broker's message model.
 *
 * Sent messages (SendMessageRequest) → MessageInner properties, as the Apache proxy stores them:
 *   user_properties as is; KEYS = keys joined by ' '; TAGS = tag; UNIQ_KEY = message_id;
 *   __BORNHOST = born_host; __SHARDINGKEY = message_group; TIMER_DELIVER_MS = delivery_timestamp;
 *   TRAN_MSG = "true" for TRANSACTION (read back as Java Boolean.parseBoolean: any case); TRACE_CONTEXT = trace_context;
 *   PGROUP = the topic's name (Apache's proxy uses the topic as producer group, for transaction
 *   check-backs and producer stats); RECONSUME_TIME = delivery_attempt (0 when unset);
 *   BORN_TIMESTAMP = born_timestamp in ms when given; CHECK_IMMUNITY_TIME_IN_SECONDS =
 *   orphaned_transaction_recovery_duration in whole seconds for TRANSACTION (more than
 *   maxTransactionRecoverySecond, 3600, is BAD_REQUEST as Apache's proxy).
 * Stored messages → delivered v2 Messages: user properties are the non-system properties;
 *   body_digest is the MD5 of the delivered body in uppercase hex (bodies compressed by remoting
 *   producers with zlib are inflated first, body_encoding IDENTITY); message_type is derived
 *   from the properties (TRANSACTION, FIFO, DELAY, NORMAL).
 * Bounds (docs/limits.md): a GZIP body is inflated with an output cap of the body limit (a bomb
 *   is refused after at most that much output, MESSAGE_BODY_TOO_LARGE); user properties are
 *   capped like Apache's proxy (userPropertyMaxNum 128, maxUserPropertySize 16 KiB of UTF-8 keys
 *   and values, MESSAGE_PROPERTIES_TOO_LARGE); a stored zlib body is inflated for delivery only
 *   up to maxInflatedBodyBytes (UndeliverableBodyError beyond).
 */
import { createHash } from 'node:crypto';
import { inflateBounded } from '../common/bytes/bounded-inflate.js';
import type { MessageExt, MessageInner, SocketAddress } from '../common/message/message.js';
import { MessageConst } from '../common/message/message-const.js';
import { ipToString, socketAddressToString } from '../common/message/msgid.js';
import { MessageSysFlag } from '../common/message/sysflag.js';
import { checkTopicName } from './resource-validator.js';
import { Code, durationMs, msToDuration, msToTimestamp, timestampMs, type CodeName, type Message } from './proto/v2-types.js';
import { javaParseBoolean } from '../common/message/java-boolean.js';
import { namespacedResource } from './resource-namespace.js';

const SYSTEM_KEYS: ReadonlySet<string> = new Set(Object.values(MessageConst));
/** Apache ProxyConfig.maxTransactionRecoverySecond: longest orphaned_transaction_recovery_duration, s. */
export const MAX_TRANSACTION_RECOVERY_SECONDS = 3600;
/** Apache ProxyConfig.maxMessageGroupSize: a message_group of this many UTF-8 bytes or more is refused. */
export const MAX_MESSAGE_GROUP_BYTES = 64;
/** Apache ProxyConfig.userPropertyMaxNum: most user properties on one gRPC message. */
export const USER_PROPERTY_MAX_NUM = 128;
/** Apache ProxyConfig.maxUserPropertySize: UTF-8 bytes of all user property keys and values. */
export const MAX_USER_PROPERTY_SIZE_BYTES = 16 * 1024;
/**
 * Largest body a stored compressed message is inflated to for a gRPC delivery unless the broker's
 * maxMessageSize is larger: Apache's producers (DefaultMQProducer.maxMessageSize, 4 MiB) check the
 * body before compressing it, so no Apache client stores a body that inflates past this.
 */
export const DEFAULT_MAX_INFLATED_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Longest delay a gRPC `delivery_timestamp` may ask for, in ms from now: Apache's proxy
 * `ProxyConfig.maxDelayTimeMills` default, 1 day (SendMessageActivity.validateDelayTime answers
 * ILLEGAL_DELIVERY_TIME beyond it). Remoting timers are bounded by the broker's `timerMaxDelaySec`
 * (3 days) instead, which also applies here when it is shorter.
 */
export const MAX_DELAY_MS = 24 * 3_600_000;

export type MessageKind = 'NORMAL' | 'FIFO' | 'DELAY' | 'TRANSACTION';

export interface Inbound {
  msg: MessageInner;
  kind: MessageKind;
  uniqKey: string;
  /** Epoch ms for DELAY messages. */
  deliverMs?: number;
}

export interface InboundError {
  code: CodeName;
  message: string;
}

export function md5Hex(body: Buffer): string {
  return createHash('md5').update(body).digest('hex').toUpperCase();
}

/** Validates a sent message and builds the MessageInner (topic/queue chosen later by the caller). */
export function fromProtoMessage(
  m: Message,
  opts: { bornHost: SocketAddress; storeHost: SocketAddress; nowMs: number; maxBodySizeBytes: number },
): Inbound | InboundError {
  const topic = m.topic?.name ?? '';
  const refused = checkTopicName(topic);
  if (refused) return { code: refused.code as CodeName, message: refused.message };
  const sp = m.system_properties;
  if (!sp) return { code: Code.BAD_REQUEST, message: 'system_properties missing' };
  let body: Buffer = Buffer.isBuffer(m.body) ? m.body : Buffer.from(m.body ?? []);
  if (sp.body_encoding === 'GZIP') {
    const inflated = inflateBounded(body, 'gzip', opts.maxBodySizeBytes);
    if (!inflated.ok) {
      if (inflated.reason === 'too-large') return { code: Code.MESSAGE_BODY_TOO_LARGE, message: `message body (body_encoding GZIP, ${body.length} bytes) inflates to more than the limit of ${opts.maxBodySizeBytes} bytes` };
      return { code: Code.BAD_REQUEST, message: 'body_encoding GZIP but the body does not gunzip' };
    }
    body = inflated.body;
  }
  if (body.length === 0) return { code: Code.MESSAGE_BODY_EMPTY, message: 'message body is empty' };
  if (body.length > opts.maxBodySizeBytes) return { code: Code.MESSAGE_BODY_TOO_LARGE, message: `message body is ${body.length} bytes, the limit is ${opts.maxBodySizeBytes}` };
  const props = new Map<string, string>();
  const userProps = Object.entries(m.user_properties ?? {});
  if (userProps.length > USER_PROPERTY_MAX_NUM) return { code: Code.MESSAGE_PROPERTIES_TOO_LARGE, message: `too many user properties (${userProps.length}), max is ${USER_PROPERTY_MAX_NUM}` };
  let userPropertyBytes = 0;
  for (const [k, v] of userProps) userPropertyBytes += Buffer.byteLength(k, 'utf8') + Buffer.byteLength(v, 'utf8');
  if (userPropertyBytes > MAX_USER_PROPERTY_SIZE_BYTES) return { code: Code.MESSAGE_PROPERTIES_TOO_LARGE, message: `the total size of user properties is ${userPropertyBytes} bytes, max is ${MAX_USER_PROPERTY_SIZE_BYTES}` };
  for (const [k, v] of userProps) {
    if (SYSTEM_KEYS.has(k)) return { code: Code.ILLEGAL_MESSAGE_PROPERTY_KEY, message: `property key ${k} is reserved` };
    if (k.length === 0 || /[\x01\x02]/.test(k) || /[\x01\x02]/.test(v)) return { code: Code.ILLEGAL_MESSAGE_PROPERTY_KEY, message: `illegal property ${JSON.stringify(k)}` };
    props.set(k, v);
  }
  if (sp.tag !== undefined && sp.tag !== null && sp.tag !== '') {
    if (sp.tag.trim() === '' || sp.tag.includes('|') || /[\x01\x02]/.test(sp.tag)) return { code: Code.ILLEGAL_MESSAGE_TAG, message: `illegal tag ${JSON.stringify(sp.tag)}` };
    props.set(MessageConst.TAGS, sp.tag);
  }
  const keys = (sp.keys ?? []).filter((k) => k.length > 0);
  if (keys.some((k) => k.trim() === '' || /[\x01\x02 ]/.test(k))) return { code: Code.ILLEGAL_MESSAGE_KEY, message: 'message keys may not be blank or hold spaces' };
  if (keys.length > 0) props.set(MessageConst.KEYS, keys.join(' '));
  const uniqKey = sp.message_id || randomUniqKey();
  props.set(MessageConst.UNIQ_KEY, uniqKey);
  if (sp.born_host) props.set(MessageConst.BORN_HOST, sp.born_host);
  if (sp.trace_context) props.set(MessageConst.TRACE_CONTEXT, sp.trace_context);
  const kind = (['NORMAL', 'FIFO', 'DELAY', 'TRANSACTION'].includes(sp.message_type) ? sp.message_type : 'NORMAL') as MessageKind;
  const group = sp.message_group ?? '';
  if (kind === 'FIFO' && group === '') return { code: Code.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE, message: 'FIFO message without message_group' };
  if (group !== '') {
    if (kind !== 'FIFO') return { code: Code.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE, message: `message_group on a ${kind} message` };
    if (group.trim() === '') return { code: Code.ILLEGAL_MESSAGE_GROUP, message: 'message group cannot be the char sequence of whitespace' };
    if (Buffer.byteLength(group, 'utf8') >= MAX_MESSAGE_GROUP_BYTES) return { code: Code.ILLEGAL_MESSAGE_GROUP, message: `message group exceed the max size ${MAX_MESSAGE_GROUP_BYTES}` };
    if (/[\x00-\x1f\x7f-\x9f]/.test(group)) return { code: Code.ILLEGAL_MESSAGE_GROUP, message: 'message group cannot contain control character' };
    props.set(MessageConst.SHARDING_KEY, group);
  }
  const out: Inbound = {
    kind,
    uniqKey,
    msg: {
      topic,
      queueId: sp.queue_id ?? 0,
      flag: 0,
      body,
      properties: props,
      sysFlag: 0,
      bornTimestamp: timestampMs(sp.born_timestamp) || opts.nowMs,
      bornHost: opts.bornHost,
      storeHost: opts.storeHost,
      reconsumeTimes: 0,
      preparedTransactionOffset: 0,
    },
  };
  if (kind === 'DELAY') {
    const deliverMs = timestampMs(sp.delivery_timestamp);
    if (!sp.delivery_timestamp) return { code: Code.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE, message: 'DELAY message without delivery_timestamp' };
    if (deliverMs - opts.nowMs > MAX_DELAY_MS) return { code: Code.ILLEGAL_DELIVERY_TIME, message: `the max delay time of message is too large, max is ${MAX_DELAY_MS}` };
    out.deliverMs = deliverMs;
    props.set(MessageConst.TIMER_DELIVER_MS, String(deliverMs));
  } else if (sp.delivery_timestamp) {
    return { code: Code.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE, message: `delivery_timestamp on a ${kind} message` };
  }
  if (kind === 'TRANSACTION') {
    props.set(MessageConst.TRAN_MSG, 'true');
    if (sp.orphaned_transaction_recovery_duration) {
      const recoverySeconds = Math.trunc(durationMs(sp.orphaned_transaction_recovery_duration) / 1000);
      if (recoverySeconds > MAX_TRANSACTION_RECOVERY_SECONDS) return { code: Code.BAD_REQUEST, message: `the max transaction recovery time of message is too large, max is ${MAX_TRANSACTION_RECOVERY_SECONDS}` };
      props.set(MessageConst.CHECK_IMMUNITY_TIME_IN_SECONDS, String(recoverySeconds));
    }
  }
  props.set(MessageConst.RECONSUME_TIME, String(sp.delivery_attempt ?? 0));
  props.set(MessageConst.PGROUP, topic);
  const bornMs = timestampMs(sp.born_timestamp);
  if (sp.born_timestamp) props.set(MessageConst.BORN_TIMESTAMP, String(bornMs));
  return out;
}

function randomUniqKey(): string {
  return createHash('md5').update(`${process.pid}${Date.now()}${Math.random()}`).digest('hex').slice(0, 32).toUpperCase();
}

export function isInboundError(v: Inbound | InboundError): v is InboundError {
  return (v as InboundError).code !== undefined;
}

/** The message kind of a stored message. */
export function kindOf(m: MessageExt): MessageKind {
  const p = m.properties;
  if (javaParseBoolean(p.get(MessageConst.TRAN_MSG)) || p.has(MessageConst.TRANSACTION_ID)) return 'TRANSACTION';
  if (p.has(MessageConst.SHARDING_KEY)) return 'FIFO';
  if (p.has(MessageConst.TIMER_DELIVER_MS) || p.has(MessageConst.DELAY)) return 'DELAY';
  return 'NORMAL';
}

/** A stored message whose body cannot be delivered over gRPC (it inflates past the cap). */
export class UndeliverableBodyError extends Error {
  constructor(readonly msg: MessageExt, readonly maxInflatedBodyBytes: number, detail: string) {
    super(`message ${msg.msgId} (topic ${msg.topic}, queue ${msg.queueId}, offset ${msg.queueOffset}) cannot be delivered over gRPC: its compressed body ${detail}`);
    this.name = 'UndeliverableBodyError';
  }
}

/**
 * Body as delivered to gRPC clients: zlib-compressed remoting bodies are inflated, producing at
 * most `maxInflatedBodyBytes` (default DEFAULT_MAX_INFLATED_BODY_BYTES). A body that does not
 * inflate is delivered as stored (as before). @throws UndeliverableBodyError past the cap.
 */
export function deliveredBody(m: MessageExt, maxInflatedBodyBytes = DEFAULT_MAX_INFLATED_BODY_BYTES): Buffer {
  if ((m.sysFlag & MessageSysFlag.COMPRESSED_FLAG) === 0) return m.body;
  const type = (m.sysFlag & MessageSysFlag.COMPRESSION_TYPE_MASK) >> 8;
  if (type !== 0 && type !== 3) return m.body;
  const r = inflateBounded(m.body, 'zlib', maxInflatedBodyBytes);
  if (r.ok) return r.body;
  if (r.reason === 'too-large') throw new UndeliverableBodyError(m, maxInflatedBodyBytes, r.message.replace(/^zlib data/, `(zlib)`));
  return m.body;
}

export interface DeliveryInfo {
  receiptHandle?: string;
  attempt?: number;
  invisibleMs?: number;
}

/**
 * A stored message as a v2 Message for consumers (and for RecoverOrphanedTransactionCommand).
 * @throws UndeliverableBodyError when its compressed body inflates past maxInflatedBodyBytes.
 */
export function toProtoMessage(m: MessageExt, d: DeliveryInfo = {}, maxInflatedBodyBytes = DEFAULT_MAX_INFLATED_BODY_BYTES): Message {
  const p = m.properties;
  const body = deliveredBody(m, maxInflatedBodyBytes);
  const user: Record<string, string> = {};
  for (const [k, v] of p) if (!SYSTEM_KEYS.has(k)) user[k] = v;
  const keys = (p.get(MessageConst.KEYS) ?? '').split(' ').filter((k) => k.length > 0);
  const deliver = Number(p.get(MessageConst.TIMER_DELIVER_MS));
  const tag = p.get(MessageConst.TAGS);
  const group = p.get(MessageConst.SHARDING_KEY);
  return {
    topic: namespacedResource(m.topic),
    user_properties: user,
    body,
    system_properties: {
      ...(tag !== undefined ? { tag } : {}),
      keys,
      message_id: p.get(MessageConst.UNIQ_KEY) ?? m.msgId,
      body_digest: { type: 'MD5', checksum: md5Hex(body) },
      body_encoding: 'IDENTITY',
      message_type: kindOf(m),
      born_timestamp: msToTimestamp(m.bornTimestamp),
      born_host: p.get(MessageConst.BORN_HOST) ?? ipToString(m.bornHost.ip),
      store_timestamp: msToTimestamp(m.storeTimestamp),
      store_host: socketAddressToString(m.storeHost),
      ...(Number.isFinite(deliver) && deliver > 0 ? { delivery_timestamp: msToTimestamp(deliver) } : {}),
      ...(d.receiptHandle !== undefined ? { receipt_handle: d.receiptHandle } : {}),
      queue_id: m.queueId,
      queue_offset: m.queueOffset,
      ...(d.invisibleMs !== undefined ? { invisible_duration: msToDuration(d.invisibleMs) } : {}),
      ...(d.attempt !== undefined ? { delivery_attempt: d.attempt } : {}),
      ...(group !== undefined ? { message_group: group } : {}),
      ...(p.has(MessageConst.TRACE_CONTEXT) ? { trace_context: p.get(MessageConst.TRACE_CONTEXT)! } : {}),
    },
  };
}
