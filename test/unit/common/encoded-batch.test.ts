/**
 * The byte path of a batch send (encoded-batch.ts) against the general path it replaces
 * (decodeBatchBody + BatchPropertyCompletion + planRecord/writeRecord per item): for random
 * batches the records must be byte for byte the same, and the scan must read the same TAGS,
 * KEYS, UNIQ_KEY and WAIT as the completed Maps hold.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BatchPropertyCompletion, decodeBatchBody } from '../../../src/common/message/batch-codec.js';
import { EncodedBatchItemProperties, encodedBatchPropertiesText, planEncodedBatch, scanEncodedBatch, writeEncodedBatchRecord, type EncodedBatch } from '../../../src/common/message/encoded-batch.js';
import { planRecord, writeRecord } from '../../../src/common/message/record-codec.js';
import type { MessageInner, SocketAddress } from '../../../src/common/message/message.js';
import { MessageConst } from '../../../src/common/message/message-const.js';
import { MessageSysFlag } from '../../../src/common/message/sysflag.js';
import { encodeProperties } from '../../../src/common/message/properties.js';

const CLUSTER_NAME = 'DefaultCluster';

interface Shared {
  topic: string;
  queueId: number;
  sysFlag: number;
  bornTimestamp: number;
  bornHost: SocketAddress;
  storeHost: SocketAddress;
}

/** One item as a client writes it: header, body, properties text (raw bytes, possibly without the last separator). */
function itemBytes(flag: number, body: Buffer, props: Buffer): Buffer {
  const b = Buffer.alloc(22 + body.length + props.length);
  b.writeInt32BE(b.length, 0);
  b.writeInt32BE(flag, 12);
  b.writeInt32BE(body.length, 16);
  body.copy(b, 20);
  b.writeInt16BE(props.length, 20 + body.length);
  props.copy(b, 22 + body.length);
  return b;
}

/** The records of the general path, back to back, and its completed Maps. */
function generalRecords(frame: Buffer, batchProps: string, s: Shared, qo: number, phys: number, ts: number): { bytes: Buffer; maps: Map<string, string>[] } {
  const items = decodeBatchBody(frame, { copyBodies: false });
  const completion = new BatchPropertyCompletion(new Map(decodePropertiesOf(batchProps)), MessageConst.CLUSTER, CLUSTER_NAME);
  const parts: Buffer[] = [];
  let pos = phys;
  items.forEach((item, k) => {
    const encodedProperties = completion.complete(item);
    const msg: MessageInner = {
      topic: s.topic,
      queueId: s.queueId,
      flag: item.flag,
      body: item.body,
      properties: item.properties,
      sysFlag: s.sysFlag,
      bornTimestamp: s.bornTimestamp,
      bornHost: s.bornHost,
      storeHost: s.storeHost,
      reconsumeTimes: 0,
      preparedTransactionOffset: 0,
      encodedProperties,
      encodedPropertiesTail: completion.tail,
    };
    const plan = planRecord(msg);
    const b = Buffer.alloc(plan.size);
    writeRecord(b, 0, plan, qo + k, pos, ts);
    pos += plan.size;
    parts.push(b);
  });
  return { bytes: Buffer.concat(parts), maps: items.map((i) => i.properties) };
}

function decodePropertiesOf(text: string): [string, string][] {
  return [...decodeBatchBody(itemBytes(0, Buffer.alloc(0), Buffer.from(text, 'utf8')))[0]!.properties];
}

function encodedRecords(batch: EncodedBatch, qo: number, phys: number, ts: number): Buffer {
  const plan = planEncodedBatch(batch, 4 * 1024 * 1024, 1 << 30);
  assert.ok(!('status' in plan), JSON.stringify(plan));
  const out = Buffer.alloc(plan.total);
  let pos = 0;
  for (let k = 0; k < batch.count; k++) {
    writeEncodedBatchRecord(out, new DataView(out.buffer, out.byteOffset, out.length), pos, batch, plan, k, qo + k, phys + pos, ts);
    pos += plan.sizes[k]!;
  }
  return out;
}

// keys and values: ASCII, multi-byte (2, 3 and 4 UTF-8 bytes) and the keys the scan watches
const text = fc.string({ unit: fc.constantFrom('a', 'Z', '0', '_', '-', '\u00e9', '\u4e2d', '\u{1F600}', ' '), minLength: 1, maxLength: 12 });
const key = fc.oneof(text, fc.constantFrom(MessageConst.TAGS, MessageConst.KEYS, MessageConst.UNIQ_KEY, MessageConst.WAIT, 'userKey'));
const props = fc.uniqueArray(fc.tuple(key, text), { maxLength: 5, selector: ([k]) => k });
const item = fc.record({ flag: fc.integer(), body: fc.uint8Array({ maxLength: 300 }), props, dropLastSeparator: fc.boolean() });
const shared = fc.record({
  topic: fc.string({ unit: fc.constantFrom('T', 'o', 'p', '_', '1'), minLength: 1, maxLength: 140 }),
  queueId: fc.nat(64),
  sysFlag: fc.constantFrom(0, MessageSysFlag.MULTI_TAGS_FLAG),
  bornTimestamp: fc.nat(2 ** 45),
  bornHost: fc.oneof(fc.constant(4), fc.constant(16)).map((n) => ({ ip: Buffer.alloc(n, 7), port: 10911 })),
  storeHost: fc.oneof(fc.constant(4), fc.constant(16)).map((n) => ({ ip: Buffer.alloc(n, 9), port: 10911 })),
});

function frameOf(items: { flag: number; body: Uint8Array; props: [string, string][]; dropLastSeparator: boolean }[]): Buffer {
  return Buffer.concat(
    items.map((it) => {
      let t = encodeProperties(new Map(it.props));
      if (it.dropLastSeparator && t.length > 0) t = t.slice(0, -1);
      return itemBytes(it.flag, Buffer.from(it.body), Buffer.from(t, 'utf8'));
    }),
  );
}

test('the byte path stores exactly the bytes of the general path for random batches (multi-byte properties, batch properties, both host widths, V2 topics)', () => {
  fc.assert(
    fc.property(fc.array(item, { minLength: 1, maxLength: 12 }), props, shared, fc.nat(1e9), fc.nat(2 ** 40), (items, batchProps, s, qo, phys) => {
      const frame = frameOf(items);
      const batchText = encodeProperties(new Map(batchProps));
      const batch = scanEncodedBatch(frame, batchText, MessageConst.CLUSTER, CLUSTER_NAME);
      assert.ok(batch !== null, 'a canonical batch without unusual keys is taken');
      Object.assign(batch, s);
      const ts = 1_700_000_000_000;
      const general = generalRecords(frame, batchText, s, qo, phys, ts);
      assert.deepEqual(encodedRecords(batch, qo, phys, ts), general.bytes);
      general.maps.forEach((m, k) => {
        assert.equal(batch.tags[k], m.get(MessageConst.TAGS));
        assert.equal(batch.keys[k], m.get(MessageConst.KEYS) ?? '');
        assert.equal(batch.uniqKey[k], m.get(MessageConst.UNIQ_KEY) ?? null);
        assert.equal(encodedBatchPropertiesText(batch, k), encodeProperties(m));
        assert.deepEqual(new Map(new EncodedBatchItemProperties(batch, k)), m);
      });
      assert.equal(batch.waitStoreMsgOK, general.maps[0]!.get(MessageConst.WAIT) !== 'false');
    }),
    { numRuns: 300 },
  );
});

test('the scan leaves unusual and non-canonical batches to the general path', () => {
  const ok = (p: string) => itemBytes(0, Buffer.from('b'), Buffer.from(p, 'utf8'));
  const scan = (frame: Buffer, batchText = '') => scanEncodedBatch(frame, batchText, MessageConst.CLUSTER, CLUSTER_NAME);
  assert.notEqual(scan(ok('TAGS\x01a\x02')), null);
  for (const k of [MessageConst.DELAY, MessageConst.TIMER_DELIVER_MS, MessageConst.TIMER_DELAY_SEC, MessageConst.TIMER_DELAY_MS, MessageConst.TIMER_OUT_MS, MessageConst.TRAN_MSG, MessageConst.SHARDING_KEY, MessageConst.CLUSTER, '__STARTDELIVERTIME']) {
    assert.equal(scan(ok(`TAGS\x01a\x02${k}\x011\x02`)), null, `item with ${k}`);
    assert.equal(scan(ok('TAGS\x01a\x02'), `${k}\x011\x02`), null, `batch with ${k}`);
  }
  assert.equal(scan(ok('TAGS\x01a\x02TAGS\x01b\x02')), null, 'repeated key');
  assert.equal(scan(ok('TAGS\x01\x02')), null, 'empty value');
  assert.equal(scan(ok('\x01a\x02')), null, 'empty key');
  assert.equal(scan(ok('TAGS\x01a\x02\x02')), null, 'empty piece');
  assert.equal(scan(ok('TAGSa')), null, 'no separator');
  const whole = Buffer.concat([ok('TAGS\x01a'), ok('KEYS\x01k')]);
  for (let cut = 1; cut < whole.length; cut++) if (cut !== whole.length / 2) assert.equal(scan(whole.subarray(0, cut)), null, `torn at ${cut}`);
  const invalidUtf8 = itemBytes(0, Buffer.from('b'), Buffer.concat([Buffer.from('TAGS\x01', 'latin1'), Buffer.from([0xc3, 0x28])]));
  assert.equal(scan(invalidUtf8), null, 'invalid UTF-8');
  assert.equal(scan(Buffer.alloc(0)), null, 'no item');
});

test('batches whose headers share their keys but not their values: an item lacking a batch key stores this batch\'s value', () => {
  const frame = itemBytes(0, Buffer.from('b'), Buffer.from('TAGS\x01a', 'utf8'));
  for (const uniq of ['U1', 'U2', 'U1']) {
    const batch = scanEncodedBatch(frame, `WAIT\x01false\x02UNIQ_KEY\x01${uniq}\x02`, MessageConst.CLUSTER, CLUSTER_NAME)!;
    assert.equal(encodedBatchPropertiesText(batch, 0), `TAGS\x01a\x02WAIT\x01false\x02UNIQ_KEY\x01${uniq}\x02CLUSTER\x01${CLUSTER_NAME}\x02`);
    assert.equal(batch.uniqKey[0], uniq);
    assert.equal(batch.waitStoreMsgOK, false);
  }
  const other = scanEncodedBatch(frame, '', MessageConst.CLUSTER, 'C2')!;
  assert.equal(encodedBatchPropertiesText(other, 0), 'TAGS\x01a\x02CLUSTER\x01C2\x02');
});

test('whatever properties bytes an item carries, a batch the scan takes is stored as the general path stores it', () => {
  // raw bytes around the separators: empty keys/values, repeated keys, stray \x01, invalid UTF-8, watched and unusual keys
  const piece = fc.oneof(
    fc.constantFrom('TAGS\x01a', 'KEYS\x01k1 k2', 'UNIQ_KEY\x01U', 'WAIT\x01false', 'DELAY\x013', 'CLUSTER\x01x', 'a\x01b\x01c', '\x01v', 'k\x01', '', 'k'),
    text.map((t) => `${t}\x01${t}`),
  );
  const raw = fc.oneof(
    fc.array(piece, { maxLength: 5 }).map((ps) => Buffer.from(ps.join('\x02'), 'utf8')),
    fc.uint8Array({ maxLength: 40 }).map((u) => Buffer.from(u)),
    fc.tuple(fc.array(piece, { maxLength: 3 }), fc.uint8Array({ minLength: 1, maxLength: 4 })).map(([ps, junk]) => Buffer.concat([Buffer.from(ps.join('\x02'), 'utf8'), Buffer.from(junk)])),
  );
  let taken = 0;
  fc.assert(
    fc.property(fc.array(raw, { minLength: 1, maxLength: 4 }), props, (texts, batchProps) => {
      const frame = Buffer.concat(texts.map((t, i) => itemBytes(i, Buffer.from([i]), t)));
      const batchText = encodeProperties(new Map(batchProps));
      const batch = scanEncodedBatch(frame, batchText, MessageConst.CLUSTER, CLUSTER_NAME);
      if (batch === null) return;
      taken++;
      const s: Shared = { topic: 'T', queueId: 1, sysFlag: 0, bornTimestamp: 1, bornHost: { ip: Buffer.alloc(4, 1), port: 1 }, storeHost: { ip: Buffer.alloc(4, 2), port: 2 } };
      Object.assign(batch, s);
      const general = generalRecords(frame, batchText, s, 0, 0, 5);
      assert.deepEqual(encodedRecords(batch, 0, 0, 5), general.bytes);
      general.maps.forEach((m, k) => {
        assert.equal(batch.tags[k], m.get(MessageConst.TAGS));
        assert.equal(batch.keys[k], m.get(MessageConst.KEYS) ?? '');
        assert.equal(batch.uniqKey[k], m.get(MessageConst.UNIQ_KEY) ?? null);
      });
      assert.equal(batch.waitStoreMsgOK, general.maps[0]!.get(MessageConst.WAIT) !== 'false');
    }),
    { numRuns: 1000 },
  );
  assert.ok(taken > 50, `the scan took ${taken} of 1000 batches`);
});
