/**
 * Tokens of RocketMQ's SQL92 message selector (the grammar of `org.apache.rocketmq.filter`,
 * re-implemented here; see docs/sql92-filter.md).
 *
 * - Keywords, case-insensitive: NOT AND OR BETWEEN IN TRUE FALSE NULL IS CONTAINS STARTSWITH ENDSWITH.
 * - Identifiers: `[A-Za-z_$][A-Za-z0-9_$]*` that are not keywords (no dots, no quoting).
 * - Integer literals: `0` or `[1-9][0-9]*`, optional `l`/`L` suffix (no leading zeros, no hex).
 * - Decimal literals: `1.5`, `1.`, `.5`, `1e3`, `1.5E-3` (exponent with an optional sign).
 * - Strings in single quotes; a doubled quote `''` stands for one quote.
 * - Operators: `=` `<>` `>` `>=` `<` `<=` `(` `)` `,` `+` `-`.
 * - Skipped: blanks (space, tab, CR, LF, FF), `-- comment` up to and including a line end
 *   (without the line end it is not a comment), and `/* comment *\/`.
 * Where several tokens could start at a position the longest wins (so `0123` is `0` then `123`,
 * `1e` is `1` then the identifier `e`).
 *
 * The lexer is lazy: the parser pulls tokens one at a time, so text after the last token the
 * parser needed is never looked at (Apache's generated parser behaves the same way).
 */

export type TokenKind =
  | 'EOF'
  | 'ID'
  | 'STRING'
  | 'INTEGER'
  | 'DECIMAL'
  | 'NOT'
  | 'AND'
  | 'OR'
  | 'BETWEEN'
  | 'IN'
  | 'TRUE'
  | 'FALSE'
  | 'NULL'
  | 'IS'
  | 'CONTAINS'
  | 'STARTSWITH'
  | 'ENDSWITH'
  | '='
  | '<>'
  | '>'
  | '>='
  | '<'
  | '<='
  | '('
  | ')'
  | ','
  | '+'
  | '-';

export interface Token {
  kind: TokenKind;
  /** The token's source text ('' at the end). */
  text: string;
  /** String literal value (quotes removed, '' unescaped). */
  value?: string;
  /** 0-based offset and 1-based line/column of the first character. */
  offset: number;
  line: number;
  column: number;
}

const KEYWORDS: ReadonlySet<string> = new Set(['NOT', 'AND', 'OR', 'BETWEEN', 'IN', 'TRUE', 'FALSE', 'NULL', 'IS', 'CONTAINS', 'STARTSWITH', 'ENDSWITH']);

/** A selector that cannot be tokenized or parsed, or that the parser refuses. */
export class Sql92SyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
    this.name = 'Sql92SyntaxError';
  }
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isIdStart = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || c === 0x24;
const isIdPart = (c: number): boolean => isIdStart(c) || isDigit(c);
const isBlank = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0c;

/** Describes a token for messages: `"abc"`, `end of expression`. */
export function describeToken(t: Token): string {
  return t.kind === 'EOF' ? 'end of expression' : JSON.stringify(t.text);
}

export class Lexer {
  private pos = 0;
  private line = 1;
  private column = 1;
  private readonly lookahead: Token[] = [];

  constructor(private readonly src: string) {}

  /** The k-th token ahead (0 = next), lexing only as far as needed. */
  peek(k = 0): Token {
    while (this.lookahead.length <= k) this.lookahead.push(this.scan());
    return this.lookahead[k]!;
  }

  next(): Token {
    const t = this.peek(0);
    this.lookahead.shift();
    return t;
  }

  private advance(n: number): void {
    for (let i = 0; i < n; i++) {
      const c = this.src.charCodeAt(this.pos++);
      // JavaCC counts CR, LF and CRLF as one line end each
      if (c === 0x0a || (c === 0x0d && this.src.charCodeAt(this.pos) !== 0x0a)) {
        this.line++;
        this.column = 1;
      } else {
        this.column++;
      }
    }
  }

  private error(message: string): Sql92SyntaxError {
    return new Sql92SyntaxError(`${message} at line ${this.line}, column ${this.column}`, this.line, this.column);
  }

  /** Skips blanks and comments. */
  private skip(): void {
    const s = this.src;
    for (;;) {
      const c = s.charCodeAt(this.pos);
      if (isBlank(c)) {
        this.advance(1);
        continue;
      }
      if (c === 0x2d && s.charCodeAt(this.pos + 1) === 0x2d) {
        // a line comment only counts with its line end
        let end = this.pos + 2;
        while (end < s.length && s.charCodeAt(end) !== 0x0a && s.charCodeAt(end) !== 0x0d) end++;
        if (end >= s.length) return;
        if (s.charCodeAt(end) === 0x0d && s.charCodeAt(end + 1) === 0x0a) end++;
        this.advance(end + 1 - this.pos);
        continue;
      }
      if (c === 0x2f && s.charCodeAt(this.pos + 1) === 0x2a) {
        const close = s.indexOf('*/', this.pos + 2);
        if (close < 0) throw this.error('unterminated /* comment');
        this.advance(close + 2 - this.pos);
        continue;
      }
      return;
    }
  }

  private scan(): Token {
    this.skip();
    const s = this.src;
    const start = this.pos;
    const at = { offset: start, line: this.line, column: this.column };
    if (start >= s.length) return { kind: 'EOF', text: '', ...at };
    const c = s.charCodeAt(start);
    const make = (kind: TokenKind, len: number, value?: string): Token => {
      const t: Token = { kind, text: s.slice(start, start + len), ...at };
      if (value !== undefined) t.value = value;
      this.advance(len);
      return t;
    };

    if (isIdStart(c)) {
      let end = start + 1;
      while (end < s.length && isIdPart(s.charCodeAt(end))) end++;
      const upper = s.slice(start, end).toUpperCase();
      return make(KEYWORDS.has(upper) ? (upper as TokenKind) : 'ID', end - start);
    }
    if (isDigit(c) || (c === 0x2e && isDigit(s.charCodeAt(start + 1)))) return this.number(start, make);
    if (c === 0x27) {
      let value = '';
      let i = start + 1;
      for (;;) {
        if (i >= s.length) throw this.error('unterminated string literal');
        const ch = s.charCodeAt(i);
        if (ch === 0x27) {
          if (s.charCodeAt(i + 1) === 0x27) {
            value += "'";
            i += 2;
            continue;
          }
          return make('STRING', i + 1 - start, value);
        }
        value += s[i];
        i++;
      }
    }
    const two = s.slice(start, start + 2);
    if (two === '<>' || two === '>=' || two === '<=') return make(two, 2);
    const one = s[start]!;
    if ('=<>(),+-'.includes(one)) return make(one as TokenKind, 1);
    throw this.error(`unexpected character ${JSON.stringify(one)}`);
  }

  /** Longest of an integer literal and a decimal literal starting at `start`. */
  private number(start: number, make: (kind: TokenKind, len: number) => Token): Token {
    const s = this.src;
    const digitsFrom = (i: number): number => {
      while (i < s.length && isDigit(s.charCodeAt(i))) i++;
      return i;
    };
    const exponentFrom = (i: number): number => {
      const e = s.charCodeAt(i);
      if (e !== 0x65 && e !== 0x45) return i;
      let j = i + 1;
      if (s[j] === '+' || s[j] === '-') j++;
      const end = digitsFrom(j);
      return end > j ? end : i;
    };
    // decimal: digits '.' digits* exp? | '.' digits exp? | digits exp
    let decEnd = -1;
    const intEnd = digitsFrom(start);
    if (intEnd > start) {
      if (s.charCodeAt(intEnd) === 0x2e) decEnd = exponentFrom(digitsFrom(intEnd + 1));
      else {
        const e = exponentFrom(intEnd);
        if (e > intEnd) decEnd = e;
      }
    } else {
      decEnd = exponentFrom(digitsFrom(start + 1));
    }
    // integer: '0' | [1-9][0-9]* [lL]?
    let integerEnd = -1;
    if (intEnd > start) {
      if (s.charCodeAt(start) === 0x30) integerEnd = start + 1;
      else {
        integerEnd = intEnd;
        const l = s.charCodeAt(intEnd);
        if (l === 0x6c || l === 0x4c) integerEnd++;
      }
    }
    if (decEnd > integerEnd) return make('DECIMAL', decEnd - start);
    return make('INTEGER', integerEnd - start);
  }
}
