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
