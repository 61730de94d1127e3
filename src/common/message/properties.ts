/**
 * PROPERTIES text codec (mirrors `MessageDecoder.messageProperties2String` and
 * `string2messageProperties`, spec §1.8).
 *
 * Text form: for each entry `name` + '\x01' + `value` + '\x02'. Stored as UTF-8 with a signed
 * short length (≤ 32767 bytes; the record codec enforces that limit).
 */

/** Serializes in Map insertion order: `name\x01value\x02` for every entry. */
export function encodeProperties(props: Map<string, string>): string {
  let s = '';
  for (const [k, v] of props) {
    if (v === undefined || v === null) continue;
    s += k + '\x01' + v + '\x02';
  }
  return s;
}

/**
 * Parses a properties string. Splits on '\x02'; a piece is accepted only if it is at least
 * 3 chars long and has a '\x01' after its first char and before its last char; key = text before
 * the first '\x01', value = the rest (may itself contain '\x01'). Malformed pieces are skipped
 * silently (as RocketMQ does). A later duplicate key overwrites an earlier one. Never throws.
 * Keys and short values that were seen recently are returned as the same string objects
 * (`recentText`): a broker decodes the same few keys (TAGS, UNIQ_KEY, WAIT…) for every message.
 */
export function decodeProperties(text: string): Map<string, string> {
  const map = new Map<string, string>();
  const len = text.length;
  let start = 0;
  while (start < len) {
    let end = text.indexOf('\x02', start);
    if (end < 0) end = len;
    if (end - start >= 3) {
      const sep = text.indexOf('\x01', start);
      if (sep > start && sep < end - 1) {
        map.set(recentText(text, start, sep), end - sep - 1 <= SHORT_VALUE_CHARS ? recentText(text, sep + 1, end) : text.substring(sep + 1, end));
      }
    }
    start = end + 1;
  }
  return map;
}

/** Values up to this many chars are looked up in the recent-text cache (tags, flags like WAIT's 'true'). */
const SHORT_VALUE_CHARS = 12;
/** Recently decoded keys and short values, by a hash of their length, first and last char. */
const recent: (string | undefined)[] = new Array<string | undefined>(512).fill(undefined);

/**
 * `text.substring(start, end)`, as the string object decoded last time for the same characters
 * when the cache still holds it (compared in place, no substring made): fewer short-lived strings
 * per message, and Map lookups with the constant keys of MessageConst compare equal strings faster.
 */
function recentText(text: string, start: number, end: number): string {
  const n = end - start;
  const slot = (n * 31 + text.charCodeAt(start) * 7 + text.charCodeAt(end - 1)) & 511;
  const hit = recent[slot];
  if (hit !== undefined && hit.length === n && text.startsWith(hit, start)) return hit;
  const fresh = text.substring(start, end);
  recent[slot] = fresh;
  return fresh;
}
