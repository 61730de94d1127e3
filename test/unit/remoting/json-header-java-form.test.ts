/**
 * The decode fast path for the header in the Java client's exact form (json-header.ts
 * decodeJavaClientHeader: fixed parts checked byte by byte, only extFields through JSON.parse):
 * the command it gives equals the whole-header JSON.parse decode for every header, and it is
 * taken for the Java form and declined for everything else.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJavaClientHeader, decodeJsonCommand, decodeJsonCommandWhole } from '../../../src/remoting/protocol/json-header.js';
import { mulberry32 } from '../../support/prng.js';
import fc from 'fast-check';

/** A header as fastjson writes RemotingCommand (keys sorted, no spaces, remark left out when null). */
function javaHeader(o: { code: number; ext: Record<string, string> | null; flag: number; language: string; opaque: number; remark?: string; version: number }): string {
  const parts = [`"code":${o.code}`];
  if (o.ext) parts.push(`"extFields":${JSON.stringify(o.ext)}`);
  parts.push(`"flag":${o.flag}`, `"language":${JSON.stringify(o.language)}`, `"opaque":${o.opaque}`);
  if (o.remark !== undefined) parts.push(`"remark":${JSON.stringify(o.remark)}`);
  parts.push('"serializeTypeCurrentRPC":"JSON"', `"version":${o.version}`);
  return `{${parts.join(',')}}`;
}

const SEND_EXT = {
  a: 'PID_bench', b: 'BenchTopic', c: 'TBW102', d: '4', e: '3', f: '0', g: '1764640000000', h: '0',
  i: 'UNIQ_KEY\u00017F0000016C3A1B2C3D4E5F60718293A4\u0002WAIT\u0001true\u0002KEYS\u0001order-1 user-1\u0002TAGS\u0001TagA\u0002', j: '0', k: 'false', m: 'false', n: 'broker-a',
};

/** The decode's result or the text of what it threw. */
function outcome(f: () => unknown): unknown {
  try {
    return f();
  } catch (e) {
    return `${(e as Error).name}: ${(e as Error).message}`;
  }
}

function check(text: string, wantFast: boolean, label = text): void {
  const pad = 'xx';
  const buf = Buffer.from(pad + text + 'BODY', 'utf8'); // the header inside a larger frame buffer
  const start = Buffer.byteLength(pad);
  const end = start + Buffer.byteLength(text);
  const body = Buffer.from('b');
  const whole = outcome(() => decodeJsonCommandWhole(buf, body, start, end));
  assert.deepEqual(outcome(() => decodeJsonCommand(buf, body, start, end)), whole, label);
  const fast = decodeJavaClientHeader(buf, body, start, end);
  assert.equal(fast !== null, wantFast, `fast path ${wantFast ? 'taken' : 'declined'}: ${label}`);
  if (fast) assert.deepEqual(fast, whole, label);
}

test('the Java form is decoded on the fast path to what JSON.parse of the whole header gives', () => {
  check(javaHeader({ code: 310, ext: SEND_EXT, flag: 0, language: 'JAVA', opaque: 1234, version: 453 }), true);
  check(javaHeader({ code: 0, ext: {}, flag: 1, language: 'JAVA', opaque: 0, version: 0 }), true);
  check(javaHeader({ code: 11, ext: { x: 'a},"flag":9,"language":"GO","opaque":1,"serializeTypeCurrentRPC":"JSON","version":1}' }, flag: 2, language: 'GO', opaque: 7, version: 401 }), true, 'suffix look-alike inside a value');
  check(javaHeader({ code: 310, ext: { k: 'Ünïcödé 中文', 'ключ': 'v' }, flag: 0, language: 'CPP', opaque: 2147483647, version: 453 }), true, 'non-ASCII');
  check(javaHeader({ code: 310, ext: SEND_EXT, flag: 0, language: 'JAVA', opaque: -2147483648, version: 453 }), true, 'negative opaque (the Java counter wrapped)');
  check(javaHeader({ code: 310, ext: SEND_EXT, flag: 0, language: 'JAVA', opaque: 999999999999999, version: 453 }), true, '15 digits');
  check('{"code":310,"extFields":{"a":1,"b":true,"c":null,"d":{"x":[1]}},"flag":0,"language":"JAVA","opaque":5,"serializeTypeCurrentRPC":"JSON","version":1}', true, 'typed, null and nested values');
  check('{"code":310,"extFields":{ "a" : "1" },"flag":0,"language":"JAVA","opaque":-0,"serializeTypeCurrentRPC":"JSON","version":1}', true, 'spaces inside extFields, -0');
});

test('every other form is declined and decoded (or refused) exactly as before', () => {
  const base = javaHeader({ code: 310, ext: SEND_EXT, flag: 0, language: 'JAVA', opaque: 1234, version: 453 });
  check(javaHeader({ code: 310, ext: SEND_EXT, flag: 0, language: 'JAVA', opaque: 1, remark: 'r', version: 453 }), false, 'remark');
  check(javaHeader({ code: 310, ext: null, flag: 0, language: 'JAVA', opaque: 1, version: 453 }), false, 'no extFields');
  check(JSON.stringify({ code: 310, language: 'GO', version: 317, opaque: 3, flag: 0, remark: '', extFields: SEND_EXT }), false, 'Go client order');
  check(base.replace('"code":310', '"code":-310'), false, 'negative code');
  check(base.replace('"code":310', '"code":0310'), false, 'leading zero: invalid JSON');
  check(base.replace('"opaque":1234', '"opaque":01234'), false, 'leading zero in opaque');
  check(base.replace('"version":453', '"version":-453'), false, 'negative version');
  check(base.replace('"version":453', '"version":4.5'), false, 'fraction');
  check(base.replace('"flag":0', '"flag":1e2'), false, 'exponent');
  check(base.replace('"code":310', '"code":1234567890123456'), false, '16 digits');
  check(base.replace('"language":"JAVA"', '"language":""'), false, 'empty language');
  check(base.replace('"language":"JAVA"', '"language":"java"'), false, 'lower-case language');
  check(base.replace('"JSON"', '"ROCKETMQ"'), false, 'other serialize type name');
  check(base.replace(',"flag"', ' ,"flag"'), false, 'space');
  check(base.replace('"extFields":{', '"extFields":['), false, 'extFields an array: refused');
  check(base.replace('"a":"PID_bench"', '"a":"PID_bench"]'), false, 'broken extFields: refused');
  check(base.slice(0, -1), false, 'truncated');
  check(base + ' ', false, 'trailing space');
  check('{"code":310,"extFields":{},"flag":0}', false, 'short');
  check('', false, 'empty');
});

test('random Java-form headers with random values: same command as the whole parse', () => {
  const rnd = mulberry32(13);
  const chars = 'abc"\\\u0001\u0002{}[],:é中 \u007f';
  const text = (n: number): string => Array.from({ length: n }, () => chars[Math.floor(rnd() * chars.length)]).join('');
  for (let i = 0; i < 300; i++) {
    const ext: Record<string, string> = {};
    for (let k = Math.floor(rnd() * 6); k > 0; k--) ext[text(1 + Math.floor(rnd() * 4))] = text(Math.floor(rnd() * 20));
    const opaque = Math.floor(rnd() * 2 ** 32) - 2 ** 31;
    check(javaHeader({ code: Math.floor(rnd() * 400), ext, flag: Math.floor(rnd() * 4), language: rnd() < 0.5 ? 'JAVA' : 'GO', opaque, version: Math.floor(rnd() * 500) }), true, `random ${i}`);
  }
});

test('byte mutations of a Java-form header (fast-check): whenever the fast path accepts, it gives what the whole parse gives', () => {
  const base = '{"code":310,"extFields":{"a":"x","b":"1"},"flag":0,"language":"JAVA","opaque":-12,"serializeTypeCurrentRPC":"JSON","version":453}';
  // single bytes and whole pieces of the fixed form, so mutations often keep the form and reach the extFields parse
  const pieces = ['{', '}', '"', ',', ':', '-', '0', '1', '9', 'a', '\\', '[', ']', ' ', 'é', '\u0000', 'e', '.', 'A', '_', 'null', 'true', '"remark":"r",', '"code":1,', '"opaque":', '},"flag":0', '"extFields":'];
  let accepted = 0;
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(base.length), fc.nat(2), fc.constantFrom(...pieces)), { maxLength: 4 }), (mutations) => {
      let s = base;
      for (const [pos, kind, piece] of mutations) {
        const p = pos % (s.length + 1);
        s = kind === 0 ? s.slice(0, p) + piece + s.slice(p) : kind === 1 ? s.slice(0, p) + s.slice(p + 1) : s.slice(0, p) + piece + s.slice(p + 1);
      }
      const buf = Buffer.from(`zz${s}q`, 'utf8');
      const end = buf.length - 1;
      const fast = outcome(() => decodeJavaClientHeader(buf, null, 2, end));
      if (fast === null) return;
      accepted++;
      assert.deepEqual(fast, outcome(() => decodeJsonCommandWhole(buf, null, 2, end)), s);
    }),
    { numRuns: 20000, seed: 8 },
  );
  assert.ok(accepted > 1000, `the fast path was taken ${accepted} times`);
});
