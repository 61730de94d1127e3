/**
 * Receipt handles of pop consumption (the `receipt_handle` of gRPC v2 messages).
 *
 * A handle names one delivery of one message to one consumer group:
 *   - where the message is: topic, queue id, queue offset, CommitLog offset (to re-read it for
 *     DLQ forwarding without a queue lookup);
 *   - which delivery it is: `version`, the sequence number the pop state assigned to this
 *     delivery (or to the last ChangeInvisibleDuration). A handle whose version differs from the
 *     state's current version for that message is stale and is rejected (INVALID_RECEIPT_HANDLE);
 *   - informative fields: broker name, invisible-until time (epoch ms), delivery attempt.
 *
 * Text form: "1" + base64url(JSON array) with the fields in this order:
 *   [1, brokerName, topic, queueId, queueOffset, commitLogOffset, version, invisibleUntilMs, attempt]
 * The leading "1" is the format version. Topic names can hold only `[%|a-zA-Z0-9_-]`, broker names
 * anything, so JSON keeps the encoding unambiguous. This mirrors what Apache's ReceiptHandle
 * carries (start offset, pop time, invisible time, queue, offset, commit-log offset) but is not
 * byte-compatible with it: handles are opaque to clients and only this broker reads them.
 */
import { TsmqError } from '../../common/errors.js';

export interface ReceiptHandle {
  brokerName: string;
  topic: string;
  queueId: number;
  queueOffset: number;
  commitLogOffset: number;
  /** Delivery sequence number; must match the pop state for the handle to be valid. */
  version: number;
  invisibleUntilMs: number;
  /** Delivery attempt this handle was issued for (1 = first delivery). */
  attempt: number;
}

const FORMAT = '1';

/** A handle that cannot be decoded (→ INVALID_RECEIPT_HANDLE). */
export class ReceiptHandleError extends TsmqError {
  constructor(reason: string) {
    super('INVALID_RECEIPT_HANDLE', `invalid receipt handle: ${reason}`);
  }
}

function isSafeInt(v: unknown, min = 0): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
}

export function encodeReceiptHandle(h: ReceiptHandle): string {
  const fields = [1, h.brokerName, h.topic, h.queueId, h.queueOffset, h.commitLogOffset, h.version, h.invisibleUntilMs, h.attempt];
  return FORMAT + Buffer.from(JSON.stringify(fields), 'utf8').toString('base64url');
}

/** @throws ReceiptHandleError for anything that is not a handle this format wrote. */
export function decodeReceiptHandle(text: string): ReceiptHandle {
  if (typeof text !== 'string' || text.length < 2 || text.length > 4096) throw new ReceiptHandleError('empty or oversized');
  if (!text.startsWith(FORMAT)) throw new ReceiptHandleError(`unknown format "${text.slice(0, 1)}"`);
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(text.slice(1), 'base64url').toString('utf8'));
  } catch {
    throw new ReceiptHandleError('not decodable');
  }
  if (!Array.isArray(fields) || fields.length !== 9 || fields[0] !== 1) throw new ReceiptHandleError('wrong field count');
  const [, brokerName, topic, queueId, queueOffset, commitLogOffset, version, invisibleUntilMs, attempt] = fields as unknown[];
  if (typeof brokerName !== 'string' || typeof topic !== 'string' || topic.length === 0) throw new ReceiptHandleError('bad topic or broker name');
  if (!isSafeInt(queueId) || !isSafeInt(queueOffset) || !isSafeInt(commitLogOffset) || !isSafeInt(version, 1)) {
    throw new ReceiptHandleError('bad queue id, offset or version');
  }
  if (!isSafeInt(invisibleUntilMs) || !isSafeInt(attempt, 1)) throw new ReceiptHandleError('bad invisible time or attempt');
  return { brokerName, topic, queueId, queueOffset, commitLogOffset, version, invisibleUntilMs, attempt };
}
