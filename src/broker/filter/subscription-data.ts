/**
 * Subscriptions and the tag filter used by pulls (mirrors RocketMQ `SubscriptionData`,
 * `FilterAPI.buildSubscriptionData` and `ExpressionMessageFilter` for TAG expressions).
 *
 * `*` / empty matches everything. `TagA || TagC` keeps the trimmed tags and their Java
 * `String.hashCode` values; the consume-queue stage compares the entry's tags code with the hash
 * set (as Apache does), and the commit-log stage additionally compares the TAGS property
 * exactly, so tags with colliding hashes (`Aa`/`BB`, case B25) are filtered on the broker too.
 * SQL92 subscriptions carry their compiled selector (expression-filter.ts); the tag helpers
 * here treat them as "accept everything".
 */
import { javaStringHashCode } from '../../common/message/java-hash.js';
import { MessageConst } from '../../common/message/message-const.js';
import { readRecordProperty } from '../../common/message/record-property.js';
import type { MessageFilter } from '../../store/message-store.js';
import type { CompiledSelector } from './sql92/index.js';

export const SUB_ALL = '*';

export interface SubscriptionData {
  topic: string;
  subString: string;
  tagsSet: string[];
  codeSet: number[];
  subVersion: number;
  /** 'TAG' (default) or 'SQL92'. */
  expressionType: string;
  classFilterMode: boolean;
  /**
   * Non-TAG subscriptions only (RocketMQ `ConsumerFilterData`): the compiled selector, or null
   * when it did not compile (`filterError` says why). Undefined for TAG subscriptions.
   */
  compiledExpression?: CompiledSelector | null;
  filterError?: string;
}

/** The subscription expression could not be parsed (→ SUBSCRIPTION_PARSE_FAILED). */
export class SubscriptionParseError extends Error {}

/**
 * Builds a TAG subscription. Mirrors Java's `split("\\|\\|")`: trailing empty pieces are
 * dropped, and an expression with no piece at all (e.g. `||`) is a parse error.
 */
export function buildSubscriptionData(topic: string, subString: string | null | undefined, subVersion = 0, expressionType = 'TAG'): SubscriptionData {
  const data: SubscriptionData = { topic, subString: SUB_ALL, tagsSet: [], codeSet: [], subVersion, expressionType, classFilterMode: false };
  if (subString === null || subString === undefined || subString.length === 0 || subString === SUB_ALL) return data;
  data.subString = subString;
  if (expressionType !== 'TAG') return data;
  const pieces = subString.split('||');
  while (pieces.length > 0 && pieces[pieces.length - 1] === '') pieces.pop();
  if (pieces.length === 0) throw new SubscriptionParseError(`cannot split subscription "${subString}" into tags`);
  for (const piece of pieces) {
    const tag = piece.trim();
    if (tag.length > 0 && !data.tagsSet.includes(tag)) {
      data.tagsSet.push(tag);
      data.codeSet.push(javaStringHashCode(tag));
    }
  }
  return data;
}

/** True when the subscription accepts every message. */
export function isSubscribeAll(sub: SubscriptionData | null | undefined): boolean {
  return !sub || sub.classFilterMode || sub.expressionType !== 'TAG' || sub.subString === SUB_ALL;
}

/** Consume-queue stage: tags-code hash match. */
export function matchesTagsCode(sub: SubscriptionData | null | undefined, tagsCode: number | null | undefined): boolean {
  if (isSubscribeAll(sub) || tagsCode === null || tagsCode === undefined) return true;
  return sub!.codeSet.includes(tagsCode | 0);
}

/** Exact stage on the TAGS property. */
export function matchesTags(sub: SubscriptionData | null | undefined, tags: string | undefined): boolean {
  if (isSubscribeAll(sub)) return true;
  return tags !== undefined && sub!.tagsSet.includes(tags);
}

/** Store filter for a subscription (hash on the consume queue, exact tag on the record). */
export function createTagMessageFilter(sub: SubscriptionData | null | undefined): MessageFilter | null {
  if (isSubscribeAll(sub)) return null;
  return {
    isMatchedByConsumeQueue: (tagsCode: number) => matchesTagsCode(sub, tagsCode),
    isMatchedByCommitLog: (record: Buffer) => {
      // the TAGS property read from the record's bytes (no decode of the record)
      const tags = readRecordProperty(record, 0, MessageConst.TAGS);
      if (tags === null) return true; // let the client see (and skip) a record we cannot parse
      return matchesTags(sub, tags);
    },
  };
}
