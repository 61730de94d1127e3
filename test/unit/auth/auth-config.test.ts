/**
 * ACL config keys: Apache's ACL 1.0 switch `aclEnable=true` (plain_acl.yml) is refused at start —
 * tsmq has no ACL 1.0, and ignoring the key (as it did) left a broker the operator believed
 * protected open to every client.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveAuthConfig } from '../../../src/auth/auth-config.js';
import { ConfigError } from '../../../src/common/config/config-spec.js';

describe('auth config (ACL keys)', () => {
  it('aclEnable=true stops the start with a ConfigError naming the ACL 2.0 keys to use instead', () => {
    assert.throws(() => resolveAuthConfig({ aclEnable: 'true' }), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.equal(e.key, 'aclEnable');
      assert.match(e.message, /^invalid config aclEnable=true: ACL 1\.0 \(plain_acl\.yml\) is not implemented by tsmq/);
      assert.match(e.message, /authenticationEnabled=true, authorizationEnabled=true, initAuthenticationUser=/);
      return true;
    });
  });

  it('aclEnable=false (or absent) is accepted; ACL 2.0 keys resolve as before', () => {
    const off = resolveAuthConfig({ aclEnable: 'false' });
    assert.equal(off.authenticationEnabled, false);
    const on = resolveAuthConfig({ authenticationEnabled: 'true', authorizationEnabled: 'true', initAuthenticationUser: '{"username":"u","password":"p"}' });
    assert.deepEqual([on.authenticationEnabled, on.authorizationEnabled, on.initUser], [true, true, { username: 'u', password: 'p' }]);
  });
});
