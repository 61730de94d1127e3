/**
 * JSON of RocketMQ `MessageQueue` values and of Java maps keyed by them, as Apache's broker
 * writes them with fastjson (RemotingSerializable.encode):
 *
 *   MessageQueue               {"brokerName":"broker-a","queueId":0,"topic":"T"}   (fields alphabetical)
 *   Map<MessageQueue, V>       {{"brokerName":"broker-a","queueId":0,"topic":"T"}:V,...}
 *
 * The map form has JSON objects in key position: not standard JSON, but what every RocketMQ
 * client parses (fastjson 1.2.69 in the 4.9.8 Java client turns the keys back into
 * MessageQueue objects; it also accepts the keys as quoted JSON strings, the Apache broker never
 * writes that). Used by TopicStatsTable (202), ConsumeStats (208) and ResetOffsetBody (222/220).
 * Request bodies (LockBatchRequestBody) hold MessageQueues in plain arrays: `parseMessageQueue`.
 */

/** A queue of a topic on one broker (RocketMQ `MessageQueue`); equality covers all three fields. */
export interface MessageQueueRef {
  topic: string;
  brokerName: string;
  queueId: number;
}

/** Identity string of a queue (map key inside tsmq; never sent). */
export function messageQueueKey(mq: MessageQueueRef): string {
  return `${mq.topic}\u0000${mq.brokerName}\u0000${mq.queueId}`;
}

/** `{"brokerName":…,"queueId":…,"topic":…}` */
export function messageQueueJson(mq: MessageQueueRef): string {
  return `{"brokerName":${JSON.stringify(mq.brokerName)},"queueId":${mq.queueId},"topic":${JSON.stringify(mq.topic)}}`;
}

/** Orders queues by topic, broker, queue id (stable output; Java's HashMap order is arbitrary). */
export function compareMessageQueues(a: MessageQueueRef, b: MessageQueueRef): number {
  if (a.topic !== b.topic) return a.topic < b.topic ? -1 : 1;
  if (a.brokerName !== b.brokerName) return a.brokerName < b.brokerName ? -1 : 1;
  return a.queueId - b.queueId;
}

/**
 * fastjson text of a `Map<MessageQueue, V>`: `{<queue>:<value>,...}` with each value already
 * encoded as JSON text (`valueJson`), entries ordered by `compareMessageQueues`.
 */
export function messageQueueMapJson<V>(entries: Iterable<readonly [MessageQueueRef, V]>, valueJson: (v: V) => string): string {
  const list = [...entries].sort((x, y) => compareMessageQueues(x[0], y[0]));
  return `{${list.map(([mq, v]) => `${messageQueueJson(mq)}:${valueJson(v)}`).join(',')}}`;
}

/** A Java `long` as JSON (integral; throws on a non-integer, which would be a tsmq bug). */
export function javaLongJson(n: number): string {
  if (!Number.isSafeInteger(n)) throw new RangeError(`not a long: ${n}`);
  return String(n);
}

/** A Java `double` as fastjson writes it: `0.0`, `12.0`, `1.5`. */
export function javaDoubleJson(n: number): string {
  if (!Number.isFinite(n)) return '0.0';
  return Number.isInteger(n) ? n.toFixed(1) : String(n);
}

/** Thrown for a request body that is not what the request code needs. */
export class BodyError extends Error {}

/** Reads one MessageQueue object of a request body. @throws BodyError naming `where`. */
export function parseMessageQueue(v: unknown, where: string): MessageQueueRef {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new BodyError(`${where} is not a MessageQueue object`);
  const o = v as Record<string, unknown>;
  const queueId = typeof o.queueId === 'string' && /^-?\d+$/.test(o.queueId) ? Number(o.queueId) : o.queueId;
  if (typeof o.topic !== 'string' || o.topic === '') throw new BodyError(`${where}.topic is missing`);
  if (typeof o.brokerName !== 'string') throw new BodyError(`${where}.brokerName is missing`);
  if (typeof queueId !== 'number' || !Number.isInteger(queueId) || queueId < 0) throw new BodyError(`${where}.queueId is not a queue id: ${String(o.queueId)}`);
  return { topic: o.topic, brokerName: o.brokerName, queueId };
}
