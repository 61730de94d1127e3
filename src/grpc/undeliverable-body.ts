/**
 * What the gRPC front does with a stored message it cannot deliver because its compressed body
 * (sysFlag COMPRESSED, zlib, written by a remoting producer) inflates past the delivery cap:
 * the message is left out of the response and a warning names it (rate-limited: one line per
 * 10 s, with the count of the others). It is not lost: a popped one becomes visible again after
 * its invisible time and, like any message never acked, goes to %DLQ%<group> after the group's
 * retry limit; a remoting consumer can still pull it (and inflates it itself).
 *
 * The cap is max(DEFAULT_MAX_INFLATED_BODY_BYTES (4 MiB), maxMessageSize): past it no Apache
 * producer could have sent the body, and inflating is stopped there, so one delivery attempt costs
 * at most that much memory and time (a 1 MB zlib body that inflates to 1 GiB used to cost 1 GiB
 * and ~10 s per attempt).
 */
import type { Logger } from '../common/logging/logger.js';
import { RateLimitedLog } from '../common/logging/rate-limited-log.js';
import { DEFAULT_MAX_INFLATED_BODY_BYTES, UndeliverableBodyError } from './message-converter.js';

const logs = new WeakMap<Logger, RateLimitedLog>();

/** The delivery cap for a broker whose maxMessageSize is `maxMessageSizeBytes`. */
export function maxInflatedBodyBytes(maxMessageSizeBytes: number): number {
  return Math.max(DEFAULT_MAX_INFLATED_BODY_BYTES, maxMessageSizeBytes);
}

/**
 * Runs `convert`; on UndeliverableBodyError logs it (rate-limited, naming `consumer`) and returns
 * null; other errors propagate.
 */
export function convertOrSkip<T>(logger: Logger, consumer: string, convert: () => T): T | null {
  try {
    return convert();
  } catch (e) {
    if (!(e instanceof UndeliverableBodyError)) throw e;
    let log = logs.get(logger);
    if (!log) {
      log = new RateLimitedLog(logger);
      logs.set(logger, log);
    }
    log.warn('undeliverable-compressed-body',
      `${e.message}; left out of the reply to ${consumer}: it stays in the store, is retried after its invisible time and goes to the DLQ after the retry limit; consume it with a remoting consumer`);
    return null;
  }
}
