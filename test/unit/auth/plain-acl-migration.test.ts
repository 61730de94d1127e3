/**
 * ACL 1.0 → ACL 2.0 migration (migrateAuthFromV1Enabled, Apache 5.3.3 AuthMigrator):
 * plain_acl.yml parsing (SnakeYAML-like: scalars as text, unknown keys refused), the files of a
 * RocketMQ home combined (conf/acl/** first, first accessKey wins), each account's user and ACL,
 * the decisions the migrated ACLs give (auth-evaluator), the broker-side migrator over a real
 * config/users.json + acls.json (created once, then left alone), and the aclEnable /
 * migrateAuthFromV1Enabled config rules. Where tsmq departs from Apache's migrator (an unknown
 * perm becomes Deny, not Allow-all) the test pins it.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePlainAclFile, PlainAclFileError } from '../../../src/auth/v1/plain-acl-file.js';
import { readPlainAclConfig } from '../../../src/auth/v1/plain-acl-files.js';
import { migrateAccount } from '../../../src/auth/v1/plain-account-migration.js';
import { authorize } from '../../../src/auth/auth-evaluator.js';
import { AuthorizationError } from '../../../src/auth/auth-error.js';
import { aclToInfo, groupResource, topicResource, type Action, type Resource } from '../../../src/auth/auth-model.js';
import { resolveAuthConfig } from '../../../src/auth/auth-config.js';
import { ConfigError } from '../../../src/common/config/config-spec.js';
import { AuthMetadataManager } from '../../../src/broker/auth/auth-metadata-manager.js';
import { aclEnableIgnoredWarning, innerCredentialsFromMigration, migrateAuthFromV1 } from '../../../src/broker/auth/auth-migrator.js';
import { silentLogger } from '../../../src/common/logging/logger.js';

/** Apache 4.9.x distribution/conf/plain_acl.yml, as operators have it. */
const DISTRIBUTION_PLAIN_ACL = `globalWhiteRemoteAddresses:
  - 10.10.103.*
  - 192.168.0.*

accounts:
  - accessKey: RocketMQ
    secretKey: 12345678
    whiteRemoteAddress:
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - topicA=DENY
      - topicB=PUB|SUB
      - topicC=SUB
    groupPerms:
      # the group should convert to retry topic
      - groupA=DENY
      - groupB=PUB|SUB
      - groupC=SUB

  - accessKey: rocketmq2
    secretKey: 12345678
    whiteRemoteAddress: 192.168.1.*
    # if it is admin, it could access all resources
    admin: true
`;

const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'tsmq-aclv1-'));
  dirs.push(d);
  return d;
};
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('plain_acl.yml parsing', () => {
  it('reads Apache\'s distribution file: numbers as text, empty values absent, admin as a boolean', () => {
    const d = parsePlainAclFile(DISTRIBUTION_PLAIN_ACL, 'plain_acl.yml');
    assert.deepEqual(d.globalWhiteRemoteAddresses, ['10.10.103.*', '192.168.0.*']);
    assert.equal(d.accounts.length, 2);
    assert.deepEqual(d.accounts[0], {
      accessKey: 'RocketMQ', secretKey: '12345678', whiteRemoteAddress: null, admin: false,
      defaultTopicPerm: 'DENY', defaultGroupPerm: 'SUB',
      topicPerms: ['topicA=DENY', 'topicB=PUB|SUB', 'topicC=SUB'], groupPerms: ['groupA=DENY', 'groupB=PUB|SUB', 'groupC=SUB'],
    });
    assert.deepEqual([d.accounts[1]!.accessKey, d.accounts[1]!.admin, d.accounts[1]!.whiteRemoteAddress], ['rocketmq2', true, '192.168.1.*']);
    // a leading zero survives (YAML 1.1 would read 0123 as octal 83; SnakeYAML gives a String property the text)
    assert.equal(parsePlainAclFile('accounts:\n  - {accessKey: a, secretKey: 0123}', 'f').accounts[0]!.secretKey, '0123');
  });

  it('an empty file and a file of dataVersion only hold nothing', () => {
    assert.deepEqual(parsePlainAclFile('', 'f'), { globalWhiteRemoteAddresses: [], accounts: [] });
    assert.deepEqual(parsePlainAclFile('dataVersion:\n  - {counter: 3, timestamp: 1}\n', 'f'), { globalWhiteRemoteAddresses: [], accounts: [] });
  });

  for (const [name, text, reason] of [
    ['an unknown top-level key', 'acounts: []', /unknown key "acounts"/],
    ['an unknown account key', 'accounts:\n  - {accessKey: a, secretkey: b}', /accounts\[0\]: unknown key "secretkey"/],
    ['accounts not a list', 'accounts: x', /accounts must be a list/],
    ['a map as accessKey', 'accounts:\n  - accessKey: {a: 1}', /accounts\[0\]\.accessKey must be a string/],
    ['admin neither true nor false', 'accounts:\n  - {accessKey: a, admin: maybe}', /admin must be true or false, not "maybe"/],
    ['broken YAML', 'accounts: [', /not valid YAML/],
    ['a duplicated key', 'accounts: []\naccounts: []', /not valid YAML: Map keys must be unique/],
  ] as const) {
    it(`refuses ${name}, naming the file`, () => {
      assert.throws(() => parsePlainAclFile(text, '/home/rmq/conf/plain_acl.yml'), (e: unknown) => {
        assert.ok(e instanceof PlainAclFileError);
        assert.match(e.message, /^ACL 1\.0 file \/home\/rmq\/conf\/plain_acl\.yml: /);
        assert.match(e.message, reason);
        return true;
      });
    });
  }
});

describe('the files of a RocketMQ home', () => {
  it('reads conf/acl/** (name order, sub-directories) before conf/plain_acl.yml; the first accessKey wins; white addresses add up', () => {
    const home = tempDir();
    mkdirSync(join(home, 'conf', 'acl', 'team'), { recursive: true });
    writeFileSync(join(home, 'conf', 'plain_acl.yml'), 'globalWhiteRemoteAddresses: [10.0.0.1]\naccounts:\n  - {accessKey: a, secretKey: from-default}\n  - {accessKey: d, secretKey: dd}\n');
    writeFileSync(join(home, 'conf', 'acl', 'b.yaml'), 'accounts:\n  - {accessKey: a, secretKey: from-b}\n');
    writeFileSync(join(home, 'conf', 'acl', 'team', 'c.yml'), 'globalWhiteRemoteAddresses: [10.0.0.2]\naccounts:\n  - {accessKey: c, secretKey: cc}\n');
    writeFileSync(join(home, 'conf', 'acl', 'notes.txt'), 'not yaml: [');
    const c = readPlainAclConfig({ rocketmqHome: home, plainAclFile: 'conf/plain_acl.yml' });
    assert.deepEqual(c.files, [join(home, 'conf', 'acl', 'b.yaml'), join(home, 'conf', 'acl', 'team', 'c.yml'), join(home, 'conf', 'plain_acl.yml')]);
    assert.deepEqual(c.accounts.map((a) => `${a.accessKey}:${a.secretKey}`), ['a:from-b', 'c:cc', 'd:dd']);
    assert.deepEqual(c.globalWhiteRemoteAddresses, ['10.0.0.2', '10.0.0.1']);
  });

  it('a symlink loop under conf/acl is read once; a dangling entry is a PlainAclFileError naming it', () => {
    const home = tempDir();
    mkdirSync(join(home, 'conf', 'acl', 'sub'), { recursive: true });
    writeFileSync(join(home, 'conf', 'acl', 'sub', 'a.yml'), 'accounts:\n  - {accessKey: a, secretKey: s}\n');
    symlinkSync(join(home, 'conf', 'acl'), join(home, 'conf', 'acl', 'sub', 'loop'));
    assert.deepEqual(readPlainAclConfig({ rocketmqHome: home, plainAclFile: 'conf/plain_acl.yml' }).accounts.map((a) => a.accessKey), ['a']);
    symlinkSync(join(home, 'nowhere'), join(home, 'conf', 'acl', 'dangling.yml'));
    assert.throws(() => readPlainAclConfig({ rocketmqHome: home, plainAclFile: 'conf/plain_acl.yml' }), (e: unknown) => e instanceof PlainAclFileError && /dangling\.yml: cannot be read/.test(e.message));
  });

  it('rocketmq.acl.plain.file names another default file; a home without files reads nothing', () => {
    const home = tempDir();
    mkdirSync(join(home, 'etc'));
    writeFileSync(join(home, 'etc', 'acl.yml'), 'accounts:\n  - {accessKey: x, secretKey: y}\n');
    assert.deepEqual(readPlainAclConfig({ rocketmqHome: home, plainAclFile: 'etc/acl.yml' }).accounts.map((a) => a.accessKey), ['x']);
    assert.deepEqual(readPlainAclConfig({ rocketmqHome: home, plainAclFile: 'conf/plain_acl.yml' }), { files: [], accounts: [], globalWhiteRemoteAddresses: [] });
  });
});

describe('one account → ACL 2.0 user and ACL', () => {
  const [normal, admin] = parsePlainAclFile(DISTRIBUTION_PLAIN_ACL, 'f').accounts;

  it('a normal account: Normal user, Custom entries per topic/group perm, Default Topic:* / Group:* entries', () => {
    const m = migrateAccount(normal!);
    assert.deepEqual(m.user, { username: 'RocketMQ', password: '12345678', userType: 'Normal', userStatus: 'enable' });
    assert.deepEqual(aclToInfo(m.acl!), {
      subject: 'User:RocketMQ',
      policies: [
        {
          policyType: 'Custom',
          entries: [
            { resource: 'Topic:topicA', actions: ['All'], decision: 'Deny' },
            { resource: 'Topic:topicB', actions: ['Pub', 'Sub'], decision: 'Allow' },
            { resource: 'Topic:topicC', actions: ['Sub'], decision: 'Allow' },
            { resource: 'Group:groupA', actions: ['All'], decision: 'Deny' },
            { resource: 'Group:groupB', actions: ['Pub', 'Sub'], decision: 'Allow' },
            { resource: 'Group:groupC', actions: ['Sub'], decision: 'Allow' },
          ],
        },
        {
          policyType: 'Default',
          entries: [
            { resource: 'Topic:*', actions: ['All'], decision: 'Deny' },
            { resource: 'Group:*', actions: ['Sub'], decision: 'Allow' },
          ],
        },
      ],
    });
    assert.deepEqual(m.notes, []);
  });

  it('an admin account: Super user, no ACL; its whiteRemoteAddress is not carried over (noted)', () => {
    const m = migrateAccount(admin!);
    assert.deepEqual(m.user, { username: 'rocketmq2', password: '12345678', userType: 'Super', userStatus: 'enable' });
    assert.equal(m.acl, null);
    assert.match(m.notes.join('\n'), /account rocketmq2: whiteRemoteAddress "192\.168\.1\.\*" not migrated/);
  });

  it('the migrated ACL decides as ACL 1.0 did for these requests (evaluator)', () => {
    const m = migrateAccount(normal!);
    const md = { getUser: (n: string) => (n === 'RocketMQ' ? m.user! : undefined), getAcl: (s: string) => (s === 'User:RocketMQ' ? m.acl! : undefined) };
    const decide = (resource: Resource, actions: Action[]): string => {
      try {
        authorize({ username: 'RocketMQ', resource, actions, sourceIp: '127.0.0.1' }, md);
        return 'allow';
      } catch (e) {
        assert.ok(e instanceof AuthorizationError);
        return /deny/.test(e.message) ? 'deny' : 'none';
      }
    };
    assert.equal(decide(topicResource('topicB'), ['Pub']), 'allow');
    assert.equal(decide(topicResource('topicB'), ['Sub']), 'allow');
    assert.equal(decide(topicResource('topicC'), ['Sub']), 'allow');
    assert.equal(decide(topicResource('topicA'), ['Pub']), 'deny');
    assert.equal(decide(topicResource('other'), ['Pub']), 'deny', 'defaultTopicPerm DENY');
    assert.equal(decide(groupResource('anyGroup'), ['Sub']), 'allow', 'defaultGroupPerm SUB');
    assert.equal(decide(groupResource('%RETRY%groupA'), ['Sub']), 'deny', 'groupA=DENY covers its retry topic');
    assert.equal(decide(groupResource('groupC'), ['Sub']), 'allow');
  });

  it('as Apache 5.3.3 (entries chosen by action): topicA=PUB with defaultTopicPerm SUB lets topicA be subscribed, which ACL 1.0 refused (docs/security.md)', () => {
    const m = migrateAccount({ accessKey: 'u', secretKey: 's', whiteRemoteAddress: null, admin: false, defaultTopicPerm: 'SUB', defaultGroupPerm: null, topicPerms: ['topicA=PUB'], groupPerms: [] });
    const md = { getUser: () => m.user!, getAcl: () => m.acl! };
    assert.doesNotThrow(() => authorize({ username: 'u', resource: topicResource('topicA'), actions: ['Sub'], sourceIp: '127.0.0.1' }, md));
    assert.doesNotThrow(() => authorize({ username: 'u', resource: topicResource('topicA'), actions: ['Pub'], sourceIp: '127.0.0.1' }, md));
    assert.throws(() => authorize({ username: 'u', resource: topicResource('other'), actions: ['Pub'], sourceIp: '127.0.0.1' }, md), /no matched policies/);
  });

  it('tsmq departs from Apache\'s migrator: an unknown perm ("pub", "PUB | SUB", "ANY") is Deny, as ACL 1.0 read it, not [All] Allow', () => {
    const m = migrateAccount({ accessKey: 'u', secretKey: 's', whiteRemoteAddress: null, admin: false, defaultTopicPerm: 'ANY', defaultGroupPerm: null, topicPerms: ['t1=pub', 't2=PUB | SUB', ' t3 = SUB '], groupPerms: [] });
    const info = aclToInfo(m.acl!) as { policies: Array<{ entries: unknown[] }> };
    assert.deepEqual(info.policies[0]!.entries, [
      { resource: 'Topic:t1', actions: ['All'], decision: 'Deny' },
      { resource: 'Topic:t2', actions: ['All'], decision: 'Deny' },
      { resource: 'Topic:t3', actions: ['Sub'], decision: 'Allow' },
    ]);
    assert.deepEqual(info.policies[1]!.entries, [{ resource: 'Topic:*', actions: ['All'], decision: 'Deny' }]);
    assert.equal(m.notes.filter((n) => /unknown permission .* taken as DENY/.test(n)).length, 3, m.notes.join('\n'));
  });

  it('items that are not name=PERM, blank names and names with * are skipped (noted); a repeated name: the later wins', () => {
    const m = migrateAccount({ accessKey: 'u', secretKey: 's', whiteRemoteAddress: null, admin: false, defaultTopicPerm: null, defaultGroupPerm: null, topicPerms: ['justname', 'a=PUB=SUB', ' =PUB', 'pre*=PUB', 'dup=PUB', 'a==SUB', 'dup=DENY'], groupPerms: [] });
    assert.deepEqual((aclToInfo(m.acl!) as { policies: Array<{ entries: unknown[] }> }).policies[0]!.entries, [
      { resource: 'Topic:a', actions: ['Sub'], decision: 'Allow' }, // "a==SUB": empty tokens dropped, as Apache's StringUtils.split
      { resource: 'Topic:dup', actions: ['All'], decision: 'Deny' },
    ]);
    assert.equal(m.notes.length, 5, m.notes.join('\n'));
  });

  it('an account without accessKey or secretKey is not migrated; one without perms gets no ACL', () => {
    const base = { whiteRemoteAddress: null, admin: false, defaultTopicPerm: null, defaultGroupPerm: null, topicPerms: [], groupPerms: [] };
    assert.equal(migrateAccount({ ...base, accessKey: null, secretKey: 's' }).user, null);
    assert.deepEqual(migrateAccount({ ...base, accessKey: 'k', secretKey: null }).notes, ['account k: no secretKey, skipped']);
    const bare = migrateAccount({ ...base, accessKey: 'k', secretKey: 's' });
    assert.deepEqual([bare.user?.userType, bare.acl], ['Normal', null]);
  });
});

describe('the broker migrator (users.json / acls.json)', () => {
  it('creates every account once; a restart or a user changed since is left alone; malformed files stop it', async () => {
    const home = tempDir();
    const configDir = join(tempDir(), 'config');
    mkdirSync(join(home, 'conf'), { recursive: true });
    writeFileSync(join(home, 'conf', 'plain_acl.yml'), DISTRIBUTION_PLAIN_ACL + '  - {accessKey: nokey}\n');
    const loc = { rocketmqHome: home, plainAclFile: 'conf/plain_acl.yml' };
    const md = await AuthMetadataManager.open(configDir, { initUser: { username: 'rocketmq2', password: 'other' }, innerCredentials: null });
    const r1 = await migrateAuthFromV1(loc, md, silentLogger);
    assert.deepEqual(r1.migrated, ['RocketMQ (Normal)']);
    assert.deepEqual(r1.existing, ['rocketmq2'], 'the initial user of that name exists already: kept as it is, as Apache (init user first)');
    assert.deepEqual(r1.failed, ['account nokey: no secretKey, skipped']);
    assert.deepEqual(r1.adminAccounts, ['rocketmq2']);
    assert.deepEqual(innerCredentialsFromMigration(r1, md), { accessKey: 'rocketmq2', secretKey: 'other' }, 'signs with the Super user\'s current password');
    assert.equal(innerCredentialsFromMigration({ ...r1, adminAccounts: ['RocketMQ'] }, md), null, 'a Normal user never signs for the broker');
    const users = JSON.parse(readFileSync(join(configDir, 'users.json'), 'utf8')) as { users: Array<{ username: string; password: string; userType: string }> };
    assert.deepEqual(users.users.map((u) => `${u.username}:${u.password}:${u.userType}`), ['RocketMQ:12345678:Normal', 'rocketmq2:other:Super']);
    const acls = JSON.parse(readFileSync(join(configDir, 'acls.json'), 'utf8')) as { acls: Array<{ subject: string; policies: Array<{ policyType: string; entries: unknown[] }> }> };
    assert.deepEqual(acls.acls.map((a) => `${a.subject}:${a.policies.map((p) => `${p.policyType}=${p.entries.length}`).join(',')}`), ['User:RocketMQ:Custom=6,Default=2']);

    await md.updateUser({ username: 'RocketMQ', password: 'rotated', userType: null, userStatus: null });
    const reopened = await AuthMetadataManager.open(configDir, { initUser: null, innerCredentials: null });
    const r2 = await migrateAuthFromV1(loc, reopened, silentLogger);
    assert.deepEqual([r2.migrated, r2.existing], [[], ['RocketMQ', 'rocketmq2']]);
    assert.equal(reopened.getUser('RocketMQ')?.password, 'rotated', 'a restart does not undo changes made since');

    writeFileSync(join(home, 'conf', 'plain_acl.yml'), 'accounts:\n  - {accessKey: z, secretKey: z, topicPerm: [a=PUB]}\n');
    await assert.rejects(migrateAuthFromV1(loc, reopened, silentLogger), (e: unknown) => e instanceof PlainAclFileError && /accounts\[0\]: unknown key "topicPerm"/.test(e.message));
    assert.equal(reopened.getUser('z'), undefined, 'nothing of a malformed file is migrated');
  });
});

describe('the RocketMQ home itself', () => {
  it('a rocketmqHome that is not a directory stops the start naming the key (a typo, or a pasted end-of-line "# comment"), instead of a broker with no users', async () => {
    const configDir = join(tempDir(), 'config');
    const md = await AuthMetadataManager.open(configDir, { initUser: null, innerCredentials: null });
    const missing = join(tempDir(), 'no-such-home');
    await assert.rejects(migrateAuthFromV1({ rocketmqHome: missing, plainAclFile: 'conf/plain_acl.yml' }, md, silentLogger), (e: unknown) => e instanceof ConfigError && e.key === 'rocketmqHome' && e.message === `invalid config rocketmqHome=${missing}: no such directory (the RocketMQ home holding conf/plain_acl.yml, from rocketmqHome / rocketmq.home.dir or $ROCKETMQ_HOME)`);
    const commented = `${tempDir()}          # the home holding conf/plain_acl.yml`;
    await assert.rejects(migrateAuthFromV1({ rocketmqHome: commented, plainAclFile: 'conf/plain_acl.yml' }, md, silentLogger), (e: unknown) => e instanceof ConfigError && /no such directory .*\(a \.properties value runs to the end of its line: put a # comment on a line of its own\)$/.test(e.message));
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, 'x');
    await assert.rejects(migrateAuthFromV1({ rocketmqHome: file, plainAclFile: 'conf/plain_acl.yml' }, md, silentLogger), (e: unknown) => e instanceof ConfigError && /rocketmqHome=.*a-file: not a directory/.test(e.message));
    const empty = tempDir();
    const r = await migrateAuthFromV1({ rocketmqHome: empty, plainAclFile: 'conf/plain_acl.yml' }, md, silentLogger);
    assert.deepEqual([r.files, r.migrated], [[], []], 'an existing home without files: nothing migrated, the start goes on (warned)');
  });
});

describe('the start warning for aclEnable=true', () => {
  const report = (files: string[]) => ({ files, migrated: [], existing: [], failed: [], adminAccounts: [], whiteAddresses: { global: [], byAccount: new Map<string, string>() } });
  it('says what enforces instead; with no file found and no user, that every client is refused and what to do', () => {
    assert.match(aclEnableIgnoredWarning(report(['/h/conf/plain_acl.yml']), 3), /enforces, with the plain_acl\.yml accounts migrated$/);
    assert.equal(
      aclEnableIgnoredWarning(report([]), 0),
      'aclEnable=true (ACL 1.0) is ignored, as by Apache 5.3.3: ACL 2.0 (authenticationEnabled, authorizationEnabled) enforces, but no ACL 1.0 file was found to migrate and there is no user: every client is refused until one exists (put plain_acl.yml under rocketmqHome, or set initAuthenticationUser, then restart; docs/security.md "From ACL 1.0")',
    );
    assert.match(aclEnableIgnoredWarning(report([]), 2), /no ACL 1\.0 file was found to migrate, the 2 existing user\(s\) apply$/);
    assert.match(aclEnableIgnoredWarning(null, 0), /plain_acl\.yml is not read without migrateAuthFromV1Enabled=true$/);
  });
});

describe('config: aclEnable and migrateAuthFromV1Enabled', () => {
  it('aclEnable=true without ACL 2.0 still stops the start, now naming the migration keys', () => {
    for (const raw of [{ aclEnable: 'true' } as Record<string, string>, { aclEnable: 'true', authenticationEnabled: 'true' }, { aclEnable: 'true', migrateAuthFromV1Enabled: 'true', rocketmqHome: '/x' }]) {
      assert.throws(() => resolveAuthConfig(raw, {}), (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.equal(e.key, 'aclEnable');
        assert.match(e.message, /removed in Apache RocketMQ 5\.3\.3/);
        assert.match(e.message, /migrateAuthFromV1Enabled=true/);
        assert.match(e.message, /authenticationEnabled=true and authorizationEnabled=true/);
        return true;
      });
    }
  });

  it('aclEnable=true with authentication and authorization on is accepted (ignored, as Apache 5.3.3; ACL 2.0 enforces)', () => {
    const c = resolveAuthConfig({ aclEnable: 'true', authenticationEnabled: 'true', authorizationEnabled: 'true' }, {});
    assert.deepEqual([c.aclEnable, c.authenticationEnabled, c.authorizationEnabled, c.migrateFromV1], [true, true, true, null]);
  });

  it('migrateAuthFromV1Enabled=true takes rocketmqHome (alias rocketmq.home.dir), else $ROCKETMQ_HOME; without either it stops the start', () => {
    assert.deepEqual(resolveAuthConfig({ migrateAuthFromV1Enabled: 'true', rocketmqHome: '/opt/rmq' }, { ROCKETMQ_HOME: '/env' }).migrateFromV1, { rocketmqHome: '/opt/rmq', plainAclFile: 'conf/plain_acl.yml' });
    assert.deepEqual(resolveAuthConfig({ migrateAuthFromV1Enabled: 'true', 'rocketmq.home.dir': '/p', 'rocketmq.acl.plain.file': 'conf/my.yml' }, {}).migrateFromV1, { rocketmqHome: '/p', plainAclFile: 'conf/my.yml' });
    assert.deepEqual(resolveAuthConfig({ migrateAuthFromV1Enabled: 'true' }, { ROCKETMQ_HOME: '/env' }).migrateFromV1?.rocketmqHome, '/env');
    assert.throws(() => resolveAuthConfig({ migrateAuthFromV1Enabled: 'true' }, {}), (e: unknown) => e instanceof ConfigError && e.key === 'migrateAuthFromV1Enabled' && /rocketmqHome/.test(e.message));
    assert.equal(resolveAuthConfig({ rocketmqHome: '/opt/rmq' }, {}).migrateFromV1, null, 'off by default');
  });
});
