/**
 * The values an SQL92 selector computes with, and RocketMQ's rules for comparing them.
 *
 * Apache's evaluator works on Java objects, and the outcome of a comparison depends on their
 * classes, so the classes are kept here:
 * - message properties are always strings (JS `string`);
 * - TRUE / FALSE are booleans (JS `boolean`); NULL and missing properties are `null`;
 * - integer literals are `int` when they fit 32 bits, else `long` (bigint); decimal literals are `double`.
 *
 * `compareValues` follows the conversion table of RocketMQ's `ComparisonExpression`: with
 * different classes the left or right value is widened (int → long → double) or, for a string
 * against a number or boolean, the string is parsed as that class (Java `Integer.valueOf`,
 * `Long.valueOf`, `Double.valueOf`, `Boolean.valueOf`); a string that does not parse is an
 * evaluation error. Combinations without a rule (a boolean against a number) compare as
 * "less than" (-1), and a boolean on the left of a string is an evaluation error (in Apache a
 * ClassCastException). An evaluation error makes the whole selector not match the message.
 */

export type JavaNumber = { readonly t: 'int'; readonly v: number } | { readonly t: 'long'; readonly v: bigint } | { readonly t: 'double'; readonly v: number };
export type JavaValue = null | string | boolean | JavaNumber;

/** Evaluation failed (a string that does not parse as a number, an impossible cast...). */
export class Sql92EvalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Sql92EvalError';
  }
}

export const int = (v: number): JavaNumber => ({ t: 'int', v });
export const long = (v: bigint): JavaNumber => ({ t: 'long', v });
export const double = (v: number): JavaNumber => ({ t: 'double', v });

export function isNumber(v: JavaValue): v is JavaNumber {
  return v !== null && typeof v === 'object';
}

type JavaClass = 'string' | 'boolean' | 'int' | 'long' | 'double';

function classOf(v: Exclude<JavaValue, null>): JavaClass {
  return typeof v === 'string' ? 'string' : typeof v === 'boolean' ? 'boolean' : v.t;
}

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

function numberFormat(s: string): Sql92EvalError {
  return new Sql92EvalError(`For input string: ${JSON.stringify(s)}`);
}

/** Java `Long.valueOf(String)` (ASCII digits). @throws Sql92EvalError */
export function parseJavaLong(s: string): bigint {
  if (!/^[+-]?[0-9]+$/.test(s)) throw numberFormat(s);
  const v = BigInt(s);
  if (v < LONG_MIN || v > LONG_MAX) throw numberFormat(s);
  return v;
}

/** Java `Integer.valueOf(String)` (ASCII digits). @throws Sql92EvalError */
export function parseJavaInt(s: string): number {
  const v = parseJavaLong(s);
  if (v < BigInt(INT_MIN) || v > BigInt(INT_MAX)) throw numberFormat(s);
  return Number(v);
}

const DECIMAL_FLOAT = /^[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?)$/;
const HEX_FLOAT = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?[0-9]+)[fFdD]?$/;

/**
 * Java `Double.valueOf(String)`: surrounding characters ≤ U+0020 are ignored; accepts an optional
 * sign, `NaN`, `Infinity`, decimal notation with an optional exponent, hexadecimal notation
 * (`0x1.8p3`) and a trailing `f`/`F`/`d`/`D`. @throws Sql92EvalError
 */
export function parseJavaDouble(raw: string): number {
  // String.trim(): every char <= U+0020 at either end
  let a = 0;
  let b = raw.length;
  while (a < b && raw.charCodeAt(a) <= 0x20) a++;
  while (b > a && raw.charCodeAt(b - 1) <= 0x20) b--;
  const s = raw.slice(a, b);
  if (DECIMAL_FLOAT.test(s)) {
    const body = /[fFdD]$/.test(s) ? s.slice(0, -1) : s;
    if (body.endsWith('NaN')) return NaN;
    return Number(body);
  }
  const hex = HEX_FLOAT.exec(s);
  if (hex && (hex[2]!.length > 0 || (hex[3] ?? '').length > 0)) {
    const frac = hex[3] ?? '';
    const mantissa = BigInt(`0x${hex[2]}${frac}`);
    const v = Number(mantissa) * 2 ** (Number(hex[4]) - 4 * frac.length);
    return hex[1] === '-' ? -v : v;
  }
  throw numberFormat(raw);
}

/** Java `Boolean.valueOf(String)`: true only for "true" in any case. */
export function parseJavaBoolean(s: string): boolean {
  return /^true$/i.test(s);
}

/** Java `Double.compare` (NaN above everything and equal to itself, -0.0 below 0.0). */
export function compareDoubles(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  const an = Number.isNaN(a);
  const bn = Number.isNaN(b);
  if (an || bn) return an && bn ? 0 : an ? 1 : -1;
  if (a === 0 && b === 0) {
    const az = Object.is(a, -0);
    const bz = Object.is(b, -0);
    return az === bz ? 0 : az ? -1 : 1;
  }
  return 0;
}

function toDouble(n: JavaNumber): number {
  return n.t === 'long' ? Number(n.v) : n.v;
}

function compareSameClass(l: Exclude<JavaValue, null>, r: Exclude<JavaValue, null>): number {
  if (typeof l === 'string') return l < (r as string) ? -1 : l > (r as string) ? 1 : 0;
  if (typeof l === 'boolean') return l === r ? 0 : l ? 1 : -1;
  const rn = r as JavaNumber;
  if (l.t === 'double') return compareDoubles(l.v, rn.v as number);
  return l.v < rn.v ? -1 : l.v > rn.v ? 1 : 0;
}

/**
 * RocketMQ `ComparisonExpression.__compare` with string conversion on: the sign of left vs right.
 * @throws Sql92EvalError when a string does not parse as the other side's class, or for a
 *   boolean compared with a string on its right.
 */
export function compareValues(lv: Exclude<JavaValue, null>, rv: Exclude<JavaValue, null>): number {
  const lc = classOf(lv);
  const rc = classOf(rv);
  if (lc === rc) return compareSameClass(lv, rv);
  let l: Exclude<JavaValue, null> = lv;
  let r: Exclude<JavaValue, null> = rv;
  switch (lc) {
    case 'boolean':
      if (rc === 'string') throw new Sql92EvalError('a boolean cannot be compared with a string on its right');
      return -1;
    case 'int':
      if (rc === 'long') l = long(BigInt((lv as JavaNumber).v as number));
      else if (rc === 'double') l = double((lv as JavaNumber).v as number);
      else if (rc === 'string') r = int(parseJavaInt(rv as string));
      else return -1;
      break;
    case 'long':
      if (rc === 'int') r = long(BigInt((rv as JavaNumber).v as number));
      else if (rc === 'double') l = double(toDouble(lv as JavaNumber));
      else if (rc === 'string') r = long(parseJavaLong(rv as string));
      else return -1;
      break;
    case 'double':
      if (rc === 'int' || rc === 'long') r = double(toDouble(rv as JavaNumber));
      else if (rc === 'string') r = double(parseJavaDouble(rv as string));
      else return -1;
      break;
    case 'string':
      if (rc === 'boolean') l = parseJavaBoolean(lv as string);
      else if (rc === 'int') l = int(parseJavaInt(lv as string));
      else if (rc === 'long') l = long(parseJavaLong(lv as string));
      else if (rc === 'double') l = double(parseJavaDouble(lv as string));
      else return -1;
      break;
  }
  return compareSameClass(l, r);
}

/** Unary minus on a number (Java overflow rules); null for anything else, as in RocketMQ. */
export function negate(v: JavaValue): JavaValue {
  if (!isNumber(v)) return null;
  if (v.t === 'int') return int(-v.v | 0);
  if (v.t === 'long') return long(BigInt.asIntN(64, -v.v));
  return double(-v.v);
}

/** Text of a value for messages, in selector syntax. */
export function formatValue(v: JavaValue): string {
  if (v === null) return 'NULL';
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'string') return `'${v.replace(/'/g, "''")}'`;
  return String(v.v);
}
