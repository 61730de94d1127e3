import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createMessageId,
  createMessageIdList,
  decodeMessageId,
  ipToBytes,
  ipToString,
  ipv4Address,
  socketAddressFromString,
  socketAddressOf,
  socketAddressToString,
} from '../../../src/common/message/msgid.js';

test('Appendix B: offset msgId for 10.0.0.1:10911 at 0x1000', () => {
  assert.equal(createMessageId(ipv4Address(10, 0, 0, 1, 10911), 0x1000), '0A00000100002A9F0000000000001000');
});

test('B18 message id round-trips (127.0.0.1:10091, offset 1024)', () => {
  const id = createMessageId(socketAddressFromString('127.0.0.1:10091'), 1024);
  assert.equal(id, '7F0000010000276B0000000000000400');
  const d = decodeMessageId(id);
  assert.equal(socketAddressToString(d.host), '127.0.0.1:10091');
  assert.deepEqual([...d.host.ip], [127, 0, 0, 1]);
  assert.equal(d.host.port, 10091);
  assert.equal(d.commitLogOffset, 1024);
  // lower-case input decodes too
  assert.equal(decodeMessageId(id.toLowerCase()).commitLogOffset, 1024);
});

test('B18 IPv6 variant is 56 hex chars and round-trips', () => {
  const id = createMessageId(socketAddressFromString('[::1]:10091'), 1024);
  assert.equal(id.length, 56);
  assert.equal(id, '00000000000000000000000000000001' + '0000276B' + '0000000000000400');
  const d = decodeMessageId(id);
  assert.equal(socketAddressToString(d.host), '[::1]:10091');
  assert.equal(d.commitLogOffset, 1024);
});

test('msgId keeps offsets above 2^32 exact', () => {
  const off = 2 ** 40 + 12345;
  const id = createMessageId(ipv4Address(1, 2, 3, 4, 1), off);
  assert.equal(id.slice(16), (off).toString(16).toUpperCase().padStart(16, '0'));
  assert.equal(decodeMessageId(id).commitLogOffset, off);
});

test('decodeMessageId rejects malformed ids with a clear error', () => {
  assert.throws(() => decodeMessageId(''), /expected 32 \(IPv4\) or 56 \(IPv6\) hex chars, got 0/);
  assert.throws(() => decodeMessageId('7F0000010000276B00000000000004'), /got 30/);
  assert.throws(() => decodeMessageId('7F0000010000276B000000000000040G'), /not hexadecimal/);
  assert.throws(() => decodeMessageId('7F0000010000276B8000000000000400'), /negative or beyond 2\^53/);
  assert.throws(() => decodeMessageId(undefined as unknown as string), /malformed message id/);
});

test('createMessageId rejects bad hosts and offsets', () => {
  assert.throws(() => createMessageId({ ip: Buffer.alloc(5), port: 1 }, 0), RangeError);
  assert.throws(() => createMessageId(ipv4Address(1, 1, 1, 1, 1), -1), RangeError);
  assert.throws(() => createMessageId(ipv4Address(1, 1, 1, 1, 1), 1.5), RangeError);
});

test('socket address parsing and printing', () => {
  assert.equal(socketAddressToString(socketAddressFromString('192.168.0.10:9876')), '192.168.0.10:9876');
  assert.equal(socketAddressToString(socketAddressFromString('[2001:db8:0:0:0:0:2:1]:80')), '[2001:db8::2:1]:80');
  assert.equal(socketAddressToString(socketAddressFromString('[fe80:0:0:1:0:0:0:0]:80')), '[fe80:0:0:1::]:80');
  assert.equal(socketAddressFromString('[::1]:10911').ip.length, 16);
  // IPv4-mapped IPv6 (how Node reports dual-stack peers) becomes IPv4, as Java's InetAddress does.
  assert.equal(socketAddressToString(socketAddressOf('::ffff:127.0.0.1', 5000)), '127.0.0.1:5000');
  assert.deepEqual([...ipToBytes('::ffff:10.1.2.3')], [10, 1, 2, 3]);
  assert.equal(ipToString(ipToBytes('::')), '::');
  assert.equal(ipToString(ipToBytes('1:2:3:4:5:6:7:8')), '1:2:3:4:5:6:7:8');
  assert.equal(ipToString(ipToBytes('1:0:3:4:5:6:7:8')), '1:0:3:4:5:6:7:8');
  assert.equal(ipToString(ipToBytes('fe80::1%eth0')), 'fe80::1');
});

test('socket address parsing rejects bad input', () => {
  assert.throws(() => socketAddressFromString('127.0.0.1'), /no port/);
  assert.throws(() => socketAddressFromString('127.0.0.1:x'), /bad port/);
  assert.throws(() => socketAddressFromString('127.0.0.1:70000'), /not a valid host:port/);
  assert.throws(() => socketAddressFromString('300.0.0.1:1'), /not a valid host:port/);
  assert.throws(() => socketAddressFromString('[::1:1'), /\[ipv6\]:port/);
  assert.throws(() => socketAddressFromString('localhost:1'), /not a valid host:port/);
  assert.throws(() => ipv4Address(256, 0, 0, 1, 1), RangeError);
});

test('createMessageIdList joins the same ids createMessageId gives (IPv4, IPv6, offsets past 2^32, growing scratch)', () => {
  const v4 = ipv4Address(10, 0, 0, 1, 10911);
  const v6 = socketAddressFromString('[fe80::1:2]:10911');
  const offsets = [0, 0x1000, 2 ** 32 + 5, 2 ** 53 - 1, 123_456_789_012];
  for (const host of [v4, v6]) {
    const joined = createMessageIdList(host, offsets, offsets.length);
    assert.equal(joined, offsets.map((o) => createMessageId(host, o)).join(','));
    // only the first `count` offsets
    assert.equal(createMessageIdList(host, offsets, 2), `${createMessageId(host, 0)},${createMessageId(host, 0x1000)}`);
  }
  assert.equal(createMessageIdList(v4, offsets, 5).split(',')[2], '0A00000100002A9F0000000100000005');
  assert.equal(createMessageIdList(v4, [], 0), '');
  // longer than the initial scratch (64 ids): the text is still exact
  const many = Array.from({ length: 300 }, (_, i) => i * 1237);
  assert.equal(createMessageIdList(v6, many, many.length), many.map((o) => createMessageId(v6, o)).join(','));
  // then a different host: its own prefix
  assert.equal(createMessageIdList(v4, [7], 1), createMessageId(v4, 7));
  assert.throws(() => createMessageIdList(v4, [1, -1], 2), /not a safe integer/);
  assert.throws(() => createMessageIdList(v4, [1.5], 1), /not a safe integer/);
});
