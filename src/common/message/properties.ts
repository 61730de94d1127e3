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
        map.set(text.substring(start, sep), text.substring(sep + 1, end));
      }
    }
    start = end + 1;
  }
  return map;
}

/**
 * `decodeProperties(text).get(key)` without building the Map: the value of the last well-formed
 * piece whose key is `key` (same piece rules as decodeProperties), or undefined. Scans the text
 * for `key` + '\x01' at piece starts; cost is a few `indexOf` calls, no allocation but the value.
 */
export function lookupProperty(text: string, key: string): string | undefined {
  const klen = key.length;
  if (klen === 0) return undefined;
  if (key.indexOf('\x01') >= 0 || key.indexOf('\x02') >= 0) return decodeProperties(text).get(key);
  const len = text.length;
  let found: string | undefined;
  let at = text.indexOf(key, 0);
  while (at >= 0) {
    const sep = at + klen;
    // a piece start (text start or after '\x02') whose first '\x01' directly follows the key
    if ((at === 0 || text.charCodeAt(at - 1) === 2) && sep < len && text.charCodeAt(sep) === 1) {
      let end = text.indexOf('\x02', sep);
      if (end < 0) end = len;
      if (end - sep >= 2) found = text.substring(sep + 1, end); // value non-empty
      at = text.indexOf(key, end);
    } else at = text.indexOf(key, at + 1);
  }
  return found;
}

/** Piece starts of isCanonicalProperties (reused; texts with more pieces are checked the slow way). */
const pieceScratch = new Int32Array(64);
const sepScratch = new Int32Array(64);

/**
 * Whether `encodeProperties(decodeProperties(text)) === text`: empty, or every piece well formed
 * (non-empty key, a '\x01', non-empty value), ended by '\x02', keys distinct. Allocation-free for
 * texts of up to 64 pieces.
 */
export function isCanonicalProperties(text: string): boolean {
  const len = text.length;
  if (len === 0) return true;
  if (text.charCodeAt(len - 1) !== 2) return false;
  let n = 0;
  let start = 0;
  while (start < len) {
    const end = text.indexOf('\x02', start);
    const sep = text.indexOf('\x01', start);
    if (sep <= start || sep >= end - 1) return false; // empty key, no '\x01' in the piece, or empty value
    if (n === pieceScratch.length) return encodeProperties(decodeProperties(text)) === text;
    const klen = sep - start;
    for (let j = 0; j < n; j++) {
      const s = pieceScratch[j]!;
      if (sepScratch[j]! - s === klen && sameChars(text, s, start, klen)) return false;
    }
    pieceScratch[n] = start;
    sepScratch[n] = sep;
    n++;
    start = end + 1;
  }
  return true;
}

/** Whether text[a, a + n) equals text[b, b + n). */
function sameChars(text: string, a: number, b: number, n: number): boolean {
  for (let i = 0; i < n; i++) if (text.charCodeAt(a + i) !== text.charCodeAt(b + i)) return false;
  return true;
}
