/**
 * Recursive-descent parser for RocketMQ's SQL92 selector (grammar facts from
 * `org.apache.rocketmq.filter`; the code is tsmq's own). Precedence, loosest first:
 *
 *   selector   := or                                  (must yield a condition)
 *   or         := and ( OR and )*
 *   and        := equality ( AND equality )*
 *   equality   := comparison ( '=' comparison | '<>' comparison | IS NULL | IS NOT NULL )*
 *   comparison := unary ( ('>'|'>='|'<'|'<=') unary
 *                       | [NOT] (CONTAINS|STARTSWITH|ENDSWITH) string
 *                       | [NOT] BETWEEN unary AND unary
 *                       | [NOT] IN '(' string (',' string)* ')' )*
 *   unary      := '+' unary | '-' unary | NOT unary | primary
 *   primary    := literal | identifier | '(' or ')'
 *   literal    := string | integer | decimal | TRUE | FALSE | NULL
 *
 * Consequences worth knowing (all as in Apache RocketMQ):
 * - NOT binds tighter than comparisons: `NOT a = 1` is `(NOT a) = 1`; write `NOT (a = 1)`.
 * - There is no arithmetic; `-` only negates a literal (negating a property gives null).
 * - The parser stops after the first complete expression and ignores what follows, as long as
 *   the token right after it is not itself an error: `a = 1 b` is accepted as `a = 1`
 *   (`CompiledSelector.ignoredTail` reports it).
 *
 * Checks made while parsing (each one a syntax error):
 * - AND / OR / NOT operands and the whole selector must be conditions (comparisons, TRUE,
 *   FALSE, NULL or a property), not numbers or strings;
 * - `<`, `<=`, `>`, `>=` and BETWEEN take no string, boolean or NULL literal and no condition;
 * - `=` / `<>` take no NULL literal, and TRUE/FALSE on the left of `=` needs TRUE/FALSE on the right
 *   when both sides are literals;
 * - BETWEEN with two literal bounds needs low ≤ high and neither NULL;
 * - IN needs a property on its left and string literals in the list;
 * - integer literals must fit in 64 bits; decimal literals must be greater than 0 and finite
 *   (Apache refuses `0.0`; write `0`).
 */
import { describeToken, Lexer, Sql92SyntaxError, type Token, type TokenKind } from './lexer.js';
import { compareValues, double, formatValue, int, isNumber, long, type JavaValue } from './java-values.js';
import { formatNode, isBooleanNode, type ComparisonOp, type Node, type StringOp } from './expression.js';

const NULL_CONST: Node = { k: 'const', v: null, bool: true };
const DOUBLE_MIN_VALUE = 4.9e-324;

export interface ParseResult {
  root: Node;
  /** Set when text after the selector was ignored: where it starts. */
  ignoredTail?: { line: number; column: number; text: string };
}

class Parser {
  private readonly lx: Lexer;

  constructor(private readonly src: string) {
    this.lx = new Lexer(src);
  }

  parse(): ParseResult {
    const first = this.lx.peek();
    const root = this.asCondition(this.or(), first);
    const tail = this.lx.peek();
    const result: ParseResult = { root };
    if (tail.kind !== 'EOF') result.ignoredTail = { line: tail.line, column: tail.column, text: this.src.slice(tail.offset) };
    return result;
  }

  private fail(t: Token, message: string): never {
    throw new Sql92SyntaxError(`${message} at line ${t.line}, column ${t.column}`, t.line, t.column);
  }

  private expect(kind: TokenKind, what: string): Token {
    const t = this.lx.peek();
    if (t.kind !== kind) this.fail(t, `expected ${what} but found ${describeToken(t)}`);
    return this.lx.next();
  }

  /** A condition: boolean nodes as they are, a property as "property is TRUE". */
  private asCondition(n: Node, at: Token): Node {
    if (isBooleanNode(n)) return n;
    if (n.k === 'prop') return { k: 'cast', e: n };
    return this.fail(at, `${formatNode(n)} is not a condition (it does not yield TRUE or FALSE)`);
  }

  private or(): Node {
    let left = this.and();
    while (this.lx.peek().kind === 'OR') {
      const at = this.lx.next();
      const right = this.and();
      left = { k: 'or', l: this.asCondition(left, at), r: this.asCondition(right, at) };
    }
    return left;
  }

  private and(): Node {
    let left = this.equality();
    while (this.lx.peek().kind === 'AND') {
      const at = this.lx.next();
      const right = this.equality();
      left = { k: 'and', l: this.asCondition(left, at), r: this.asCondition(right, at) };
    }
    return left;
  }

  private equality(): Node {
    let left = this.comparison();
    for (;;) {
      const t = this.lx.peek();
      if (t.kind === '=' || t.kind === '<>') {
        this.lx.next();
        const eq = this.equal(left, this.comparison(), t);
        left = t.kind === '=' ? eq : { k: 'not', e: eq };
      } else if (t.kind === 'IS') {
        this.lx.next();
        if (this.lx.peek().kind === 'NULL') {
          this.lx.next();
          left = { k: 'eq', l: left, r: NULL_CONST };
        } else {
          this.expect('NOT', 'NULL or NOT NULL after IS');
          this.expect('NULL', 'NULL after IS NOT');
          left = { k: 'not', e: { k: 'eq', l: left, r: NULL_CONST } };
        }
      } else {
        return left;
      }
    }
  }

  private equal(l: Node, r: Node, at: Token): Node {
    for (const n of [l, r]) {
      if (n.k === 'const' && n.v === null) this.fail(at, `NULL cannot be compared with = or <> (use IS NULL / IS NOT NULL)`);
    }
    if (l.k === 'const' && r.k === 'const' && l.bool && !r.bool) this.fail(at, `${formatNode(l)} cannot be compared with ${formatNode(r)}`);
    return { k: 'eq', l, r };
  }

  /** `<`, `<=`, `>`, `>=` (and BETWEEN) accept numbers and properties only. */
  private orderable(n: Node, at: Token, op: string): Node {
    if (n.k === 'const' ? !isNumber(n.v) : isBooleanNode(n)) {
      this.fail(at, `${formatNode(n)} cannot be compared with ${op} (only numbers and properties can)`);
    }
    return n;
  }

  private ordered(op: ComparisonOp, l: Node, r: Node, at: Token, opName: string = op): Node {
    return { k: 'cmp', op, l: this.orderable(l, at, opName), r: this.orderable(r, at, opName) };
  }

  private comparison(): Node {
    let left = this.unary();
    for (;;) {
      const t = this.lx.peek();
      switch (t.kind) {
        case '>':
        case '>=':
        case '<':
        case '<=':
          this.lx.next();
          left = this.ordered(t.kind, left, this.unary(), t);
          continue;
        case 'CONTAINS':
        case 'STARTSWITH':
        case 'ENDSWITH':
        case 'BETWEEN':
        case 'IN':
          left = this.keywordComparison(left, false);
          continue;
        case 'NOT': {
          const k = this.lx.peek(1).kind;
          if (k !== 'CONTAINS' && k !== 'STARTSWITH' && k !== 'ENDSWITH' && k !== 'BETWEEN' && k !== 'IN') {
            this.fail(this.lx.peek(1), `expected CONTAINS, STARTSWITH, ENDSWITH, BETWEEN or IN after NOT but found ${describeToken(this.lx.peek(1))}`);
          }
          this.lx.next();
          left = this.keywordComparison(left, true);
          continue;
        }
        default:
          return left;
      }
    }
  }

  private keywordComparison(left: Node, not: boolean): Node {
    const t = this.lx.next();
    switch (t.kind) {
      case 'CONTAINS':
      case 'STARTSWITH':
      case 'ENDSWITH':
        return { k: 'str', op: t.kind as StringOp, not, e: left, search: this.string(`a string literal after ${t.kind}`) };
      case 'BETWEEN': {
        const low = this.unary();
        const and = this.expect('AND', 'AND between the BETWEEN bounds');
        const high = this.unary();
        return not ? this.notBetween(left, low, high, and) : this.between(left, low, high, and);
      }
      default: {
        // IN
        this.expect('(', "'(' after IN");
        const list = [this.string('a string literal in the IN list')];
        while (this.lx.peek().kind === ',') {
          this.lx.next();
          list.push(this.string('a string literal in the IN list'));
        }
        this.expect(')', "',' or ')' in the IN list");
        if (left.k !== 'prop') this.fail(t, `IN needs a property on its left, not ${formatNode(left)}`);
        return { k: 'in', e: left, values: new Set(list), list, not };
      }
    }
  }

  private between(value: Node, low: Node, high: Node, at: Token): Node {
    if (low.k === 'const' && high.k === 'const') {
      const lv = low.v;
      const hv = high.v;
      if (lv === null || hv === null) this.fail(at, 'BETWEEN bounds cannot be NULL');
      let order: number;
      try {
        order = compareValues(hv, lv);
      } catch (e) {
        return this.fail(at, `BETWEEN bounds ${formatValue(lv)} and ${formatValue(hv)} cannot be compared (${(e as Error).message})`);
      }
      if (order < 0) this.fail(at, `BETWEEN lower bound ${formatValue(lv)} is greater than the upper bound ${formatValue(hv)}`);
    }
    return { k: 'and', l: this.ordered('>=', value, low, at, 'BETWEEN'), r: this.ordered('<=', value, high, at, 'BETWEEN') };
  }

  private notBetween(value: Node, low: Node, high: Node, at: Token): Node {
    return { k: 'or', l: this.ordered('<', value, low, at, 'NOT BETWEEN'), r: this.ordered('>', value, high, at, 'NOT BETWEEN') };
  }

  private string(what: string): string {
    return this.expect('STRING', what).value!;
  }

  private unary(): Node {
    const t = this.lx.peek();
    switch (t.kind) {
      case '+':
        this.lx.next();
        return this.unary();
      case '-':
        this.lx.next();
        return { k: 'neg', e: this.unary() };
      case 'NOT': {
        this.lx.next();
        const e = this.unary();
        return { k: 'not', e: this.asCondition(e, t) };
      }
      default:
        return this.primary();
    }
  }

  private primary(): Node {
    const t = this.lx.next();
    switch (t.kind) {
      case 'STRING':
        return { k: 'const', v: t.value!, bool: false };
      case 'INTEGER':
        return { k: 'const', v: this.integer(t), bool: false };
      case 'DECIMAL':
        return { k: 'const', v: this.decimal(t), bool: false };
      case 'TRUE':
        return { k: 'const', v: true, bool: true };
      case 'FALSE':
        return { k: 'const', v: false, bool: true };
      case 'NULL':
        return NULL_CONST;
      case 'ID':
        return { k: 'prop', name: t.text };
      case '(': {
        const inner = this.or();
        this.expect(')', "')'");
        return inner;
      }
      default:
        return this.fail(t, `expected a value, a property or '(' but found ${describeToken(t)}`);
    }
  }

  private integer(t: Token): JavaValue {
    const digits = /[lL]$/.test(t.text) ? t.text.slice(0, -1) : t.text;
    const v = BigInt(digits);
    if (v > 2n ** 63n - 1n) this.fail(t, `integer literal ${t.text} does not fit in 64 bits`);
    return v <= 2n ** 31n - 1n ? int(Number(v)) : long(v);
  }

  private decimal(t: Token): JavaValue {
    const v = Number(t.text);
    if (v === Infinity) this.fail(t, `decimal literal ${t.text} is too large`);
    if (v < DOUBLE_MIN_VALUE) this.fail(t, `decimal literal ${t.text} must be greater than 0 (RocketMQ refuses 0.0; write 0)`);
    return double(v);
  }
}

/** Parses a selector. @throws Sql92SyntaxError */
export function parseSelector(sql: string): ParseResult {
  return new Parser(sql).parse();
}
