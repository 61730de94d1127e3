import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchDecodeError, BatchPropertyCompletion, completeBatchItemProperties, decodeBatchBody, encodeBatchBody, type BatchItem } from '../../../src/common/message/batch-codec.js';
import { decodeProperties, encodeProperties } from '../../../src/common/message/properties.js';

const items = [
  { flag: 0, body: Buffer.from('first'), properties: new Map([['KEYS', 'k1'], ['TAGS', 'a']]) },
  { flag: 7, body: Buffer.alloc(0), properties: new Map<string, string>() },
  { flag: -1, body: Buffer.from([0, 1, 2, 255]), properties: new Map([['UNIQ_KEY', 'X'.repeat(32)]]) },
];
/** What decodeBatchBody returns for `items`: each with the properties text it was sent with. */
const decoded = items.map((it) => ({ ...it, propertiesText: encodeProperties(it.properties) }));

test('batch body round-trips', () => {
  const body = encodeBatchBody(items);
  assert.equal(body.readInt32BE(0), 22 + 5 + 'KEYS\x01k1\x02TAGS\x01a\x02'.length);
  assert.equal(body.readInt32BE(4), 0); // MAGIC written as 0 by clients
  assert.equal(body.readInt32BE(8), 0); // BODYCRC written as 0 by clients
  assert.deepEqual(decodeBatchBody(body), decoded);
  assert.deepEqual(decodeBatchBody(Buffer.alloc(0)), []);
});

test('batch decode copies bodies by default and returns views into the body with copyBodies: false', () => {
  const body = encodeBatchBody(items);
  const copied = decodeBatchBody(body);
  const viewed = decodeBatchBody(body, { copyBodies: false });
  assert.deepEqual(viewed, decoded);
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

/** The broker's completion before completeBatchItemProperties: the batch's missing entries, then CLUSTER set, then the Map encoded. */
function completedTheMapWay(text: string, batchProps: Map<string, string>): string {
  const props = decodeProperties(text);
  batchProps.forEach((v, k) => {
    if (!props.has(k)) props.set(k, v);
  });
  props.set('CLUSTER', 'DefaultCluster');
  return encodeProperties(props);
}

test('completeBatchItemProperties stores exactly what encoding the completed Map gives, reusing the sent text when it is canonical', () => {
  const batches = [new Map<string, string>(), new Map([['WAIT', 'true']]), new Map([['WAIT', 'false'], ['CLUSTER', 'fromBatch'], ['X', 'y']])];
  const texts = [
    '',
    'TAGS\x01TagA\x02UNIQ_KEY\x01ABC\x02WAIT\x01true\x02',
    'TAGS\x01a\x02', // lacks WAIT: the batch's is appended
    'KEYS\x01k1 k2\x02CLUSTER\x01mine\x02', // the item's CLUSTER is replaced in place
    'A\x01v\x01w\x02', // a value holding \x01
    'A\x011\x02A\x012\x02', // duplicate key: the Map keeps one entry
    'A\x011\x02\x02B\x012\x02', // an empty piece, dropped by the decoder
    'A\x011\x02BAD\x02', // a piece without \x01
    'A\x011', // no trailing separator
    'TAGS\x01TagA\x02WAIT\x01true\x02UNIQ_KEY\x01ABC', // as Apache's Java client 4.9.8 sends an item: no last separator
    'A\x011\x02A\x012', // duplicate key, no last separator
    'A\x011\x02BAD', // a last piece without \x01
    'A\x011\x02B\x01', // a last piece with an empty value (dropped by the decoder)
    'A\x011\x02\x02B\x012', // an empty piece, no last separator
    'CLUSTER\x01mine', // the item's CLUSTER, no last separator
    'ü\x01ß\x02', // non-ASCII
  ];
  for (const batchProps of batches) {
    for (const text of texts) {
      const item: BatchItem = { flag: 0, body: Buffer.alloc(0), properties: decodeProperties(text), propertiesText: text };
      const stored = completeBatchItemProperties(item, batchProps, 'CLUSTER', 'DefaultCluster');
      const expected = completedTheMapWay(text, batchProps);
      assert.equal(stored, expected, `item ${JSON.stringify(text)} with batch ${JSON.stringify([...batchProps])}`);
      assert.equal(encodeProperties(item.properties), expected, 'the Map is completed in place too');
    }
  }
  // the common case keeps the client's text and appends only what the broker adds
  const item: BatchItem = { flag: 0, body: Buffer.alloc(0), properties: decodeProperties('TAGS\x01a\x02WAIT\x01true\x02'), propertiesText: 'TAGS\x01a\x02WAIT\x01true\x02' };
  assert.equal(completeBatchItemProperties(item, new Map([['WAIT', 'true']]), 'CLUSTER', 'c1'), 'TAGS\x01a\x02WAIT\x01true\x02CLUSTER\x01c1\x02');
  // without the sent text (an item built in memory) the Map is encoded
  const built: BatchItem = { flag: 0, body: Buffer.alloc(0), properties: new Map([['TAGS', 'b']]) };
  assert.equal(completeBatchItemProperties(built, new Map(), 'CLUSTER', 'c1'), 'TAGS\x01b\x02CLUSTER\x01c1\x02');
});

test('BatchPropertyCompletion: one per batch gives every item the same text as completeBatchItemProperties, as the sent text + a tail', () => {
  const batchProps = new Map([['WAIT', 'false'], ['X', 'y']]);
  const completion = new BatchPropertyCompletion(batchProps, 'CLUSTER', 'DefaultCluster');
  batchProps.set('LATER', 'ignored'); // a snapshot: the batch's entries were read at construction
  const texts = ['TAGS\x01a\x02WAIT\x01true\x02X\x01z\x02', 'TAGS\x01a\x02', 'A\x011\x02A\x012\x02', '', 'KEYS\x01k\x02CLUSTER\x01mine\x02', 'TAGS\x01a\x02WAIT\x01true\x02X\x01z', 'TAGS\x01a', 'A\x011\x02A\x012', 'KEYS\x01k\x02CLUSTER\x01mine'];
  for (const text of texts) {
    const a: BatchItem = { flag: 0, body: Buffer.alloc(0), properties: decodeProperties(text), propertiesText: text };
    const b: BatchItem = { flag: 0, body: Buffer.alloc(0), properties: decodeProperties(text), propertiesText: text };
    const head = completion.complete(a);
    const expected = completeBatchItemProperties(b, new Map([['WAIT', 'false'], ['X', 'y']]), 'CLUSTER', 'DefaultCluster');
    assert.equal(head + completion.tail, expected, JSON.stringify(text));
    assert.deepEqual([...a.properties], [...b.properties]);
  }
  // the common case: the head is the client's text itself, the tail the broker's CLUSTER entry
  const sent = 'TAGS\x01a\x02WAIT\x01true\x02X\x01z\x02';
  const item: BatchItem = { flag: 0, body: Buffer.alloc(0), properties: decodeProperties(sent), propertiesText: sent };
  assert.equal(completion.complete(item), sent);
  assert.equal(completion.tail, 'CLUSTER\x01DefaultCluster\x02');
  // an item as Apache's Java client 4.9.8 sends it (no last separator): the head is still the
  // client's text, the tail starts with the separator it lacks
  const sentJava = 'TAGS\x01a\x02WAIT\x01true\x02X\x01z';
  const javaItem: BatchItem = { flag: 0, body: Buffer.alloc(0), properties: decodeProperties(sentJava), propertiesText: sentJava };
  assert.equal(completion.complete(javaItem), sentJava);
  assert.equal(completion.tail, '\x02CLUSTER\x01DefaultCluster\x02');
  const lacking = 'TAGS\x01a';
  const lackingItem: BatchItem = { flag: 0, body: Buffer.alloc(0), properties: decodeProperties(lacking), propertiesText: lacking };
  assert.equal(completion.complete(lackingItem), lacking);
  assert.equal(completion.tail, '\x02WAIT\x01false\x02X\x01y\x02CLUSTER\x01DefaultCluster\x02');
  // a text that is not the Map's encoding is encoded from the Map, with no tail
  const dup = 'A\x011\x02A\x012\x02';
  const dupItem: BatchItem = { flag: 0, body: Buffer.alloc(0), properties: decodeProperties(dup), propertiesText: dup };
  assert.equal(completion.complete(dupItem), 'A\x012\x02WAIT\x01false\x02X\x01y\x02CLUSTER\x01DefaultCluster\x02');
  assert.equal(completion.tail, '');
});
