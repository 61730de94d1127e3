/**
 * The hand-built header codecs against straightforward reference codecs (JSON.stringify of the
 * fastjson-ordered object; Buffer.from per binary entry): exact bytes over seeded random
 * commands, including escapes, non-ASCII text, lone surrogates and every value type.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ExtFieldValue, RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';
import { decodeFrameBody, encodeFrame, FrameError } from '../../../src/remoting/protocol/frame-codec.js';
import { decodeJsonHeader, encodeJsonHeader, jsonHeaderText } from '../../../src/remoting/protocol/json-header.js';
import { decodeBinaryHeader, encodeBinaryHeader } from '../../../src/remoting/protocol/binary-header.js';
import { languageCodeOf } from '../../../src/remoting/codes/language-code.js';
import { mulberry32 } from '../../support/prng.js';

/** Reference JSON header: the object form, stringified. */
function referenceJson(cmd: RemotingCommand): string {
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
  return JSON.stringify(obj);
}

/** Reference binary header: one Buffer per string, then copied. */
function referenceBinary(cmd: RemotingCommand): Buffer {
  const parts: Buffer[] = [];
  const head = Buffer.alloc(13);
  head.writeInt16BE(cmd.code, 0);
  head.writeInt8(languageCodeOf(cmd.language), 2);
  head.writeInt16BE(cmd.version, 3);
  head.writeInt32BE(cmd.opaque, 5);
  head.writeInt32BE(cmd.flag, 9);
  parts.push(head);
  const remark = cmd.remark === null ? Buffer.alloc(0) : Buffer.from(cmd.remark, 'utf8');
  const rl = Buffer.alloc(4);
  rl.writeInt32BE(remark.length);
  parts.push(rl, remark);
  const entries: Buffer[] = [];
  for (const [k, v] of Object.entries(cmd.extFields ?? {})) {
    if (v === null || v === undefined) continue;
    const kb = Buffer.from(k, 'utf8');
    const vb = Buffer.from(String(v), 'utf8');
    const kl = Buffer.alloc(2);
    kl.writeInt16BE(kb.length);
    const vl = Buffer.alloc(4);
    vl.writeInt32BE(vb.length);
    entries.push(kl, kb, vl, vb);
  }
  const ext = Buffer.concat(entries);
  const el = Buffer.alloc(4);
  el.writeInt32BE(ext.length);
  parts.push(el, ext);
  return Buffer.concat(parts);
}

const ALPHABET = [
  'a', 'Z', '0', '9', ' ', '_', '%', '"', '\\', '/', '\u0000', '\u0001', '\u0002', '\n', '\t', '\u001f', '\u007f', 'é', 'ß', '中',
  '\u2028', '\ud83d\ude00', '\ud800', '\udfff', '{', '}', ':', ',',
];

function randomText(next: () => number, maxLen: number, asciiOnly = false): string {
  const n = Math.floor(next() * (maxLen + 1));
  let s = '';
  for (let i = 0; i < n; i++) {
    if (asciiOnly || next() < 0.7) s += String.fromCharCode(0x20 + Math.floor(next() * 95));
    else s += ALPHABET[Math.floor(next() * ALPHABET.length)]!;
  }
  return s;
}

function randomCommand(next: () => number, type: 0 | 1): RemotingCommand {
  const ext: Record<string, ExtFieldValue> = {};
  const n = Math.floor(next() * 14);
  for (let i = 0; i < n; i++) {
    const key = next() < 0.5 ? String.fromCharCode(97 + i) : randomText(next, 30, type === 1 && next() < 0.5) || `k${i}`;
    const r = next();
    ext[key] =
      r < 0.2 ? Math.floor(next() * 2 ** 40) * (next() < 0.3 ? -1 : 1)
      : r < 0.3 ? next() < 0.5
      : r < 0.35 ? 1.5
      : randomText(next, next() < 0.1 ? 300 : 40);
  }
  return {
    code: Math.floor(next() * 400),
    language: next() < 0.8 ? 'JAVA' : 'NODE_JS',
    version: Math.floor(next() * 500),
    opaque: Math.floor(next() * 0x7fffffff),
    flag: Math.floor(next() * 4),
    remark: next() < 0.6 ? null : randomText(next, 60),
    extFields: next() < 0.1 ? null : ext,
    body: next() < 0.5 ? null : Buffer.from(randomText(next, 50)),
    serializeTypeCurrentRPC: type,
  };
}

test('JSON header text equals JSON.stringify of the fastjson-ordered object, exactly', () => {
  for (let seed = 1; seed <= 400; seed++) {
    const cmd = randomCommand(mulberry32(seed), 0);
    const want = referenceJson(cmd);
    assert.equal(jsonHeaderText(cmd), want, `seed ${seed}`);
    assert.deepEqual(encodeJsonHeader(cmd), Buffer.from(want, 'utf8'), `seed ${seed}`);
    // and the frame carries exactly those bytes after the two length words
    const frame = encodeFrame(cmd);
    const h = Buffer.from(want, 'utf8');
    assert.equal(frame.readUInt32BE(4), h.length, `seed ${seed}: header length word, type 0`);
    assert.deepEqual(frame.subarray(8, 8 + h.length), h, `seed ${seed}`);
    assert.equal(frame.readInt32BE(0), frame.length - 4);
  }
});

test('JSON header: null/undefined extFields values are left out, remark null is left out, odd numbers', () => {
  const cmd = {
    code: 0, language: 'JAVA', version: 401, opaque: -5, flag: 1, remark: null,
    extFields: { a: null, b: undefined, c: 0, d: -0, e: 1e21, f: 'x' } as unknown as Record<string, ExtFieldValue>,
    body: null, serializeTypeCurrentRPC: 0 as const,
  };
  assert.equal(jsonHeaderText(cmd), referenceJson(cmd));
  assert.equal(jsonHeaderText(cmd), '{"code":0,"extFields":{"c":"0","d":"0","e":"1e+21","f":"x"},"flag":1,"language":"JAVA","opaque":-5,"serializeTypeCurrentRPC":"JSON","version":401}');
});

test('JSON decode: plain extFields keep their types; nulls dropped and nested values become JSON text', () => {
  const plain = decodeJsonHeader(Buffer.from('{"code":310,"opaque":"3","flag":0,"extFields":{"a":"x","d":4,"k":false,"__proto__":"p"}}'));
  assert.equal(plain.opaque, 3);
  assert.deepEqual(Object.keys(plain.extFields!), ['a', 'd', 'k', '__proto__']);
  assert.equal(plain.extFields!.d, 4);
  assert.equal(plain.extFields!.k, false);
  assert.equal(plain.extFields!['__proto__'], 'p');
  assert.equal(Object.getPrototypeOf(plain.extFields), Object.prototype);
  const mixed = decodeJsonHeader(Buffer.from('{"code":1,"extFields":{"a":null,"b":{"x":[1,2]},"c":[3],"d":"ok"}}'));
  assert.deepEqual(mixed.extFields, { b: '{"x":[1,2]}', c: '[3]', d: 'ok' });
  assert.throws(() => decodeJsonHeader(Buffer.from('{"code":1,"extFields":[1]}')), FrameError);
  assert.throws(() => decodeJsonHeader(Buffer.from('{"code":1.5}')), /code is not an integer/);
  assert.throws(() => decodeJsonHeader(Buffer.from('{"opaque":1}')), /missing code/);
});

test('ROCKETMQ binary header equals the reference bytes and decodes back, over random commands', () => {
  for (let seed = 1; seed <= 400; seed++) {
    const cmd = randomCommand(mulberry32(seed), 1);
    const want = referenceBinary(cmd);
    assert.deepEqual(encodeBinaryHeader(cmd), want, `seed ${seed}`);
    const frame = encodeFrame(cmd);
    assert.equal(frame.readUInt32BE(4), ((1 << 24) | want.length) >>> 0, `seed ${seed}: header length word, type 1`);
    assert.deepEqual(frame.subarray(8, 8 + want.length), want, `seed ${seed}`);
    const back = decodeFrameBody(frame.subarray(4));
    // lone surrogates do not survive UTF-8 (they become U+FFFD): compare through the same encoding
    const utf8 = (t: string): string => Buffer.from(t, 'utf8').toString('utf8');
    const strings = cmd.extFields === null ? null : Object.fromEntries(Object.entries(cmd.extFields).map(([k, v]) => [utf8(k), utf8(String(v))]));
    // the binary form has no "null extFields": an empty map decodes as null
    assert.deepEqual(back.extFields, strings && Object.keys(strings).length > 0 ? strings : null, `seed ${seed}`);
    assert.equal(back.remark, cmd.remark === null || cmd.remark === '' ? null : utf8(cmd.remark), `seed ${seed}`);
    assert.deepEqual([back.code, back.opaque, back.flag, back.version, back.language], [cmd.code, cmd.opaque, cmd.flag, cmd.version, cmd.language]);
    assert.deepEqual(back.body, cmd.body && cmd.body.length > 0 ? cmd.body : null);
  }
});

test('ROCKETMQ binary decode: keys and values of every length class, ASCII and not', () => {
  const ext: Record<string, string> = {
    '': 'empty key',
    k: '',
    x: 'é',
    abcdefghijklmnopqrstuvwx: 'y'.repeat(24),
    abcdefghijklmnopqrstuvwxy: 'z'.repeat(25),
    'ключ': 'значение',
    long: 'q'.repeat(5000),
    mixed: 'abc\u0000def\u00ff',
  };
  const cmd: RemotingCommand = { code: 310, language: 'GO', version: 1, opaque: 2, flag: 0, remark: 'ré', extFields: ext, body: null, serializeTypeCurrentRPC: 1 };
  const header = encodeBinaryHeader(cmd);
  assert.deepEqual(header, referenceBinary(cmd));
  const back = decodeBinaryHeader(header);
  assert.deepEqual(back.extFields, ext);
  assert.equal(back.remark, 'ré');
  assert.equal(back.language, 'GO');
});

test('ROCKETMQ binary decode rejects truncated, negative and overrunning lengths', () => {
  const good = encodeBinaryHeader({ code: 1, language: 'JAVA', version: 1, opaque: 1, flag: 0, remark: 'r', extFields: { key: 'value' }, body: null, serializeTypeCurrentRPC: 1 });
  for (let cut = 0; cut < good.length; cut++) {
    assert.throws(() => decodeBinaryHeader(good.subarray(0, cut)), FrameError, `cut at ${cut}`);
  }
  const negRemark = Buffer.from(good);
  negRemark.writeInt32BE(-1, 13);
  assert.throws(() => decodeBinaryHeader(negRemark), /negative remark length/);
  const trailing = Buffer.concat([good, Buffer.from([0])]);
  assert.throws(() => decodeBinaryHeader(trailing), /1 trailing bytes/);
  const overrun = Buffer.from(good);
  overrun.writeInt32BE(3, 18); // extFields length smaller than its one entry
  assert.throws(() => decodeBinaryHeader(overrun), /overrun|truncated|trailing/);
});

test('JSON header: integer-like keys keep JSON.stringify order; inherited properties are not written', () => {
  const proto = { inherited: 'no' };
  const ext = Object.create(proto) as Record<string, ExtFieldValue>;
  ext.z = 'last?';
  ext['10'] = 1;
  ext['2'] = 2;
  ext.a = true;
  const cmd: RemotingCommand = { code: 1, language: 'JAVA', version: 1, opaque: 1, flag: 0, remark: null, extFields: ext, body: null, serializeTypeCurrentRPC: 0 };
  const want = '{"code":1,"extFields":{"2":"2","10":"1","z":"last?","a":"true"},"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":1}';
  assert.equal(jsonHeaderText(cmd), want);
  const frame = encodeFrame(cmd);
  assert.equal(frame.subarray(8).toString(), want);
});

test('JSON header: large, negative and non-integer numbers are written as JSON.stringify writes them', () => {
  for (const n of [0, 7, 10, 99, 100, 101, 999, 1000, 123456789, -1, -10, -123456, 2 ** 31 - 1, -(2 ** 31), Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 53, 1e21, 0.5, -0, Number.NaN, Infinity]) {
    const cmd: RemotingCommand = { code: n, language: 'JAVA', version: n, opaque: n, flag: n, remark: null, extFields: { v: n }, body: null, serializeTypeCurrentRPC: 0 };
    assert.equal(encodeFrame(cmd).subarray(8).toString(), referenceJson(cmd), String(n));
  }
});

test('JSON header: long values (> 128 chars: a batch reply\'s msgId list) are written as JSON.stringify writes them, ASCII or not', () => {
  const ids = Array.from({ length: 32 }, (_, i) => `7F00000100002A9F${(0x10000 + i * 1213).toString(16).toUpperCase().padStart(16, '0')}`).join(',');
  const values = [
    ids, // plain printable ASCII: the fast path
    `${ids}"`, // a quote at the end
    `\\${ids}`, // a backslash at the start
    `${ids.slice(0, 500)}\n${ids.slice(500)}`, // a control character
    `${ids}\u007f`, // DEL (not escaped by JSON.stringify, but not on the fast path)
    `${ids}é`, // non-ASCII (two UTF-8 bytes)
    `${ids}\ud83d\ude00`, // a surrogate pair (four UTF-8 bytes)
    `${ids}\ud800`, // a lone surrogate (escaped by JSON.stringify)
    ' '.repeat(129), // the fast path's smallest length
    `~${'}'.repeat(300)}`, // the ends of the accepted range
  ];
  for (const v of values) {
    const cmd: RemotingCommand = { code: 0, language: 'JAVA', version: 401, opaque: 7, flag: 1, remark: v, extFields: { msgId: v, queueId: 3 }, body: null, serializeTypeCurrentRPC: 0 };
    const want = Buffer.from(referenceJson(cmd), 'utf8');
    const frame = encodeFrame(cmd);
    assert.equal(frame.readUInt32BE(4), want.length, JSON.stringify(v.slice(-3)));
    assert.deepEqual(frame.subarray(8, 8 + want.length), want, JSON.stringify(v.slice(-3)));
    assert.deepEqual(encodeJsonHeader(cmd), want);
  }
});
