/**
 * ROCKETMQ binary header (serialize type 1), as in Apache's RocketMQSerializable.
 * All integers big-endian:
 *
 *   int16  code
 *   int8   language (LanguageCode byte)
 *   int16  version
 *   int32  opaque
 *   int32  flag
 *   int32  remark length R (0 = null), then R bytes UTF-8
 *   int32  extFields length E (0 = null), then entries until E bytes are used:
 *            int16 key length K, K bytes key, int32 value length V, V bytes value (UTF-8)
 *
 * extFields values are written as strings and decode as strings.
 */
import type { ExtFieldValue, RemotingCommand } from './remoting-command.js';
import { FrameError } from './frame-error.js';
import { languageCodeOf, languageNameOf } from '../codes/language-code.js';

const FIXED_BYTES = 2 + 1 + 2 + 4 + 4 + 4 + 4;

/** Binary header bytes for `cmd`. Throws RangeError when code/version do not fit int16. */
export function encodeBinaryHeader(cmd: RemotingCommand): Buffer {
  const plan = planBinaryHeader(cmd);
  const out = Buffer.allocUnsafe(plan.size);
  writeBinaryHeader(cmd, plan, out, 0);
  return out;
}

/** The strings of a binary header and their UTF-8 sizes, measured once (see writeBinaryHeader). */
export interface BinaryHeaderPlan {
  /** Whole header size in bytes. */
  size: number;
  remarkBytes: number;
  extBytes: number;
  /** key, value, key, value... (values already turned into strings; null entries left out) */
  strings: string[];
  /** UTF-8 byte length of each entry of `strings`. */
  lengths: number[];
}

/** Measures the header of `cmd`. Throws RangeError for a key over 32767 bytes. */
export function planBinaryHeader(cmd: RemotingCommand): BinaryHeaderPlan {
  const remarkBytes = cmd.remark === null || cmd.remark === undefined ? 0 : utf8Length(cmd.remark);
  const strings: string[] = [];
  const lengths: number[] = [];
  let extBytes = 0;
  const ext = cmd.extFields;
  if (ext) {
    for (const k of Object.keys(ext)) {
      const v = ext[k];
      if (v === null || v === undefined) continue;
      const vs = typeof v === 'string' ? v : String(v);
      const kl = utf8Length(k);
      const vl = utf8Length(vs);
      if (kl > 0x7fff) throw new RangeError(`extFields key too long: ${kl} bytes`);
      strings.push(k, vs);
      lengths.push(kl, vl);
      extBytes += 2 + kl + 4 + vl;
    }
  }
  return { size: FIXED_BYTES + remarkBytes + extBytes, remarkBytes, extBytes, strings, lengths };
}

/** Writes the header planned by planBinaryHeader at `offset` of `out`; returns the end offset. */
export function writeBinaryHeader(cmd: RemotingCommand, plan: BinaryHeaderPlan, out: Buffer, offset: number): number {
  let p = offset;
  p = out.writeInt16BE(cmd.code, p);
  p = out.writeInt8(languageCodeOf(cmd.language), p);
  p = out.writeInt16BE(cmd.version, p);
  p = out.writeInt32BE(cmd.opaque, p);
  p = out.writeInt32BE(cmd.flag, p);
  p = out.writeInt32BE(plan.remarkBytes, p);
  if (plan.remarkBytes > 0) p = writeUtf8(out, p, cmd.remark!, plan.remarkBytes);
  p = out.writeInt32BE(plan.extBytes, p);
  const { strings, lengths } = plan;
  for (let i = 0; i < strings.length; i += 2) {
    const kl = lengths[i]!;
    const vl = lengths[i + 1]!;
    p = out.writeInt16BE(kl, p);
    p = writeUtf8(out, p, strings[i]!, kl);
    p = out.writeInt32BE(vl, p);
    p = writeUtf8(out, p, strings[i + 1]!, vl);
  }
  if (p - offset !== plan.size) throw new Error(`binary header size mismatch: ${p - offset} != ${plan.size}`);
  return p;
}

/** UTF-8 byte length; short ASCII text is measured in JS, the rest by Buffer.byteLength. */
function utf8Length(s: string): number {
  const n = s.length;
  if (n > 64) return Buffer.byteLength(s, 'utf8');
  for (let i = 0; i < n; i++) if (s.charCodeAt(i) >= 0x80) return Buffer.byteLength(s, 'utf8');
  return n;
}

/** Writes `s` (UTF-8 size `bytes`) at `p`; returns the end offset. */
function writeUtf8(out: Buffer, p: number, s: string, bytes: number): number {
  if (bytes === s.length && bytes <= 32) {
    // ASCII: byte per char, no native call for short text
    for (let i = 0; i < bytes; i++) out[p + i] = s.charCodeAt(i);
    return p + bytes;
  }
  return p + out.write(s, p, bytes, 'utf8');
}

/** Parses a binary header; the body is attached by the caller. Throws FrameError. */
export function decodeBinaryHeader(h: Buffer): Omit<RemotingCommand, 'body'> {
  const { body: _body, ...rest } = decodeBinaryCommand(h, null);
  return rest;
}

/**
 * Parses the binary header in h[start, end) (default: all of `h`) into a whole command carrying
 * `body`. Throws FrameError (positions in messages are relative to `start`).
 */
export function decodeBinaryCommand(h: Buffer, body: Buffer | null, start = 0, end = h.length): RemotingCommand {
  need(start, end, start, 17);
  const code = h.readInt16BE(start);
  const language = languageNameOf(h.readInt8(start + 2));
  const version = h.readInt16BE(start + 3);
  const opaque = h.readInt32BE(start + 5);
  const flag = h.readInt32BE(start + 9);
  const remarkLen = lengthAt(h, start + 13, 'remark');
  let p = start + 17;
  let remark: string | null = null;
  if (remarkLen > 0) {
    need(start, end, p, remarkLen);
    remark = h.toString('utf8', p, p + remarkLen);
    p += remarkLen;
  }
  need(start, end, p, 4);
  const extLen = lengthAt(h, p, 'extFields');
  p += 4;
  let extFields: Record<string, ExtFieldValue> | null = null;
  if (extLen > 0) {
    const extEnd = p + extLen;
    if (extEnd > end) throw new FrameError(`binary header: extFields length ${extLen} exceeds header`);
    extFields = {};
    while (p < extEnd) {
      need(start, end, p, 2);
      const kl = h.readInt16BE(p);
      if (kl < 0) throw new FrameError(`binary header: negative key length ${kl}`);
      p += 2;
      need(start, end, p, kl);
      const key = utf8At(h, p, p + kl);
      p += kl;
      need(start, end, p, 4);
      const vl = lengthAt(h, p, 'value');
      p += 4;
      need(start, end, p, vl);
      extFields[key] = utf8At(h, p, p + vl);
      p += vl;
    }
    if (p !== extEnd) throw new FrameError('binary header: extFields entries overrun their length');
  }
  if (p !== end) throw new FrameError(`binary header: ${end - p} trailing bytes`);
  return { code, language, version, opaque, flag, remark, extFields, serializeTypeCurrentRPC: 1, body };
}

/** Throws unless k bytes are left at `pos` of the header [start, end). */
function need(start: number, end: number, pos: number, k: number): void {
  if (pos + k > end) {
    throw new FrameError(`binary header truncated: need ${k} bytes at ${pos - start}, have ${end - pos}`);
  }
}

/** Non-negative int32 length field at `pos` (bounds already checked). */
function lengthAt(h: Buffer, pos: number, what: string): number {
  const v = h.readInt32BE(pos);
  if (v < 0) throw new FrameError(`binary header: negative ${what} length ${v}`);
  return v;
}

/** UTF-8 text of h[s, e): short ASCII runs (keys, numbers) are built in JS, the rest natively. */
function utf8At(h: Buffer, s: number, e: number): string {
  const len = e - s;
  if (len === 0) return '';
  if (len === 1 && h[s]! < 0x80) return String.fromCharCode(h[s]!);
  if (len <= 24) {
    let ascii = true;
    for (let i = s; i < e; i++) {
      if (h[i]! >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (ascii) return h.toString('latin1', s, e);
  }
  return h.toString('utf8', s, e);
}
