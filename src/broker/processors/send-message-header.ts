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
  intValue,
  longValue,
  optionalBooleanValue,
  optionalIntValue,
  optionalStringValue,
  stringValue,
  type ExtFields,
} from '../../remoting/headers/header-fields.js';
import type { ExtFieldValue } from '../../remoting/protocol/remoting-command.js';

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
export const V1_KEY_OF = Object.fromEntries(Object.values(SEND_HEADER_V2_KEYS).map((n) => [n, n])) as Record<V1Name, string>;
export const V2_KEY_OF = Object.fromEntries(Object.entries(SEND_HEADER_V2_KEYS).map(([l, n]) => [n, l])) as Record<V1Name, string>;

/** Decodes the header of a send request (V2 letters for 310/320/325, V1 names for 10/324). */
export function decodeSendMessageHeader(request: RemotingCommand): SendMessageRequestHeader {
  const v2 = request.code === RequestCode.SEND_MESSAGE_V2 || request.code === RequestCode.SEND_BATCH_MESSAGE || request.code === RequestCode.SEND_REPLY_MESSAGE_V2;
  return v2 ? decodeV2(request.extFields) : decodeByNames(request.extFields, V1_KEY_OF);
}

/** The letters' fields as the V2 header spells them. */
interface V2Fields {
  a?: ExtFieldValue | null; b?: ExtFieldValue | null; c?: ExtFieldValue | null; d?: ExtFieldValue | null;
  e?: ExtFieldValue | null; f?: ExtFieldValue | null; g?: ExtFieldValue | null; h?: ExtFieldValue | null;
  i?: ExtFieldValue | null; j?: ExtFieldValue | null; k?: ExtFieldValue | null; l?: ExtFieldValue | null;
  m?: ExtFieldValue | null; n?: ExtFieldValue | null;
}

/**
 * The V2 header (the one every Java send uses) read by its fixed letters: one property load per
 * field (the extFields objects of one client share a shape) instead of a keyed lookup by name.
 * Same values and errors as `decodeByNames(ext, V2_KEY_OF)` (no letter is an Object.prototype
 * property, so a plain load finds own fields only).
 */
function decodeV2(ext: ExtFields): SendMessageRequestHeader {
  const x: V2Fields = ext ?? {};
  const header: SendMessageRequestHeader = {
    producerGroup: stringValue(x.a, 'a'),
    topic: stringValue(x.b, 'b'),
    defaultTopic: stringValue(x.c, 'c'),
    defaultTopicQueueNums: intValue(x.d, 'd'),
    queueId: intValue(x.e, 'e'),
    sysFlag: intValue(x.f, 'f'),
    bornTimestamp: longValue(x.g, 'g'),
    flag: intValue(x.h, 'h'),
  };
  const properties = optionalStringValue(x.i);
  if (properties !== undefined) header.properties = properties;
  const reconsumeTimes = optionalIntValue(x.j, 'j');
  if (reconsumeTimes !== undefined) header.reconsumeTimes = reconsumeTimes;
  const unitMode = optionalBooleanValue(x.k, 'k');
  if (unitMode !== undefined) header.unitMode = unitMode;
  const batch = optionalBooleanValue(x.m, 'm');
  if (batch !== undefined) header.batch = batch;
  const maxReconsumeTimes = optionalIntValue(x.l, 'l');
  if (maxReconsumeTimes !== undefined) header.maxReconsumeTimes = maxReconsumeTimes;
  const brokerName = optionalStringValue(x.n);
  if (brokerName !== undefined) header.brokerName = brokerName;
  return header;
}

/** The header read through a field name → key table (V1 names; V2 letters in tests). */
export function decodeByNames(ext: ExtFields, k: Record<V1Name, string>): SendMessageRequestHeader {
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
