/**
 * ACL 2.0 decisions (auth-evaluator.ts) over an in-memory user/ACL table: authentication
 * messages, Super users, entry priority (literal > prefix > type-any > `*`), Custom before
 * Default, source-IP ranges, and the Deny-first tie break where tsmq departs from Apache's
 * comparator (pinned here).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { authenticate, authorize, type AuthMetadata } from '../../../src/auth/auth-evaluator.js';
import { AuthenticationError, AuthorizationError } from '../../../src/auth/auth-error.js';
import { hmacSha1Base64 } from '../../../src/auth/acl-signature.js';
import { parseResource, topicResource, groupResource, type Acl, type User, type Action } from '../../../src/auth/auth-model.js';
import { isIpInRange, isValidIpOrCidr } from '../../../src/auth/ip-range.js';

const users: User[] = [
  { username: 'root', password: 'rootpw', userType: 'Super', userStatus: 'enable' },
  { username: 'u', password: 'upw', userType: 'Normal', userStatus: 'enable' },
  { username: 'off', password: 'offpw', userType: 'Normal', userStatus: 'disable' },
];
const entry = (resource: string, actions: Action[], decision: 'Allow' | 'Deny', sourceIps: string[] = []) => ({ resource: parseResource(resource)!, actions, decision, sourceIps });
let acl: Acl = { subject: 'User:u', policies: [] };
const md: AuthMetadata = { getUser: (n) => users.find((x) => x.username === n), getAcl: (s) => (s === acl.subject ? acl : undefined) };

const allowed = (resource: ReturnType<typeof topicResource>, actions: Action[], ip = '127.0.0.1'): string => {
  try {
    authorize({ username: 'u', resource, actions, sourceIp: ip }, md);
    return 'allow';
  } catch (e) {
    assert.ok(e instanceof AuthorizationError, String(e));
    return e.message;
  }
};

describe('authenticate', () => {
  const content = Buffer.from('x');
  it('accepts the right signature', () => {
    assert.equal(authenticate({ username: 'u', signature: hmacSha1Base64(content, 'upw'), content }, md).username, 'u');
  });
  for (const [name, ctx, msg] of [
    ['no AccessKey', { username: undefined, signature: 'x', content }, 'username cannot be null.'],
    ['unknown user', { username: 'ghost', signature: 'x', content }, 'User:ghost is not found.'],
    ['disabled user', { username: 'off', signature: hmacSha1Base64(content, 'offpw'), content }, 'User:off is disabled.'],
    ['wrong signature', { username: 'u', signature: hmacSha1Base64(content, 'nope'), content }, 'check signature failed.'],
    ['missing signature', { username: 'u', signature: undefined, content }, 'check signature failed.'],
  ] as const) {
    it(`refuses ${name}: "${msg}"`, () => {
      assert.throws(() => authenticate(ctx, md), (e: unknown) => e instanceof AuthenticationError && e.message === msg);
    });
  }
});

describe('authorize', () => {
  it('a Super user may do anything without an ACL', () => {
    assert.doesNotThrow(() => authorize({ username: 'root', resource: topicResource('any'), actions: ['Delete'], sourceIp: '1.2.3.4' }, md));
  });

  it('no ACL → no matched policies (Apache message)', () => {
    acl = { subject: 'User:other', policies: [] };
    assert.equal(allowed(topicResource('T'), ['Pub']), 'User:u has no permission to access Topic:T from 127.0.0.1, no matched policies.');
  });

  it('literal beats prefix beats Topic:* beats *; the longer prefix wins', () => {
    acl = {
      subject: 'User:u',
      policies: [{ policyType: 'Custom', entries: [entry('*', ['All'], 'Deny'), entry('Topic:*', ['Pub'], 'Allow'), entry('Topic:ab*', ['Pub'], 'Deny'), entry('Topic:abc*', ['Pub'], 'Allow'), entry('Topic:abx', ['Pub'], 'Allow')] }],
    };
    assert.equal(allowed(topicResource('zzz'), ['Pub']), 'allow', 'Topic:* beats *');
    assert.match(allowed(topicResource('abd'), ['Pub']), /the decision is deny/, 'Topic:ab* beats Topic:*');
    assert.equal(allowed(topicResource('abcd'), ['Pub']), 'allow', 'longer prefix Topic:abc* beats Topic:ab*');
    assert.equal(allowed(topicResource('abx'), ['Pub']), 'allow', 'literal beats prefix');
    assert.match(allowed(groupResource('G'), ['Sub']), /the decision is deny/, '* (Deny All) covers groups');
  });

  it('an entry matches when it lists one of the requested actions, or All', () => {
    acl = { subject: 'User:u', policies: [{ policyType: 'Custom', entries: [entry('Topic:T', ['Sub'], 'Allow'), entry('Group:G', ['All'], 'Allow')] }] };
    assert.equal(allowed(topicResource('T'), ['Pub', 'Sub', 'Get']), 'allow');
    assert.match(allowed(topicResource('T'), ['Pub']), /no matched policies/);
    assert.equal(allowed(groupResource('%RETRY%G'), ['Sub']), 'allow', 'a retry topic is its group');
  });

  it('Custom entries hide Default ones; Default applies when no Custom entry matches', () => {
    acl = { subject: 'User:u', policies: [{ policyType: 'Default', entries: [entry('Topic:*', ['Pub'], 'Allow')] }, { policyType: 'Custom', entries: [entry('Topic:T', ['Pub'], 'Deny')] }] };
    assert.match(allowed(topicResource('T'), ['Pub']), /deny/);
    assert.equal(allowed(topicResource('U'), ['Pub']), 'allow');
  });

  it('source IPs: exact text or CIDR; outside → no matched policies', () => {
    acl = { subject: 'User:u', policies: [{ policyType: 'Custom', entries: [entry('Topic:T', ['Pub'], 'Allow', ['10.1.0.0/16', '192.168.0.7'])] }] };
    assert.equal(allowed(topicResource('T'), ['Pub'], '10.1.200.3'), 'allow');
    assert.equal(allowed(topicResource('T'), ['Pub'], '192.168.0.7'), 'allow');
    assert.match(allowed(topicResource('T'), ['Pub'], '10.2.0.1'), /from 10\.2\.0\.1, no matched policies/);
  });

  it('equally specific Allow and Deny: Deny wins (Apache sorts Allow first despite its "deny has higher priority" comment; tsmq follows the comment)', () => {
    acl = { subject: 'User:u', policies: [{ policyType: 'Custom', entries: [entry('Topic:T', ['Pub'], 'Allow'), entry('Topic:T', ['Sub'], 'Deny')] }] };
    assert.match(allowed(topicResource('T'), ['Pub', 'Sub']), /the decision is deny/);
    assert.equal(allowed(topicResource('T'), ['Pub']), 'allow');
  });

  it('a request without AccessKey is refused', () => {
    assert.throws(() => authorize({ username: undefined, resource: topicResource('T'), actions: ['Pub'], sourceIp: '' }, md), AuthorizationError);
  });
});

describe('ip ranges', () => {
  it('CIDR v4/v6, mapped v4, and validation', () => {
    assert.ok(isIpInRange('10.0.0.255', '10.0.0.0/24'));
    assert.ok(!isIpInRange('10.0.1.0', '10.0.0.0/24'));
    assert.ok(isIpInRange('::ffff:10.0.0.1', '10.0.0.0/8'));
    assert.ok(isIpInRange('fe80::1', 'fe80::/10'));
    assert.ok(!isIpInRange('fe80::1', '10.0.0.0/8'));
    assert.ok(isIpInRange('1.2.3.4', '0.0.0.0/0'));
    assert.ok(isValidIpOrCidr('10.0.0.0/8') && isValidIpOrCidr('::1') && isValidIpOrCidr('fe80::/64'));
    assert.ok(!isValidIpOrCidr('10.0.0.0/33') && !isValidIpOrCidr('10.0.0') && !isValidIpOrCidr('x/8') && !isValidIpOrCidr('10.0.0.0/'));
  });
});
