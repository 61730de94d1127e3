/**
 * Plain-object shapes of the `apache.rocketmq.v2` messages this server reads and writes, as
 * produced by proto-loader with keepCase/longs Number/enums String/defaults/oneofs (see
 * messaging-service.ts). Only the fields tsmq uses are typed; enum values are their names.
 */

export interface Duration {
  seconds: number;
  nanos: number;
}

export interface Timestamp {
  seconds: number;
  nanos: number;
}

export interface Resource {
  resource_namespace?: string;
  name: string;
}

export interface Status {
  code: string | number;
  message: string;
}

export interface Address {
  host: string;
  port: number;
}

export interface Endpoints {
  scheme: string;
  addresses: Address[];
}

export interface Broker {
  name: string;
  id: number;
  endpoints: Endpoints;
}

export interface MessageQueue {
  topic: Resource;
  id: number;
  permission: string;
  broker: Broker | null;
  accept_message_types: string[];
}

export interface FilterExpression {
  type: string;
  expression: string;
}

export interface Digest {
  type: string;
  checksum: string;
}

export interface SystemProperties {
  tag?: string;
  keys: string[];
  message_id: string;
  body_digest: Digest | null;
  body_encoding: string;
  message_type: string;
  born_timestamp: Timestamp | null;
  born_host: string;
  store_timestamp?: Timestamp | null;
  store_host?: string;
  delivery_timestamp?: Timestamp | null;
  receipt_handle?: string;
  queue_id: number;
  queue_offset?: number;
  invisible_duration?: Duration | null;
  delivery_attempt?: number;
  message_group?: string;
  trace_context?: string;
  orphaned_transaction_recovery_duration?: Duration | null;
  dead_letter_queue?: { topic: string; message_id: string } | null;
  lite_topic?: string;
  priority?: number;
}

export interface Message {
  topic: Resource;
  user_properties: Record<string, string>;
  system_properties: SystemProperties;
  body: Buffer;
}

export interface RetryPolicy {
  max_attempts: number;
  exponential_backoff?: { initial: Duration; max: Duration; multiplier: number };
  customized_backoff?: { next: Duration[] };
  strategy?: string;
}

export interface SubscriptionEntry {
  topic: Resource;
  expression: FilterExpression;
}

export interface Settings {
  client_type?: string;
  access_point?: Endpoints | null;
  backoff_policy?: RetryPolicy | null;
  request_timeout?: Duration | null;
  publishing?: { topics: Resource[]; max_body_size: number; validate_message_type: boolean } | null;
  subscription?: {
    group?: Resource | null;
    subscriptions: SubscriptionEntry[];
    fifo?: boolean;
    receive_batch_size?: number;
    long_polling_timeout?: Duration | null;
  } | null;
  user_agent?: { language: string; version: string; platform: string; hostname: string } | null;
  pub_sub?: string;
}

export interface TelemetryCommand {
  status?: Status | null;
  settings?: Settings | null;
  thread_stack_trace?: { nonce: string; thread_stack_trace?: string } | null;
  verify_message_result?: { nonce: string } | null;
  recover_orphaned_transaction_command?: { message: Message; transaction_id: string } | null;
  command?: string;
}

/** Code names of `apache.rocketmq.v2.Code` used by tsmq. */
export const Code = {
  OK: 'OK',
  MULTIPLE_RESULTS: 'MULTIPLE_RESULTS',
  BAD_REQUEST: 'BAD_REQUEST',
  ILLEGAL_TOPIC: 'ILLEGAL_TOPIC',
  ILLEGAL_CONSUMER_GROUP: 'ILLEGAL_CONSUMER_GROUP',
  ILLEGAL_MESSAGE_TAG: 'ILLEGAL_MESSAGE_TAG',
  ILLEGAL_MESSAGE_KEY: 'ILLEGAL_MESSAGE_KEY',
  ILLEGAL_MESSAGE_GROUP: 'ILLEGAL_MESSAGE_GROUP',
  ILLEGAL_MESSAGE_PROPERTY_KEY: 'ILLEGAL_MESSAGE_PROPERTY_KEY',
  INVALID_TRANSACTION_ID: 'INVALID_TRANSACTION_ID',
  ILLEGAL_MESSAGE_ID: 'ILLEGAL_MESSAGE_ID',
  ILLEGAL_FILTER_EXPRESSION: 'ILLEGAL_FILTER_EXPRESSION',
  ILLEGAL_INVISIBLE_TIME: 'ILLEGAL_INVISIBLE_TIME',
  ILLEGAL_DELIVERY_TIME: 'ILLEGAL_DELIVERY_TIME',
  INVALID_RECEIPT_HANDLE: 'INVALID_RECEIPT_HANDLE',
  MESSAGE_PROPERTY_CONFLICT_WITH_TYPE: 'MESSAGE_PROPERTY_CONFLICT_WITH_TYPE',
  UNRECOGNIZED_CLIENT_TYPE: 'UNRECOGNIZED_CLIENT_TYPE',
  CLIENT_ID_REQUIRED: 'CLIENT_ID_REQUIRED',
  ILLEGAL_POLLING_TIME: 'ILLEGAL_POLLING_TIME',
  ILLEGAL_OFFSET: 'ILLEGAL_OFFSET',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  MESSAGE_NOT_FOUND: 'MESSAGE_NOT_FOUND',
  TOPIC_NOT_FOUND: 'TOPIC_NOT_FOUND',
  CONSUMER_GROUP_NOT_FOUND: 'CONSUMER_GROUP_NOT_FOUND',
  OFFSET_NOT_FOUND: 'OFFSET_NOT_FOUND',
  MESSAGE_BODY_TOO_LARGE: 'MESSAGE_BODY_TOO_LARGE',
  MESSAGE_BODY_EMPTY: 'MESSAGE_BODY_EMPTY',
  MESSAGE_PROPERTIES_TOO_LARGE: 'MESSAGE_PROPERTIES_TOO_LARGE',
  TOO_MANY_REQUESTS: 'TOO_MANY_REQUESTS',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
  INTERNAL_SERVER_ERROR: 'INTERNAL_SERVER_ERROR',
  NOT_IMPLEMENTED: 'NOT_IMPLEMENTED',
  MASTER_PERSISTENCE_TIMEOUT: 'MASTER_PERSISTENCE_TIMEOUT',
  SLAVE_PERSISTENCE_TIMEOUT: 'SLAVE_PERSISTENCE_TIMEOUT',
  HA_NOT_AVAILABLE: 'HA_NOT_AVAILABLE',
  UNSUPPORTED: 'UNSUPPORTED',
} as const;

export type CodeName = (typeof Code)[keyof typeof Code];

export function status(code: CodeName, message = ''): Status {
  return { code, message: message || code };
}

export const OK_STATUS: Status = { code: Code.OK, message: 'OK' };

/** Milliseconds of a Duration (0 for null). */
export function durationMs(d: Duration | null | undefined): number {
  if (!d) return 0;
  return Number(d.seconds) * 1000 + Math.floor(Number(d.nanos) / 1e6);
}

export function msToDuration(ms: number): Duration {
  const whole = Math.max(0, Math.floor(ms));
  return { seconds: Math.floor(whole / 1000), nanos: (whole % 1000) * 1e6 };
}

export function timestampMs(t: Timestamp | null | undefined): number {
  if (!t) return 0;
  return Number(t.seconds) * 1000 + Math.floor(Number(t.nanos) / 1e6);
}

export function msToTimestamp(ms: number): Timestamp {
  return { seconds: Math.floor(ms / 1000), nanos: (((ms % 1000) + 1000) % 1000) * 1e6 };
}
