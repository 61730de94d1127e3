/**
 * `migrateAuthFromV1Enabled=true` at broker start (Apache 5.3.3 AuthMigrator, run when the
 * BrokerController is built, after the initial users exist): every ACL 1.0 account of
 * `<rocketmqHome>/conf/plain_acl.yml` and `conf/acl/**.yml` (src/auth/v1/plain-acl-files.ts) whose
 * accessKey is not a user yet becomes an ACL 2.0 user and ACL (src/auth/v1/plain-account-migration.ts),
 * written durably to config/users.json and acls.json before the broker serves.
 *
 * - an accessKey that is already a user is left alone, ACL included (so every restart is a no-op
 *   once migrated, and users changed since with mqadmin keep their changes), as Apache;
 * - an account that cannot be created (no accessKey/secretKey) is logged at error level and the
 *   others continue, as Apache; notes on what was not carried over are logged at warn level;
 * - a malformed file stops the start (PlainAclFileError naming the file), as Apache's AclException;
 * - a home that is not an existing directory stops the start (ConfigError naming rocketmqHome):
 *   a typo or a pasted end-of-line `# comment` would otherwise start a broker that enforces ACL
 *   2.0 with no user at all (tsmq addition; Apache tries to create an empty plain_acl.yml there).
 *   An existing home without ACL 1.0 files is only warned about.
 */
import { statSync } from 'node:fs';
import { ConfigError, endOfLineCommentHint } from '../../common/config/config-spec.js';
import type { Logger } from '../../common/logging/logger.js';
import { readPlainAclConfig, type PlainAclConfig, type PlainAclLocation } from '../../auth/v1/plain-acl-files.js';
import type { PlainAclWhiteAddresses } from '../../auth/v1/plain-acl-white-address.js';
import { migrateAccount } from '../../auth/v1/plain-account-migration.js';
import type { SessionCredentials } from '../../auth/acl-signature.js';
import type { AuthMetadataManager } from './auth-metadata-manager.js';

/** What a migration run did, by accessKey. */
export interface AuthMigrationReport {
  files: string[];
  /** Created users, `name (Super|Normal)`. */
  migrated: string[];
  /** accessKeys that were users already. */
  existing: string[];
  /** Accounts not created, with the reason. */
  failed: string[];
  /** accessKeys of the `admin: true` accounts, in file order (migrated now or before). */
  adminAccounts: string[];
  /** The files' white addresses (not migrated; kept to explain refusals they would have let through). */
  whiteAddresses: PlainAclWhiteAddresses;
}

/**
 * The credentials the broker signs its own requests with when neither
 * innerClientAuthenticationCredentials nor initAuthenticationUser is set: the first `admin: true`
 * account of plain_acl.yml that is an enabled Super user, with its current password (tsmq
 * addition, like the initAuthenticationUser fallback of inner-request-signer.ts: `tsmq start`'s
 * own nameserver authenticates, Apache's does not). Null when there is none.
 */
export function innerCredentialsFromMigration(report: AuthMigrationReport, metadata: AuthMetadataManager): SessionCredentials | null {
  for (const name of report.adminAccounts) {
    const u = metadata.getUser(name);
    if (u && u.userType === 'Super' && u.userStatus === 'enable') return { accessKey: u.username, secretKey: u.password };
  }
  return null;
}

function whiteAddressesOf(config: PlainAclConfig): PlainAclWhiteAddresses {
  const byAccount = new Map<string, string>();
  for (const a of config.accounts) if (a.accessKey && a.whiteRemoteAddress && a.whiteRemoteAddress.trim() !== '') byAccount.set(a.accessKey, a.whiteRemoteAddress.trim());
  return { global: config.globalWhiteRemoteAddresses.filter((g) => g.trim() !== ''), byAccount };
}

/** @throws ConfigError (key rocketmqHome) when `home` is not an existing directory. */
function assertHomeDirectory(home: string): void {
  let isDir: boolean;
  try {
    isDir = statSync(home).isDirectory();
  } catch {
    throw new ConfigError('rocketmqHome', home, 'no such directory (the RocketMQ home holding conf/plain_acl.yml, from rocketmqHome / rocketmq.home.dir or $ROCKETMQ_HOME)' + endOfLineCommentHint(home));
  }
  if (!isDir) throw new ConfigError('rocketmqHome', home, 'not a directory (the RocketMQ home holding conf/plain_acl.yml)' + endOfLineCommentHint(home));
}

/**
 * Migrates the ACL 1.0 accounts at `loc` into `metadata` (see the file comment).
 * @throws PlainAclFileError for an unreadable or malformed ACL 1.0 file; ConfigError when the home
 *   is not a directory.
 */
export async function migrateAuthFromV1(loc: PlainAclLocation, metadata: AuthMetadataManager, logger: Logger): Promise<AuthMigrationReport> {
  assertHomeDirectory(loc.rocketmqHome);
  const config = readPlainAclConfig(loc);
  const report: AuthMigrationReport = { files: config.files, migrated: [], existing: [], failed: [], adminAccounts: config.accounts.filter((a) => a.admin && a.accessKey).map((a) => a.accessKey!), whiteAddresses: whiteAddressesOf(config) };
  if (config.files.length === 0) {
    logger.warn(`auth: migrateAuthFromV1Enabled=true but no ACL 1.0 file at ${loc.rocketmqHome}/${loc.plainAclFile} or under ${loc.rocketmqHome}/conf/acl: nothing migrated`);
    return report;
  }
  if (config.globalWhiteRemoteAddresses.length > 0) {
    logger.warn(`auth: globalWhiteRemoteAddresses ${JSON.stringify(config.globalWhiteRemoteAddresses)} not migrated (as Apache): ACL 2.0 lets no address in without a signature`);
  }
  for (const account of config.accounts) {
    const { user, acl, notes } = migrateAccount(account);
    if (!user) {
      report.failed.push(notes.join('; '));
      logger.error(`auth: ACL 1.0 migration: ${notes.join('; ')}`);
      continue;
    }
    if (metadata.getUser(user.username)) {
      report.existing.push(user.username);
      continue;
    }
    for (const n of notes) logger.warn(`auth: ACL 1.0 migration: ${n}`);
    try {
      await metadata.createUser(user);
      if (acl) await metadata.upsertAcl(acl);
    } catch (e) {
      report.failed.push(`${user.username}: ${(e as Error).message}`);
      logger.error(`auth: ACL 1.0 migration of ${JSON.stringify(user.username)} failed: ${(e as Error).message}`);
      continue;
    }
    report.migrated.push(`${user.username} (${user.userType})`);
  }
  logger.info(
    `auth: ACL 1.0 migration from ${config.files.join(', ')}: created ${report.migrated.length ? report.migrated.join(', ') : 'no user'}` +
      (report.existing.length ? `; already users, left unchanged: ${report.existing.join(', ')}` : '') +
      (report.failed.length ? `; not migrated: ${report.failed.length}` : ''),
  );
  return report;
}

/**
 * The warning logged at start for `aclEnable=true` (ignored, as by Apache 5.3.3), saying what ACL
 * 2.0 enforces instead: the migrated accounts; or, when migration found no ACL 1.0 file and no
 * user exists, that every client is refused until users are made; or that plain_acl.yml is not
 * read without migrateAuthFromV1Enabled=true. `report` is null without migration.
 */
export function aclEnableIgnoredWarning(report: AuthMigrationReport | null, userCount: number): string {
  const head = 'aclEnable=true (ACL 1.0) is ignored, as by Apache 5.3.3: ACL 2.0 (authenticationEnabled, authorizationEnabled) enforces';
  if (!report) return `${head}; plain_acl.yml is not read without migrateAuthFromV1Enabled=true`;
  if (report.files.length > 0) return `${head}, with the plain_acl.yml accounts migrated`;
  if (userCount === 0) return `${head}, but no ACL 1.0 file was found to migrate and there is no user: every client is refused until one exists (put plain_acl.yml under rocketmqHome, or set initAuthenticationUser, then restart; docs/security.md "From ACL 1.0")`;
  return `${head}; no ACL 1.0 file was found to migrate, the ${userCount} existing user(s) apply`;
}
