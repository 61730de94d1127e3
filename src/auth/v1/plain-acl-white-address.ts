/**
 * The white addresses of an ACL 1.0 plain_acl.yml (`globalWhiteRemoteAddresses`, an account's
 * `whiteRemoteAddress`), which ACL 2.0 does not have, kept only to explain refusals after an
 * upgrade: under ACL 1.0 (Apache 4.9 PlainPermissionManager.validate) a request from a global
 * white address passed without any check, and a request from an account's white address passed
 * without its signature or permissions being checked. A migrated broker refuses such a client
 * (as Apache 5.3.3 does); the refusal log line then says why it used to work.
 *
 * Address patterns as Apache 4.9's RemoteAddressStrategyFactory reads them (IPv4):
 *   `*`, `*.*.*.*`        every address
 *   `192.168.1.1`         one address
 *   `192.168.*`           a prefix (trailing `*` segments; missing segments are `*`)
 *   `192.168.1.1-5`       a range in a segment (`a-b`, inclusive)
 *   `192.168.1.{1,2,3}`   a list in the last segment
 *   `a,b` (comma outside braces)  any of the patterns
 * Anything else (IPv6 included) matches only itself, literally.
 */

/** The white addresses of the migrated files: global ones, and per accessKey. */
export interface PlainAclWhiteAddresses {
  global: string[];
  /** accessKey → its whiteRemoteAddress (accounts with one only). */
  byAccount: Map<string, string>;
}

function segmentMatches(pattern: string, value: string): boolean {
  if (pattern === '*') return true;
  if (!/^\d{1,3}$/.test(value)) return false;
  const v = Number(value);
  const range = /^(\d{1,3})-(\d{1,3})$/.exec(pattern);
  if (range) return v >= Number(range[1]) && v <= Number(range[2]);
  const list = /^\{([\d,\s]+)\}$/.exec(pattern);
  if (list) return list[1]!.split(',').some((x) => x.trim() !== '' && Number(x.trim()) === v);
  return /^\d{1,3}$/.test(pattern) && Number(pattern) === v;
}

function onePatternMatches(pattern: string, ip: string): boolean {
  const p = pattern.trim();
  if (p === '') return false;
  if (p === ip) return true;
  const ipSegs = ip.split('.');
  if (ipSegs.length !== 4) return false;
  const segs = p.split('.');
  if (segs.length > 4) return false;
  if (segs.length < 4) {
    if (segs[segs.length - 1] !== '*') return false;
    while (segs.length < 4) segs.push('*');
  }
  return segs.every((s, i) => segmentMatches(s, ipSegs[i]!));
}

/** Whether ACL 1.0 would have counted `ip` as within white address `pattern` (see the file comment). */
export function matchesWhiteAddress(pattern: string, ip: string): boolean {
  const v4 = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  // split on commas outside braces: "10.0.0.{1,2},192.168.*" is two patterns
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of pattern) {
    if (ch === '{') depth++;
    if (ch === '}') depth = Math.max(0, depth - 1);
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts.some((p) => onePatternMatches(p, v4));
}

const SEE = 'docs/security.md "From ACL 1.0"';

/**
 * The sentence explaining a refusal of a request from `sourceIp` signed (or not) as `accessKey`
 * that ACL 1.0 would have let through because of a white address, or null when none matches.
 */
export function whiteAddressRefusalHint(white: PlainAclWhiteAddresses, sourceIp: string, accessKey: string | undefined): string | null {
  const global = white.global.find((p) => matchesWhiteAddress(p, sourceIp));
  if (global !== undefined) {
    return `${sourceIp} matches globalWhiteRemoteAddresses ${JSON.stringify(global)} of plain_acl.yml, which let it in without credentials or permission checks under ACL 1.0; ACL 2.0 has no such list: the client must sign (AclClientRPCHook) as a user whose ACL allows this (${SEE})`;
  }
  if (accessKey === undefined) return null;
  const own = white.byAccount.get(accessKey);
  if (own !== undefined && matchesWhiteAddress(own, sourceIp)) {
    return `plain_acl.yml gave account ${JSON.stringify(accessKey)} whiteRemoteAddress ${JSON.stringify(own)}, which let ${sourceIp} in without checking its signature or permissions under ACL 1.0; ACL 2.0 checks every request: the client must sign with the account's secretKey and the ACL must allow this (${SEE})`;
  }
  return null;
}
