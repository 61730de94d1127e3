/**
 * Expression types of subscriptions and the store filters built from them (mirrors RocketMQ
 * `ExpressionType`, `ConsumerFilterManager.build` and `ExpressionMessageFilter`).
 *
 * - TAG (or no type): tag hash on the consume queue, exact TAGS on the record (subscription-data.ts).
 * - SQL92: the selector is compiled when the subscription is registered (heartbeat, pull with the
 *   subscription flag, CHECK_CLIENT_CONFIG, gRPC) and evaluated on each candidate record against
 *   the record's properties: every property stored with the message, user properties and system
 *   ones alike (TAGS, KEYS, UNIQ_KEY, ...), exactly the map Apache's `MessageEvaluationContext` sees.
 *   Nothing else (topic, queue, timestamps, body) is visible to the selector.
 *
 * No consume-queue pre-filter: Apache can pre-filter SQL92 with a bloom filter bit map kept in the
 * ConsumeQueue extension (`enableConsumeQueueExt` + `enableCalcFilterBitMap`, both off by
 * default), and with them off it also evaluates every record. tsmq has no ConsumeQueue
 * extension, so the consume-queue stage accepts everything and the record stage decides.
 * Filtered-out records still advance the pull offset, as with tags.
 */
import { decodeRecord } from '../../common/message/record-codec.js';
import type { MessageFilter } from '../../store/message-store.js';
import { compileSelector, Sql92SyntaxError, type CompiledSelector } from './sql92/index.js';
import { createTagMessageFilter, type SubscriptionData } from './subscription-data.js';

export const ExpressionType = { TAG: 'TAG', SQL92: 'SQL92' } as const;

/** RocketMQ `ExpressionType.isTagType`: no type, '' and 'TAG' are tag expressions. */
export function isTagType(type: string | null | undefined): boolean {
  return type === null || type === undefined || type === '' || type === ExpressionType.TAG;
}

/** A non-TAG expression that cannot be used (unknown type, empty, syntax error). */
export class FilterCompileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FilterCompileError';
  }
}

/** Compiles a non-TAG expression (cached by text). @throws FilterCompileError */
export function compileFilterExpression(type: string, expression: string | null | undefined): CompiledSelector {
  if (type !== ExpressionType.SQL92) throw new FilterCompileError(`unsupported expression type ${type}`);
  if (expression === null || expression === undefined || expression.length === 0) throw new FilterCompileError(`Expression can't be null! ${type}`);
  try {
    return compileSelector(expression);
  } catch (e) {
    if (e instanceof Sql92SyntaxError) throw new FilterCompileError(`Invalid SQL92 expression: ${e.message}`);
    throw e;
  }
}

/**
 * Compiles `sub` in place when it is not a TAG subscription: `compiledExpression` becomes the
 * selector, or null with `filterError` set. Returns `sub`.
 */
export function attachCompiledExpression(sub: SubscriptionData): SubscriptionData {
  if (isTagType(sub.expressionType)) return sub;
  try {
    sub.compiledExpression = compileFilterExpression(sub.expressionType, sub.subString);
    delete sub.filterError;
  } catch (e) {
    if (!(e instanceof FilterCompileError)) throw e;
    sub.compiledExpression = null;
    sub.filterError = e.message;
  }
  return sub;
}

/** Store filter for an SQL92 selector: evaluated on the full record only. */
export function createSqlMessageFilter(selector: CompiledSelector): MessageFilter {
  return {
    isMatchedByConsumeQueue: () => true,
    isMatchedByCommitLog: (record: Buffer) => {
      let properties: Map<string, string>;
      try {
        properties = decodeRecord(record, 0, { readBody: false }).properties;
      } catch {
        return true; // let the client see (and report) a record we cannot parse
      }
      return selector.matches(properties);
    },
  };
}

/** Store filter for a subscription of any type; null when it accepts everything. */
export function createMessageFilter(sub: SubscriptionData | null | undefined): MessageFilter | null {
  if (!sub || sub.classFilterMode) return null;
  if (isTagType(sub.expressionType)) return createTagMessageFilter(sub);
  return sub.compiledExpression ? createSqlMessageFilter(sub.compiledExpression) : null;
}

/**
 * Long polling: does a message that just arrived (its consume-queue tags code and, when known,
 * its properties) pass the subscription? TAG: hash then exact tag; SQL92: the selector on the
 * properties (without properties: yes, the re-run pull decides).
 */
export function matchesArrivingMessage(sub: SubscriptionData | null | undefined, properties: Map<string, string> | null | undefined): boolean {
  if (!sub || sub.classFilterMode || isTagType(sub.expressionType) || !sub.compiledExpression || !properties) return true;
  return sub.compiledExpression.matches(properties);
}
