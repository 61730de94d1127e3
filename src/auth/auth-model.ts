/**
 * ACL 2.0 data model (Apache rocketmq-auth: User, Acl, Policy, PolicyEntry, Resource) and its
 * JSON forms, which are Apache's admin bodies `UserInfo` and `AclInfo` (remoting codes 3001-3010,
 * mqadmin createUser/createAcl...) and also what tsmq stores in config/users.json, acls.json.
 *
 *   UserInfo  {"username","password","userType":"Super"|"Normal","userStatus":"enable"|"disable"}
 *   AclInfo   {"subject":"User:<name>","policies":[{"policyType":"Custom"|"Default",
 *              "entries":[{"resource":"Topic:t1","actions":["Pub","Sub"],"sourceIps":["10.0.0.0/8"],
 *              "decision":"Allow"|"Deny"}]}]}
 *
 * Resource keys: `*` (anything), `Cluster:<name>`, `Topic:<name>`, `Group:<name>`,
 * `Namespace:<name>`; a name `*` matches every name of that type, a name ending in `*` is a
 * prefix. Names of types and actions are matched case-insensitively, as Apache's getByName.
 */
import { isIpInRange } from './ip-range.js';

export const ACTIONS = ['All', 'Any', 'Pub', 'Sub', 'Create', 'Update', 'Delete', 'Get', 'List'] as const;
export type Action = (typeof ACTIONS)[number];
export const RESOURCE_TYPES = ['Any', 'Cluster', 'Namespace', 'Topic', 'Group'] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];
export type ResourcePattern = 'ANY' | 'LITERAL' | 'PREFIXED';
export type Decision = 'Allow' | 'Deny';
export type PolicyType = 'Custom' | 'Default';
export type UserType = 'Super' | 'Normal';
export type UserStatus = 'enable' | 'disable';

export interface User {
  username: string;
  password: string;
  userType: UserType;
  userStatus: UserStatus;
}

export interface Resource {
  type: ResourceType;
  /** null for the ANY pattern. */
  name: string | null;
  pattern: ResourcePattern;
}

export interface PolicyEntry {
  resource: Resource;
  actions: Action[];
  /** Empty = from anywhere. */
  sourceIps: string[];
  decision: Decision;
}

export interface Policy {
  policyType: PolicyType;
  entries: PolicyEntry[];
}

export interface Acl {
  /** `User:<name>`. */
  subject: string;
  policies: Policy[];
}

function byName<T extends string>(names: readonly T[], value: unknown): T | null {
  if (typeof value !== 'string') return null;
  const lower = value.toLowerCase();
  return names.find((n) => n.toLowerCase() === lower) ?? null;
}

export const actionOf = (v: unknown): Action | null => byName(ACTIONS, v);
export const decisionOf = (v: unknown): Decision | null => byName(['Allow', 'Deny'] as const, v);
export const policyTypeOf = (v: unknown): PolicyType | null => byName(['Custom', 'Default'] as const, v);
export const userTypeOf = (v: unknown): UserType | null => byName(['Super', 'Normal'] as const, v);
export const userStatusOf = (v: unknown): UserStatus | null => byName(['enable', 'disable'] as const, v);

/** Parses a resource key (see the file comment); null when blank or of an unknown type (Apache Resource.of). */
export function parseResource(key: unknown): Resource | null {
  if (typeof key !== 'string' || key.trim() === '') return null;
  if (key === '*') return { type: 'Any', name: null, pattern: 'ANY' };
  const colon = key.indexOf(':');
  const type = byName(RESOURCE_TYPES, colon < 0 ? key : key.slice(0, colon));
  if (!type) return null;
  const name = colon < 0 ? '' : key.slice(colon + 1);
  if (name === '*') return { type, name: null, pattern: 'ANY' };
  if (name.endsWith('*')) return { type, name: name.slice(0, name.indexOf('*')), pattern: 'PREFIXED' };
  return { type, name, pattern: 'LITERAL' };
}

/** The key form of a resource: `*`, `Topic:*`, `Topic:t1`, `Topic:pre*`. */
export function resourceKey(r: Resource): string {
  if (r.type === 'Any') return '*';
  if (r.pattern === 'ANY') return `${r.type}:*`;
  return r.pattern === 'PREFIXED' ? `${r.type}:${r.name}*` : `${r.type}:${r.name}`;
}

export function sameResource(a: Resource, b: Resource): boolean {
  return a.type === b.type && a.name === b.name && a.pattern === b.pattern;
}

/** Whether an entry's resource covers the (literal) resource a request touches. */
export function resourceMatches(entry: Resource, target: Resource): boolean {
  if (entry.type === 'Any') return true;
  if (entry.type !== target.type) return false;
  if (entry.pattern === 'ANY') return true;
  if (entry.pattern === 'LITERAL') return entry.name === target.name;
  return target.name !== null && target.name.startsWith(entry.name ?? '');
}

/**
 * Whether an entry grants (or denies) one of the request's actions (Apache PolicyEntry
 * isMatchAction: any requested action listed, or the entry lists All; a request for Any matches
 * every non-empty entry).
 */
export function actionsMatch(entryActions: readonly Action[], requested: readonly Action[]): boolean {
  if (entryActions.length === 0) return false;
  if (requested.includes('Any')) return true;
  return requested.some((a) => entryActions.includes(a) || entryActions.includes('All'));
}

export function sourceIpMatches(entry: PolicyEntry, sourceIp: string): boolean {
  if (entry.sourceIps.length === 0) return true;
  if (!sourceIp) return false;
  return entry.sourceIps.some((range) => isIpInRange(sourceIp, range));
}

/** `Topic:%RETRY%G1` names are groups: Apache's Resource.ofGroup strips %RETRY%/%DLQ%. */
export function groupResource(name: string): Resource {
  return { type: 'Group', name: stripRetryDlq(name), pattern: 'LITERAL' };
}

export function topicResource(name: string): Resource {
  return { type: 'Topic', name, pattern: 'LITERAL' };
}

export function clusterResource(name: string): Resource {
  return { type: 'Cluster', name, pattern: 'LITERAL' };
}

export const RETRY_PREFIX = '%RETRY%';
export const DLQ_PREFIX = '%DLQ%';

export function isRetryTopic(name: string | undefined): boolean {
  return !!name && name.startsWith(RETRY_PREFIX);
}

function stripRetryDlq(name: string): string {
  if (name.startsWith(RETRY_PREFIX)) return name.slice(RETRY_PREFIX.length);
  if (name.startsWith(DLQ_PREFIX)) return name.slice(DLQ_PREFIX.length);
  return name;
}

export function userToInfo(u: User): Record<string, string> {
  return { username: u.username, password: u.password, userType: u.userType, userStatus: u.userStatus };
}

export function aclToInfo(acl: Acl): object {
  return {
    subject: acl.subject,
    policies: acl.policies.map((p) => ({
      policyType: p.policyType,
      entries: p.entries.map((e) => ({
        resource: resourceKey(e.resource),
        actions: e.actions,
        ...(e.sourceIps.length ? { sourceIps: e.sourceIps } : {}),
        decision: e.decision,
      })),
    })),
  };
}
