/**
 * Offset message ids and host addresses (mirrors `MessageDecoder.createMessageId` /
 * `decodeMessageId`, spec §1.13).
 *
 * Offset msgId bytes: storeHost IP (4 | 16) | port (int32 BE) | commit-log offset (int64 BE),
 * rendered as upper-case hex: 32 chars for IPv4, 56 chars for IPv6.
 */
import { isIPv4, isIPv6 } from 'node:net';
import type { SocketAddress } from './message.js';

const TWO_POW_32 = 4294967296;

/** Builds a SocketAddress from 4 IPv4 octets and a port. */
export function ipv4Address(a: number, b: number, c: number, d: number, port: number): SocketAddress {
  for (const o of [a, b, c, d]) {
    if (!Number.isInteger(o) || o < 0 || o > 255) throw new RangeError(`ipv4Address: octet ${o} is not in 0..255`);
  }
  assertPort(port);
  return { ip: Buffer.from([a, b, c, d]), port };
}

/**
 * Converts a textual IP address to its raw bytes: 4 bytes for IPv4, 16 for IPv6. Like Java's
 * `InetAddress`, an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, as Node reports dual-stack peers)
 * becomes the 4-byte IPv4 address. A zone id (`fe80::1%eth0`) is ignored.
 * @throws Error for anything that is not an IP literal.
 */
export function ipToBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map((p) => Number(p)));
  const noZone = ip.includes('%') ? ip.slice(0, ip.indexOf('%')) : ip;
  if (!isIPv6(noZone)) throw new Error(`"${ip}" is not an IPv4 or IPv6 address`);
  const bytes = parseIpv6(noZone);
  const mapped = bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? Buffer.from(bytes.subarray(12)) : bytes;
}

function parseIpv6(text: string): Buffer {
  const out = Buffer.alloc(16);
  let s = text;
  let tailV4: number[] | null = null;
  const lastColon = s.lastIndexOf(':');
  if (s.indexOf('.', lastColon) >= 0) {
    tailV4 = s.slice(lastColon + 1).split('.').map((p) => Number(p));
    s = s.slice(0, lastColon + 1) + '0:0';
  }
  const dbl = s.indexOf('::');
  const parseGroups = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  let groups: number[];
  if (dbl >= 0) {
    const head = parseGroups(s.slice(0, dbl));
    const tail = parseGroups(s.slice(dbl + 2));
    groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    groups = parseGroups(s);
  }
  if (groups.length !== 8) throw new Error(`"${text}" is not a valid IPv6 address`);
  groups.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  if (tailV4) Buffer.from(tailV4).copy(out, 12);
  return out;
}

/** Textual form of raw IP bytes: dotted quad for 4 bytes, RFC 5952 compressed lower-case for 16. */
export function ipToString(ip: Buffer): string {
  if (ip.length === 4) return `${ip[0]}.${ip[1]}.${ip[2]}.${ip[3]}`;
  if (ip.length !== 16) throw new Error(`an IP address has 4 or 16 bytes, got ${ip.length}`);
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(ip.readUInt16BE(i));
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) { bestStart = i; bestLen = j - i; }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestLen < 2) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** SocketAddress from a textual IP (v4, v6 or v4-mapped v6) and a port. @throws Error on bad input. */
export function socketAddressOf(ip: string, port: number): SocketAddress {
  assertPort(port);
  return { ip: ipToBytes(ip), port };
}

/**
 * Parses `'127.0.0.1:10911'` or `'[::1]:10911'`.
 * @throws Error naming the bad input when the host or port is malformed.
 */
export function socketAddressFromString(text: string): SocketAddress {
  let host: string;
  let portText: string;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0 || text[close + 1] !== ':') throw new Error(`"${text}" is not of the form [ipv6]:port`);
    host = text.slice(1, close);
    portText = text.slice(close + 2);
  } else {
    const colon = text.lastIndexOf(':');
    if (colon < 0) throw new Error(`"${text}" has no port (expected ip:port)`);
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
  }
  if (!/^\d{1,5}$/.test(portText)) throw new Error(`"${text}" has a bad port "${portText}"`);
  try {
    return socketAddressOf(host, Number(portText));
  } catch (e) {
    throw new Error(`"${text}" is not a valid host:port: ${(e as Error).message}`);
  }
}

/** `'a.b.c.d:port'` for IPv4, `'[v6]:port'` for IPv6. */
export function socketAddressToString(addr: SocketAddress): string {
  const ip = ipToString(addr.ip);
  return addr.ip.length === 16 ? `[${ip}]:${addr.port}` : `${ip}:${addr.port}`;
}

/** Upper-case two-digit hex of every byte value. */
const HEX2: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).toUpperCase().padStart(2, '0'));

function hex8(v: number): string {
  return HEX2[v >>> 24]! + HEX2[(v >>> 16) & 255]! + HEX2[(v >>> 8) & 255]! + HEX2[v & 255]!;
}

/** Hex prefix (ip | port) of the last store host seen; a broker has one. */
let lastHostIp: Buffer = Buffer.alloc(0);
let lastHostPort = -1;
let lastHostPrefix = '';

function hostPrefix(storeHost: SocketAddress): string {
  const ip = storeHost.ip;
  let same = ip.length === lastHostIp.length && storeHost.port === lastHostPort;
  for (let i = 0; same && i < ip.length; i++) same = ip[i] === lastHostIp[i];
  if (same) return lastHostPrefix;
  let s = '';
  for (let i = 0; i < ip.length; i++) s += HEX2[ip[i]!]!;
  s += hex8(storeHost.port | 0);
  lastHostIp = Buffer.from(ip);
  lastHostPort = storeHost.port;
  lastHostPrefix = s;
  return s;
}

/**
 * Offset message id: upper-case hex of storeHost IP | port (int32) | commitLogOffset (int64).
 * @throws RangeError when the host is not 4/16 bytes or the offset is not a safe integer ≥ 0.
 */
export function createMessageId(storeHost: SocketAddress, commitLogOffset: number): string {
  const ipLen = storeHost.ip.length;
  if (ipLen !== 4 && ipLen !== 16) throw new RangeError(`createMessageId: store host has ${ipLen} address bytes (4 or 16 expected)`);
  if (!Number.isSafeInteger(commitLogOffset) || commitLogOffset < 0) {
    throw new RangeError(`createMessageId: commit-log offset ${commitLogOffset} is not a safe integer >= 0`);
  }
  return hostPrefix(storeHost) + hex8(Math.floor(commitLogOffset / TWO_POW_32)) + hex8(commitLogOffset >>> 0);
}

/** Upper-case hex digits as Latin-1 bytes. */
const HEX_DIGIT_BYTES = Buffer.from('0123456789ABCDEF', 'latin1');
/** Scratch of createMessageIdList (grown to the longest list; the text is copied out by latin1Slice). */
let idListScratch = Buffer.allocUnsafe(33 * 64);

/** Writes `v` (uint32) as 8 upper-case hex digits at `b[p]`; returns the end. */
function writeHex8(b: Buffer, p: number, v: number): number {
  for (let shift = 28; shift >= 0; shift -= 4) b[p++] = HEX_DIGIT_BYTES[(v >>> shift) & 15]!;
  return p;
}

/**
 * The offset msgIds of `count` records of one store host, comma-joined (what a batch send answers:
 * Apache joins the batch's msgIds with ','): record `i` is at `commitLogOffsets[i]`, its id is
 * `createMessageId(storeHost, commitLogOffsets[i])`, i.e. the text at
 * `[i * (len + 1), i * (len + 1) + len)` with len = 32 (IPv4) or 56 (IPv6). One flat string,
 * built in a byte scratch instead of concatenating per-record strings.
 * @throws RangeError as createMessageId (host width, an offset that is not a safe integer ≥ 0).
 */
export function createMessageIdList(storeHost: SocketAddress, commitLogOffsets: ArrayLike<number>, count: number): string {
  if (count <= 0) return '';
  const prefix = hostPrefix(storeHost);
  const ipLen = storeHost.ip.length;
  if (ipLen !== 4 && ipLen !== 16) throw new RangeError(`createMessageId: store host has ${ipLen} address bytes (4 or 16 expected)`);
  const idLen = prefix.length + 16;
  const bytes = count * (idLen + 1) - 1;
  if (idListScratch.length < bytes) idListScratch = Buffer.allocUnsafe(bytes);
  const b = idListScratch;
  (b as unknown as { latin1Write(text: string, offset: number, length: number): number }).latin1Write(prefix, 0, prefix.length);
  let p = 0;
  for (let i = 0; i < count; i++) {
    const offset = commitLogOffsets[i]!;
    if (!Number.isSafeInteger(offset) || offset < 0) {
      throw new RangeError(`createMessageId: commit-log offset ${offset} is not a safe integer >= 0`);
    }
    if (i > 0) {
      b[p++] = 0x2c; // ,
      for (let k = 0; k < prefix.length; k++) b[p + k] = b[k]!;
    }
    p += prefix.length;
    p = writeHex8(b, p, Math.floor(offset / TWO_POW_32));
    p = writeHex8(b, p, offset >>> 0);
  }
  return (b as unknown as { latin1Slice(start: number, end: number): string }).latin1Slice(0, p);
}

/**
 * Decodes an offset message id (32 hex chars = IPv4, 56 = IPv6; case-insensitive).
 * @throws Error with the reason for a wrong length, non-hex characters, a negative or
 *   unsafe (> 2^53 - 1) offset.
 */
export function decodeMessageId(msgId: string): { host: SocketAddress; commitLogOffset: number } {
  if (typeof msgId !== 'string' || (msgId.length !== 32 && msgId.length !== 56)) {
    const len = typeof msgId === 'string' ? msgId.length : typeof msgId;
    throw new Error(`malformed message id "${String(msgId)}": expected 32 (IPv4) or 56 (IPv6) hex chars, got ${len}`);
  }
  if (!/^[0-9A-Fa-f]+$/.test(msgId)) throw new Error(`malformed message id "${msgId}": not hexadecimal`);
  const b = Buffer.from(msgId, 'hex');
  const ipLen = b.length - 12;
  const port = b.readInt32BE(ipLen);
  const hi = b.readInt32BE(ipLen + 4);
  const lo = b.readUInt32BE(ipLen + 8);
  const commitLogOffset = hi * TWO_POW_32 + lo;
  if (hi < 0 || !Number.isSafeInteger(commitLogOffset)) {
    throw new Error(`malformed message id "${msgId}": commit-log offset is negative or beyond 2^53`);
  }
  return { host: { ip: Buffer.from(b.subarray(0, ipLen)), port }, commitLogOffset };
}

function assertPort(port: number): void {
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RangeError(`port ${port} is not in 0..65535`);
}
