/**
 * ACL config keys: Apache's ACL 1.0 switch `aclEnable=true` (plain_acl.yml) is refused at start
 * unless ACL 2.0 enforces — tsmq does not serve ACL 1.0 (Apache 5.3.3 removed it), and ignoring
 * the key alone would leave a broker the operator believed protected open to every client
 * (test/unit/auth/plain-acl-migration.test.ts has the accepted combinations).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveAuthConfig } from '../../../src/auth/auth-config.js';
import { ConfigError } from '../../../src/common/config/config-spec.js';

describe('auth config (ACL keys)', () => {
  it('aclEnable=true alone stops the start with a ConfigError naming the ACL 2.0 keys to use instead', () => {
    assert.throws(() => resolveAuthConfig({ aclEnable: 'true' }), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.equal(e.key, 'aclEnable');
      assert.match(e.message, /^invalid config aclEnable=true: ACL 1\.0 \(plain_acl\.yml\) was removed in Apache RocketMQ 5\.3\.3 and tsmq does not serve it/);
      assert.match(e.message, /migrateAuthFromV1Enabled=true .* rocketmqHome=.* authenticationEnabled=true and authorizationEnabled=true/);
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
