/**
 * Who may use the console. With authenticationEnabled=false everyone who reaches the port (the
 * console then refuses a non-loopback bind unless consoleAllowUnauthenticated=true). With
 * authenticationEnabled=true: HTTP Basic credentials of an enabled user of type Super in the
 * broker's ACL 2.0 users (the "admin user" of docs/security.md); anything else is 401 with a
 * `WWW-Authenticate: Basic realm="tsmq"` challenge.
 */
import { timingSafeEqual } from 'node:crypto';
import type { AuthMetadataManager } from '../broker/auth/auth-metadata-manager.js';

export type ConsoleAuthResult = { ok: true; user: string | null } | { ok: false; reason: string };

/** Checks an `Authorization` header value; `enabled` = the broker's authenticationEnabled. */
export function checkConsoleAuth(enabled: boolean, metadata: AuthMetadataManager, authorization: string | undefined): ConsoleAuthResult {
  if (!enabled) return { ok: true, user: null };
  if (!authorization || !authorization.startsWith('Basic ')) return { ok: false, reason: 'credentials required (HTTP Basic, a Super user of the broker ACL)' };
  const decoded = Buffer.from(authorization.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return { ok: false, reason: 'malformed Basic credentials' };
  const username = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  const user = metadata.getUser(username);
  if (!user || user.userStatus !== 'enable' || !sameText(user.password, password)) return { ok: false, reason: 'wrong username or password' };
  if (user.userType !== 'Super') return { ok: false, reason: `user ${username} is not a Super user` };
  return { ok: true, user: username };
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
