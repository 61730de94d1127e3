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
 * UTF-8 byte length of `encodeProperties(props)`, without building the text (entries whose value
 * is undefined or null are skipped, as there).
 */
export function propertiesByteLength(props: Map<string, string>): number {
  const acc = lengthAccumulator;
  acc.bytes = 0;
  props.forEach(addEntryLength, acc);
  return acc.bytes;
}

/**
 * Writes the UTF-8 bytes of `encodeProperties(props)` at `buf[at]` and returns how many were
 * written (= `propertiesByteLength(props)`), or -1 when they might not fit in `buf` (checked
 * before each entry against its worst case, 3 bytes per UTF-16 unit; what was written before is
 * garbage then). The record encoder's way to store a Map's properties with no intermediate string.
 */
export function writeProperties(buf: Buffer, at: number, props: Map<string, string>): number {
  const w = entryWriter;
  w.buf = buf;
  w.pos = at;
  props.forEach(writeEntry, w);
  w.buf = NO_BUFFER;
  return w.pos < 0 ? -1 : w.pos - at;
}

/** Reused state of propertiesByteLength / writeProperties (both synchronous: Map.forEach with a static callback allocates nothing). */
const lengthAccumulator = { bytes: 0 };
const NO_BUFFER: Buffer = Buffer.alloc(0);
const entryWriter: { buf: Buffer; pos: number } = { buf: NO_BUFFER, pos: 0 };

// keys and values that are not strings (a JavaScript caller's numbers) are stored as their text, as the concatenation in encodeProperties does
function addEntryLength(this: { bytes: number }, v: string | undefined | null, k: string): void {
  if (v === undefined || v === null) return;
  this.bytes += utf8ByteLength(typeof k === 'string' ? k : String(k)) + utf8ByteLength(typeof v === 'string' ? v : String(v)) + 2;
}

function writeEntry(this: { buf: Buffer; pos: number }, v: string | undefined | null, k: string): void {
  if (v === undefined || v === null || this.pos < 0) return;
  const key = typeof k === 'string' ? k : String(k);
  const value = typeof v === 'string' ? v : String(v);
  const buf = this.buf;
  let p = this.pos;
  if (p + 3 * (key.length + value.length) + 2 > buf.length) {
    this.pos = -1;
    return;
  }
  p += writeUtf8(buf, p, key);
  buf[p++] = 1;
  p += writeUtf8(buf, p, value);
  buf[p++] = 2;
  this.pos = p;
}

/** UTF-8 bytes of `s`: its length when every char is ASCII (counted here), else Buffer.byteLength. */
function utf8ByteLength(s: string): number {
  const n = s.length;
  for (let i = 0; i < n; i++) if (s.charCodeAt(i) >= 0x80) return Buffer.byteLength(s, 'utf8');
  return n;
}

/**
 * Writes `s` as UTF-8 at `buf[p]`, returns the bytes written. ASCII chars are stored one by one
 * (cheaper than a native call for the short keys and values of properties); at the first other
 * char the whole string is written again by Buffer's UTF-8 writer.
 */
function writeUtf8(buf: Buffer, p: number, s: string): number {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return (buf as unknown as { utf8Write(text: string, offset: number, length: number): number }).utf8Write(s, p, buf.length - p);
    buf[p + i] = c;
  }
  return n;
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
