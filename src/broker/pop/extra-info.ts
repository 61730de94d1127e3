/**
 * The text forms Apache RocketMQ's remoting pop protocol uses to name deliveries (its
 * `ExtraInfoUtil`), so tsmq can answer and read them exactly as a 5.x Java client expects.
 *
 * Extra info (`POP_CK` message property, built by the client from the POP_MESSAGE reply; sent back
 * as `extraInfo` of ACK_MESSAGE / CHANGE_MESSAGE_INVISIBLETIME), space-separated:
 *
 *   ckQueueOffset popTime invisibleTime reviveQid retry brokerName queueId [msgQueueOffset]
 *
 *   ckQueueOffset   queue offset the pop's check point starts at (tsmq: first popped offset of that queue)
 *   popTime         epoch ms of the pop (or of the last invisibility change)
 *   invisibleTime   ms; the delivery is invisible until popTime + invisibleTime
 *   reviveQid       Apache's revive queue; 999 (POP_ORDER_REVIVE_QUEUE) marks an orderly pop
 *   retry           "0" original topic, "1" `%RETRY%<group>` (v1), "2" `%RETRY%<group>+<topic>` (v2)
 *   queueId, msgQueueOffset   where the message is
 *
 * Reply header strings of POP_MESSAGE (entries joined by ';', fields by ' '):
 *   startOffsetInfo  `<retry> <queueId> <ckQueueOffset>` per queue popped from
 *   msgOffsetInfo    `<retry> <queueId> <offset>,<offset>,...` per queue, offsets in body order
 *   orderCountInfo   `<retry> <queueId> <count>` (orderly pops only)
 * tsmq redelivers from the original queue (never through a retry topic), so `retry` is always "0".
 */

/** Apache `KeyBuilder.POP_ORDER_REVIVE_QUEUE`. */
export const POP_ORDER_REVIVE_QUEUE = 999;
/** The revive queue id tsmq reports for non-orderly pops (it has no revive topic). */
export const POP_REVIVE_QID = 0;
/** Apache `MessageConst.KEY_SEPARATOR`. */
const SEP = ' ';
const NORMAL_TOPIC = '0';

export interface ExtraInfo {
  ckQueueOffset: number;
  popTimeMs: number;
  invisibleTimeMs: number;
  reviveQid: number;
  retry: string;
  brokerName: string;
  queueId: number;
  /** Present in the 8-field form (what the 5.x client sends). */
  msgQueueOffset?: number;
}

/** A malformed extra info string; `message` says which field. */
export class ExtraInfoError extends Error {}

function int(text: string | undefined, what: string, min: number): number {
  if (text === undefined || !/^-?\d{1,19}$/.test(text)) throw new ExtraInfoError(`extraInfo ${what} is not a number: ${JSON.stringify(text ?? '')}`);
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min) throw new ExtraInfoError(`extraInfo ${what} is out of range: ${text}`);
  return n;
}

/** Parses the 7- or 8-field form. @throws ExtraInfoError naming the bad field. */
export function parseExtraInfo(text: string | undefined | null): ExtraInfo {
  if (typeof text !== 'string' || text.length === 0) throw new ExtraInfoError('extraInfo is missing');
  const f = text.split(SEP);
  if (f.length !== 7 && f.length !== 8) throw new ExtraInfoError(`extraInfo has ${f.length} fields, expected 7 or 8: ${JSON.stringify(text.slice(0, 200))}`);
  const retry = f[4]!;
  if (retry !== '0' && retry !== '1' && retry !== '2') throw new ExtraInfoError(`extraInfo retry flag must be 0, 1 or 2: ${JSON.stringify(retry)}`);
  const info: ExtraInfo = {
    ckQueueOffset: int(f[0], 'ckQueueOffset', 0),
    popTimeMs: int(f[1], 'popTime', 0),
    invisibleTimeMs: int(f[2], 'invisibleTime', 0),
    reviveQid: int(f[3], 'reviveQid', -2147483648),
    retry,
    brokerName: f[5]!,
    queueId: int(f[6], 'queueId', 0),
  };
  if (f.length === 8) info.msgQueueOffset = int(f[7], 'msgQueueOffset', 0);
  return info;
}

/** The 8-field form for one message. */
export function buildExtraInfo(e: Omit<ExtraInfo, 'retry'> & { msgQueueOffset: number }): string {
  return [e.ckQueueOffset, e.popTimeMs, e.invisibleTimeMs, e.reviveQid, NORMAL_TOPIC, e.brokerName, e.queueId, e.msgQueueOffset].join(SEP);
}

/** One queue's part of a pop reply. */
export interface PoppedQueue {
  queueId: number;
  /** Check point start (≤ every offset below). */
  startOffset: number;
  /** Offsets of the queue's messages, in the order they appear in the body. */
  offsets: number[];
}

/** `startOffsetInfo` of the POP_MESSAGE reply header. */
export function startOffsetInfoOf(queues: PoppedQueue[]): string {
  return queues.map((q) => [NORMAL_TOPIC, q.queueId, q.startOffset].join(SEP)).join(';');
}

/** `msgOffsetInfo` of the POP_MESSAGE reply header. */
export function msgOffsetInfoOf(queues: PoppedQueue[]): string {
  return queues.map((q) => [NORMAL_TOPIC, q.queueId, q.offsets.join(',')].join(SEP)).join(';');
}

/** `orderCountInfo` (per queue: the highest delivery count − 1 of its messages, as Apache's reconsume count). */
export function orderCountInfoOf(counts: Array<{ queueId: number; count: number }>): string {
  return counts.map((c) => [NORMAL_TOPIC, c.queueId, c.count].join(SEP)).join(';');
}
