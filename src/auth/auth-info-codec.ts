/**
 * Decoding of Apache's admin bodies `UserInfo` and `AclInfo` (JSON, see auth-model.ts) into the
 * model, with Apache's conversions (UserConverter/AclConverter: unknown type/status names become
 * "not given", unknown action names are dropped) and validations (AuthorizationMetadataManagerImpl
 * .validate: the messages below are Apache's).
 *
 * @throws AuthorizationError / AuthenticationError with Apache's message for a bad body.
 */
import { AuthenticationError, AuthorizationError } from './auth-error.js';
import { isValidIpOrCidr } from './ip-range.js';
import {
  actionOf,
  decisionOf,
  parseResource,
  policyTypeOf,
  userStatusOf,
  userTypeOf,
  type Acl,
  type Action,
  type Policy,
  type PolicyEntry,
  type UserStatus,
  type UserType,
} from './auth-model.js';

/** A user as sent: type and status may be absent (defaults are applied by create). */
export interface UserInput {
  username: string;
  password: string | undefined;
  userType: UserType | null;
  userStatus: UserStatus | null;
}

function parseJsonBody(body: Buffer | null, what: string): unknown {
  if (!body || body.length === 0) return null;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw new AuthorizationError(`The body of ${what} is not valid JSON`);
  }
}

const obj = (v: unknown): Record<string, unknown> | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

/** UserInfo body + the username from the request header (the header wins, as Apache). */
export function decodeUserInfo(body: Buffer | null, username: string): UserInput {
  const o = obj(parseJsonBody(body, 'user')) ?? {};
  const password = typeof o.password === 'string' ? o.password : undefined;
  return { username, password, userType: userTypeOf(o.userType), userStatus: userStatusOf(o.userStatus) };
}

/** `User:<name>` → name, or null for another subject type. */
export function usernameOfSubject(subject: string | undefined): string | null {
  if (!subject) return null;
  const i = subject.indexOf(':');
  const type = i < 0 ? subject : subject.slice(0, i);
  if (type.toLowerCase() !== 'user') return null;
  return subject.slice(i + 1);
}

/**
 * AclInfo body; `headerSubject` is used when the body has none. Returns a validated Acl whose
 * policies default to Custom.
 */
export function decodeAclInfo(body: Buffer | null, headerSubject: string | undefined): Acl {
  const o = obj(parseJsonBody(body, 'acl'));
  const rawPolicies = o && Array.isArray(o.policies) ? o.policies : [];
  if (!o || rawPolicies.length === 0) throw new AuthorizationError('The body of acl is null');
  const subjectText = typeof o.subject === 'string' && usernameOfSubject(o.subject) !== null ? o.subject : headerSubject;
  const username = usernameOfSubject(subjectText);
  if (username === null) throw new AuthorizationError('The subject type is null.');
  const policies: Policy[] = [];
  for (const rp of rawPolicies) {
    const p = obj(rp);
    if (!p) continue;
    const rawEntries = Array.isArray(p.entries) ? p.entries : [];
    if (rawEntries.length === 0) continue;
    const entries: PolicyEntry[] = rawEntries.map((re) => decodeEntry(obj(re) ?? {}));
    policies.push({ policyType: policyTypeOf(p.policyType) ?? 'Custom', entries });
  }
  if (policies.length === 0) throw new AuthorizationError('The policies is empty.');
  return { subject: `User:${username}`, policies };
}

function decodeEntry(e: Record<string, unknown>): PolicyEntry {
  const resource = parseResource(e.resource);
  if (!resource) throw new AuthorizationError('The resource is null.');
  const actions = (Array.isArray(e.actions) ? e.actions : []).map(actionOf).filter((a): a is Action => a !== null);
  if (actions.length === 0) throw new AuthorizationError('The actions is empty.');
  if (actions.includes('Any')) throw new AuthorizationError('The actions can not be Any.');
  const sourceIps = Array.isArray(e.sourceIps) ? e.sourceIps.map((s) => (typeof s === 'string' ? s : '')) : [];
  for (const ip of sourceIps) {
    if (ip.trim() === '') throw new AuthorizationError('The source ip is empty.');
    if (!isValidIpOrCidr(ip)) throw new AuthorizationError('The source ip is invalid.');
  }
  const decision = decisionOf(e.decision);
  if (!decision) throw new AuthorizationError('The decision is null or illegal.');
  return { resource, actions: [...new Set(actions)], sourceIps, decision };
}

/** Apache validate(user): used by create (password required) and update. */
export function validateUserInput(u: UserInput, isCreate: boolean): void {
  if (!u.username || u.username.trim() === '') throw new AuthenticationError('username can not be blank');
  if (isCreate && (!u.password || u.password.trim() === '')) throw new AuthenticationError('password can not be blank');
}
