/**
 * Java `String.hashCode` and the consume-queue tags code derived from it.
 *
 * Mirrors `java.lang.String.hashCode` (h = 31*h + c over UTF-16 code units, 32-bit wraparound)
 * and `MessageExtBrokerInner.tagsString2tagsCode` (empty/null ⇒ 0, else the hash sign-extended
 * to a long; the filter type argument is ignored by RocketMQ and therefore absent here).
 */

/** Java `String.hashCode()` as a signed int32, e.g. "abc" → 96354, "Aa" and "BB" → 2112. */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) {
    h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  }
  return h;
}

/**
 * Consume-queue tags code of a TAGS property value: 0 for null/undefined/'' else the signed
 * `String.hashCode` (a JS number in [-2^31, 2^31), i.e. the long value after sign extension).
 */
export function tagsCode(tags: string | undefined | null): number {
  if (tags === undefined || tags === null || tags.length === 0) return 0;
  return javaStringHashCode(tags);
}
