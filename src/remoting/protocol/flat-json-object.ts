/**
 * `JSON.parse` of a flat JSON object whose values are all strings, read straight from the bytes:
 * the extFields of a Java client's header (Apache's clients keep them in a HashMap<String,String>,
 * so fastjson writes every value as a string), e.g. the 13 letters of SEND_MESSAGE_V2.
 *
 * Compared with JSON.parse of the decoded text, no header string is made and keys and short
 * values that were seen recently are handed out as the same string objects (a broker reads the
 * same producer group, topic, queue counts, 'false' … in every request): ~2× faster and far fewer
 * short-lived strings per request.
 *
 * Only this subset is read: `{}` or `{"k":"v",…}` with no whitespace; keys and values of bytes
 * 0x20–0x7F other than `"` and `\`, and the escapes `\"` `\\` `\/` `\b` `\f` `\n` `\r` `\t` and
 * `\uXXXX` up to \u00FF (fastjson writes the properties' separators \u0001 and \u0002 that way).
 * Anything else — a number, boolean, null, nested value, whitespace, a byte ≥ 0x80 (UTF-8), a
 * larger \u escape, a key `__proto__`, or text that is not JSON at all — gives null, and the
 * caller parses with JSON.parse as before. When an object is returned it equals what JSON.parse
 * gives for the same bytes: the same own keys in the same order (a later duplicate key replaces
 * the earlier value in its place, integer-like keys first), the same values.
 */

/** Node's Buffer.prototype.latin1Slice (what toString('latin1', start, end) calls after checking its arguments). */
interface Latin1Slicer {
  latin1Slice(start: number, end: number): string;
}

/** Strings of up to this many bytes are looked up in the recent-string cache. */
const CACHED_MAX_BYTES = 24;
const CACHE_SLOTS = 2048;
const recent: (string | undefined)[] = new Array<string | undefined>(CACHE_SLOTS).fill(undefined);
const ONE_BYTE: string[] = Array.from({ length: 256 }, (_, c) => String.fromCharCode(c));
/** Unescaped bytes of the string being read, when it has escapes (grown on demand). */
let scratch = Buffer.allocUnsafe(4096);
/** Where the last readString stopped (the byte after its closing quote). */
let readEnd = 0;
const NO_STRING = null;

/**
 * The object JSON.parse(buf.toString('utf8', start, end)) gives when the text is a flat object of
 * string values in the subset above, else null (never throws).
 */
export function parseFlatStringObject(buf: Buffer, start: number, end: number): Record<string, string> | null {
  if (end - start < 2 || buf[start] !== 0x7b || buf[end - 1] !== 0x7d) return null;
  let p = start + 1;
  if (p === end - 1) return {};
  let n = 0;
  for (;;) {
    const key = readString(buf, p, end);
    if (key === NO_STRING || key === '__proto__') return null;
    p = readEnd;
    if (buf[p] !== 0x3a) return null; // :
    const value = readString(buf, p + 1, end);
    if (value === NO_STRING) return null;
    keysRead[n] = key;
    valuesRead[n] = value;
    n++;
    p = readEnd;
    const c = buf[p];
    if (c === 0x2c) {
      p++;
      continue;
    }
    if (c !== 0x7d || p !== end - 1) return null;
    break;
  }
  const shape = shapeOf(n);
  let o: Record<string, string>;
  if (shape !== null) o = shape.make(valuesRead);
  else {
    o = {};
    for (let i = 0; i < n; i++) o[keysRead[i]!] = valuesRead[i]!;
  }
  for (let i = 0; i < n; i++) valuesRead[i] = ''; // hold no request's values
  return o;
}

/** Keys and values of the object being read, in order (reused; only the first n of a call count). */
const keysRead: string[] = [];
const valuesRead: string[] = [];

/**
 * A key sequence seen more than once, with a function that builds its object as one object
 * literal (`{"k0": v[0], "k1": v[1], …}`: the same keys, order and values as assigning them one by
 * one, in a fraction of the time of 13 keyed stores). Keys are written as JSON string literals,
 * which are valid JavaScript string literals; `__proto__` never gets here.
 */
interface Shape {
  keys: string[];
  make: (values: string[]) => Record<string, string>;
}
/** Shapes made so far (never more than MAX_SHAPES, never dropped: a client cannot make the broker compile code over and over). */
const shapes: Shape[] = [];
const MAX_SHAPES = 64;
const MAX_SHAPE_KEYS = 40;
let lastShape: Shape | null = null;
/** Set when `new Function` is refused: objects are then always built key by key. */
let shapesDisabled = false;
/** The key sequence of the last object no shape matched: a shape is made when the next miss repeats it. */
let lastMiss: string[] = [];

/** The shape of keysRead[0, n), or null (then, on a repeated miss, one is made for next time). */
function shapeOf(n: number): Shape | null {
  if (lastShape !== null && sameKeys(lastShape.keys, n)) return lastShape;
  for (let i = 0; i < shapes.length; i++) {
    const s = shapes[i]!;
    if (sameKeys(s.keys, n)) {
      lastShape = s;
      return s;
    }
  }
  if (n > MAX_SHAPE_KEYS || shapes.length >= MAX_SHAPES || shapesDisabled) return null;
  if (!sameKeys(lastMiss, n)) {
    lastMiss = keysRead.slice(0, n);
    return null;
  }
  const keys = lastMiss;
  lastMiss = [];
  const body = keys.map((k, i) => `${JSON.stringify(k)}:v[${i}]`).join(',');
  let make: Shape['make'];
  try {
    make = new Function('v', `return {${body}};`) as Shape['make'];
  } catch {
    // code generation disallowed (node --disallow-code-generation-from-strings): keyed stores only
    shapesDisabled = true;
    return null;
  }
  const s: Shape = { keys, make };
  shapes.push(s);
  lastShape = s;
  return s;
}

function sameKeys(keys: string[], n: number): boolean {
  if (keys.length !== n) return false;
  for (let i = 0; i < n; i++) if (keys[i] !== keysRead[i]) return false;
  return true;
}

/** The JSON string starting at buf[p] (its opening quote), or null; sets readEnd. */
function readString(buf: Buffer, p: number, end: number): string | null {
  if (p >= end || buf[p] !== 0x22) return NO_STRING;
  const s = p + 1;
  let q = s;
  for (;;) {
    if (q >= end) return NO_STRING;
    const c = buf[q]!;
    if (c === 0x22) break;
    if (c === 0x5c) return readEscapedString(buf, s, q, end);
    if (c < 0x20 || c > 0x7f) return NO_STRING;
    q++;
  }
  readEnd = q + 1;
  return textOf(buf, s, q);
}

/** readString's rest for a string with escapes: bytes from s, the first backslash at q. */
function readEscapedString(buf: Buffer, s: number, q: number, end: number): string | null {
  if (scratch.length < end - s) scratch = Buffer.allocUnsafe(Math.max(end - s, 2 * scratch.length));
  const out = scratch;
  let n = 0;
  for (let i = s; i < q; i++) out[n++] = buf[i]!;
  let i = q;
  for (;;) {
    if (i >= end) return NO_STRING;
    const c = buf[i]!;
    if (c === 0x22) break;
    if (c !== 0x5c) {
      if (c < 0x20 || c > 0x7f) return NO_STRING;
      out[n++] = c;
      i++;
      continue;
    }
    if (i + 1 >= end) return NO_STRING;
    const e = buf[i + 1]!;
    let b: number;
    if (e === 0x75) {
      // \uXXXX up to \u00FF
      if (i + 6 > end) return NO_STRING;
      const h1 = hex(buf[i + 2]!);
      const h2 = hex(buf[i + 3]!);
      const h3 = hex(buf[i + 4]!);
      const h4 = hex(buf[i + 5]!);
      if ((h1 | h2 | h3 | h4) < 0 || h1 !== 0 || h2 !== 0) return NO_STRING;
      b = (h3 << 4) | h4;
      i += 6;
    } else {
      b = shortEscape(e);
      if (b < 0) return NO_STRING;
      i += 2;
    }
    out[n++] = b;
  }
  readEnd = i + 1;
  return (out as unknown as Latin1Slicer).latin1Slice(0, n);
}

/** A hex digit's value, or -1. */
function hex(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

/** The byte a two-character escape `\e` stands for, or -1. */
function shortEscape(e: number): number {
  switch (e) {
    case 0x22: return 0x22; // \"
    case 0x5c: return 0x5c; // \\
    case 0x2f: return 0x2f; // \/
    case 0x62: return 0x08; // \b
    case 0x66: return 0x0c; // \f
    case 0x6e: return 0x0a; // \n
    case 0x72: return 0x0d; // \r
    case 0x74: return 0x09; // \t
    default: return -1;
  }
}

/**
 * buf[s, e) (ASCII, no control character) as a string: the string object handed out last time for the same
 * bytes when the cache still holds it (compared in place), else a fresh one (then cached when short).
 */
function textOf(buf: Buffer, s: number, e: number): string {
  const n = e - s;
  if (n === 0) return '';
  if (n === 1) return ONE_BYTE[buf[s]!]!;
  if (n > CACHED_MAX_BYTES) return (buf as unknown as Latin1Slicer).latin1Slice(s, e);
  let h = n;
  for (let i = s; i < e; i++) h = (Math.imul(h, 31) + buf[i]!) | 0;
  const slot = h & (CACHE_SLOTS - 1);
  const hit = recent[slot];
  if (hit !== undefined && hit.length === n) {
    let k = 0;
    while (k < n && hit.charCodeAt(k) === buf[s + k]) k++;
    if (k === n) return hit;
  }
  const fresh = (buf as unknown as Latin1Slicer).latin1Slice(s, e);
  recent[slot] = fresh;
  return fresh;
}
