import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchDecodeError, decodeBatchBody, encodeBatchBody } from '../../../src/common/message/batch-codec.js';

const items = [
  { flag: 0, body: Buffer.from('first'), properties: new Map([['KEYS', 'k1'], ['TAGS', 'a']]) },
  { flag: 7, body: Buffer.alloc(0), properties: new Map<string, string>() },
  { flag: -1, body: Buffer.from([0, 1, 2, 255]), properties: new Map([['UNIQ_KEY', 'X'.repeat(32)]]) },
];

test('batch body round-trips', () => {
  const body = encodeBatchBody(items);
  assert.equal(body.readInt32BE(0), 22 + 5 + 'KEYS\x01k1\x02TAGS\x01a\x02'.length);
  assert.equal(body.readInt32BE(4), 0); // MAGIC written as 0 by clients
  assert.equal(body.readInt32BE(8), 0); // BODYCRC written as 0 by clients
  assert.deepEqual(decodeBatchBody(body), items);
  assert.deepEqual(decodeBatchBody(Buffer.alloc(0)), []);
});

test('batch decode copies bodies by default and returns views into the body with copyBodies: false', () => {
  const body = encodeBatchBody(items);
  const copied = decodeBatchBody(body);
  const viewed = decodeBatchBody(body, { copyBodies: false });
  assert.deepEqual(viewed, items);
  const firstBodyAt = 20; // item 0's body follows its 20-byte header
  assert.equal(viewed[0]!.body.buffer, body.buffer);
  assert.equal(viewed[0]!.body.byteOffset, body.byteOffset + firstBodyAt);
  body[firstBodyAt] = 'F'.charCodeAt(0);
  assert.equal(viewed[0]!.body.toString(), 'First');
  assert.equal(copied[0]!.body.toString(), 'first');
  assert.notEqual(viewed[0]!.properties, viewed[1]!.properties);
});

test('batch decode rejects torn and inconsistent items', () => {
  const body = encodeBatchBody(items);
  for (let cut = 1; cut < body.length; cut++) {
    const isBoundary = cut === body.readInt32BE(0) || cut === body.readInt32BE(0) + 22;
    if (isBoundary) continue;
    assert.throws(() => decodeBatchBody(body.subarray(0, cut)), BatchDecodeError, `cut at ${cut}`);
  }
  const badTotal = Buffer.from(body);
  badTotal.writeInt32BE(10, 0);
  assert.throws(() => decodeBatchBody(badTotal), /batch item 0 at byte 0 has TOTALSIZE 10/);
  const badBody = Buffer.from(body);
  badBody.writeInt32BE(1000, 16);
  assert.throws(() => decodeBatchBody(badBody), /body length 1000 does not fit/);
  const badProps = Buffer.from(body);
  badProps.writeInt16BE(3, 25);
  assert.throws(() => decodeBatchBody(badProps), /properties length 3 with body 5 does not add up/);
  assert.throws(() => decodeBatchBody(Buffer.concat([body, Buffer.alloc(5)])), /batch item 3 at byte \d+ is torn: 5 bytes left/);
  try {
    decodeBatchBody(badTotal);
  } catch (e) {
    assert.equal((e as BatchDecodeError).code, 'MESSAGE_ILLEGAL');
  }
});
