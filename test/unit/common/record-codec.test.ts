import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BLANK_MAGIC_CODE,
  checkRecord,
  decodeRecord,
  encodeRecord,
  MESSAGE_MAGIC_CODE_V1,
  MESSAGE_MAGIC_CODE_V2,
  patchRecord,
  readMagic,
  readPhysicalOffset,
  readQueueOffset,
  readRecordTotalSize,
  readStoreTimestamp,
  RecordDecodeError,
  RecordEncodeError,
  recordSize,
  writeBlankRecord,
} from '../../../src/common/message/record-codec.js';
import { MessageSysFlag } from '../../../src/common/message/sysflag.js';
import { socketAddressToString } from '../../../src/common/message/msgid.js';
import { fooBarMessage, ipv6Message } from './record-fixtures.js';

function int32Bytes(v: number): string {
  const b = Buffer.alloc(4);
  b.writeInt32BE(v);
  return b.toString('hex').toUpperCase();
}

test('Appendix B: magic code bytes', () => {
  assert.equal(int32Bytes(MESSAGE_MAGIC_CODE_V1), 'DAA320A7');
  assert.equal(int32Bytes(MESSAGE_MAGIC_CODE_V2), 'DAA320AB');
  assert.equal(int32Bytes(BLANK_MAGIC_CODE), 'CBD43194');
});

test('Appendix B: blank record at a position of a 1 GiB file', () => {
  const fileSize = 1073741824;
  const pos = fileSize - 1000;
  const window = Buffer.alloc(16); // stands for the file bytes at [pos, pos + 16)
  writeBlankRecord(window, 0, fileSize - pos);
  assert.equal(window.subarray(0, 8).toString('hex').toUpperCase(), '000003E8CBD43194');
  assert.equal(window.subarray(8).toString('hex'), '0000000000000000');
  const r = checkRecord(window, 0, 16, { checkCrc: true });
  assert.equal(r.kind, 'invalid'); // TOTALSIZE 1000 > 16 available: the caller passes the rest of the file
  assert.deepEqual(checkRecord(Buffer.concat([window, Buffer.alloc(984)]), 0, 1000, { checkCrc: true }), { kind: 'blank', size: 1000 });
  assert.throws(() => writeBlankRecord(window, 0, 7), RangeError);
  assert.throws(() => writeBlankRecord(window, 9, 100), RangeError);
});

test('Appendix B: fixed overhead 91 (V1) / 92 (V2), IPv6 born+store adds 24', () => {
  assert.equal(recordSize(0, 0, 0, 0, 1), 91);
  assert.equal(recordSize(0, 0, 0, 0, 2), 92);
  const v6 = MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG;
  assert.equal(recordSize(0, 0, 0, v6, 1), 115);
  assert.equal(recordSize(0, 0, 0, v6, 2), 116);
  assert.equal(recordSize(0, 0, 0, MessageSysFlag.BORNHOST_V6_FLAG), 103);
  assert.equal(recordSize(32, 6, 29, 0), 158);
});

test('158-byte FooBar record: layout, CRC and decode round-trip', () => {
  const msg = fooBarMessage({ queueId: 3, flag: 7, reconsumeTimes: 2, preparedTransactionOffset: 99 });
  const buf = encodeRecord(msg);
  assert.equal(buf.length, 158);
  assert.equal(readRecordTotalSize(buf, 0), 158);
  assert.equal(readMagic(buf, 0), MESSAGE_MAGIC_CODE_V1);
  assert.equal(buf.readInt32BE(8), 151131488);
  assert.equal(buf.readInt32BE(12), 3);
  assert.equal(buf.readInt32BE(16), 7);
  assert.equal(readQueueOffset(buf, 0), 0);
  assert.equal(readPhysicalOffset(buf, 0), 0);
  assert.equal(readStoreTimestamp(buf, 0), 0);
  assert.equal(buf.readInt32BE(36), 0);
  assert.equal(buf.readInt32BE(84), 32); // body length
  assert.equal(buf[88 + 32], 6); // topic length byte
  assert.equal(buf.toString('latin1', 89 + 32, 95 + 32), 'FooBar');
  assert.equal(buf.readInt16BE(95 + 32), 29);

  patchRecord(buf, 0, 41, 4096, 1700000000999);
  const m = decodeRecord(buf, 0, { checkCrc: true });
  assert.equal(m.topic, 'FooBar');
  assert.equal(m.queueId, 3);
  assert.equal(m.flag, 7);
  assert.equal(m.body.toString(), 'Once, there was a chance for me!');
  assert.deepEqual(m.properties, msg.properties);
  assert.equal(m.sysFlag, 0);
  assert.equal(m.bornTimestamp, 1700000000000);
  assert.equal(socketAddressToString(m.bornHost), '127.0.0.1:50000');
  assert.equal(socketAddressToString(m.storeHost), '127.0.0.1:10911');
  assert.equal(m.reconsumeTimes, 2);
  assert.equal(m.preparedTransactionOffset, 99);
  assert.equal(m.storeSize, 158);
  assert.equal(m.magicCode, MESSAGE_MAGIC_CODE_V1);
  assert.equal(m.bodyCrc, 151131488);
  assert.equal(m.queueOffset, 41);
  assert.equal(m.commitLogOffset, 4096);
  assert.equal(m.storeTimestamp, 1700000000999);
  assert.equal(m.msgId, '7F00000100002A9F0000000000001000');
  // the decoded body is a copy
  buf[88] ^= 0xff;
  assert.equal(m.body.toString(), 'Once, there was a chance for me!');
});

test('ten 158-byte records back to back end at 1580', () => {
  const parts: Buffer[] = [];
  for (let i = 0; i < 10; i++) {
    const b = encodeRecord(fooBarMessage());
    patchRecord(b, 0, i, i * 158, 1700000001000 + i);
    parts.push(b);
  }
  const log = Buffer.concat([...parts, Buffer.alloc(100)]);
  let pos = 0;
  let count = 0;
  for (;;) {
    const r = checkRecord(log, pos, log.length - pos, { checkCrc: true, expectedPhysicalOffset: pos });
    if (r.kind !== 'valid') {
      assert.equal(r.kind, 'invalid');
      break;
    }
    assert.equal(r.dispatch.consumeQueueOffset, count);
    assert.equal(r.dispatch.storeTimestamp, 1700000001000 + count);
    pos += r.size;
    count++;
  }
  assert.equal(count, 10);
  assert.equal(pos, 1580);
});

test('long int64 fields stay exact above 2^32', () => {
  const buf = encodeRecord(fooBarMessage({ bornTimestamp: 2 ** 45 + 3, preparedTransactionOffset: 2 ** 50 + 1 }));
  patchRecord(buf, 0, 2 ** 33 + 5, 2 ** 52 + 7, 2 ** 41 + 9);
  const m = decodeRecord(buf);
  assert.equal(m.bornTimestamp, 2 ** 45 + 3);
  assert.equal(m.preparedTransactionOffset, 2 ** 50 + 1);
  assert.equal(m.queueOffset, 2 ** 33 + 5);
  assert.equal(m.commitLogOffset, 2 ** 52 + 7);
  assert.equal(m.storeTimestamp, 2 ** 41 + 9);
});

test('B19 IPv6 born and store hosts: store timestamp at byte 68 on every read path', () => {
  const buf = encodeRecord(ipv6Message({ sysFlag: 0 }));
  const flags = MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG;
  assert.equal(buf.readInt32BE(36), flags); // bits 16 and 32 set from the host address lengths
  assert.equal(buf.length, 158 + 24);
  patchRecord(buf, 0, 0, 0, 1700000000000);
  assert.equal(buf.readBigInt64BE(68), 1700000000000n);
  assert.notEqual(buf.readBigInt64BE(56), 1700000000000n);
  assert.equal(readStoreTimestamp(buf, 0), 1700000000000);
  const m = decodeRecord(buf, 0, { checkCrc: true });
  assert.equal(m.storeTimestamp, 1700000000000);
  assert.equal(socketAddressToString(m.bornHost), '[::1]:5000');
  assert.equal(socketAddressToString(m.storeHost), '[::1]:10911');
  assert.equal(m.msgId.length, 56);
  const r = checkRecord(buf, 0, buf.length, { checkCrc: true, expectedPhysicalOffset: 0 });
  assert.equal(r.kind, 'valid');
  if (r.kind === 'valid') assert.equal(r.dispatch.storeTimestamp, 1700000000000);
});

test('mixed hosts: IPv4 born + IPv6 store, and IPv6 born + IPv4 store', () => {
  const a = encodeRecord(ipv6Message({ bornHost: fooBarMessage().bornHost }));
  assert.equal(a.readInt32BE(36), MessageSysFlag.STOREHOSTADDRESS_V6_FLAG);
  patchRecord(a, 0, 1, 2, 3);
  assert.equal(a.readBigInt64BE(56), 3n);
  assert.equal(decodeRecord(a).storeTimestamp, 3);
  const b = encodeRecord(ipv6Message({ storeHost: fooBarMessage().storeHost, sysFlag: MessageSysFlag.STOREHOSTADDRESS_V6_FLAG }));
  assert.equal(b.readInt32BE(36), MessageSysFlag.BORNHOST_V6_FLAG); // stale v6 store flag cleared
  patchRecord(b, 0, 1, 2, 3);
  assert.equal(readStoreTimestamp(b, 0), 3);
  assert.equal(socketAddressToString(decodeRecord(b).storeHost), '127.0.0.1:10911');
});

test('B22 a 127-character topic is stored as V1 with topic length byte 127', () => {
  const topic = 'T'.repeat(127);
  const buf = encodeRecord(fooBarMessage({ topic }));
  assert.equal(readMagic(buf, 0), MESSAGE_MAGIC_CODE_V1);
  assert.equal(buf[88 + 32], 127);
  assert.equal(decodeRecord(buf).topic, topic);
});

test('topics longer than 127 bytes use V2 (2-byte topic length); 256 is refused', () => {
  const topic = '%RETRY%' + 'g'.repeat(200);
  const buf = encodeRecord(fooBarMessage({ topic }));
  assert.equal(readMagic(buf, 0), MESSAGE_MAGIC_CODE_V2);
  assert.equal(buf.length, 92 + 32 + 207 + 29);
  assert.equal(buf.readInt16BE(88 + 32), 207);
  const m = decodeRecord(buf, 0, { checkCrc: true });
  assert.equal(m.topic, topic);
  assert.equal(m.magicCode, MESSAGE_MAGIC_CODE_V2);
  // forced V2 for a short topic
  const v2 = encodeRecord(fooBarMessage(), { version: 2 });
  assert.equal(v2.length, 159);
  assert.equal(decodeRecord(v2).topic, 'FooBar');
  assert.throws(
    () => encodeRecord(fooBarMessage({ topic: 'x'.repeat(256) })),
    (e: unknown) => e instanceof RecordEncodeError && e.status === 'MESSAGE_ILLEGAL' && /256 bytes/.test(e.message),
  );
});

test('properties over 32767 bytes give PROPERTIES_SIZE_EXCEEDED; exactly 32767 is fine', () => {
  const big = (n: number) => new Map([['K', 'v'.repeat(n - 3)]]); // K \x01 v… \x02 = n bytes
  assert.equal(encodeRecord(fooBarMessage({ properties: big(32767) })).length, 91 + 32 + 6 + 32767);
  assert.throws(
    () => encodeRecord(fooBarMessage({ properties: big(32768) })),
    (e: unknown) => e instanceof RecordEncodeError && e.status === 'PROPERTIES_SIZE_EXCEEDED' && e.code === 'PROPERTIES_SIZE_EXCEEDED',
  );
  // multi-byte UTF-8 counts bytes, not chars
  assert.throws(() => encodeRecord(fooBarMessage({ properties: new Map([['K', 'é'.repeat(16383)]]) })), RecordEncodeError);
});

test('encodeRecord refuses bad hosts, a missing body and non-integer timestamps', () => {
  assert.throws(() => encodeRecord(fooBarMessage({ storeHost: { ip: Buffer.alloc(6), port: 1 } })), /store host address must have 4 or 16 bytes/);
  assert.throws(() => encodeRecord(fooBarMessage({ body: undefined as unknown as Buffer })), /body is missing/);
  assert.throws(() => encodeRecord(fooBarMessage({ bornTimestamp: Number.NaN })), /born timestamp/);
});

test('empty body, topic properties: minimal record round-trips', () => {
  const buf = encodeRecord(fooBarMessage({ body: Buffer.alloc(0), properties: new Map() }));
  assert.equal(buf.length, 91 + 6);
  const m = decodeRecord(buf, 0, { checkCrc: true });
  assert.equal(m.body.length, 0);
  assert.equal(m.properties.size, 0);
  assert.equal(m.bodyCrc, 0);
});

test('decodeRecord: readBody false, position inside a larger buffer, and errors', () => {
  const rec = encodeRecord(fooBarMessage());
  const buf = Buffer.concat([Buffer.alloc(10), rec]);
  patchRecord(buf, 10, 5, 10, 77);
  const m = decodeRecord(buf, 10, { readBody: false });
  assert.equal(m.body.length, 0);
  assert.equal(m.queueOffset, 5);
  assert.equal(m.storeTimestamp, 77);
  buf[10 + 88] ^= 1;
  assert.throws(() => decodeRecord(buf, 10, { checkCrc: true }), (e: unknown) => e instanceof RecordDecodeError && /body CRC mismatch/.test(e.reason));
  assert.equal(decodeRecord(buf, 10).body.length, 32); // no CRC check by default
  const blank = Buffer.alloc(16);
  writeBlankRecord(blank, 0, 16);
  assert.throws(() => decodeRecord(blank), /blank/);
  assert.throws(() => decodeRecord(rec.subarray(0, 100)), /torn record/);
  assert.throws(() => decodeRecord(rec, 500), RecordDecodeError);
});

test('properties text: ASCII and non-ASCII (UTF-8, surrogate pairs) values are stored as UTF-8 bytes and read back', () => {
  for (const value of ['plain-ascii', 'é', '中文键值', 'emoji \u{1F600} end', 'mixé\u0001x']) {
    const properties = new Map([['UNIQ_KEY', 'ABC'], ['K', value]]);
    const buf = encodeRecord(fooBarMessage({ properties }));
    const text = `UNIQ_KEY\u0001ABC\u0002K\u0001${value}\u0002`;
    const utf8 = Buffer.from(text, 'utf8');
    const propsAt = buf.length - utf8.length;
    assert.equal(buf.readInt16BE(propsAt - 2), utf8.length, value);
    assert.deepEqual(buf.subarray(propsAt), utf8, value);
    assert.equal(decodeRecord(buf, 0, { checkCrc: true }).properties.get('K'), value);
  }
});

test('encodedProperties + encodedPropertiesTail store the same bytes as the whole text; the tail is ignored without encodedProperties', () => {
  const head = 'KEYS\x011700000000123\x02TAGS\x01TAG1\x02';
  const tail = 'CLUSTER\x01DefaultCluster\x02';
  const whole = encodeRecord(fooBarMessage({ encodedProperties: head + tail }));
  assert.deepEqual(encodeRecord(fooBarMessage({ encodedProperties: head, encodedPropertiesTail: tail })), whole);
  assert.equal(decodeRecord(whole, 0).properties.get('CLUSTER'), 'DefaultCluster');
  // multi-byte UTF-8 in both parts: PROPERTIES length counts bytes of both
  const headU = 'TAGS\x01é\x02';
  const tailU = 'CLUSTER\x01集群\x02';
  const split = encodeRecord(fooBarMessage({ encodedProperties: headU, encodedPropertiesTail: tailU }));
  assert.deepEqual(split, encodeRecord(fooBarMessage({ encodedProperties: headU + tailU })));
  assert.equal(decodeRecord(split, 0).properties.get('CLUSTER'), '集群');
  // an empty head with a tail
  assert.deepEqual(encodeRecord(fooBarMessage({ encodedProperties: '', encodedPropertiesTail: tail })), encodeRecord(fooBarMessage({ encodedProperties: tail })));
  // a hook that changed the Map drops encodedProperties: the Map is encoded and the tail not stored
  const fromMap = encodeRecord(fooBarMessage({ encodedPropertiesTail: tail }));
  assert.deepEqual(fromMap, encodeRecord(fooBarMessage()));
  // the size limit applies to both parts together
  assert.throws(
    () => encodeRecord(fooBarMessage({ encodedProperties: 'K\x01' + 'v'.repeat(20000) + '\x02', encodedPropertiesTail: 'L\x01' + 'w'.repeat(12800) + '\x02' })),
    (e: unknown) => e instanceof RecordEncodeError && e.status === 'PROPERTIES_SIZE_EXCEEDED',
  );
});
