/**
 * SEND_MESSAGE (10) / SEND_MESSAGE_V2 (310) / SEND_BATCH_MESSAGE (320) request header, also
 * the header of SEND_REPLY_MESSAGE (324, V1) / SEND_REPLY_MESSAGE_V2 (325)
 * (mirrors `SendMessageRequestHeader` and `SendMessageRequestHeaderV2`).
 *
 * V2 (codes 310, 320 and 325) uses one-letter keys: a producerGroup, b topic, c defaultTopic,
 * d defaultTopicQueueNums, e queueId, f sysFlag, g bornTimestamp, h flag, i properties,
 * j reconsumeTimes, k unitMode, l maxReconsumeTimes, m batch, n brokerName.
 * a–h are required; a missing one throws HeaderError (→ SYSTEM_ERROR with the field name).
 */
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import {
  getInt,
  getLong,
  getOptionalBoolean,
  getOptionalInt,
  getOptionalString,
  getString,
  type ExtFields,
} from '../../remoting/headers/header-fields.js';

export interface SendMessageRequestHeader {
  producerGroup: string;
  topic: string;
  defaultTopic: string;
  defaultTopicQueueNums: number;
  queueId: number;
  sysFlag: number;
  bornTimestamp: number;
  flag: number;
  properties?: string;
  reconsumeTimes?: number;
  unitMode?: boolean;
  batch?: boolean;
  maxReconsumeTimes?: number;
  brokerName?: string;
}

/** V2 letter → V1 field name. */
export const SEND_HEADER_V2_KEYS = {
  a: 'producerGroup',
  b: 'topic',
  c: 'defaultTopic',
  d: 'defaultTopicQueueNums',
  e: 'queueId',
  f: 'sysFlag',
  g: 'bornTimestamp',
  h: 'flag',
  i: 'properties',
  j: 'reconsumeTimes',
  k: 'unitMode',
  l: 'maxReconsumeTimes',
  m: 'batch',
  n: 'brokerName',
} as const;

type V1Name = (typeof SEND_HEADER_V2_KEYS)[keyof typeof SEND_HEADER_V2_KEYS];

/** Field name → extFields key, per header version (built once, not per request). */
const V1_KEY_OF = Object.fromEntries(Object.values(SEND_HEADER_V2_KEYS).map((n) => [n, n])) as Record<V1Name, string>;
const V2_KEY_OF = Object.fromEntries(Object.entries(SEND_HEADER_V2_KEYS).map(([l, n]) => [n, l])) as Record<V1Name, string>;

/** Decodes the header of a send request (V2 letters for 310/320/325, V1 names for 10/324). */
export function decodeSendMessageHeader(request: RemotingCommand): SendMessageRequestHeader {
  const v2 = request.code === RequestCode.SEND_MESSAGE_V2 || request.code === RequestCode.SEND_BATCH_MESSAGE || request.code === RequestCode.SEND_REPLY_MESSAGE_V2;
  const ext: ExtFields = request.extFields;
  const k = v2 ? V2_KEY_OF : V1_KEY_OF;
  const header: SendMessageRequestHeader = {
    producerGroup: getString(ext, k.producerGroup),
    topic: getString(ext, k.topic),
    defaultTopic: getString(ext, k.defaultTopic),
    defaultTopicQueueNums: getInt(ext, k.defaultTopicQueueNums),
    queueId: getInt(ext, k.queueId),
    sysFlag: getInt(ext, k.sysFlag),
    bornTimestamp: getLong(ext, k.bornTimestamp),
    flag: getInt(ext, k.flag),
  };
  const properties = getOptionalString(ext, k.properties);
  if (properties !== undefined) header.properties = properties;
  const reconsumeTimes = getOptionalInt(ext, k.reconsumeTimes);
  if (reconsumeTimes !== undefined) header.reconsumeTimes = reconsumeTimes;
  const unitMode = getOptionalBoolean(ext, k.unitMode);
  if (unitMode !== undefined) header.unitMode = unitMode;
  const batch = getOptionalBoolean(ext, k.batch);
  if (batch !== undefined) header.batch = batch;
  const maxReconsumeTimes = getOptionalInt(ext, k.maxReconsumeTimes);
  if (maxReconsumeTimes !== undefined) header.maxReconsumeTimes = maxReconsumeTimes;
  const brokerName = getOptionalString(ext, k.brokerName);
  if (brokerName !== undefined) header.brokerName = brokerName;
  return header;
}
