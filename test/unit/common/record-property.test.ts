import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRecord, encodeRecord } from '../../../src/common/message/record-codec.js';
import { readRecordProperty } from '../../../src/common/message/record-property.js';
import { fooBarMessage, ipv6Message } from './record-fixtures.js';

/** decodeRecord's answer, null where it throws. */
function decoded(buf: Buffer, name: string): string | undefined | null {
  try {
    return decodeRecord(buf, 0, { readBody: false }).properties.get(name);
  } catch {
    return null;
  }
}

describe('readRecordProperty (a property from the record bytes, no decode)', () => {
  const texts = [
    'KEYS\u00011700000000123\u0002TAGS\u0001TAG1\u0002',
    'TAGS\u0001TagA\u0002',
    'TAGS\u0001first\u0002KEYS\u0001k\u0002TAGS\u0001second\u0002', // the last one wins
    'TAGS\u0001\u0002KEYS\u0001k\u0002', // empty value: not a property
    'TAGS\u0001ok\u0002TAGS\u0001\u0002', // a later empty one does not undo the earlier
    'TAGSX\u0001no\u0002XTAGS\u0001no\u0002', // other keys that contain the name
    'TAGS\u0001a\u0001b\u0002', // the value may contain \u0001
    'TAGS\u0001标签-ü\u0002UNIQ_KEY\u0001ABC\u0002', // UTF-8
    'TA\u0001GS\u0001x\u0002', // key "TA"
    '\u0001TAGS\u0002TAGS', // no valid piece
    'TAGS\u0001last-without-terminator',
    '',
  ];
  for (const [i, text] of texts.entries()) {
    for (const version of [1, 2] as const) {
      for (const make of [fooBarMessage, ipv6Message]) {
        it(`same answer as decodeRecord: properties #${i} ${JSON.stringify(text)}, magic v${version}, ${make === ipv6Message ? 'IPv6' : 'IPv4'} hosts`, () => {
          const rec = encodeRecord(make({ properties: new Map(), encodedProperties: text, topic: version === 2 ? 'T'.repeat(200) : 'FooBar' }), { version });
          for (const name of ['TAGS', 'KEYS', 'UNIQ_KEY', 'TA']) {
            const want = decoded(rec, name);
            assert.notEqual(want, null, 'a well-formed record');
            assert.equal(readRecordProperty(rec, 0, name), want, name);
          }
          // the record inside a bigger buffer (a pull body), at an offset
          const body = Buffer.concat([encodeRecord(fooBarMessage()), rec, encodeRecord(fooBarMessage())]);
          const at = body.length - rec.length - encodeRecord(fooBarMessage()).length;
          assert.equal(readRecordProperty(body, at, 'TAGS'), decoded(rec, 'TAGS'));
        });
      }
    }
  }

  it('null where decodeRecord throws: bad magic, a blank filler, a short buffer, lengths that do not add up, torn properties', () => {
    const good = encodeRecord(fooBarMessage());
    assert.equal(readRecordProperty(good, 0, 'TAGS'), 'TAG1');
    const badMagic = Buffer.from(good);
    badMagic.writeInt32BE(0x12345678, 4);
    const blank = Buffer.alloc(64);
    blank.writeInt32BE(64, 0);
    blank.writeInt32BE(-875286124, 4);
    const short = good.subarray(0, good.length - 1);
    const badLen = Buffer.from(good);
    badLen.writeInt32BE(good.length - 1, 0);
    const torn = Buffer.from(good);
    torn[good.length - 1] = 0;
    for (const [what, buf] of [['bad magic', badMagic], ['blank', blank], ['short', short], ['TOTALSIZE mismatch', badLen], ['torn properties', torn]] as const) {
      assert.equal(decoded(buf, 'TAGS'), null, `${what}: decodeRecord throws`);
      assert.equal(readRecordProperty(buf, 0, 'TAGS'), null, what);
    }
  });
});

describe('tag filter on pulled records (createTagMessageFilter, TAGS read from the bytes)', () => {
  it('"Aa" and "BB" share a tags code: the ConsumeQueue stage lets both through, the record stage keeps only the subscribed tag; an unreadable record is let through', async () => {
    const { buildSubscriptionData, createTagMessageFilter } = await import('../../../src/broker/filter/subscription-data.js');
    const { tagsCode } = await import('../../../src/common/message/java-hash.js');
    const filter = createTagMessageFilter(buildSubscriptionData('FooBar', 'Aa || Cc'))!;
    const rec = (tag: string | null): Buffer => encodeRecord(fooBarMessage({ properties: new Map(tag === null ? [['KEYS', 'k']] : [['KEYS', 'k'], ['TAGS', tag]]) }));
    assert.equal(filter.isMatchedByConsumeQueue(tagsCode('BB')), true, 'hash collision passes the CQ stage');
    assert.equal(filter.isMatchedByCommitLog!(rec('BB')), false);
    assert.equal(filter.isMatchedByCommitLog!(rec('Aa')), true);
    assert.equal(filter.isMatchedByCommitLog!(rec('Cc')), true);
    assert.equal(filter.isMatchedByCommitLog!(rec(null)), false, 'no TAGS: not subscribed');
    const broken = rec('BB');
    broken.writeInt32BE(0x01020304, 4);
    assert.equal(filter.isMatchedByCommitLog!(broken), true, 'unreadable: the client decides');
  });
});
