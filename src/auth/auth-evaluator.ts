/**
 * The decisions of ACL 2.0 over a user/ACL lookup (Apache DefaultAuthenticationHandler,
 * UserAuthorizationHandler and AclAuthorizationHandler), independent of the front (remoting or
 * gRPC): each front builds the contexts, this file decides. Refusals throw AuthenticationError /
 * AuthorizationError with Apache's messages:
 *
 *   authentication: "username cannot be null." | "User:<u> is not found." | "User:<u> is disabled."
 *                   | "check signature failed."
 *   authorization:  "User:<u> not found." | "User:<u> is disabled." | "User:<u> has no permission to
 *                   access <resource> from <ip>, no matched policies." | "..., the decision is deny."
 *
 * Apache reveals whether a user exists in these remarks ("is not found" vs "check signature
 * failed"); tsmq says the same, no more (docs/security.md).
 */
import { timingSafeEqual } from 'node:crypto';
import { AuthenticationError, AuthorizationError } from './auth-error.js';
import { hmacSha1Base64 } from './acl-signature.js';
import {
  actionsMatch,
  resourceKey,
  resourceMatches,
  sourceIpMatches,
  type Acl,
  type Action,
  type PolicyEntry,
  type Resource,
  type User,
} from './auth-model.js';

/** Read side of the user and ACL store. */
export interface AuthMetadata {
  getUser(username: string): User | undefined;
  /** By subject key, `User:<name>`. */
  getAcl(subject: string): Acl | undefined;
}

export interface AuthenticationContext {
  /** AccessKey / Credential; undefined when the request carried none. */
  username: string | undefined;
  /** Base64 signature as sent (gRPC hex is converted by the caller). */
  signature: string | undefined;
  /** Bytes the signature covers. */
  content: Buffer;
}

export interface AuthorizationContext {
  /** The authenticated user, or undefined for a request without AccessKey. */
  username: string | undefined;
  resource: Resource;
  actions: Action[];
  sourceIp: string;
}

/** @throws AuthenticationError */
export function authenticate(ctx: AuthenticationContext, metadata: AuthMetadata): User {
  if (!ctx.username) throw new AuthenticationError('username cannot be null.');
  const user = metadata.getUser(ctx.username);
  if (!user) throw new AuthenticationError(`User:${ctx.username} is not found.`);
  if (user.userStatus === 'disable') throw new AuthenticationError(`User:${ctx.username} is disabled.`);
  const expected = Buffer.from(hmacSha1Base64(ctx.content, user.password), 'utf8');
  const got = Buffer.from(ctx.signature ?? '', 'utf8');
  if (ctx.signature === undefined || expected.length !== got.length || !timingSafeEqual(expected, got)) {
    throw new AuthenticationError('check signature failed.');
  }
  return user;
}

/** @throws AuthorizationError (AuthenticationError for a disabled user, as Apache) */
export function authorize(ctx: AuthorizationContext, metadata: AuthMetadata): void {
  if (!ctx.username) throw new AuthorizationError('Authorization failed. Please verify your access rights and try again.');
  const user = metadata.getUser(ctx.username);
  if (!user) throw new AuthorizationError(`User:${ctx.username} not found.`);
  if (user.userStatus === 'disable') throw new AuthenticationError(`User:${ctx.username} is disabled.`);
  if (user.userType === 'Super') return;
  const subject = `User:${ctx.username}`;
  const refuse = (detail: string): never => {
    throw new AuthorizationError(`${subject} has no permission to access ${resourceKey(ctx.resource)} from ${ctx.sourceIp}, ${detail}`);
  };
  const acl = metadata.getAcl(subject);
  if (!acl) return refuse('no matched policies.');
  const entry = bestEntry(ctx, acl);
  if (!entry) return refuse('no matched policies.');
  if (entry.decision === 'Deny') refuse('the decision is deny.');
}

/** Matching entries of the Custom policy, else of the Default policy; the most specific first. */
function bestEntry(ctx: AuthorizationContext, acl: Acl): PolicyEntry | null {
  const matching = (type: 'Custom' | 'Default'): PolicyEntry[] =>
    acl.policies
      .filter((p) => p.policyType === type)
      .flatMap((p) => p.entries)
      .filter((e) => resourceMatches(e.resource, ctx.resource) && actionsMatch(e.actions, ctx.actions) && sourceIpMatches(e, ctx.sourceIp));
  let entries = matching('Custom');
  if (entries.length === 0) entries = matching('Default');
  if (entries.length === 0) return null;
  // stable sort, like Java's List.sort
  return [...entries].sort(compareEntries)[0]!;
}

const PATTERN_RANK = { LITERAL: 0, PREFIXED: 1, ANY: 2 } as const;

/**
 * Apache AclAuthorizationHandler.comparePolicyEntries: a typed resource before `*`; within a
 * type LITERAL before PREFIXED before ANY, the longer prefix first; on a tie Deny first (see below).
 */
function compareEntries(a: PolicyEntry, b: PolicyEntry): number {
  const ra = a.resource;
  const rb = b.resource;
  let c = 0;
  if (ra.type !== rb.type) {
    if (ra.type === 'Any') c = 1;
    if (rb.type === 'Any') c = -1;
  } else if (ra.pattern === rb.pattern) {
    if (ra.pattern === 'PREFIXED') c = -Math.sign((ra.name ?? '').length - (rb.name ?? '').length);
  } else {
    c = Math.sign(PATTERN_RANK[ra.pattern] - PATTERN_RANK[rb.pattern]);
  }
  if (c !== 0) return c;
  // Deny first. Apache's comparator says "deny has higher priority" but returns 1 for a Deny
  // first argument, so an equally specific Allow wins there; tsmq does what the comment means
  // (pinned in test/unit/auth/auth-evaluator.test.ts).
  if (a.decision === b.decision) return 0;
  return a.decision === 'Deny' ? -1 : 1;
}
