import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeProperties, encodeProperties, isCanonicalProperties, lookupProperty } from '../../../src/common/message/properties.js';
import { TextProperties } from '../../../src/common/message/text-properties.js';

/** Deterministic texts over an alphabet rich in separators, repeated keys and key prefixes. */
function randomTexts(count: number, seed: number): string[] {
  let x = seed >>> 0;
  const next = (n: number): number => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x % n;
  };
  const atoms = ['\x01', '\x02', 'A', 'B', 'AB', 'BA', 'TAGS', 'KEYS', 'k', 'v', 'ü', ' '];
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let t = '';
    const n = next(14);
    for (let j = 0; j < n; j++) t += atoms[next(atoms.length)]!;
    out.push(t);
  }
  return out;
}

const KEYS = ['A', 'B', 'AB', 'BA', 'TAGS', 'KEYS', 'k', 'v', 'ü', '', 'A\x01', 'x'];

test('lookupProperty gives what decodeProperties(text).get gives, for every key, on crafted and random texts', () => {
  const crafted = [
    '',
    'TAGS\x01TagA\x02UNIQ_KEY\x01ABC\x02WAIT\x01true\x02',
    'A\x011\x02A\x012\x02', // duplicate: the last wins
    'A\x011\x02A\x01\x02', // the later duplicate has an empty value: dropped, the first stays
    'A\x01v\x01w\x02', // a value holding \x01
    'XA\x011\x02', // a key that ends with the looked-up key
    'B\x01A\x01x\x02', // the key appears inside a value, followed by \x01
    'A\x011', // no trailing separator
    '\x01A\x02A\x011\x02', // an empty key piece before
    'ü\x01ß\x02',
  ];
  for (const text of [...crafted, ...randomTexts(3000, 7)]) {
    const map = decodeProperties(text);
    for (const key of KEYS) assert.equal(lookupProperty(text, key), map.get(key), `key ${JSON.stringify(key)} in ${JSON.stringify(text)}`);
  }
});

test('isCanonicalProperties is true exactly when encoding the decoded Map gives the text back', () => {
  assert.equal(isCanonicalProperties(''), true);
  assert.equal(isCanonicalProperties('TAGS\x01a\x02WAIT\x01true\x02'), true);
  assert.equal(isCanonicalProperties('TAGS\x01a\x02KEYS\x01a\x02WAIT\x01t\x02'), true); // same-length distinct keys
  assert.equal(isCanonicalProperties('TAGS\x01a\x02TAGS\x01b\x02'), false);
  assert.equal(isCanonicalProperties('TAGS\x01a'), false);
  const many = Array.from({ length: 70 }, (_, i) => `K${i}\x01v\x02`).join(''); // beyond the scratch size
  assert.equal(isCanonicalProperties(many), true);
  assert.equal(isCanonicalProperties(many + 'K3\x01w\x02'), false);
  for (const text of randomTexts(5000, 11)) {
    assert.equal(isCanonicalProperties(text), encodeProperties(decodeProperties(text)) === text, JSON.stringify(text));
  }
});

test('TextProperties reads the text without decoding, behaves as the decoded Map, and keeps writes', () => {
  const text = 'TAGS\x01a\x02UNIQ_KEY\x01U\x02A\x011\x02A\x012\x02';
  const p = new TextProperties(text);
  assert.equal(p.get('TAGS'), 'a');
  assert.equal(p.get('A'), '2');
  assert.equal(p.has('UNIQ_KEY'), true);
  assert.equal(p.has('WAIT'), false);
  assert.equal(p.isText(), true);
  assert.equal(p.size, 3);
  assert.deepEqual(new Map(p), decodeProperties(text));
  assert.deepEqual([...p.keys()], ['TAGS', 'UNIQ_KEY', 'A']);
  assert.equal(encodeProperties(p), 'TAGS\x01a\x02UNIQ_KEY\x01U\x02A\x012\x02');
  p.set('WAIT', 'false');
  p.delete('TAGS');
  assert.equal(p.isText(), false);
  assert.equal(p.get('WAIT'), 'false');
  assert.equal(p.get('TAGS'), undefined);
  assert.equal(p.text, text, 'the text is what it was made from');
  assert.equal(Object.prototype.toString.call(p), '[object Map]');
  const seen: string[] = [];
  p.forEach((v, k, m) => {
    assert.equal(m, p);
    seen.push(`${k}=${v}`);
  });
  assert.deepEqual(seen, ['UNIQ_KEY=U', 'A=2', 'WAIT=false']);
  p.clear();
  assert.equal(p.size, 0);
});
