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
 * are dropped; nested objects/arrays are kept as their JSON text.
 */
import type { ExtFieldValue, RemotingCommand } from './remoting-command.js';
import { FrameError } from './frame-error.js';

/** Header JSON bytes for `cmd` (body not included). */
export function encodeJsonHeader(cmd: RemotingCommand): Buffer {
  const obj: Record<string, unknown> = { code: cmd.code };
  if (cmd.extFields) {
    const ext: Record<string, string> = {};
    for (const [k, v] of Object.entries(cmd.extFields)) {
      if (v === null || v === undefined) continue;
      ext[k] = String(v);
    }
    obj.extFields = ext;
  }
  obj.flag = cmd.flag;
  obj.language = cmd.language;
  obj.opaque = cmd.opaque;
  if (cmd.remark !== null && cmd.remark !== undefined) obj.remark = cmd.remark;
  obj.serializeTypeCurrentRPC = 'JSON';
  obj.version = cmd.version;
  return Buffer.from(JSON.stringify(obj), 'utf8');
}

/** Parses a JSON header; the body is attached by the caller. Throws FrameError. */
export function decodeJsonHeader(header: Buffer): Omit<RemotingCommand, 'body'> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(header.toString('utf8'));
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
  };
}

function intField(h: Record<string, unknown>, name: string, dflt: number | undefined): number {
  const v = h[name];
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

function extFieldsOf(v: unknown): Record<string, ExtFieldValue> | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v)) {
    throw new FrameError('invalid JSON header: extFields is not an object');
  }
  const out: Record<string, ExtFieldValue> = {};
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    if (val === null || val === undefined) continue;
    if (typeof val === 'string' || typeof val === 'number' || typeof val === 'boolean') out[k] = val;
    else out[k] = JSON.stringify(val);
  }
  return out;
}
