/**
 * ACL 1.0 white addresses after a migration: the patterns Apache 4.9's RemoteAddressStrategyFactory
 * reads, and the explanation a refusal's log line gets when ACL 1.0 would have let the request
 * through (the client's remark stays Apache's). The broker wiring is judged with Apache 4.9.8's
 * client in test/interop/acl-v1-migration-interop.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { matchesWhiteAddress, whiteAddressRefusalHint } from '../../../src/auth/v1/plain-acl-white-address.js';

describe('ACL 1.0 white address patterns', () => {
  const cases: Array<[string, string, boolean]> = [
    ['*', '10.1.2.3', true],
    ['*.*.*.*', '10.1.2.3', true],
    ['127.0.0.1', '127.0.0.1', true],
    ['127.0.0.1', '127.0.0.2', false],
    ['10.10.103.*', '10.10.103.77', true],
    ['10.10.103.*', '10.10.104.77', false],
    ['192.168.*', '192.168.9.9', true],
    ['192.168.*', '192.169.9.9', false],
    ['192.168.1.1-5', '192.168.1.5', true],
    ['192.168.1.1-5', '192.168.1.6', false],
    ['192.168.1.{1,2,3}', '192.168.1.2', true],
    ['192.168.1.{1,2,3}', '192.168.1.4', false],
    ['10.0.0.{1,2},127.0.0.*', '127.0.0.1', true],
    ['10.0.0.{1,2},127.0.0.*', '10.0.0.3', false],
    ['127.0.0.1', '::ffff:127.0.0.1', true],
    ['::1', '::1', true],
    ['10.1', '10.1.0.0', false],
    ['', '10.1.2.3', false],
  ];
  for (const [pattern, ip, want] of cases) it(`${JSON.stringify(pattern)} ${want ? 'matches' : 'does not match'} ${ip}`, () => assert.equal(matchesWhiteAddress(pattern, ip), want));
});

describe('the refusal explanation', () => {
  const white = { global: ['10.10.103.*'], byAccount: new Map([['whiteapp', '127.0.0.1'], ['admin', '192.168.1.*']]) };

  it('a global white address: any accessKey or none', () => {
    for (const ak of [undefined, 'nobody', 'whiteapp']) {
      assert.equal(
        whiteAddressRefusalHint(white, '10.10.103.5', ak),
        '10.10.103.5 matches globalWhiteRemoteAddresses "10.10.103.*" of plain_acl.yml, which let it in without credentials or permission checks under ACL 1.0; ACL 2.0 has no such list: the client must sign (AclClientRPCHook) as a user whose ACL allows this (docs/security.md "From ACL 1.0")',
      );
    }
  });

  it("an account's own white address: only for that accessKey from that address", () => {
    assert.equal(
      whiteAddressRefusalHint(white, '127.0.0.1', 'whiteapp'),
      'plain_acl.yml gave account "whiteapp" whiteRemoteAddress "127.0.0.1", which let 127.0.0.1 in without checking its signature or permissions under ACL 1.0; ACL 2.0 checks every request: the client must sign with the account\'s secretKey and the ACL must allow this (docs/security.md "From ACL 1.0")',
    );
    assert.equal(whiteAddressRefusalHint(white, '127.0.0.1', 'admin'), null, 'admin is white from 192.168.1.* only');
    assert.equal(whiteAddressRefusalHint(white, '127.0.0.1', undefined), null);
    assert.equal(whiteAddressRefusalHint(white, '10.0.0.1', 'whiteapp'), null);
    assert.match(whiteAddressRefusalHint(white, '192.168.1.40', 'admin') ?? '', /^plain_acl\.yml gave account "admin" whiteRemoteAddress "192\.168\.1\.\*"/);
  });
});
