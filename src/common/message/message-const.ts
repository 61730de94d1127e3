/**
 * Property key strings and separators of RocketMQ messages (mirrors `MessageConst` and the
 * separators of `MessageDecoder`). Keys are stored as plain text inside the PROPERTIES field.
 */

/** Well-known property keys. The value strings are RocketMQ's on-disk/on-wire keys, verbatim. */
export const MessageConst = {
  /** User keys separated by `KEY_SEPARATOR`; each key is indexed. */
  KEYS: 'KEYS',
  /** Tag string; its Java hash is the consume-queue tags code. */
  TAGS: 'TAGS',
  /** "true"/"false": wait for store (sync flush/replication); absent ⇒ true. */
  WAIT: 'WAIT',
  /** Delay level 1..N. */
  DELAY: 'DELAY',
  RETRY_TOPIC: 'RETRY_TOPIC',
  REAL_TOPIC: 'REAL_TOPIC',
  REAL_QID: 'REAL_QID',
  /** "true" on a producer's transactional half message. */
  TRAN_MSG: 'TRAN_MSG',
  PGROUP: 'PGROUP',
  MIN_OFFSET: 'MIN_OFFSET',
  MAX_OFFSET: 'MAX_OFFSET',
  BUYER_ID: 'BUYER_ID',
  ORIGIN_MESSAGE_ID: 'ORIGIN_MESSAGE_ID',
  TRANSFER_FLAG: 'TRANSFER_FLAG',
  CORRECTION_FLAG: 'CORRECTION_FLAG',
  MQ2_FLAG: 'MQ2_FLAG',
  RECONSUME_TIME: 'RECONSUME_TIME',
  MSG_REGION: 'MSG_REGION',
  TRACE_ON: 'TRACE_ON',
  /** Client-generated unique id (PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX). */
  UNIQ_KEY: 'UNIQ_KEY',
  EXTEND_UNIQ_INFO: 'EXTEND_UNIQ_INFO',
  MAX_RECONSUME_TIMES: 'MAX_RECONSUME_TIMES',
  CONSUME_START_TIME: 'CONSUME_START_TIME',
  INNER_NUM: 'INNER_NUM',
  INNER_BASE: 'INNER_BASE',
  POP_CK: 'POP_CK',
  POP_CK_OFFSET: 'POP_CK_OFFSET',
  FIRST_POP_TIME: '1ST_POP_TIME',
  SHARDING_KEY: '__SHARDINGKEY',
  TRANSACTION_PREPARED_QUEUE_OFFSET: 'TRAN_PREPARED_QUEUE_OFFSET',
  TRANSACTION_CHECK_TIMES: 'TRANSACTION_CHECK_TIMES',
  CHECK_IMMUNITY_TIME_IN_SECONDS: 'CHECK_IMMUNITY_TIME_IN_SECONDS',
  TRANSACTION_ID: '__transactionId__',
  INSTANCE_ID: 'INSTANCE_ID',
  CORRELATION_ID: 'CORRELATION_ID',
  REPLY_TO_CLIENT: 'REPLY_TO_CLIENT',
  MESSAGE_TTL: 'TTL',
  ARRIVE_TIME: 'ARRIVE_TIME',
  PUSH_REPLY_TIME: 'PUSH_REPLY_TIME',
  CLUSTER: 'CLUSTER',
  MESSAGE_TYPE: 'MSG_TYPE',
  /** Required (`x_y`) when `duplicationEnable`. */
  DUP_INFO: 'DUP_INFO',
  INNER_MULTI_DISPATCH: 'INNER_MULTI_DISPATCH',
  INNER_MULTI_QUEUE_OFFSET: 'INNER_MULTI_QUEUE_OFFSET',
  TRACE_CONTEXT: 'TRACE_CONTEXT',
  TIMER_DELAY_SEC: 'TIMER_DELAY_SEC',
  TIMER_DELIVER_MS: 'TIMER_DELIVER_MS',
  TIMER_DELAY_MS: 'TIMER_DELAY_MS',
  TIMER_ENQUEUE_MS: 'TIMER_ENQUEUE_MS',
  TIMER_DEQUEUE_MS: 'TIMER_DEQUEUE_MS',
  TIMER_ROLL_TIMES: 'TIMER_ROLL_TIMES',
  TIMER_OUT_MS: 'TIMER_OUT_MS',
  TIMER_DEL_UNIQKEY: 'TIMER_DEL_UNIQKEY',
  TIMER_DELAY_LEVEL: 'TIMER_DELAY_LEVEL',
  BORN_HOST: '__BORNHOST',
  BORN_TIMESTAMP: 'BORN_TIMESTAMP',
  DLQ_ORIGIN_TOPIC: 'DLQ_ORIGIN_TOPIC',
  DLQ_ORIGIN_MESSAGE_ID: 'DLQ_ORIGIN_MESSAGE_ID',
  /** Whole-record CRC pair key (5.2.0+, `enabledAppendPropCRC`). */
  CRC32: '__CRC32#',
  FORWARD_QUEUE_ID: 'PROPERTY_FORWARD_QUEUE_ID',
  REDIRECT: 'REDIRECT',
} as const;

export type MessageConstKey = keyof typeof MessageConst;

/** Separator between keys inside the KEYS property. */
export const KEY_SEPARATOR = ' ';
/** Between a property name and its value (char 1). */
export const NAME_VALUE_SEPARATOR = '\x01';
/** After each property value (char 2). */
export const PROPERTY_SEPARATOR = '\x02';
/** Properties with this key prefix are never stored. */
export const TRANSIENT_PROPERTY_PREFIX = '__RMQ.TRANSIENT.';
/** Reserved length of the `__CRC32#` property pair: key + \x01 + 10 digits + \x02 = 20 bytes. */
export const CRC32_RESERVED_LENGTH = 20;
