/**
 * Typed readers over a command's extFields (the RocketMQ "custom header").
 *
 * Values may arrive as JSON numbers/booleans (ali-ons) or as strings (Apache Java clients, and
 * every ROCKETMQ binary header); both are accepted. Messages mirror Apache's
 * RemotingCommand.decodeCommandCustomHeader: `the custom field <topic> is null`.
 * A transport turns a thrown HeaderError into a SYSTEM_ERROR (1) reply with that remark.
 */
import { TsmqError } from '../../common/errors.js';
import type { ExtFieldValue } from '../protocol/remoting-command.js';

export type ExtFields = Record<string, ExtFieldValue> | null | undefined;

/** A required header field is missing or has the wrong type. */
export class HeaderError extends TsmqError {
  constructor(message: string) {
    super('HEADER_INVALID', message);
  }
}

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;
const INTEGER_TEXT = /^[+-]?\d+$/;

function raw(ext: ExtFields, name: string): ExtFieldValue | undefined {
  if (!ext || !Object.prototype.hasOwnProperty.call(ext, name)) return undefined;
  const v = ext[name];
  return v === null ? undefined : v;
}

function missing(name: string): HeaderError {
  return new HeaderError(`the custom field <${name}> is null`);
}

/** Required string; numbers and booleans are turned into their text. */
export function getString(ext: ExtFields, name: string): string {
  const v = getOptionalString(ext, name);
  if (v === undefined) throw missing(name);
  return v;
}

export function getOptionalString(ext: ExtFields, name: string): string | undefined {
  const v = raw(ext, name);
  return v === undefined ? undefined : String(v);
}

/**
 * Value of a plain decimal integer text (optional '-', 1..15 digits: exact as a double), else
 * NaN. The common case of Java clients and ROCKETMQ headers, read without a regex or trim().
 */
function plainIntegerText(v: string): number {
  const len = v.length;
  if (len === 0 || len > 16) return Number.NaN;
  let i = 0;
  const negative = v.charCodeAt(0) === 45; // '-'
  if (negative) i = 1;
  if (i === len || len - i > 15) return Number.NaN;
  let n = 0;
  for (; i < len; i++) {
    const d = v.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return Number.NaN;
    n = n * 10 + d;
  }
  return negative ? -n : n;
}

function toInteger(name: string, v: ExtFieldValue, min: number, max: number): number {
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string') {
    n = plainIntegerText(v);
    if (Number.isNaN(n)) n = INTEGER_TEXT.test(v.trim()) ? Number(v.trim()) : Number.NaN;
  } else n = Number.NaN;
  if (!Number.isInteger(n)) throw new HeaderError(`the custom field <${name}> is not a number: ${String(v)}`);
  if (n < min || n > max || !Number.isSafeInteger(n)) {
    throw new HeaderError(`the custom field <${name}> is out of range: ${String(v)}`);
  }
  return n;
}

/** Required int32 (Java Integer). */
export function getInt(ext: ExtFields, name: string): number {
  const v = raw(ext, name);
  if (v === undefined) throw missing(name);
  return toInteger(name, v, INT_MIN, INT_MAX);
}

export function getOptionalInt(ext: ExtFields, name: string): number | undefined {
  const v = raw(ext, name);
  return v === undefined ? undefined : toInteger(name, v, INT_MIN, INT_MAX);
}

/** Required int64 (Java Long) as a JS number; values beyond 2^53 are rejected as out of range. */
export function getLong(ext: ExtFields, name: string): number {
  const v = raw(ext, name);
  if (v === undefined) throw missing(name);
  return toInteger(name, v, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
}

export function getOptionalLong(ext: ExtFields, name: string): number | undefined {
  const v = raw(ext, name);
  return v === undefined ? undefined : toInteger(name, v, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
}

function toBoolean(name: string, v: ExtFieldValue): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    if (t === 'true') return true;
    if (t === 'false') return false;
  }
  throw new HeaderError(`the custom field <${name}> is not a boolean: ${String(v)}`);
}

/** Required boolean: true/false, or the strings "true"/"false" in any case. */
export function getBoolean(ext: ExtFields, name: string): boolean {
  const v = raw(ext, name);
  if (v === undefined) throw missing(name);
  return toBoolean(name, v);
}

export function getOptionalBoolean(ext: ExtFields, name: string): boolean | undefined {
  const v = raw(ext, name);
  return v === undefined ? undefined : toBoolean(name, v);
}

/*
 * The same rules over a value the caller already read (e.g. `ext.b` in a decoder whose field names
 * are fixed: one monomorphic property load instead of a keyed own-property lookup per field).
 * `v` undefined or null means absent; `name` is the field's name in the error message.
 */

/** Required string from a value read by the caller (getString's rules). */
export function stringValue(v: ExtFieldValue | null | undefined, name: string): string {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) throw missing(name);
  return String(v);
}

/** Optional string from a value read by the caller (getOptionalString's rules). */
export function optionalStringValue(v: ExtFieldValue | null | undefined): string | undefined {
  if (typeof v === 'string') return v;
  return v === undefined || v === null ? undefined : String(v);
}

/** Required int32 from a value read by the caller (getInt's rules). */
export function intValue(v: ExtFieldValue | null | undefined, name: string): number {
  if (v === undefined || v === null) throw missing(name);
  return toInteger(name, v, INT_MIN, INT_MAX);
}

/** Optional int32 from a value read by the caller (getOptionalInt's rules). */
export function optionalIntValue(v: ExtFieldValue | null | undefined, name: string): number | undefined {
  return v === undefined || v === null ? undefined : toInteger(name, v, INT_MIN, INT_MAX);
}

/** Required int64 from a value read by the caller (getLong's rules). */
export function longValue(v: ExtFieldValue | null | undefined, name: string): number {
  if (v === undefined || v === null) throw missing(name);
  return toInteger(name, v, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
}

/** Optional boolean from a value read by the caller (getOptionalBoolean's rules). */
export function optionalBooleanValue(v: ExtFieldValue | null | undefined, name: string): boolean | undefined {
  return v === undefined || v === null ? undefined : toBoolean(name, v);
}
