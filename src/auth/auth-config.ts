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
 *   aclEnable                           false   Apache's ACL 1.0 switch (plain_acl.yml). tsmq has no
 *                                               ACL 1.0: `true` stops the start with a ConfigError
 *                                               naming the ACL 2.0 keys, rather than run unprotected
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
  aclEnable: key<boolean>({ name: 'aclEnable', type: 'boolean', default: false, doc: 'ACL 1.0 (plain_acl.yml): not available in tsmq, true is refused at start (use ACL 2.0)' }),
} as const;

/** Why `aclEnable=true` is refused (ConfigError reason). */
export const ACL_V1_REFUSAL =
  'ACL 1.0 (plain_acl.yml) is not implemented by tsmq, and a broker started without it would accept every client. ' +
  'Use ACL 2.0 instead: authenticationEnabled=true, authorizationEnabled=true, initAuthenticationUser={"username":"..","password":".."}, ' +
  'then one `mqadmin createUser` + `createAcl` per plain_acl.yml account (docs/security.md, "From ACL 1.0")';

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

/** @throws ConfigError for a bad value or a provider tsmq does not have. */
export function resolveAuthConfig(raw: Record<string, string>): AuthConfig {
  const c = resolveConfig(AUTH_CONFIG_SPEC, raw);
  if (c.aclEnable) throw new ConfigError('aclEnable', 'true', ACL_V1_REFUSAL);
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
  };
}
