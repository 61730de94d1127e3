/**
 * ACL 2.0 switches and settings, read from broker.conf with Apache 5.3's key names (AuthConfig):
 *
 *   authenticationEnabled               false   check who sends every request (remoting, gRPC, HA)
 *   authorizationEnabled                false   check what the authenticated user may do
 *   authenticationProvider              ''      Apache's class name of the default provider (or
 *   authorizationProvider               ''        empty); any other provider is refused at start
 *   authenticationMetadataProvider      ''      same, for the user store
 *   authorizationMetadataProvider       ''      same, for the ACL store
 *   authenticationWhitelist             ''      request codes never authenticated, e.g. `34,46`
 *   authorizationWhitelist              ''      request codes never authorized
 *   initAuthenticationUser              ''      JSON {"username":"..","password":".."}: created as a
 *                                               Super user at start when no user of that name exists
 *   innerClientAuthenticationCredentials ''     JSON {"accessKey":"..","secretKey":".."}: the broker's
 *                                               own identity (HA slave → master, broker → nameserver);
 *                                               created as a Super user like initAuthenticationUser
 *   migrateAuthFromV1Enabled            false   at start, copy the ACL 1.0 accounts of plain_acl.yml
 *                                               (and conf/acl/*.yml) into ACL 2.0 users and ACLs, as
 *                                               Apache 5.3.3's AuthMigrator (src/auth/v1/)
 *   rocketmqHome (alias rocketmq.home.dir) $ROCKETMQ_HOME   where conf/plain_acl.yml is looked for
 *   rocketmq.acl.plain.file             conf/plain_acl.yml  the default ACL 1.0 file, relative to it
 *   aclEnable                           false   Apache's ACL 1.0 switch. Apache 5.3.3 removed ACL 1.0
 *                                               and ignores the key; tsmq accepts `true` only when
 *                                               ACL 2.0 enforces (authenticationEnabled and
 *                                               authorizationEnabled), else stops the start with a
 *                                               ConfigError naming those keys and the migration,
 *                                               rather than run unprotected
 */
import { ConfigError, resolveConfig, type ConfigKey, type ConfigValue } from '../common/config/config-spec.js';
import type { SessionCredentials } from './acl-signature.js';

function key<T extends ConfigValue>(k: ConfigKey<T>): ConfigKey<ConfigValue> & { default: T } {
  return k as unknown as ConfigKey<ConfigValue> & { default: T };
}

const str = (name: string, doc: string) => key<string>({ name, type: 'string', default: '', doc });

export const AUTH_CONFIG_SPEC = {
  authenticationEnabled: key<boolean>({ name: 'authenticationEnabled', type: 'boolean', default: false, doc: 'authenticate every request (ACL 2.0)' }),
  authorizationEnabled: key<boolean>({ name: 'authorizationEnabled', type: 'boolean', default: false, doc: 'authorize every request against the ACL policies (ACL 2.0)' }),
  authenticationProvider: str('authenticationProvider', 'authentication provider class (only Apache\'s default provider is available)'),
  authorizationProvider: str('authorizationProvider', 'authorization provider class (only Apache\'s default provider is available)'),
  authenticationMetadataProvider: str('authenticationMetadataProvider', 'user store class (tsmq keeps users in config/users.json)'),
  authorizationMetadataProvider: str('authorizationMetadataProvider', 'ACL store class (tsmq keeps ACLs in config/acls.json)'),
  authenticationWhitelist: str('authenticationWhitelist', 'comma-separated request codes that skip authentication'),
  authorizationWhitelist: str('authorizationWhitelist', 'comma-separated request codes that skip authorization'),
  initAuthenticationUser: str('initAuthenticationUser', 'JSON {"username","password"} of a super user created at start if missing'),
  innerClientAuthenticationCredentials: str('innerClientAuthenticationCredentials', 'JSON {"accessKey","secretKey"} the broker signs its own requests with (HA, nameserver)'),
  migrateAuthFromV1Enabled: key<boolean>({ name: 'migrateAuthFromV1Enabled', type: 'boolean', default: false, doc: 'copy the ACL 1.0 accounts of <rocketmqHome>/conf/plain_acl.yml into ACL 2.0 users and ACLs at start (existing users are kept)' }),
  rocketmqHome: key<string>({ name: 'rocketmqHome', type: 'string', default: '', aliases: ['rocketmq.home.dir'], doc: 'RocketMQ home holding conf/plain_acl.yml for migrateAuthFromV1Enabled (default: $ROCKETMQ_HOME)' }),
  plainAclFile: key<string>({ name: 'rocketmq.acl.plain.file', type: 'string', default: 'conf/plain_acl.yml', doc: 'the default ACL 1.0 file, relative to rocketmqHome' }),
  aclEnable: key<boolean>({ name: 'aclEnable', type: 'boolean', default: false, doc: 'ACL 1.0 switch (removed in Apache 5.3.3): true is accepted only with authenticationEnabled=true and authorizationEnabled=true (ACL 2.0 enforces; migrateAuthFromV1Enabled=true copies plain_acl.yml)' }),
} as const;

/** Why `aclEnable=true` without ACL 2.0 is refused (ConfigError reason). */
export const ACL_V1_REFUSAL =
  'ACL 1.0 (plain_acl.yml) was removed in Apache RocketMQ 5.3.3 and tsmq does not serve it; started like this the broker would accept every client. ' +
  'Keep plain_acl.yml and add migrateAuthFromV1Enabled=true (its accounts become ACL 2.0 users and ACLs at start, as in Apache 5.3.3), ' +
  'rocketmqHome=<dir holding conf/plain_acl.yml> (or $ROCKETMQ_HOME), authenticationEnabled=true and authorizationEnabled=true ' +
  '(docs/security.md, "From ACL 1.0")';

/** Provider class names that mean "the built-in one". */
const DEFAULT_PROVIDERS: Record<string, string[]> = {
  authenticationProvider: ['org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider'],
  authorizationProvider: ['org.apache.rocketmq.auth.authorization.provider.DefaultAuthorizationProvider'],
  authenticationMetadataProvider: ['org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider'],
  authorizationMetadataProvider: ['org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider'],
};

export interface AuthConfig {
  authenticationEnabled: boolean;
  authorizationEnabled: boolean;
  authenticationWhitelist: Set<string>;
  authorizationWhitelist: Set<string>;
  /** From initAuthenticationUser. */
  initUser: { username: string; password: string } | null;
  /** From innerClientAuthenticationCredentials. */
  innerCredentials: SessionCredentials | null;
  /** migrateAuthFromV1Enabled=true: where the ACL 1.0 files are; null when off. */
  migrateFromV1: { rocketmqHome: string; plainAclFile: string } | null;
  /** aclEnable=true was given (accepted because ACL 2.0 enforces). */
  aclEnable: boolean;
}

function codeSet(text: string): Set<string> {
  return new Set(text.split(',').map((s) => s.trim()).filter((s) => s !== ''));
}

function jsonObject(keyName: string, text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    /* reported below */
  }
  throw new ConfigError(keyName, text, 'must be a JSON object');
}

/**
 * @param env where $ROCKETMQ_HOME is read when rocketmqHome is not given.
 * @throws ConfigError for a bad value, a provider tsmq does not have, aclEnable=true without ACL
 *   2.0, or migrateAuthFromV1Enabled=true without a RocketMQ home.
 */
export function resolveAuthConfig(raw: Record<string, string>, env: Record<string, string | undefined> = process.env): AuthConfig {
  const c = resolveConfig(AUTH_CONFIG_SPEC, raw);
  if (c.aclEnable && !(c.authenticationEnabled && c.authorizationEnabled)) throw new ConfigError('aclEnable', 'true', ACL_V1_REFUSAL);
  let migrateFromV1: AuthConfig['migrateFromV1'] = null;
  if (c.migrateAuthFromV1Enabled) {
    const home = c.rocketmqHome.trim() || (env.ROCKETMQ_HOME ?? '').trim();
    if (home === '') throw new ConfigError('migrateAuthFromV1Enabled', 'true', 'needs the RocketMQ home holding conf/plain_acl.yml: set rocketmqHome=<dir> (or $ROCKETMQ_HOME)');
    if (c.plainAclFile.trim() === '') throw new ConfigError('rocketmq.acl.plain.file', c.plainAclFile, 'must name a file relative to rocketmqHome');
    migrateFromV1 = { rocketmqHome: home, plainAclFile: c.plainAclFile.trim() };
  }
  for (const [k, allowed] of Object.entries(DEFAULT_PROVIDERS)) {
    const v = String((c as Record<string, unknown>)[k] ?? '').trim();
    if (v !== '' && !allowed.includes(v)) throw new ConfigError(k, v, `tsmq has only the built-in provider (${allowed[0]})`);
  }
  let initUser: AuthConfig['initUser'] = null;
  if (c.initAuthenticationUser.trim() !== '') {
    const o = jsonObject('initAuthenticationUser', c.initAuthenticationUser);
    if (typeof o.username !== 'string' || o.username.trim() === '' || typeof o.password !== 'string' || o.password === '') {
      throw new ConfigError('initAuthenticationUser', c.initAuthenticationUser, 'needs non-empty "username" and "password"');
    }
    initUser = { username: o.username, password: o.password };
  }
  let innerCredentials: SessionCredentials | null = null;
  if (c.innerClientAuthenticationCredentials.trim() !== '') {
    const o = jsonObject('innerClientAuthenticationCredentials', c.innerClientAuthenticationCredentials);
    if (typeof o.accessKey !== 'string' || o.accessKey === '' || typeof o.secretKey !== 'string' || o.secretKey === '') {
      throw new ConfigError('innerClientAuthenticationCredentials', c.innerClientAuthenticationCredentials, 'needs non-empty "accessKey" and "secretKey"');
    }
    innerCredentials = { accessKey: o.accessKey, secretKey: o.secretKey };
  }
  return {
    authenticationEnabled: c.authenticationEnabled,
    authorizationEnabled: c.authorizationEnabled,
    authenticationWhitelist: codeSet(c.authenticationWhitelist),
    authorizationWhitelist: codeSet(c.authorizationWhitelist),
    initUser,
    innerCredentials,
    migrateFromV1,
    aclEnable: c.aclEnable,
  };
}
