import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  getBoolean, getInt, getLong, getOptionalBoolean, getOptionalInt, getOptionalLong, getOptionalString, getString, HeaderError,
  intValue, longValue, optionalBooleanValue, optionalIntValue, optionalStringValue, stringValue,
} from '../../../src/remoting/headers/header-fields.js';
import type { ExtFieldValue } from '../../../src/remoting/protocol/remoting-command.js';

function throwsHeader(fn: () => unknown, message: string): void {
  assert.throws(fn, (e: unknown) => e instanceof HeaderError && e.message === message && e.code === 'HEADER_INVALID');
}

test('strings: JSON strings, numbers and booleans become text; missing throws Apache wording', () => {
  const ext = { topic: 'T', n: 5, b: false };
  assert.equal(getString(ext, 'topic'), 'T');
  assert.equal(getString(ext, 'n'), '5');
  assert.equal(getString(ext, 'b'), 'false');
  throwsHeader(() => getString(ext, 'consumerGroup'), 'the custom field <consumerGroup> is null');
  throwsHeader(() => getString(null, 'topic'), 'the custom field <topic> is null');
  assert.equal(getOptionalString(ext, 'x'), undefined);
  assert.equal(getOptionalString(undefined, 'x'), undefined);
});

test('ints accept numbers and numeric strings, reject garbage and out-of-range', () => {
  assert.equal(getInt({ q: 3 }, 'q'), 3);
  assert.equal(getInt({ q: '-7' }, 'q'), -7);
  assert.equal(getInt({ q: ' 12 ' }, 'q'), 12);
  assert.equal(getInt({ q: '+4' }, 'q'), 4);
  throwsHeader(() => getInt({ q: 'abc' }, 'q'), 'the custom field <q> is not a number: abc');
  throwsHeader(() => getInt({ q: '1.5' }, 'q'), 'the custom field <q> is not a number: 1.5');
  throwsHeader(() => getInt({ q: 1.5 }, 'q'), 'the custom field <q> is not a number: 1.5');
  throwsHeader(() => getInt({ q: '' }, 'q'), 'the custom field <q> is not a number: ');
  throwsHeader(() => getInt({ q: true }, 'q'), 'the custom field <q> is not a number: true');
  throwsHeader(() => getInt({ q: 2147483648 }, 'q'), 'the custom field <q> is out of range: 2147483648');
  throwsHeader(() => getInt({}, 'queueId'), 'the custom field <queueId> is null');
  assert.equal(getOptionalInt({}, 'q'), undefined);
  assert.equal(getOptionalInt({ q: '0' }, 'q'), 0);
});

test('longs are JS numbers up to 2^53', () => {
  assert.equal(getLong({ o: '1700000000000' }, 'o'), 1700000000000);
  assert.equal(getLong({ o: -1 }, 'o'), -1);
  assert.equal(getLong({ o: '9007199254740991' }, 'o'), Number.MAX_SAFE_INTEGER);
  throwsHeader(() => getLong({ o: '9223372036854775807' }, 'o'), 'the custom field <o> is out of range: 9223372036854775807');
  throwsHeader(() => getLong({ o: 'x1' }, 'o'), 'the custom field <o> is not a number: x1');
  assert.equal(getOptionalLong({ o: 4 }, 'o'), 4);
  assert.equal(getOptionalLong({}, 'o'), undefined);
});

test('booleans accept true/false as JSON or text in any case', () => {
  assert.equal(getBoolean({ k: false }, 'k'), false);
  assert.equal(getBoolean({ k: 'TRUE' }, 'k'), true);
  assert.equal(getBoolean({ k: 'false' }, 'k'), false);
  throwsHeader(() => getBoolean({ k: 'yes' }, 'k'), 'the custom field <k> is not a boolean: yes');
  throwsHeader(() => getBoolean({ k: 1 }, 'k'), 'the custom field <k> is not a boolean: 1');
  throwsHeader(() => getBoolean({}, 'unitMode'), 'the custom field <unitMode> is null');
  assert.equal(getOptionalBoolean({}, 'k'), undefined);
  assert.equal(getOptionalBoolean({ k: true }, 'k'), true);
});

test('integer text: the fast digit reader agrees with the regex rule on every shape of input', () => {
  // reference: trim, /^[+-]?\d+$/, Number(); then the same range checks as getLong
  const reference = (v: string): number | 'not a number' | 'out of range' => {
    const t = v.trim();
    if (!/^[+-]?\d+$/.test(t)) return 'not a number';
    const n = Number(t);
    return Number.isSafeInteger(n) ? n : 'out of range';
  };
  const inputs = [
    '0', '-0', '7', '-7', '+7', ' 7', '7 ', '007', '-007', '-', '+', '', ' ', '--1', '1-', '1e3', '0x10', '1.0', '١٢',
    '999999999999999', '-999999999999999', '9999999999999999', '-9999999999999999', '9007199254740991', '9007199254740992',
    '12345678901234567890', '\t42\n', '4 2',
  ];
  for (let d = 1; d <= 18; d++) inputs.push('9'.repeat(d), '-' + '1'.repeat(d), '1' + '0'.repeat(d - 1));
  for (const v of inputs) {
    const want = reference(v);
    let got: number | string;
    try {
      got = getLong({ v }, 'v');
    } catch (e) {
      got = (e as Error).message.includes('out of range') ? 'out of range' : 'not a number';
    }
    assert.ok(Object.is(got, want) || got === want, `${JSON.stringify(v)}: ${String(got)} vs ${String(want)}`);
  }
});

test('the value readers (a field read by the caller) follow the getters exactly, errors included', () => {
  const shapes: Array<ExtFieldValue | null | undefined> = [undefined, null, '', 'x', '7', 7, -3, ' 12 ', '1e3', 1.5, true, 'TRUE', 'False', '2147483648', 2 ** 31, '9007199254740993', 9007199254740991];
  const outcome = (f: () => unknown): unknown => {
    try {
      return f();
    } catch (e) {
      return `${(e as Error).name}: ${(e as Error).message}`;
    }
  };
  const pairs: Array<[string, (ext: Record<string, ExtFieldValue>) => unknown, (v: ExtFieldValue | null | undefined) => unknown]> = [
    ['string', (e) => getString(e, 'f'), (v) => stringValue(v, 'f')],
    ['optionalString', (e) => getOptionalString(e, 'f'), (v) => optionalStringValue(v)],
    ['int', (e) => getInt(e, 'f'), (v) => intValue(v, 'f')],
    ['optionalInt', (e) => getOptionalInt(e, 'f'), (v) => optionalIntValue(v, 'f')],
    ['long', (e) => getLong(e, 'f'), (v) => longValue(v, 'f')],
    ['optionalBoolean', (e) => getOptionalBoolean(e, 'f'), (v) => optionalBooleanValue(v, 'f')],
  ];
  for (const [name, getter, reader] of pairs) {
    for (const v of shapes) {
      const ext = (v === undefined ? {} : { f: v }) as Record<string, ExtFieldValue>;
      assert.deepEqual(outcome(() => reader(v)), outcome(() => getter(ext)), `${name}(${JSON.stringify(v)})`);
    }
  }
  assert.equal(outcome(() => intValue(undefined, 'e')), 'HeaderError: the custom field <e> is null');
  assert.equal(longValue('1700000000123', 'g'), 1_700_000_000_123);
});
