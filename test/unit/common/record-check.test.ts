import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkRecord,
  encodeRecord,
  patchRecord,
  writeBlankRecord,
  type RecordCheck,
} from '../../../src/common/message/record-codec.js';
import { javaStringHashCode } from '../../../src/common/message/java-hash.js';
import { fooBarMessage, ipv6Message } from './record-fixtures.js';

const DELAY_TABLE_MS = [1, 5, 10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200].map((s) => s * 1000);

/** A 158-byte FooBar record patched for position `at`. */
function record(at = 0, overrides = {}): Buffer {
  const b = encodeRecord(fooBarMessage(overrides));
  patchRecord(b, 0, 0, at, 1700000000000);
  return b;
}

function reasonOf(r: RecordCheck): string {
  assert.equal(r.kind, 'invalid');
  return r.kind === 'invalid' ? r.reason : '';
}

test('valid record gives its size and a complete DispatchRequest', () => {
  const b = encodeRecord(fooBarMessage({
    queueId: 2,
    properties: new Map([['KEYS', 'k1 k2'], ['TAGS', 'TagA'], ['UNIQ_KEY', 'ABCDEF']]),
    sysFlag: 0x8,
    preparedTransactionOffset: 777,
  }));
  patchRecord(b, 0, 12, 4096, 1700000000500);
  const r = checkRecord(b, 0, b.length, { checkCrc: true, expectedPhysicalOffset: 4096 });
  assert.equal(r.kind, 'valid');
  if (r.kind !== 'valid') return;
  assert.equal(r.size, b.length);
  assert.deepEqual(r.dispatch, {
    topic: 'FooBar',
    queueId: 2,
    commitLogOffset: 4096,
    msgSize: b.length,
    tagsCode: 2598919,
    storeTimestamp: 1700000000500,
    consumeQueueOffset: 12,
    keys: 'k1 k2',
    uniqKey: 'ABCDEF',
    sysFlag: 0x8,
    preparedTransactionOffset: 777,
    properties: new Map([['KEYS', 'k1 k2'], ['TAGS', 'TagA'], ['UNIQ_KEY', 'ABCDEF']]),
    bornTimestamp: 1700000000000,
  });
});

test('no KEYS/UNIQ_KEY/TAGS: keys "", uniqKey null, tagsCode 0', () => {
  const b = record(0, { properties: new Map() });
  const r = checkRecord(b, 0, b.length, { checkCrc: false });
  assert.equal(r.kind, 'valid');
  if (r.kind === 'valid') {
    assert.equal(r.dispatch.keys, '');
    assert.equal(r.dispatch.uniqKey, null);
    assert.equal(r.dispatch.tagsCode, 0);
  }
});

test('torn size field: 4 bytes or fewer left', () => {
  const b = record();
  for (const n of [0, 1, 3, 4]) assert.match(reasonOf(checkRecord(b, 0, n, { checkCrc: true })), /torn record: only \d bytes left/);
  assert.match(reasonOf(checkRecord(b, 156, 10, { checkCrc: true })), /torn record: only 2 bytes left/);
});

test('torn header, body and properties: fewer than TOTALSIZE bytes available', () => {
  const b = record();
  assert.match(reasonOf(checkRecord(b, 0, 50, { checkCrc: true })), /torn record: TOTALSIZE 158 but only 50 bytes available/);
  assert.match(reasonOf(checkRecord(b, 0, 100, { checkCrc: true })), /torn record: TOTALSIZE 158 but only 100 bytes available/);
  assert.match(reasonOf(checkRecord(b, 0, 150, { checkCrc: true })), /torn record: TOTALSIZE 158 but only 150 bytes available/);
  // every cut is rejected, with and without the CRC check; a buffer that ends early counts as a cut
  for (let n = 0; n < b.length; n++) {
    assert.equal(checkRecord(b, 0, n, { checkCrc: false }).kind, 'invalid', `cut at ${n}`);
    assert.equal(checkRecord(b.subarray(0, n), 0, 1000, { checkCrc: true }).kind, 'invalid', `buffer cut at ${n}`);
  }
  assert.equal(checkRecord(b, 0, b.length, { checkCrc: true }).kind, 'valid');
});

test('flipped body bit fails the CRC check (and only the CRC check)', () => {
  const b = record();
  b[88 + 5] ^= 0x10;
  assert.match(reasonOf(checkRecord(b, 0, b.length, { checkCrc: true })), /body CRC mismatch: stored 151131488/);
  assert.equal(checkRecord(b, 0, b.length, { checkCrc: false }).kind, 'valid');
});

test('B08 body whose CRC is 0 is accepted by checkRecord with the CRC check on', () => {
  const zeroCrcBody = Buffer.concat([Buffer.from('hello'), Buffer.from([0x1b, 0xac, 0xc9, 0x5b])]);
  const parts = [fooBarMessage(), fooBarMessage({ body: zeroCrcBody }), fooBarMessage()].map((m) => encodeRecord(m));
  let pos = 0;
  for (const p of parts) {
    patchRecord(p, 0, 0, pos, 1700000000000);
    pos += p.length;
  }
  const log = Buffer.concat(parts);
  assert.equal(parts[1]!.readInt32BE(8), 0); // stored BODYCRC is 0
  let at = 0;
  let n = 0;
  while (at < log.length) {
    const r = checkRecord(log, at, log.length - at, { checkCrc: true, expectedPhysicalOffset: at });
    assert.equal(r.kind, 'valid', `record ${n} at ${at}: ${JSON.stringify(r)}`);
    at += r.kind === 'valid' ? r.size : 1;
    n++;
  }
  assert.equal(n, 3);
  assert.equal(at, log.length);
  // a stored 0 is still compared: a body whose CRC is not 0 with BODYCRC 0 is rejected
  const forged = record();
  forged.writeInt32BE(0, 8);
  assert.match(reasonOf(checkRecord(forged, 0, forged.length, { checkCrc: true })), /body CRC mismatch: stored 0, computed 151131488/);
});

test('wrong stored physical offset is rejected when an expected offset is given', () => {
  const b = record(158);
  assert.match(reasonOf(checkRecord(b, 0, b.length, { checkCrc: true, expectedPhysicalOffset: 0 })), /PHYSICALOFFSET 158 differs from the record's position 0/);
  assert.equal(checkRecord(b, 0, b.length, { checkCrc: true, expectedPhysicalOffset: 158 }).kind, 'valid');
  assert.equal(checkRecord(b, 0, b.length, { checkCrc: true }).kind, 'valid');
});

test('bad magic is rejected; zero-filled space is rejected', () => {
  const b = record();
  b.writeInt32BE(0x12345678, 4);
  assert.match(reasonOf(checkRecord(b, 0, b.length, { checkCrc: false })), /bad magic code 0x12345678/);
  const zeros = Buffer.alloc(256);
  assert.match(reasonOf(checkRecord(zeros, 0, 256, { checkCrc: false })), /TOTALSIZE 0 is below the minimum record size \(zero-filled space\)/);
  const neg = record();
  neg.writeInt32BE(-5, 0);
  assert.match(reasonOf(checkRecord(neg, 0, neg.length, { checkCrc: false })), /TOTALSIZE -5 is below/);
});

test('TOTALSIZE mismatch with the parsed lengths is rejected', () => {
  const extra = Buffer.concat([record(), Buffer.alloc(8)]);
  extra.writeInt32BE(160, 0);
  assert.match(reasonOf(checkRecord(extra, 0, extra.length, { checkCrc: false })), /TOTALSIZE mismatch: field says 160, fields add up to 158/);
  const short = record();
  short.writeInt32BE(157, 0);
  assert.match(reasonOf(checkRecord(short, 0, short.length, { checkCrc: false })), /properties length 29 does not fit/);
  const tiny = record();
  tiny.writeInt32BE(90, 0);
  assert.match(reasonOf(checkRecord(tiny, 0, tiny.length, { checkCrc: false })), /TOTALSIZE 90 is below the minimum record size 91/);
  const v6 = encodeRecord(ipv6Message());
  v6.writeInt32BE(100, 0); // ≥ 91 but below the 115-byte header of two IPv6 hosts
  assert.match(reasonOf(checkRecord(v6, 0, v6.length, { checkCrc: false })), /below the 115-byte header/);
});

test('corrupt length fields are rejected, never read out of bounds', () => {
  const body = record();
  body.writeInt32BE(-1, 84);
  assert.match(reasonOf(checkRecord(body, 0, body.length, { checkCrc: false })), /body length -1 does not fit/);
  body.writeInt32BE(0x7fffffff, 84);
  assert.match(reasonOf(checkRecord(body, 0, body.length, { checkCrc: false })), /body length 2147483647 does not fit/);
  const topic = record();
  topic[120] = 0xff; // V1 topic length is a signed byte: -1
  assert.match(reasonOf(checkRecord(topic, 0, topic.length, { checkCrc: false })), /topic length -1 does not fit/);
  topic[120] = 100;
  assert.match(reasonOf(checkRecord(topic, 0, topic.length, { checkCrc: false })), /topic length 100 does not fit/);
  const props = record();
  props.writeInt16BE(-2, 127);
  assert.match(reasonOf(checkRecord(props, 0, props.length, { checkCrc: false })), /properties length -2 does not fit/);
});

test('blank record is detected with its TOTALSIZE', () => {
  const b = Buffer.alloc(300);
  writeBlankRecord(b, 100, 200);
  assert.deepEqual(checkRecord(b, 100, 200, { checkCrc: true }), { kind: 'blank', size: 200 });
  assert.equal(checkRecord(b, 100, 199, { checkCrc: true }).kind, 'invalid'); // torn filler
});

test('schedule topic with DELAY: tags code is the deliver time', () => {
  const sched = (delay: string | undefined, tags = 'TagA') => {
    const props = new Map([['TAGS', tags]]);
    if (delay !== undefined) props.set('DELAY', delay);
    return record(0, { topic: 'SCHEDULE_TOPIC_XXXX', properties: props });
  };
  const tags = (b: Buffer, table?: number[]) => {
    const r = checkRecord(b, 0, b.length, table ? { checkCrc: true, delayLevelTableMs: table } : { checkCrc: true });
    assert.equal(r.kind, 'valid');
    return r.kind === 'valid' ? r.dispatch.tagsCode : NaN;
  };
  assert.equal(tags(sched('3'), DELAY_TABLE_MS), 1700000000000 + 10000);
  assert.equal(tags(sched('18'), DELAY_TABLE_MS), 1700000000000 + 7200000);
  assert.equal(tags(sched('99'), DELAY_TABLE_MS), 1700000000000 + 7200000); // clamped to the max level
  assert.equal(tags(sched('3')), 1700000000000 + 1000); // no table: unknown level
  assert.equal(tags(sched('0'), DELAY_TABLE_MS), 2598919); // level 0: TAGS hash
  assert.equal(tags(sched('-2'), DELAY_TABLE_MS), 2598919);
  assert.equal(tags(sched('abc'), DELAY_TABLE_MS), 2598919); // non-numeric: ignored, record kept
  assert.equal(tags(sched(undefined), DELAY_TABLE_MS), 2598919);
  const normal = record(0, { properties: new Map([['TAGS', 'TagA'], ['DELAY', '3']]) });
  assert.equal(tags(normal, DELAY_TABLE_MS), 2598919); // only the schedule topic
});

test('tags "Aa" and "BB" give the same tags code 2112', () => {
  for (const t of ['Aa', 'BB']) {
    const b = record(0, { properties: new Map([['TAGS', t]]) });
    const r = checkRecord(b, 0, b.length, { checkCrc: true });
    assert.equal(r.kind === 'valid' && r.dispatch.tagsCode, 2112);
  }
  assert.equal(javaStringHashCode('Aa'), javaStringHashCode('BB'));
});

test('checkRecord never throws: random bytes and random corruption of valid records', () => {
  let seed = 12345;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const valid = Buffer.concat([record(0), encodeRecord(ipv6Message())]);
  for (let i = 0; i < 5000; i++) {
    const b = Buffer.from(valid);
    const flips = 1 + Math.floor(rand() * 4);
    for (let f = 0; f < flips; f++) b[Math.floor(rand() * b.length)] = Math.floor(rand() * 256);
    const at = rand() < 0.5 ? 0 : Math.floor(rand() * b.length);
    const avail = Math.floor(rand() * (b.length + 10));
    const r = checkRecord(b, at, avail, { checkCrc: rand() < 0.5, expectedPhysicalOffset: rand() < 0.5 ? 0 : undefined, delayLevelTableMs: DELAY_TABLE_MS });
    assert.ok(r.kind === 'valid' || r.kind === 'blank' || r.kind === 'invalid');
    if (r.kind !== 'invalid') assert.ok(r.size >= 8 && r.size <= Math.min(avail, b.length - at));
  }
  for (const at of [-1, Number.NaN, 1e9]) assert.equal(checkRecord(valid, at, 100, { checkCrc: true }).kind, 'invalid');
});
