/**
 * Source-IP checks of ACL policy entries (Apache IPAddressUtils): an entry's `sourceIps` item is
 * either one address (compared as text, like Apache) or a CIDR range `a.b.c.d/n` / `v6::/n`.
 */
import { isIP } from 'node:net';

/** Bytes of an IPv4 or IPv6 address, or null when `ip` is not one. */
function addressBytes(ip: string): Buffer | null {
  const kind = isIP(ip);
  if (kind === 4) return Buffer.from(ip.split('.').map(Number));
  if (kind !== 6) return null;
  let text = ip;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  let tail: number[] = [];
  if (v4) {
    tail = v4[1]!.split('.').map(Number);
    text = text.slice(0, -v4[1]!.length) + '0:0';
  }
  const [head, rest] = text.includes('::') ? text.split('::') as [string, string] : [text, null];
  const h = head ? head.split(':') : [];
  const r = rest === null ? [] : rest ? rest.split(':') : [];
  const groups = rest === null ? h : [...h, ...Array(8 - h.length - r.length).fill('0'), ...r];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  if (tail.length) out.set(tail, 12);
  return out;
}

/** True for an IP address or a CIDR range with a prefix length that fits the address family. */
export function isValidIpOrCidr(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash < 0) return isIP(value) !== 0;
  const bytes = addressBytes(value.slice(0, slash));
  const bits = value.slice(slash + 1);
  if (!bytes || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= bytes.length * 8;
}

/**
 * Whether `ip` is `range` (no slash: text equality, as Apache) or inside the CIDR `range`.
 * Addresses of different families never match. An invalid range matches nothing.
 */
export function isIpInRange(ip: string, range: string): boolean {
  const slash = range.indexOf('/');
  if (slash < 0) return ip === range;
  const base = addressBytes(range.slice(0, slash));
  let addr = addressBytes(ip);
  if (!base || !addr) return false;
  // an IPv4-mapped IPv6 peer (::ffff:a.b.c.d) is compared as IPv4
  if (base.length === 4 && addr.length === 16 && addr.subarray(0, 12).equals(Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]))) addr = addr.subarray(12);
  if (base.length !== addr.length) return false;
  const bits = Number(range.slice(slash + 1));
  if (!Number.isInteger(bits) || bits < 0 || bits > base.length * 8) return false;
  for (let i = 0; i < base.length; i++) {
    const take = Math.max(0, Math.min(8, bits - i * 8));
    const mask = take === 0 ? 0 : (0xff << (8 - take)) & 0xff;
    if ((base[i]! & mask) !== (addr[i]! & mask)) return false;
  }
  return true;
}
