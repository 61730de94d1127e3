/**
 * The SQL92 selector (src/broker/filter/sql92): grammar, precedence, literals, RocketMQ's
 * null and type rules, syntax errors with their messages. Expected values were checked against
 * Apache RocketMQ's own evaluator (org.apache.rocketmq.filter) for every case it supports.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileSelector, Sql92SyntaxError } from '../../../../src/broker/filter/sql92/index.js';
import { compareValues, double, int, long, parseJavaDouble, parseJavaInt, parseJavaLong, Sql92EvalError } from '../../../../src/broker/filter/sql92/java-values.js';

const props = (o: Record<string, string> = {}): Map<string, string> => new Map(Object.entries(o));
/** The raw three-valued result, or 'error' for an evaluation error. */
const ev = (sql: string, o: Record<string, string> = {}): boolean | null | 'error' => {
  try {
    const v = compileSelector(sql).evaluate(props(o));
    assert.ok(v === null || typeof v === 'boolean', `${sql} gave ${String(v)}`);
    return v as boolean | null;
  } catch (e) {
    if (e instanceof Sql92EvalError) return 'error';
    throw e;
  }
};
const matches = (sql: string, o: Record<string, string> = {}): boolean => compileSelector(sql).matches(props(o));
const syntaxError = (sql: string, message: RegExp): void => {
  assert.throws(() => compileSelector(sql), (e: unknown) => e instanceof Sql92SyntaxError && message.test(e.message), `${sql} should fail with ${message}`);
};

describe('SQL92 selector: precedence and structure', () => {
  it('AND binds tighter than OR; parentheses override', () => {
    assert.equal(compileSelector('a = 1 OR b = 1 AND c = 1').toString(), '((a = 1) OR ((b = 1) AND (c = 1)))');
    assert.equal(ev('a = 1 OR b = 1 AND c = 1', { a: '1', b: '0', c: '0' }), true);
    assert.equal(ev('a = 1 OR b = 1 AND c = 1', { a: '0', b: '1', c: '0' }), false);
    assert.equal(ev('(a = 1 OR b = 1) AND c = 1', { a: '1', b: '0', c: '0' }), false);
    assert.equal(ev('(a = 1 OR b = 1) AND c = 1', { a: '1', b: '0', c: '1' }), true);
    assert.equal(compileSelector('a > 1 AND b < 2 OR NOT (c = 3)').toString(), '(((a > 1) AND (b < 2)) OR (NOT (c = 3)))');
  });

  it('NOT binds tighter than comparisons: NOT a = 1 is (NOT a) = 1', () => {
    assert.equal(compileSelector('NOT a = 1').toString(), '((NOT a) = 1)');
    assert.equal(ev('NOT a = 1', { a: '2' }), false);
    assert.equal(ev('NOT (a = 1)', { a: '2' }), true);
    assert.equal(ev('NOT (a = 1)', { a: '1' }), false);
  });

  it('keywords are case-insensitive, property names are case-sensitive', () => {
    assert.equal(ev("a between 1 and 5 and TAGS in ('x') or b is not null", { a: '3', TAGS: 'x' }), true);
    assert.equal(ev('A = 1', { a: '1' }), null);
    assert.equal(ev('_x = 1 AND $y = 2', { _x: '1', $y: '2' }), true);
  });

  it('comments and blanks are skipped; a line comment needs its line end', () => {
    assert.equal(ev('a = 1 -- first\n AND /* second */ b = 2', { a: '1', b: '2' }), true);
    assert.equal(ev('\t a\r\n=\f1 ', { a: '1' }), true);
    syntaxError('/* open', /unterminated \/\* comment at line 1, column 1/);
  });

  it('text after a complete selector is ignored, as Apache RocketMQ does, and reported', () => {
    const s = compileSelector('a = 1 b = 2');
    assert.deepEqual(s.ignoredTail, { line: 1, column: 7, text: 'b = 2' });
    assert.equal(s.matches(props({ a: '1', b: '3' })), true);
    assert.equal(compileSelector('a = 1').ignoredTail, undefined);
    // the token right after must still be a token
    syntaxError('a = 1 !', /unexpected character "!" at line 1, column 7/);
  });
});

describe('SQL92 selector: operators', () => {
  it('BETWEEN / NOT BETWEEN are inclusive; a missing property is unknown', () => {
    for (const [a, want] of [['4', false], ['5', true], ['7', true], ['9', true], ['10', false]] as const) {
      assert.equal(ev('a BETWEEN 5 AND 9', { a }), want, `a=${a}`);
      assert.equal(ev('a NOT BETWEEN 5 AND 9', { a }), !want, `NOT, a=${a}`);
    }
    assert.equal(ev('a BETWEEN 5 AND 9'), null);
    assert.equal(ev('a NOT BETWEEN 5 AND 9'), null);
    assert.equal(ev('a BETWEEN -5 AND -1', { a: '-3' }), true);
    assert.equal(ev('a BETWEEN 1.5 AND 2.5', { a: '2' }), true);
    assert.equal(ev('a BETWEEN 5 AND 5', { a: '5' }), true);
  });

  it('IN / NOT IN compare strings exactly; a missing property is unknown', () => {
    assert.equal(ev("TAGS IN ('T1', 'T2')", { TAGS: 'T1' }), true);
    assert.equal(ev("TAGS IN ('T1', 'T2')", { TAGS: 't1' }), false);
    assert.equal(ev("TAGS IN ('T1', 'T2')"), null);
    assert.equal(ev("TAGS NOT IN ('T1', 'T2')", { TAGS: 'T3' }), true);
    assert.equal(ev("TAGS NOT IN ('T1', 'T2')", { TAGS: 'T2' }), false);
    assert.equal(ev("TAGS NOT IN ('T1', 'T2')"), null);
    assert.equal(ev("n IN ('1', '2', '3', '4', '5', '6')", { n: '6' }), true);
    assert.equal(ev("(a) IN ('x')", { a: 'x' }), true);
  });

  it('IS NULL / IS NOT NULL test presence (an empty value is present)', () => {
    assert.equal(ev('a IS NULL'), true);
    assert.equal(ev('a IS NULL', { a: '' }), false);
    assert.equal(ev('a IS NOT NULL'), false);
    assert.equal(ev('a IS NOT NULL', { a: '' }), true);
    assert.equal(ev('a IS NOT NULL AND a = 0', { a: '0' }), true);
  });

  it('= and <> on strings are exact; the other comparisons need numbers', () => {
    assert.equal(ev("a = 'x'", { a: 'x' }), true);
    assert.equal(ev("a = 'x'", { a: 'X' }), false);
    assert.equal(ev("a <> 'x'", { a: 'y' }), true);
    assert.equal(ev("a = '5'", { a: '05' }), false);
    assert.equal(ev('a = b', { a: 'x', b: 'x' }), true);
    // two properties with < > compare as decimal numbers
    assert.equal(ev('a > b', { a: '10', b: '9' }), true);
    assert.equal(ev('a < b', { a: '10', b: '9.5' }), false);
    assert.equal(ev('a > b', { a: 'x', b: '9' }), 'error');
  });

  it('CONTAINS, STARTSWITH, ENDSWITH and their NOT forms (false when missing or searching for "")', () => {
    assert.equal(ev("a CONTAINS 'ell'", { a: 'hello' }), true);
    assert.equal(ev("a CONTAINS 'xyz'", { a: 'hello' }), false);
    assert.equal(ev("a NOT CONTAINS 'xyz'", { a: 'hello' }), true);
    assert.equal(ev("a STARTSWITH 'he'", { a: 'hello' }), true);
    assert.equal(ev("a NOT STARTSWITH 'he'", { a: 'hello' }), false);
    assert.equal(ev("a ENDSWITH 'lo'", { a: 'hello' }), true);
    assert.equal(ev("a NOT ENDSWITH 'lo'", { a: 'hello' }), false);
    assert.equal(ev("a CONTAINS 'x'"), false);
    assert.equal(ev("a NOT CONTAINS 'x'"), false);
    assert.equal(ev("a CONTAINS ''", { a: 'hello' }), false);
    assert.equal(ev("a NOT CONTAINS ''", { a: 'hello' }), false);
  });
});

describe('SQL92 selector: literals', () => {
  it('strings: doubled quotes, blanks and non-ASCII text', () => {
    assert.equal(ev("a = 'it''s'", { a: "it's" }), true);
    assert.equal(ev("a = ''''", { a: "'" }), true);
    assert.equal(ev("a = ''", { a: '' }), true);
    assert.equal(ev("a = 'héllo wörld ✓'", { a: 'héllo wörld ✓' }), true);
    assert.equal(ev("a = 'two\nlines'", { a: 'two\nlines' }), true);
  });

  it('integers: negative, 64-bit, L suffix; the property must parse as the literal type', () => {
    assert.equal(ev('a > -5', { a: '-3' }), true);
    assert.equal(ev('a > -5', { a: '-7' }), false);
    assert.equal(ev('a = 1', { a: '01' }), true, 'Integer.valueOf("01") is 1');
    assert.equal(ev('a = 1', { a: '+1' }), true);
    assert.equal(ev('a = 10L', { a: '10' }), true);
    assert.equal(ev('a > 2147483648', { a: '3000000000' }), true, 'a literal beyond 32 bits is a long');
    assert.equal(ev('a > 5', { a: '3000000000' }), 'error', 'a 32-bit literal parses the property as a 32-bit int');
    assert.equal(ev('a > 5', { a: '5.5' }), 'error', 'an integer literal does not accept a decimal property');
    assert.equal(ev('a > 5', { a: 'abc' }), 'error');
    assert.equal(ev('a = 9223372036854775807', { a: '9223372036854775807' }), true);
  });

  it('decimals: 1.5, .5, 5., exponents; the property is read as a Java double', () => {
    assert.equal(ev('a > 1.5', { a: '1.6' }), true);
    assert.equal(ev('a > 1.5', { a: '1.5' }), false);
    assert.equal(ev('a >= .5', { a: '0.5' }), true);
    assert.equal(ev('a = 5.', { a: '5' }), true);
    assert.equal(ev('a = 1.5e3', { a: '1500' }), true);
    assert.equal(ev('a = 1E+3', { a: '1000.0' }), true);
    assert.equal(ev('a > 5.0', { a: '5.5' }), true);
    assert.equal(ev('a > 5.0', { a: ' 6 ' }), true, 'Double.valueOf trims blanks');
    assert.equal(ev('a < 1.0', { a: '-Infinity' }), true);
    assert.equal(ev('a > 1.0', { a: 'NaN' }), true, 'NaN sorts above everything (Double.compare)');
  });

  it('booleans: TRUE/FALSE literals, properties compared with them case-insensitively', () => {
    assert.equal(ev('a = TRUE', { a: 'true' }), true);
    assert.equal(ev('a = TRUE', { a: 'TRUE' }), true);
    assert.equal(ev('a = TRUE', { a: 'yes' }), false);
    assert.equal(ev('a = FALSE', { a: 'no' }), true, 'anything but "true" reads as false');
    assert.equal(ev('a <> FALSE', { a: 'True' }), true);
    assert.equal(ev('TRUE'), true);
    assert.equal(ev('FALSE'), false);
    assert.equal(ev('NULL'), null);
    assert.equal(ev('TRUE = TRUE'), true);
    assert.equal(ev('1 = TRUE'), false, 'a number and a boolean are never equal');
    // a property used as a condition is a string, never TRUE
    assert.equal(ev('a', { a: 'true' }), false);
    assert.equal(ev('NOT a', { a: 'true' }), true);
    assert.equal(ev('a'), null);
    // Apache casts the boolean to a string here and fails: no match
    assert.equal(ev('TRUE = a', { a: 'true' }), 'error');
  });
});

describe('SQL92 selector: null semantics (a missing property)', () => {
  it('comparisons with a missing property are unknown, and unknown never matches', () => {
    for (const sql of ["a = 'x'", "a <> 'x'", 'a > 1', 'a <= 1', "NOT (a = 'x')", 'a = b']) {
      assert.equal(ev(sql, sql === 'a = b' ? { b: '1' } : {}), null, sql);
      assert.equal(matches(sql, sql === 'a = b' ? { b: '1' } : {}), false, sql);
    }
  });

  it("= is asymmetric: 'x' = a is FALSE (not unknown) when a is missing", () => {
    assert.equal(ev("'x' = a"), false);
    assert.equal(ev("NOT ('x' = a)"), true);
    assert.equal(ev("a = 'x'"), null);
  });

  it('three-valued AND / OR / NOT', () => {
    assert.equal(ev('a > 1 OR b = 1', { b: '1' }), true);
    assert.equal(ev('a > 1 OR b = 1', { b: '2' }), null);
    assert.equal(ev('a > 1 AND b = 1', { b: '1' }), null);
    assert.equal(ev('a > 1 AND b = 1', { b: '2' }), false);
    assert.equal(ev('NOT (a > 1 AND b = 1)', { b: '1' }), null);
    assert.equal(ev('NOT (a > 1 AND b = 1)', { b: '2' }), true);
  });

  it('an evaluation error anywhere means no match, even if another branch would be true', () => {
    assert.equal(ev('a > 5 OR b = 1', { a: 'x', b: '1' }), 'error');
    assert.equal(matches('a > 5 OR b = 1', { a: 'x', b: '1' }), false);
    // short-circuit: the failing side is never evaluated
    assert.equal(ev('b = 1 OR a > 5', { a: 'x', b: '1' }), true);
    assert.equal(ev('b = 2 AND a > 5', { a: 'x', b: '1' }), false);
  });

  it('negating a property gives NULL (only literals can be negated)', () => {
    assert.equal(ev('-a > 5', { a: '1' }), null);
    assert.equal(ev('- -5 = a', { a: '5' }), true);
  });
});

describe('SQL92 selector: syntax errors', () => {
  it('lexical errors name the character and its position', () => {
    syntaxError('a != 1', /^unexpected character "!" at line 1, column 3$/);
    syntaxError('x.y = 1', /^unexpected character "\." at line 1, column 2$/);
    syntaxError("a = 'open", /^unterminated string literal at line 1, column 5$/);
    syntaxError('a = 1 AND\n b ~ 2', /^unexpected character "~" at line 2, column 4$/);
  });

  it('grammar errors say what was expected', () => {
    syntaxError('a = ', /^expected a value, a property or '\(' but found end of expression at line 1, column 5$/);
    syntaxError('', /^expected a value, a property or '\(' but found end of expression at line 1, column 1$/);
    syntaxError('(a = 1', /^expected '\)' but found end of expression at line 1, column 7$/);
    syntaxError('a == 1', /^expected a value, a property or '\(' but found "=" at line 1, column 4$/);
    syntaxError('a IS 5', /^expected NULL or NOT NULL after IS but found "5" at line 1, column 6$/);
    syntaxError('a BETWEEN 1 OR 5', /^expected AND between the BETWEEN bounds but found "OR" at line 1, column 13$/);
    syntaxError("a IN ('x' 'y')", /^expected ',' or '\)' in the IN list but found "'y'" at line 1, column 11$/);
    syntaxError('a IN (1)', /^expected a string literal in the IN list but found "1" at line 1, column 7$/);
    syntaxError('a = 1 NOT b', /^expected CONTAINS, STARTSWITH, ENDSWITH, BETWEEN or IN after NOT but found "b" at line 1, column 11$/);
    syntaxError('a CONTAINS b', /^expected a string literal after CONTAINS but found "b" at line 1, column 12$/);
  });

  it('type checks made while parsing', () => {
    syntaxError('5', /^5 is not a condition \(it does not yield TRUE or FALSE\) at line 1, column 1$/);
    syntaxError("a = 1 AND 'x'", /^'x' is not a condition/);
    syntaxError('NOT 5', /^5 is not a condition .* at line 1, column 1$/);
    syntaxError("a > 'x'", /^'x' cannot be compared with > \(only numbers and properties can\) at line 1, column 3$/);
    syntaxError('a < TRUE', /^TRUE cannot be compared with </);
    syntaxError('a > 1 > 2', /^\(a > 1\) cannot be compared with >/);
    syntaxError('a = NULL', /^NULL cannot be compared with = or <> \(use IS NULL \/ IS NOT NULL\) at line 1, column 3$/);
    syntaxError('TRUE = 1', /^TRUE cannot be compared with 1/);
    syntaxError('a BETWEEN 9 AND 5', /^BETWEEN lower bound 9 is greater than the upper bound 5 at line 1, column 13$/);
    syntaxError('a BETWEEN NULL AND 5', /^BETWEEN bounds cannot be NULL/);
    syntaxError("a BETWEEN 'a' AND 'b'", /^'a' cannot be compared with BETWEEN/);
    syntaxError("1 IN ('1')", /^IN needs a property on its left, not 1 at line 1, column 3$/);
  });

  it('literal ranges: 64-bit integers; decimals must be finite and > 0 (Apache refuses 0.0)', () => {
    syntaxError('a = 9223372036854775808', /^integer literal 9223372036854775808 does not fit in 64 bits at line 1, column 5$/);
    syntaxError('a > 1e400', /^decimal literal 1e400 is too large/);
    syntaxError('a > 0.0', /^decimal literal 0\.0 must be greater than 0 \(RocketMQ refuses 0\.0; write 0\) at line 1, column 5$/);
    assert.equal(ev('a > 0', { a: '1' }), true);
  });

  it('absurdly deep expressions are refused when compiled, not when evaluated', () => {
    const chain = (n: number): string => Array.from({ length: n }, (_, i) => `a = ${i}`).join(' OR ');
    // n comparisons joined by OR: n - 1 OR levels, the comparison, its operands
    assert.equal(ev(chain(1999), { a: '1998' }), true);
    syntaxError(chain(2000), /^expression is nested too deeply \(2001 levels, at most 2000\)$/);
    syntaxError(`${'('.repeat(50_000)}a = 1${')'.repeat(50_000)}`, /^expression is nested too deeply \(Maximum call stack size exceeded\)$/);
  });

  it('compilations (and their errors) are cached by text', () => {
    assert.equal(compileSelector('cached = 1'), compileSelector('cached = 1'));
    let first: unknown;
    let second: unknown;
    try {
      compileSelector('cached >');
    } catch (e) {
      first = e;
    }
    try {
      compileSelector('cached >');
    } catch (e) {
      second = e;
    }
    assert.ok(first instanceof Sql92SyntaxError);
    assert.equal(first, second);
  });
});

describe('SQL92 selector: Java value rules', () => {
  it('Integer/Long/Double.valueOf', () => {
    assert.equal(parseJavaInt('+42'), 42);
    assert.equal(parseJavaInt('-2147483648'), -2147483648);
    assert.throws(() => parseJavaInt('2147483648'), Sql92EvalError);
    assert.throws(() => parseJavaInt(' 1'), Sql92EvalError);
    assert.equal(parseJavaLong('-9223372036854775808'), -(2n ** 63n));
    assert.throws(() => parseJavaLong('9223372036854775808'), Sql92EvalError);
    assert.equal(parseJavaDouble(' 2.5 '), 2.5);
    assert.equal(parseJavaDouble('5d'), 5);
    assert.equal(parseJavaDouble('1e3f'), 1000);
    assert.equal(parseJavaDouble('0x1.8p1'), 3);
    assert.equal(parseJavaDouble('-Infinity'), -Infinity);
    assert.ok(Number.isNaN(parseJavaDouble('NaN')));
    assert.throws(() => parseJavaDouble('1e'), Sql92EvalError);
    assert.throws(() => parseJavaDouble('infinity'), Sql92EvalError);
  });

  it('mixed comparisons widen int → long → double', () => {
    assert.equal(compareValues(int(5), long(5n)), 0);
    assert.equal(compareValues(long(6n), double(5.5)), 1);
    assert.equal(compareValues(double(-0), double(0)), -1);
    assert.equal(compareValues(int(1), true), -1, 'no rule: "less than"');
    assert.throws(() => compareValues(true, 'true'), Sql92EvalError);
  });
});
