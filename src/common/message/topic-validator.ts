/**
 * Topic and group names: system topics, retry/DLQ naming and validation (mirrors `TopicValidator`,
 * `MixAll.getRetryTopic/getDLQTopic/isSysConsumerGroup` and the broker's `HookUtils` length
 * checks, spec §1.4/§1.12). The one list of system topics for every front: the remoting send
 * processor refuses the not-allowed-send subset, the gRPC front every system topic.
 */

export const TopicValidator = {
  AUTO_CREATE_TOPIC_KEY_TOPIC: 'TBW102',
  RMQ_SYS_SCHEDULE_TOPIC: 'SCHEDULE_TOPIC_XXXX',
  RMQ_SYS_BENCHMARK_TOPIC: 'BenchmarkTest',
  RMQ_SYS_TRANS_HALF_TOPIC: 'RMQ_SYS_TRANS_HALF_TOPIC',
  RMQ_SYS_TRACE_TOPIC: 'RMQ_SYS_TRACE_TOPIC',
  RMQ_SYS_TRANS_OP_HALF_TOPIC: 'RMQ_SYS_TRANS_OP_HALF_TOPIC',
  RMQ_SYS_TRANSACTION_CHECK_MAX_TIME_TOPIC: 'TRANS_CHECK_MAX_TIME_TOPIC',
  RMQ_SYS_SELF_TEST_TOPIC: 'SELF_TEST_TOPIC',
  RMQ_SYS_OFFSET_MOVED_EVENT: 'OFFSET_MOVED_EVENT',
  /** Apache 5.x RocksDB consumer-offset checkpoint topic (tsmq never writes it). */
  RMQ_SYS_ROCKSDB_OFFSET_TOPIC: 'CHECKPOINT_TOPIC',
  SYSTEM_TOPIC_PREFIX: 'rmq_sys_',
  /** Consumer groups with this prefix are the broker's own (e.g. CID_RMQ_SYS_TRANS). */
  SYSTEM_GROUP_PREFIX: 'CID_RMQ_SYS_',
  RETRY_GROUP_TOPIC_PREFIX: '%RETRY%',
  DLQ_GROUP_TOPIC_PREFIX: '%DLQ%',
  /** Max length of a normal topic (fits the V1 1-byte signed topic length). */
  TOPIC_MAX_LENGTH: 127,
  /** Max length of any topic, including `%RETRY%…` ones (stored with the V2 2-byte length). */
  RETRY_TOPIC_MAX_LENGTH: 255,
  /** Max length of a consumer group (leaves room for `%RETRY%<group>_<topic>` names). */
  GROUP_MAX_LENGTH: 120,
} as const;

const SYSTEM_TOPICS: ReadonlySet<string> = new Set([
  TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC,
  TopicValidator.RMQ_SYS_SCHEDULE_TOPIC,
  TopicValidator.RMQ_SYS_BENCHMARK_TOPIC,
  TopicValidator.RMQ_SYS_TRANS_HALF_TOPIC,
  TopicValidator.RMQ_SYS_TRACE_TOPIC,
  TopicValidator.RMQ_SYS_TRANS_OP_HALF_TOPIC,
  TopicValidator.RMQ_SYS_TRANSACTION_CHECK_MAX_TIME_TOPIC,
  TopicValidator.RMQ_SYS_SELF_TEST_TOPIC,
  TopicValidator.RMQ_SYS_OFFSET_MOVED_EVENT,
  TopicValidator.RMQ_SYS_ROCKSDB_OFFSET_TOPIC,
]);

const NOT_ALLOWED_SEND_TOPICS: ReadonlySet<string> = new Set([
  TopicValidator.RMQ_SYS_SCHEDULE_TOPIC,
  TopicValidator.RMQ_SYS_TRANS_HALF_TOPIC,
  TopicValidator.RMQ_SYS_TRANS_OP_HALF_TOPIC,
  TopicValidator.RMQ_SYS_TRANSACTION_CHECK_MAX_TIME_TOPIC,
  TopicValidator.RMQ_SYS_SELF_TEST_TOPIC,
  TopicValidator.RMQ_SYS_OFFSET_MOVED_EVENT,
]);

const LEGAL_TOPIC = /^[%|a-zA-Z0-9_-]+$/;

/** Shortens very long names inside error messages. */
function show(topic: string): string {
  return topic.length > 40 ? `${topic.slice(0, 37)}...` : topic;
}

/**
 * Validates a topic name for sending/creating. Returns null when the topic is acceptable, else a
 * human-readable reason. Rules: not empty/blank; only `[%|a-zA-Z0-9_-]`; at most 127 characters,
 * or at most 255 when it starts with `%RETRY%`. The characters are ASCII, so chars = bytes.
 */
export function validateTopic(topic: string): string | null {
  if (typeof topic !== 'string' || topic.trim().length === 0) return 'topic is empty or blank';
  const max = topic.startsWith(TopicValidator.RETRY_GROUP_TOPIC_PREFIX)
    ? TopicValidator.RETRY_TOPIC_MAX_LENGTH
    : TopicValidator.TOPIC_MAX_LENGTH;
  if (topic.length > max) {
    return `topic "${show(topic)}" is too long: ${topic.length} characters, the limit is ${max}`;
  }
  if (!LEGAL_TOPIC.test(topic)) {
    return `topic "${show(topic)}" contains characters other than [%|a-zA-Z0-9_-]`;
  }
  return null;
}

/**
 * Validates a consumer (or producer) group name. Returns null when acceptable, else a reason.
 * Rules: not empty/blank; only `[%|a-zA-Z0-9_-]`; at most 120 characters.
 */
export function validateGroup(group: string): string | null {
  if (typeof group !== 'string' || group.trim().length === 0) return 'group is empty or blank';
  if (!LEGAL_TOPIC.test(group)) return `group "${show(group)}" contains characters other than [%|a-zA-Z0-9_-]`;
  if (group.length > TopicValidator.GROUP_MAX_LENGTH) {
    return `group "${show(group)}" is too long: ${group.length} characters, the limit is ${TopicValidator.GROUP_MAX_LENGTH}`;
  }
  return null;
}

/** The named system topics (TBW102, SCHEDULE_TOPIC_XXXX, …); `rmq_sys_*` topics are system topics too. */
export function systemTopicNames(): readonly string[] {
  return [...SYSTEM_TOPICS];
}

/** The system topics no producer may send to, the subset of `systemTopicNames()` remoting refuses. */
export function notAllowedSendTopicNames(): readonly string[] {
  return [...NOT_ALLOWED_SEND_TOPICS];
}

/** True for groups the broker uses itself (`CID_RMQ_SYS_` prefix). */
export function isSysConsumerGroup(group: string): boolean {
  return group.startsWith(TopicValidator.SYSTEM_GROUP_PREFIX);
}

/** True for TBW102, SCHEDULE_TOPIC_XXXX, the transaction topics, … and any `rmq_sys_` topic. */
export function isSystemTopic(topic: string): boolean {
  return SYSTEM_TOPICS.has(topic) || topic.startsWith(TopicValidator.SYSTEM_TOPIC_PREFIX);
}

/** Topics producers may not send to directly (schedule, transaction, self-test, offset-moved). */
export function isNotAllowedSendTopic(topic: string): boolean {
  return NOT_ALLOWED_SEND_TOPICS.has(topic);
}

export function isRetryTopic(topic: string): boolean {
  return topic.startsWith(TopicValidator.RETRY_GROUP_TOPIC_PREFIX);
}

export function isDlqTopic(topic: string): boolean {
  return topic.startsWith(TopicValidator.DLQ_GROUP_TOPIC_PREFIX);
}

/** `%RETRY%<group>`. */
export function retryTopicOf(group: string): string {
  return TopicValidator.RETRY_GROUP_TOPIC_PREFIX + group;
}

/** `%DLQ%<group>`. */
export function dlqTopicOf(group: string): string {
  return TopicValidator.DLQ_GROUP_TOPIC_PREFIX + group;
}
