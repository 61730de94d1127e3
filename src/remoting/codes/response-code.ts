/**
 * RocketMQ remoting response codes (the `code` of a response frame).
 *
 * 0-4 are Apache's RemotingSysResponseCode, the rest its ResponseCode (client-protocols.md C).
 * ali-ons 3.12.0 knows 0-3, 10-26 and 200-207.
 */
export const ResponseCode = {
  SUCCESS: 0,
  SYSTEM_ERROR: 1,
  SYSTEM_BUSY: 2,
  REQUEST_CODE_NOT_SUPPORTED: 3,
  TRANSACTION_FAILED: 4,
  FLUSH_DISK_TIMEOUT: 10,
  SLAVE_NOT_AVAILABLE: 11,
  FLUSH_SLAVE_TIMEOUT: 12,
  MESSAGE_ILLEGAL: 13,
  SERVICE_NOT_AVAILABLE: 14,
  VERSION_NOT_SUPPORTED: 15,
  NO_PERMISSION: 16,
  TOPIC_NOT_EXIST: 17,
  TOPIC_EXIST_ALREADY: 18,
  PULL_NOT_FOUND: 19,
  PULL_RETRY_IMMEDIATELY: 20,
  PULL_OFFSET_MOVED: 21,
  QUERY_NOT_FOUND: 22,
  SUBSCRIPTION_PARSE_FAILED: 23,
  SUBSCRIPTION_NOT_EXIST: 24,
  SUBSCRIPTION_NOT_LATEST: 25,
  SUBSCRIPTION_GROUP_NOT_EXIST: 26,
  FILTER_DATA_NOT_EXIST: 27,
  FILTER_DATA_NOT_LATEST: 28,
  INVALID_PARAMETER: 29,
  TRANSACTION_SHOULD_COMMIT: 200,
  TRANSACTION_SHOULD_ROLLBACK: 201,
  TRANSACTION_STATE_UNKNOW: 202,
  TRANSACTION_STATE_GROUP_WRONG: 203,
  NO_BUYER_ID: 204,
  NOT_IN_CURRENT_UNIT: 205,
  CONSUMER_NOT_ONLINE: 206,
  CONSUME_MSG_TIMEOUT: 207,
  NO_MESSAGE: 208,
  POLLING_FULL: 209,
  POLLING_TIMEOUT: 210,
  BROKER_NOT_EXIST: 211,
  FLOW_CONTROL: 215,
  /** 5.x static topics: the logic queue's leader item is not on this broker. */
  NOT_LEADER_FOR_QUEUE: 501,
  /** 5.x: e.g. a recall handle that does not decode, names another topic or broker, or has expired. */
  ILLEGAL_OPERATION: 604,
  /** Controller mode (Apache ResponseCode 2000+). */
  CONTROLLER_INVALID_REQUEST: 2005,
  CONTROLLER_BROKER_NEED_TO_BE_REGISTERED: 2010,
  CONTROLLER_MASTER_STILL_EXIST: 2011,
  CONTROLLER_ELECT_MASTER_FAILED: 2012,
} as const;

export type ResponseCodeName = keyof typeof ResponseCode;

const NAMES = new Map<number, string>(Object.entries(ResponseCode).map(([k, v]) => [v, k]));

/** Name of a response code for logs, e.g. `TOPIC_NOT_EXIST`, or `UNKNOWN(<code>)`. */
export function responseCodeName(code: number): string {
  return NAMES.get(code) ?? `UNKNOWN(${code})`;
}
