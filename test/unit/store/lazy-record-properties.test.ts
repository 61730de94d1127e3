/**
 * LazyRecordProperties (the properties the arriving listener gets for a prepared record): reads
 * behave as the decoded Map's (get, has, size, iteration, forEach, copying into a Map), the record
 * is decoded once on the first read, and writes are refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LazyRecordProperties } from '../../../src/store/dispatch/lazy-record-properties.js';
import { decodeRecord, encodeRecord } from '../../../src/common/message/record-codec.js';
import { makeMessage } from '../../support/store-fixtures.js';

test('LazyRecordProperties reads like the record\'s decoded properties map and refuses writes', () => {
  const record = encodeRecord(makeMessage({ tags: 'TagA', keys: 'k1 k2', properties: { UNIQ_KEY: 'U1', a: 'x=1' } }));
  const expected = decodeRecord(record).properties;
  const lazy = new LazyRecordProperties(Buffer.from(record));
  assert.equal(lazy.get('UNIQ_KEY'), 'U1');
  assert.equal(lazy.get('TAGS'), 'TagA');
  assert.equal(lazy.get('absent'), undefined);
  assert.equal(lazy.has('KEYS'), true);
  assert.equal(lazy.size, expected.size);
  assert.deepEqual([...lazy], [...expected]);
  assert.deepEqual([...lazy.keys()], [...expected.keys()]);
  assert.deepEqual([...lazy.values()], [...expected.values()]);
  assert.deepEqual([...lazy.entries()], [...expected.entries()]);
  assert.deepEqual(new Map(lazy), expected);
  const seen: string[] = [];
  lazy.forEach((v, k, m) => {
    assert.equal(m, lazy, 'forEach hands the map itself');
    seen.push(`${k}=${v}`);
  });
  assert.deepEqual(seen, [...expected].map(([k, v]) => `${k}=${v}`));
  assert.equal(Object.prototype.toString.call(lazy), '[object Map]');
  assert.throws(() => lazy.set(), TypeError);
  assert.throws(() => lazy.delete(), TypeError);
  assert.throws(() => lazy.clear(), TypeError);
  assert.equal(lazy.get('a'), 'x=1', 'unchanged after refused writes');
});

test('LazyRecordProperties decodes the record once, on the first read', () => {
  const record = encodeRecord(makeMessage({ properties: { UNIQ_KEY: 'U2' } }));
  const lazy = new LazyRecordProperties(record);
  record.fill(0, 4, 8); // bad magic: construction did not decode, the first read does and fails
  assert.throws(() => lazy.get('UNIQ_KEY'));
  const bytes = encodeRecord(makeMessage({ properties: { UNIQ_KEY: 'U3' } }));
  const again = new LazyRecordProperties(bytes);
  assert.equal(again.get('UNIQ_KEY'), 'U3');
  bytes.fill(0); // decoded once: later reads do not touch the record
  assert.equal(again.get('UNIQ_KEY'), 'U3');
  assert.equal(again.has('UNIQ_KEY'), true);
});
