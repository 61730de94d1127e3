/**
 * Recall handles (mirrors Apache 5.x `RecallMessageHandle.HandleV1`): URL-safe Base64 (with
 * padding, as java.util.Base64.getUrlEncoder) of "v1 <topic> <brokerName> <timestamp> <uniqKey>"
 * joined by single spaces, where timestamp = TIMER_OUT_MS + 1 of the stored timer message (so it
 * floors back into the same slot) and uniqKey its UNIQ_KEY.
 */
import { MessageConst } from '../../common/message/message-const.js';
import { TopicValidator } from '../../common/message/topic-validator.js';

export interface RecallHandle {
  topic: string;
  brokerName: string;
  /** As carried in the handle; Apache parses it leniently (NumberUtils.toLong, −1 when not a number). */
  timestampStr: string;
  messageId: string;
}

/**
 * The handle for a stored timer message (Apache `SendMessageProcessor.attachRecallHandle`): needs
 * TIMER_OUT_MS and REAL_TOPIC (set by the timer put hook) and a topic that is not a retry topic;
 * undefined otherwise. Batch sends and send-backs get none (as Apache).
 */
export function recallHandleOf(msg: { properties: Map<string, string> }, brokerName: string): string | undefined {
  const out = msg.properties.get(MessageConst.TIMER_OUT_MS);
  const realTopic = msg.properties.get(MessageConst.REAL_TOPIC);
  if (out === undefined || realTopic === undefined || realTopic.startsWith(TopicValidator.RETRY_GROUP_TOPIC_PREFIX)) return undefined;
  const t = Number(out);
  if (!Number.isSafeInteger(t)) return undefined;
  return buildRecallHandle(realTopic, brokerName, String(t + 1), msg.properties.get(MessageConst.UNIQ_KEY) ?? 'null');
}

/** Apache `DecoderException` text for every undecodable handle. */
export const INVALID_RECALL_HANDLE = 'recall handle is invalid';

export function buildRecallHandle(topic: string, brokerName: string, timestampStr: string, messageId: string): string {
  const raw = Buffer.from(['v1', topic, brokerName, timestampStr, messageId].join(' '), 'utf8');
  return raw.toString('base64url') + pad(raw.length);
}

function pad(rawBytes: number): string {
  const r = rawBytes % 3;
  return r === 0 ? '' : r === 1 ? '==' : '=';
}

/** Decodes a handle; null when it is empty, not URL-safe Base64, or not a v1 handle with 5 fields (Apache throws "recall handle is invalid"). */
export function decodeRecallHandle(handle: string | undefined | null): RecallHandle | null {
  if (!handle) return null;
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(handle) || handle.replace(/=+$/, '').length % 4 === 1) return null;
  const raw = Buffer.from(handle, 'base64url').toString('utf8');
  const items = raw.split(' ');
  if (items[0] !== 'v1' || items.length < 5) return null;
  return { topic: items[1]!, brokerName: items[2]!, timestampStr: items[3]!, messageId: items[4]! };
}
