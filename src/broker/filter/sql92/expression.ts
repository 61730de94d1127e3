/**
 * The compiled form of an SQL92 selector and its evaluation against message properties, with
 * RocketMQ's three-valued logic (true / false / null = unknown):
 *
 * - a missing property is null; `<`, `<=`, `>`, `>=` with a null side are null;
 * - `x = y`: both null → true; only the right side null → false; only the left side null → null
 *   (Apache's asymmetry, so `'a' = p` is false but `p = 'a'` is null when p is missing);
 *   `<>` is NOT(`=`), `IS NULL` is true exactly when the value is null;
 * - `<` `<=` `>` `>=` between two properties compare them as decimal numbers (both must parse,
 *   else an evaluation error); other mixes follow `compareValues` (java-values.ts);
 * - IN / NOT IN: null when the property is missing; else membership (strings only);
 * - CONTAINS / STARTSWITH / ENDSWITH and their NOT forms: false when the property is missing or
 *   the search string is empty;
 * - AND / OR: false AND x = false, true OR x = true, otherwise null if either side is null;
 *   NOT null = null;
 * - a property used alone as a condition (`p`, `NOT p`) is false when present (it is a string,
 *   not a boolean) and null when missing.
 * A message matches only when the selector evaluates to true; an evaluation error (a string
 * compared with a number that it does not parse as) means no match.
 */
import { compareValues, formatValue, negate, parseJavaDouble, compareDoubles, type JavaValue, Sql92EvalError } from './java-values.js';

export type ComparisonOp = '>' | '>=' | '<' | '<=';
export type StringOp = 'CONTAINS' | 'STARTSWITH' | 'ENDSWITH';

export type Node =
  /** A literal. `bool` marks TRUE, FALSE and NULL (they can stand as conditions). */
  | { k: 'const'; v: JavaValue; bool: boolean }
  | { k: 'prop'; name: string }
  | { k: 'neg'; e: Node }
  | { k: 'not'; e: Node }
  /** A property used as a condition. */
  | { k: 'cast'; e: Node }
  | { k: 'and' | 'or'; l: Node; r: Node }
  | { k: 'eq'; l: Node; r: Node }
  | { k: 'cmp'; op: ComparisonOp; l: Node; r: Node }
  | { k: 'in'; e: Node; values: ReadonlySet<string>; list: readonly string[]; not: boolean }
  | { k: 'str'; op: StringOp; not: boolean; e: Node; search: string };

/** Nodes that produce a boolean (or null): the ones allowed as conditions. */
export function isBooleanNode(n: Node): boolean {
  switch (n.k) {
    case 'const':
      return n.bool;
    case 'prop':
    case 'neg':
      return false;
    default:
      return true;
  }
}

/** Looks a property up; undefined and null both mean "missing". */
export type PropertyLookup = (name: string) => string | null | undefined;

function asBool(v: JavaValue): boolean | null {
  // every node used as a condition yields a boolean or null
  return typeof v === 'boolean' ? v : null;
}

function cmpResult(op: ComparisonOp, c: number): boolean {
  switch (op) {
    case '>':
      return c > 0;
    case '>=':
      return c >= 0;
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
  }
}

/** Evaluates a node. @throws Sql92EvalError */
export function evaluate(n: Node, get: PropertyLookup): JavaValue {
  switch (n.k) {
    case 'const':
      return n.v;
    case 'prop':
      return get(n.name) ?? null;
    case 'neg':
      return negate(evaluate(n.e, get));
    case 'not': {
      const v = asBool(evaluate(n.e, get));
      return v === null ? null : !v;
    }
    case 'cast': {
      const v = evaluate(n.e, get);
      return v === null ? null : typeof v === 'boolean' ? v : false;
    }
    case 'and': {
      const l = asBool(evaluate(n.l, get));
      if (l === false) return false;
      const r = asBool(evaluate(n.r, get));
      if (r === false) return false;
      return l === null || r === null ? null : true;
    }
    case 'or': {
      const l = asBool(evaluate(n.l, get));
      if (l === true) return true;
      const r = asBool(evaluate(n.r, get));
      if (r === true) return true;
      return l === null || r === null ? null : false;
    }
    case 'eq': {
      const l = evaluate(n.l, get);
      const r = evaluate(n.r, get);
      if (l === null || r === null) return l === null && r === null ? true : l === null ? null : false;
      return compareValues(l, r) === 0;
    }
    case 'cmp': {
      const l = evaluate(n.l, get);
      if (l === null) return null;
      const r = evaluate(n.r, get);
      if (r === null) return null;
      if (typeof l === 'string' && typeof r === 'string') {
        let a: number;
        let b: number;
        try {
          a = parseJavaDouble(l);
          b = parseJavaDouble(r);
        } catch {
          throw new Sql92EvalError(`strings cannot be compared with ${n.op} unless both are numbers: ${formatValue(l)}, ${formatValue(r)}`);
        }
        return cmpResult(n.op, compareDoubles(a, b));
      }
      return cmpResult(n.op, compareValues(l, r));
    }
    case 'in': {
      const v = evaluate(n.e, get);
      if (typeof v !== 'string') return null;
      return n.values.has(v) !== n.not;
    }
    case 'str': {
      if (n.search.length === 0) return false;
      const v = evaluate(n.e, get);
      if (typeof v !== 'string') return false;
      const hit = n.op === 'CONTAINS' ? v.includes(n.search) : n.op === 'STARTSWITH' ? v.startsWith(n.search) : v.endsWith(n.search);
      return hit !== n.not;
    }
  }
}

/** Selector-syntax text of a node (fully parenthesised), for messages and logs. */
export function formatNode(n: Node): string {
  switch (n.k) {
    case 'const':
      return formatValue(n.v);
    case 'prop':
      return n.name;
    case 'neg':
      return `(- ${formatNode(n.e)})`;
    case 'not':
      return `(NOT ${formatNode(n.e)})`;
    case 'cast':
      return formatNode(n.e);
    case 'and':
    case 'or':
      return `(${formatNode(n.l)} ${n.k.toUpperCase()} ${formatNode(n.r)})`;
    case 'eq':
      return `(${formatNode(n.l)} = ${formatNode(n.r)})`;
    case 'cmp':
      return `(${formatNode(n.l)} ${n.op} ${formatNode(n.r)})`;
    case 'in':
      return `(${formatNode(n.e)} ${n.not ? 'NOT IN' : 'IN'} (${n.list.map((s) => formatValue(s)).join(', ')}))`;
    case 'str':
      return `(${formatNode(n.e)} ${n.not ? 'NOT ' : ''}${n.op} ${formatValue(n.search)})`;
  }
}
