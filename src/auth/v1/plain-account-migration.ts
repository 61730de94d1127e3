/**
 * One ACL 1.0 account turned into an ACL 2.0 user and ACL, as Apache 5.3.3's AuthMigrator does
 * (`migrateAuthFromV1Enabled=true`):
 *
 *   user      username = accessKey, password = secretKey, Super when `admin: true`, else Normal;
 *             enabled
 *   Custom    one entry per `topicPerms` item `name=PERM` (resource Topic:<name>) and per
 *   policy    `groupPerms` item (Group:<name>, %RETRY%/%DLQ% stripped), no source IPs
 *   Default   `defaultTopicPerm` → an entry for Topic:*, `defaultGroupPerm` → Group:*
 *   policy
 *   PERM      PUB → [Pub] Allow · SUB → [Sub] Allow · PUB|SUB, SUB|PUB → [Pub, Sub] Allow ·
 *             DENY → [All] Deny (names and perms are trimmed; a perm is case-sensitive, as Apache)
 *   no ACL    when the account has no perms at all (a Normal user is then refused everything,
 *             as ACL 1.0's default DENY did)
 *
 * Differences from Apache, each reported in `notes` (logged by the migrator):
 * - a PERM that is none of the above (`pub`, `PUB | SUB`, `ANY`) becomes [All] **Deny**: ACL 1.0
 *   itself read it as DENY (Permission.parsePermFromString), while Apache's migrator turns it into
 *   [All] Allow, which would grant more after the upgrade than before (a bug in Apache);
 * - an item that is not `name=PERM` (Apache skips it silently), a blank name, or a name with `*`
 *   (never a topic or group in ACL 1.0, but a prefix pattern in ACL 2.0) is skipped;
 * - when a name appears twice the later item wins (ACL 1.0 kept the last one in its map; Apache's
 *   migrator would keep both entries).
 * Like Apache: `whiteRemoteAddress` and `globalWhiteRemoteAddresses` are not migrated. In ACL 1.0
 * they let a matching address in without a signature or permission check; ACL 2.0 has no such
 * bypass, so those clients must sign and be allowed (a note says so).
 */
import type { Acl, Action, Decision, PolicyEntry, Resource, User } from '../auth-model.js';
import { groupResource, topicResource } from '../auth-model.js';
import type { PlainAccessAccount } from './plain-acl-file.js';

/** What one account becomes; `user` null when the account cannot be migrated (`notes` says why). */
export interface AccountMigration {
  user: User | null;
  acl: Acl | null;
  notes: string[];
}

/** ACL 1.0 perm words (Apache AclConstants). */
const PERMS: Record<string, { actions: Action[]; decision: Decision }> = {
  PUB: { actions: ['Pub'], decision: 'Allow' },
  SUB: { actions: ['Sub'], decision: 'Allow' },
  'PUB|SUB': { actions: ['Pub', 'Sub'], decision: 'Allow' },
  'SUB|PUB': { actions: ['Pub', 'Sub'], decision: 'Allow' },
  DENY: { actions: ['All'], decision: 'Deny' },
};

function entryOf(resource: Resource, perm: string, where: string, notes: string[]): PolicyEntry {
  const known = PERMS[perm.trim()];
  if (!known) notes.push(`${where}: unknown permission "${perm}" taken as DENY, as ACL 1.0 reads it (Apache's migrator would allow everything)`);
  const { actions, decision } = known ?? { actions: ['All'] as Action[], decision: 'Deny' as Decision };
  return { resource, actions: [...actions], sourceIps: [], decision };
}

function customEntries(items: string[], kind: 'topicPerms' | 'groupPerms', ak: string, notes: string[]): PolicyEntry[] {
  const byName = new Map<string, PolicyEntry>();
  for (const item of items) {
    const where = `account ${ak} ${kind} "${item}"`;
    const parts = item.split('=').filter((p) => p !== ''); // Apache StringUtils.split drops empty tokens
    if (parts.length !== 2) {
      notes.push(`${where}: not name=PERM, skipped`);
      continue;
    }
    const name = parts[0]!.trim();
    if (name === '' || name.includes('*')) {
      notes.push(`${where}: ${name === '' ? 'blank name' : 'a name with * (a prefix in ACL 2.0, a literal in ACL 1.0)'}, skipped`);
      continue;
    }
    const resource = kind === 'topicPerms' ? topicResource(name) : groupResource(name);
    const key = `${resource.type}:${resource.name}`;
    if (byName.has(key)) {
      notes.push(`${where}: ${key} given again, the later item wins (as ACL 1.0)`);
      byName.delete(key);
    }
    byName.set(key, entryOf(resource, parts[1]!, where, notes));
  }
  return [...byName.values()];
}

/** The ACL 2.0 user and ACL of one ACL 1.0 account (see the file comment). */
export function migrateAccount(a: PlainAccessAccount): AccountMigration {
  const notes: string[] = [];
  const ak = a.accessKey?.trim() ? a.accessKey : null;
  if (ak === null) return { user: null, acl: null, notes: ['an account without accessKey, skipped'] };
  if (!a.secretKey || a.secretKey.trim() === '') return { user: null, acl: null, notes: [`account ${ak}: no secretKey, skipped`] };
  const user: User = { username: ak, password: a.secretKey, userType: a.admin ? 'Super' : 'Normal', userStatus: 'enable' };
  if (a.whiteRemoteAddress) {
    notes.push(`account ${ak}: whiteRemoteAddress "${a.whiteRemoteAddress}" not migrated (ACL 2.0 has no signature-free address; clients from there must sign)`);
  }
  const custom = [...customEntries(a.topicPerms, 'topicPerms', ak, notes), ...customEntries(a.groupPerms, 'groupPerms', ak, notes)];
  const defaults: PolicyEntry[] = [];
  if (a.defaultTopicPerm?.trim()) defaults.push(entryOf({ type: 'Topic', name: null, pattern: 'ANY' }, a.defaultTopicPerm, `account ${ak} defaultTopicPerm`, notes));
  if (a.defaultGroupPerm?.trim()) defaults.push(entryOf({ type: 'Group', name: null, pattern: 'ANY' }, a.defaultGroupPerm, `account ${ak} defaultGroupPerm`, notes));
  const policies: Acl['policies'] = [];
  if (custom.length > 0) policies.push({ policyType: 'Custom', entries: custom });
  if (defaults.length > 0) policies.push({ policyType: 'Default', entries: defaults });
  return { user, acl: policies.length > 0 ? { subject: `User:${ak}`, policies } : null, notes };
}
