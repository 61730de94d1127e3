/**
 * JSON header (serialize type 0) of a remoting frame.
 *
 * Encoding mirrors Apache's fastjson output of RemotingCommand: keys in alphabetical order
 * (code, extFields, flag, language, opaque, remark, serializeTypeCurrentRPC, version), null
 * remark/extFields left out, every extFields value written as a STRING (Java keeps
 * HashMap<String,String>), serializeTypeCurrentRPC written as the enum name "JSON".
 *
 * Decoding is lenient like fastjson: numeric fields may be JSON numbers or numeric strings;
 * extFields values keep their JSON types (ali-ons sends numbers and booleans); null entries
 * are dropped; nested objects/arrays are kept as their JSON text. A header in the Java client's
 * exact form is decoded with only its extFields through JSON.parse (decodeJavaClientHeader).
 */
import type { ExtFieldValue, RemotingCommand } from './remoting-command.js';
import { FrameError } from './frame-error.js';
import { parseFlatStringObject } from './flat-json-object.js';

/** Header JSON bytes for `cmd` (body not included). */
export function encodeJsonHeader(cmd: RemotingCommand): Buffer {
  return Buffer.from(jsonHeaderText(cmd), 'utf8');
}

/**
 * Header JSON text for `cmd`, built by hand: the same characters `JSON.stringify` gives for
 * `{code, extFields (values as strings), flag, language, opaque, remark?, serializeTypeCurrentRPC:
 * "JSON", version}` (null/undefined extFields values left out, null remark left out), without
 * building the intermediate objects.
 */
export function jsonHeaderText(cmd: RemotingCommand): string {
  let s = '{"code":' + jsonNumber(cmd.code);
  const ext = cmd.extFields;
  if (ext) {
    s += ',"extFields":{';
    let first = true;
    for (const k of Object.keys(ext)) {
      const v = ext[k];
      if (v === null || v === undefined) continue;
      s += (first ? '' : ',') + jsonString(k) + ':' + jsonString(typeof v === 'string' ? v : String(v));
      first = false;
    }
    s += '}';
  }
  s += ',"flag":' + jsonNumber(cmd.flag) + ',"language":' + jsonString(cmd.language) + ',"opaque":' + jsonNumber(cmd.opaque);
  if (cmd.remark !== null && cmd.remark !== undefined) s += ',"remark":' + jsonString(cmd.remark);
  return s + ',"serializeTypeCurrentRPC":"JSON","version":' + jsonNumber(cmd.version) + '}';
}

/**
 * Writes the header JSON of `cmd` (the bytes of `jsonHeaderText(cmd)` in UTF-8) into `out` at
 * `pos`, without building the text: ASCII text that needs no escaping is stored char by char,
 * anything else goes through JSON.stringify. Returns the end offset. If that is beyond
 * `out.length` the header did not fit and the bytes in `out` are incomplete (the caller falls
 * back to jsonHeaderText); nothing is ever written past the end of `out`.
 */
export function writeJsonHeader(cmd: RemotingCommand, out: Buffer, pos: number): number {
  let p = writeLiteral(out, pos, L_CODE);
  p = writeNumber(out, p, cmd.code);
  const ext = cmd.extFields;
  if (ext) {
    p = writeLiteral(out, p, L_EXT_FIELDS);
    let first = true;
    // for-in walks the enum cache without allocating a key array; own keys only, like Object.keys
    for (const k in ext) {
      if (!hasOwn.call(ext, k)) continue;
      const v = ext[k];
      if (v === null || v === undefined) continue;
      if (!first) p = writeByte(out, p, 0x2c); // ,
      first = false;
      p = writeString(out, p, k);
      p = writeByte(out, p, 0x3a); // :
      if (typeof v === 'number' && Number.isSafeInteger(v)) {
        p = writeByte(out, p, 0x22);
        p = writeSafeInteger(out, p, v);
        p = writeByte(out, p, 0x22);
      } else {
        p = writeString(out, p, typeof v === 'string' ? v : String(v));
      }
    }
    p = writeByte(out, p, 0x7d); // }
  }
  p = writeLiteral(out, p, L_FLAG);
  p = writeNumber(out, p, cmd.flag);
  p = writeLiteral(out, p, L_LANGUAGE);
  p = writeString(out, p, cmd.language);
  p = writeLiteral(out, p, L_OPAQUE);
  p = writeNumber(out, p, cmd.opaque);
  if (cmd.remark !== null && cmd.remark !== undefined) {
    p = writeLiteral(out, p, L_REMARK);
    p = writeString(out, p, cmd.remark);
  }
  p = writeLiteral(out, p, L_TAIL);
  p = writeNumber(out, p, cmd.version);
  return writeByte(out, p, 0x7d);
}

const hasOwn = Object.prototype.hasOwnProperty;
const literal = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'latin1'));
const L_CODE = literal('{"code":');
const L_EXT_FIELDS = literal(',"extFields":{');
const L_FLAG = literal(',"flag":');
const L_LANGUAGE = literal(',"language":');
const L_OPAQUE = literal(',"opaque":');
const L_REMARK = literal(',"remark":');
const L_TAIL = literal(',"serializeTypeCurrentRPC":"JSON","version":');

function writeByte(out: Buffer, p: number, b: number): number {
  if (p < out.length) out[p] = b;
  return p + 1;
}

function writeLiteral(out: Buffer, p: number, bytes: Uint8Array): number {
  const n = bytes.length;
  if (p + n <= out.length) for (let i = 0; i < n; i++) out[p + i] = bytes[i]!;
  return p + n;
}

/** A JSON number as JSON.stringify writes it. */
function writeNumber(out: Buffer, p: number, n: number): number {
  if (Number.isSafeInteger(n)) return writeSafeInteger(out, p, n);
  const text = jsonNumber(n);
  if (p + text.length <= out.length) out.write(text, p, 'latin1');
  return p + text.length;
}

/** Decimal digits of a safe integer (what String(n) gives; -0 is written as 0). */
function writeSafeInteger(out: Buffer, p: number, n: number): number {
  if (n < 0) {
    p = writeByte(out, p, 0x2d); // -
    n = -n;
  }
  if (n < 10) return writeByte(out, p, 0x30 + n);
  let digits = 2;
  for (let t = n; t >= 100; t = Math.floor(t / 10)) digits++;
  const end = p + digits;
  if (end <= out.length) {
    let q = end - 1;
    while (n >= 10) {
      const d = n % 10;
      out[q--] = 0x30 + d;
      n = (n - d) / 10;
    }
    out[q] = 0x30 + n;
  }
  return end;
}

/** A JSON string literal: plain ASCII stored directly, the rest as JSON.stringify gives it. */
function writeString(out: Buffer, p: number, s: string): number {
  const n = s.length;
  if (n <= 128 && p + n + 2 <= out.length) {
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c === 0x22 || c === 0x5c || c >= 0x80) break;
      out[p + 1 + i] = c;
    }
    if (i === n) {
      out[p] = 0x22;
      out[p + 1 + n] = 0x22;
      return p + n + 2;
    }
  }
  if (n > 128 && p + n + 2 <= out.length && !NOT_PLAIN_ASCII.test(s)) {
    // long printable ASCII without quote or backslash (a batch reply's comma-joined msgIds,
    // ~1 KiB): JSON.stringify would add only the quotes, and its UTF-8 bytes are its latin1 bytes
    out[p] = 0x22;
    (out as unknown as Latin1Writer).latin1Write(s, p + 1, n);
    out[p + 1 + n] = 0x22;
    return p + n + 2;
  }
  const json = jsonString(s);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (p + bytes <= out.length) out.write(json, p, bytes, 'utf8');
  return p + bytes;
}

/** Any character other than printable ASCII (0x20–0x7e) or one JSON escapes in it (quote, backslash). */
const NOT_PLAIN_ASCII = /[^\x20\x21\x23-\x5b\x5d-\x7e]/;

/** Node's Buffer.prototype.latin1Write (what write(s, offset, length, 'latin1') calls after checking its arguments). */
interface Latin1Writer {
  latin1Write(s: string, offset: number, length: number): number;
}

/** Characters JSON.stringify escapes (quote, backslash, controls) or may escape (lone surrogates). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** JSON.stringify(s), with a fast path for text that needs no escaping. */
function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : '"' + s + '"';
}

/** JSON.stringify(n) for a number field (non-finite → null, as JSON.stringify does). */
function jsonNumber(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

/** Parses a JSON header; the body is attached by the caller. Throws FrameError. */
export function decodeJsonHeader(header: Buffer): Omit<RemotingCommand, 'body'> {
  const { body: _body, ...rest } = decodeJsonCommand(header, null);
  return rest;
}

/**
 * Parses the JSON header in header[start, end) (default: all of it) into a whole command carrying
 * `body`. Throws FrameError.
 */
export function decodeJsonCommand(header: Buffer, body: Buffer | null, start = 0, end = header.length): RemotingCommand {
  return decodeJavaClientHeader(header, body, start, end) ?? decodeJsonCommandWhole(header, body, start, end);
}

/**
 * decodeJsonCommand by `JSON.parse` of the whole header: the path for every header that is not in
 * the Java client's exact form (and the reference the fast path is tested against).
 */
export function decodeJsonCommandWhole(header: Buffer, body: Buffer | null, start = 0, end = header.length): RemotingCommand {
  let parsed: unknown;
  try {
    parsed = JSON.parse(header.toString('utf8', start, end));
  } catch (e) {
    throw new FrameError(`invalid JSON header: ${(e as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new FrameError('invalid JSON header: not an object');
  }
  const h = parsed as Record<string, unknown>;
  const remark = h.remark;
  return {
    code: intField(h, 'code', undefined),
    language: typeof h.language === 'string' ? h.language : 'JAVA',
    version: intField(h, 'version', 0),
    opaque: intField(h, 'opaque', 0),
    flag: intField(h, 'flag', 0),
    remark: remark === null || remark === undefined ? null : String(remark),
    extFields: extFieldsOf(h.extFields),
    serializeTypeCurrentRPC: 0,
    body,
  };
}

/**
 * The header exactly as Apache's Java client writes it (fastjson: keys sorted, no spaces, null
 * remark left out), the form of every Java send:
 *   {"code":<int>,"extFields":{…},"flag":<int>,"language":"<A-Z_>","opaque":<int>,"serializeTypeCurrentRPC":"JSON","version":<int>}
 * The fixed parts are checked byte by byte (from the front up to extFields, from the end back to
 * it) and only the extFields object goes through JSON.parse, so no outer object and no strings
 * for its keys are built (~25 % of the parse). When the bytes around extFields have exactly this
 * form and the part between parses as an object, the whole header is valid JSON with the same
 * meaning, so the result is the one decodeJsonCommandWhole gives. Anything else (a remark,
 * another key order or spacing, a number with a sign or leading zeros, a JSON error) → null: the
 * caller parses the whole header.
 */
export function decodeJavaClientHeader(buf: Buffer, body: Buffer | null, start: number, end: number): RemotingCommand | null {
  if (end - start < F_PREFIX.length + F_SUFFIX_MIN || !matchAt(buf, start, F_CODE, end)) return null;
  let p = start + F_CODE.length;
  const code = readDigitsForward(buf, p, end);
  if (code < 0) return null;
  p = readEnd;
  if (!matchAt(buf, p, F_EXT, end)) return null;
  const extStart = p + F_EXT.length;
  // backwards from the end
  let q = end - 1;
  if (buf[q] !== 0x7d) return null; // }
  const version = readDigitsBackward(buf, q, extStart);
  if (version < 0) return null;
  q = readEnd - F_RPC.length;
  if (q < extStart || !matchAt(buf, q, F_RPC, end)) return null;
  const opaque = readDigitsBackward(buf, q, extStart, true);
  if (opaque === NOT_A_NUMBER) return null;
  q = readEnd - F_OPAQUE.length;
  if (q < extStart || !matchAt(buf, q, F_OPAQUE, end)) return null;
  const languageEnd = q;
  while (q > extStart && isLanguageByte(buf[q - 1]!)) q--;
  if (q === languageEnd) return null;
  const languageStart = q;
  q -= F_LANGUAGE.length;
  if (q < extStart || !matchAt(buf, q, F_LANGUAGE, end)) return null;
  const flag = readDigitsBackward(buf, q, extStart);
  if (flag < 0) return null;
  q = readEnd - F_FLAG.length;
  // F_FLAG begins with the '}' that closes extFields
  if (q < extStart || !matchAt(buf, q, F_FLAG, end) || buf[extStart] !== 0x7b) return null;
  // a flat object of strings (every Java client's) straight from the bytes; anything else through JSON.parse
  let extFields: Record<string, ExtFieldValue> | null = parseFlatStringObject(buf, extStart, q + 1);
  if (extFields === null) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(buf.toString('utf8', extStart, q + 1));
    } catch {
      return null;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
    extFields = extFieldsOf(parsed);
  }
  return {
    code,
    language: languageEnd - languageStart === 4 && matchAt(buf, languageStart, F_JAVA, end) ? 'JAVA' : buf.toString('latin1', languageStart, languageEnd),
    version,
    opaque,
    flag,
    remark: null,
    extFields,
    serializeTypeCurrentRPC: 0,
    body,
  };
}

const ascii = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'latin1'));
const F_CODE = ascii('{"code":');
const F_EXT = ascii(',"extFields":');
const F_FLAG = ascii('},"flag":');
const F_LANGUAGE = ascii(',"language":"');
const F_OPAQUE = ascii('","opaque":');
const F_RPC = ascii(',"serializeTypeCurrentRPC":"JSON","version":');
const F_JAVA = ascii('JAVA');
const F_PREFIX = ascii('{"code":0,"extFields":{');
/** Bytes of the shortest possible tail: },"flag":0,"language":"X","opaque":0,…"version":0} */
const F_SUFFIX_MIN = F_FLAG.length + 1 + F_LANGUAGE.length + 1 + F_OPAQUE.length + 1 + F_RPC.length + 2;
const NOT_A_NUMBER = Number.MIN_SAFE_INTEGER - 1;
/** Where the last readDigits* call stopped (forward: the first byte after; backward: the first digit). */
let readEnd = 0;

function matchAt(buf: Buffer, p: number, lit: Uint8Array, limit: number): boolean {
  if (p + lit.length > limit) return false;
  for (let i = 0; i < lit.length; i++) if (buf[p + i] !== lit[i]) return false;
  return true;
}

function isLanguageByte(b: number): boolean {
  return (b >= 0x41 && b <= 0x5a) || b === 0x5f; // A-Z _
}

/** A JSON non-negative integer (no sign, no leading zero, ≤ 15 digits) from p; -1 if none. */
function readDigitsForward(buf: Buffer, p: number, end: number): number {
  let n = 0;
  let i = p;
  for (; i < end && i - p < 16; i++) {
    const d = buf[i]! - 0x30;
    if (d < 0 || d > 9) break;
    n = n * 10 + d;
  }
  const digits = i - p;
  if (digits === 0 || digits > 15 || (digits > 1 && buf[p] === 0x30)) return -1;
  readEnd = i;
  return n;
}

/**
 * The JSON integer ending just before `end` (no leading zero, ≤ 15 digits; a minus sign only when
 * `signed`), not reaching below `floor`; -1 (or NOT_A_NUMBER when signed) if none.
 */
function readDigitsBackward(buf: Buffer, end: number, floor: number, signed = false): number {
  let i = end;
  while (i > floor && end - i < 16) {
    const d = buf[i - 1]! - 0x30;
    if (d < 0 || d > 9) break;
    i--;
  }
  const digits = end - i;
  const fail = signed ? NOT_A_NUMBER : -1;
  if (digits === 0 || digits > 15 || (digits > 1 && buf[i] === 0x30)) return fail;
  let n = 0;
  for (let k = i; k < end; k++) n = n * 10 + (buf[k]! - 0x30);
  if (signed && i > floor && buf[i - 1] === 0x2d) {
    i--;
    n = -n;
  }
  readEnd = i;
  return n;
}

function intField(h: Record<string, unknown>, name: string, dflt: number | undefined): number {
  const v = h[name];
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (v === undefined || v === null) {
    if (dflt === undefined) throw new FrameError(`invalid JSON header: missing ${name}`);
    return dflt;
  }
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) {
    throw new FrameError(`invalid JSON header: ${name} is not an integer: ${JSON.stringify(v)}`);
  }
  return n;
}

/**
 * extFields as handed to processors. The object JSON.parse just built is used as is when every
 * value is a string, number or boolean (the usual case); otherwise a copy without null entries and
 * with nested values as their JSON text.
 */
function extFieldsOf(v: unknown): Record<string, ExtFieldValue> | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v)) {
    throw new FrameError('invalid JSON header: extFields is not an object');
  }
  const obj = v as Record<string, unknown>;
  let plain = true;
  for (const k in obj) {
    const t = typeof obj[k];
    if (t !== 'string' && t !== 'number' && t !== 'boolean') {
      plain = false;
      break;
    }
  }
  if (plain) return obj as Record<string, ExtFieldValue>;
  const out: Record<string, ExtFieldValue> = {};
  for (const [k, val] of Object.entries(obj)) {
    if (val === null || val === undefined) continue;
    if (typeof val === 'string' || typeof val === 'number' || typeof val === 'boolean') out[k] = val;
    else out[k] = JSON.stringify(val);
  }
  return out;
}
