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
  const remark = cmd.remark === null || cmd.remark === undefined ? null : Buffer.from(cmd.remark, 'utf8');
  const entries: Array<[Buffer, Buffer]> = [];
  let extBytes = 0;
  for (const [k, v] of Object.entries(cmd.extFields ?? {})) {
    if (v === null || v === undefined) continue;
    const kb = Buffer.from(k, 'utf8');
    const vb = Buffer.from(String(v), 'utf8');
    if (kb.length > 0x7fff) throw new RangeError(`extFields key too long: ${kb.length} bytes`);
    entries.push([kb, vb]);
    extBytes += 2 + kb.length + 4 + vb.length;
  }
  const out = Buffer.allocUnsafe(FIXED_BYTES + (remark?.length ?? 0) + extBytes);
  let p = 0;
  p = out.writeInt16BE(cmd.code, p);
  p = out.writeInt8(languageCodeOf(cmd.language), p);
  p = out.writeInt16BE(cmd.version, p);
  p = out.writeInt32BE(cmd.opaque, p);
  p = out.writeInt32BE(cmd.flag, p);
  p = out.writeInt32BE(remark?.length ?? 0, p);
  if (remark) p += remark.copy(out, p);
  p = out.writeInt32BE(extBytes, p);
  for (const [kb, vb] of entries) {
    p = out.writeInt16BE(kb.length, p);
    p += kb.copy(out, p);
    p = out.writeInt32BE(vb.length, p);
    p += vb.copy(out, p);
  }
  if (p !== out.length) throw new Error(`binary header size mismatch: ${p} != ${out.length}`);
  return out;
}

/** Parses a binary header; the body is attached by the caller. Throws FrameError. */
export function decodeBinaryHeader(h: Buffer): Omit<RemotingCommand, 'body'> {
  const r = new Reader(h);
  const code = r.int16();
  const language = languageNameOf(r.int8());
  const version = r.int16();
  const opaque = r.int32();
  const flag = r.int32();
  const remarkLen = r.length('remark');
  const remark = remarkLen > 0 ? r.bytes(remarkLen).toString('utf8') : null;
  const extLen = r.length('extFields');
  let extFields: Record<string, ExtFieldValue> | null = null;
  if (extLen > 0) {
    const end = r.pos + extLen;
    if (end > h.length) throw new FrameError(`binary header: extFields length ${extLen} exceeds header`);
    extFields = {};
    while (r.pos < end) {
      const key = r.bytes(r.int16Len('key')).toString('utf8');
      const value = r.bytes(r.length('value')).toString('utf8');
      extFields[key] = value;
    }
    if (r.pos !== end) throw new FrameError('binary header: extFields entries overrun their length');
  }
  if (r.pos !== h.length) throw new FrameError(`binary header: ${h.length - r.pos} trailing bytes`);
  return { code, language, version, opaque, flag, remark, extFields, serializeTypeCurrentRPC: 1 };
}

class Reader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}
  private need(n: number): void {
    if (this.pos + n > this.buf.length) {
      throw new FrameError(`binary header truncated: need ${n} bytes at ${this.pos}, have ${this.buf.length - this.pos}`);
    }
  }
  int8(): number { this.need(1); const v = this.buf.readInt8(this.pos); this.pos += 1; return v; }
  int16(): number { this.need(2); const v = this.buf.readInt16BE(this.pos); this.pos += 2; return v; }
  int32(): number { this.need(4); const v = this.buf.readInt32BE(this.pos); this.pos += 4; return v; }
  length(what: string): number {
    const n = this.int32();
    if (n < 0) throw new FrameError(`binary header: negative ${what} length ${n}`);
    return n;
  }
  int16Len(what: string): number {
    const n = this.int16();
    if (n < 0) throw new FrameError(`binary header: negative ${what} length ${n}`);
    return n;
  }
  bytes(n: number): Buffer {
    this.need(n);
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
}
