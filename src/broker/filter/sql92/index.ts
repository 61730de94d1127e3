/**
 * SQL92 message selectors (RocketMQ `ExpressionType.SQL92`, `MessageSelector.bySql`):
 * `compileSelector(sql)` parses once, `selector.matches(properties)` filters a message.
 *
 * Compilations are cached by source text (the last 256 distinct selectors, errors included), so
 * a pull that carries its subscription on every request (lite pull consumers) does not re-parse.
 * The grammar is described in parser.ts and lexer.ts, the evaluation rules in expression.ts and
 * java-values.ts, and the whole feature in docs/sql92-filter.md.
 */
import { evaluate, formatNode, type Node, type PropertyLookup } from './expression.js';
import { parseSelector } from './parser.js';
import { Sql92SyntaxError } from './lexer.js';
import type { JavaValue } from './java-values.js';

export { Sql92SyntaxError } from './lexer.js';
export { Sql92EvalError } from './java-values.js';

export class CompiledSelector {
  constructor(
    /** The selector as written. */
    readonly source: string,
    readonly root: Node,
    /** Text after the selector that the parser ignored (as Apache RocketMQ does), if any. */
    readonly ignoredTail: { line: number; column: number; text: string } | undefined,
  ) {}

  /** The raw three-valued result: true, false or null (unknown). @throws Sql92EvalError */
  evaluate(properties: Map<string, string> | PropertyLookup): JavaValue {
    const get: PropertyLookup = typeof properties === 'function' ? properties : (name) => properties.get(name);
    return evaluate(this.root, get);
  }

  /** True only when the selector evaluates to TRUE; unknown and evaluation errors are false. */
  matches(properties: Map<string, string> | PropertyLookup): boolean {
    try {
      return this.evaluate(properties) === true;
    } catch {
      return false;
    }
  }

  /** The parsed form, fully parenthesised. */
  toString(): string {
    return formatNode(this.root);
  }

  toJSON(): string {
    return this.source;
  }
}

/**
 * Deepest expression tree accepted: evaluation recurses once per level, and a long AND/OR chain
 * is one level per operator. Far beyond any real selector; deeper ones are refused when compiled
 * instead of overflowing the stack when evaluated.
 */
export const MAX_DEPTH = 2000;

function depthOf(root: Node): number {
  let max = 0;
  const stack: Array<[Node, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [n, d] = stack.pop()!;
    if (d > max) max = d;
    switch (n.k) {
      case 'neg':
      case 'not':
      case 'cast':
      case 'in':
      case 'str':
        stack.push([n.e, d + 1]);
        break;
      case 'and':
      case 'or':
      case 'eq':
      case 'cmp':
        stack.push([n.l, d + 1], [n.r, d + 1]);
        break;
      default:
        break;
    }
  }
  return max;
}

const CACHE_SIZE = 256;
const cache = new Map<string, CompiledSelector | Sql92SyntaxError>();

/** Parses (or takes from the cache) a selector. @throws Sql92SyntaxError */
export function compileSelector(sql: string): CompiledSelector {
  let hit = cache.get(sql);
  if (hit !== undefined) {
    cache.delete(sql);
    cache.set(sql, hit);
  } else {
    try {
      const r = parseSelector(sql);
      const depth = depthOf(r.root);
      if (depth > MAX_DEPTH) throw new Sql92SyntaxError(`expression is nested too deeply (${depth} levels, at most ${MAX_DEPTH})`, 1, 1);
      hit = new CompiledSelector(sql, r.root, r.ignoredTail);
    } catch (e) {
      if (e instanceof RangeError) hit = new Sql92SyntaxError(`expression is nested too deeply (${e.message})`, 1, 1);
      else if (e instanceof Sql92SyntaxError) hit = e;
      else throw e;
    }
    cache.set(sql, hit);
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  }
  if (hit instanceof Sql92SyntaxError) throw hit;
  return hit;
}
