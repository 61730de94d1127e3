/**
 * A RocketMQ 4.9 installation upgraded to tsmq, judged by Apache's own clients: the RocketMQ home
 * keeps its conf/plain_acl.yml (ACL 1.0) and conf/tools.yml; broker.conf keeps `aclEnable=true`
 * and adds `migrateAuthFromV1Enabled=true` with ACL 2.0 on (Apache 5.3.3 removed ACL 1.0 and
 * offers only this migration). `tsmq start` then serves the plain_acl.yml accounts as ACL 2.0
 * users and ACLs, its broker signing its own requests as the file's admin account:
 *   1. Apache RocketMQ 5.3.3 mqadmin reading tools.yml itself (no hook given): updateTopic as the
 *      admin account works, listUser/getAcl show the migrated users and ACL, updateTopic as the
 *      normal account is refused (NO_PERMISSION 16, "... the decision is deny.");
 *   2. Apache RocketMQ 4.9.8 producer + push consumer with AclClientRPCHook of the normal account
 *      send and consume every message on its PUB|SUB topic; the admin account sends to a topic
 *      the normal account is denied; refused: a topicPerms DENY topic, a topic only
 *      defaultTopicPerm (DENY) covers, a wrong secret, an unknown accessKey; 4.9.8 mqadmin's
 *      updateAclConfig (code 50) gets REQUEST_CODE_NOT_SUPPORTED, as from Apache 5.3.3; the wrong
 *      secret's refusal is logged with why ACL 1.0 let it through (the account's whiteRemoteAddress);
 *   3. Apache's Go client (rocketmq-client-go/v2, primitive.Credentials) as the normal account
 *      sends and push-consumes on its topic, and is refused on the DENY topic (skipped without go).
 * Skips when `java` or `mvn` is missing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess } from '../support/tsmq-process.js';
import { assertRanOk, buildPeer, javaSkipReason, runJava, type JavaRun } from './support/java-peers.js';
import { buildGoPeer, explainGo, goSkipReason, linesOf as goLinesOf, runGoPeer, type BuiltGoPeer, type GoRun } from './support/go-peer.js';

type Line = Record<string, unknown>;
const linesOf = (run: JavaRun, type: string): Line[] => run.lines.filter((l) => l.type === type);
const N = 6;

/** A 4.9-style plain_acl.yml: an admin account and a normal one with topic/group perms. */
const PLAIN_ACL = `globalWhiteRemoteAddresses:
  - 10.10.103.*
accounts:
  - accessKey: RocketMQ
    secretKey: 12345678
    whiteRemoteAddress: 127.0.0.1
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - V1Topic=PUB|SUB
      - V1Secret=DENY
    groupPerms:
      - GV1=SUB
  - accessKey: rocketmq2
    secretKey: 87654321
    whiteRemoteAddress: 192.168.1.*
    admin: true
`;

describe('ACL 1.0 plain_acl.yml migrated to ACL 2.0 (migrateAuthFromV1Enabled), judged by 5.3.3 mqadmin with tools.yml and 4.9.8 clients', { skip: javaSkipReason(), timeout: 240_000 }, () => {
  let home: string;
  let storeDir: string;
  let broker: TsmqProcess;
  let runAdmin: JavaRun;
  let run4: JavaRun;
  let goPeer: Promise<BuiltGoPeer> | null = null;

  const mq = (cmd: string, ak: string): string => (linesOf(runAdmin, 'mqadmin').find((l) => l.cmd === cmd && l.ak === ak)?.output as string) ?? '';
  const refused = (kase: string): Line => {
    const r = linesOf(run4, 'refused').find((l) => l.case === kase);
    assert.ok(r, `no refusal line for ${kase}; unexpected: ${JSON.stringify(linesOf(run4, 'unexpected'))}\n${run4.stderr.slice(-2000)}`);
    return r;
  };

  before(async () => {
    if (!goSkipReason()) {
      goPeer = buildGoPeer();
      goPeer.catch(() => undefined); // reported by the Go test
    }
    const [p5, p4] = await Promise.all([buildPeer('rocketmq5'), buildPeer('rocketmq4')]);
    home = mkdtempSync(join(tmpdir(), 'tsmq-rocketmq-home-'));
    mkdirSync(join(home, 'conf'));
    writeFileSync(join(home, 'conf', 'plain_acl.yml'), PLAIN_ACL);
    storeDir = mkdtempSync(join(tmpdir(), 'tsmq-interop-aclv1-'));
    broker = await TsmqProcess.start({
      storeDir,
      options: {
        aclEnable: 'true',
        migrateAuthFromV1Enabled: 'true',
        rocketmqHome: home,
        authenticationEnabled: 'true',
        authorizationEnabled: 'true',
        // no innerClientAuthenticationCredentials / initAuthenticationUser: the broker registers
        // with tsmq start's authenticating nameserver as plain_acl.yml's first admin account
      },
    });
    const b = broker.brokerAddr;
    runAdmin = await runJava(p5, 'tsmq.interop.ToolsYmlMqadminPeer5', [
      home,
      'tools', 'rocketmq2', '87654321',
      '--', 'updateTopic', '-b', b, '-t', 'V1Topic', '-r', '2', '-w', '2',
      '--', 'updateTopic', '-b', b, '-t', 'V1Secret', '-r', '1', '-w', '1',
      '--', 'listUser', '-b', b,
      '--', 'getAcl', '-b', b, '-s', 'User:RocketMQ',
      '--', 'tools', 'RocketMQ', '12345678',
      '--', 'updateTopic', '-b', b, '-t', 'V1Made', '-r', '1', '-w', '1',
    ], { timeoutMs: 90_000, jvmArgs: [`-Drocketmq.home.dir=${home}`] });
    assertRanOk(runAdmin, 'ToolsYmlMqadminPeer5');
    run4 = await runJava(p4, 'tsmq.interop.AclV1Peer4', [
      broker.namesrvAddr, String(N),
      'ok-normal=RocketMQ:12345678:V1Topic:GV1',
      'ok-admin=rocketmq2:87654321:V1Secret',
      'topicDeny=RocketMQ:12345678:V1Secret',
      'defaultDeny=RocketMQ:12345678:V1Made',
      'wrongSecret=RocketMQ:not-the-secret:V1Topic',
      'unknownKey=nobody:12345678:V1Topic',
      `v1admin-super=rocketmq2:87654321:${broker.brokerAddr}`,
      `v1admin-normal=RocketMQ:12345678:${broker.brokerAddr}`,
    ], { timeoutMs: 90_000 });
    assertRanOk(run4, 'AclV1Peer4');
  });

  after(async () => {
    await broker?.stop();
    for (const d of [storeDir, home]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('the broker migrated both accounts at start into config/users.json and acls.json (admin → Super) and signs its own requests as the admin account', () => {
    const users = JSON.parse(readFileSync(join(storeDir, 'config', 'users.json'), 'utf8')) as { users: Array<{ username: string; password: string; userType: string }> };
    assert.deepEqual(users.users.map((u) => `${u.username}:${u.password}:${u.userType}`), ['RocketMQ:12345678:Normal', 'rocketmq2:87654321:Super']);
    const acls = JSON.parse(readFileSync(join(storeDir, 'config', 'acls.json'), 'utf8')) as { acls: Array<{ subject: string; policies: Array<{ policyType: string; entries: Array<{ resource: string; actions: string[]; decision: string }> }> }> };
    assert.deepEqual(
      acls.acls.map((a) => ({ subject: a.subject, policies: a.policies.map((p) => `${p.policyType}: ${p.entries.map((e) => `${e.resource} ${e.actions.join('+')} ${e.decision}`).join(', ')}`) })),
      [{ subject: 'User:RocketMQ', policies: ['Custom: Topic:V1Topic Pub+Sub Allow, Topic:V1Secret All Deny, Group:GV1 Sub Allow', 'Default: Topic:* All Deny, Group:* Sub Allow'] }],
    );
    assert.match(broker.log, /aclEnable=true \(ACL 1\.0\) is ignored, as by Apache 5\.3\.3/, broker.log.slice(-3000));
    assert.doesNotMatch(broker.log, /register broker to nameserver .* failed/, 'the broker registered (signed as rocketmq2)');
    assert.match(broker.log, /globalWhiteRemoteAddresses \[\\?"10\.10\.103\.\*\\?"\] not migrated/);
  });

  it('5.3.3 mqadmin with tools.yml of the admin account: updateTopic succeeds, listUser and getAcl show the migrated users and ACL', () => {
    assert.match(mq('updateTopic', 'rocketmq2'), /create topic to .* success/, mq('updateTopic', 'rocketmq2'));
    const users = mq('listUser', 'rocketmq2');
    assert.match(users, /RocketMQ\s.*Normal/, users);
    assert.match(users, /rocketmq2\s.*Super/, users);
    const acl = mq('getAcl', 'rocketmq2');
    for (const re of [/Topic:V1Topic/, /Topic:V1Secret/, /Group:GV1/, /Topic:\*/, /Group:\*/]) assert.match(acl, re, acl);
  });

  it('5.3.3 mqadmin with tools.yml of the normal account: updateTopic is refused (NO_PERMISSION, decision deny)', () => {
    const out = mq('updateTopic', 'RocketMQ');
    assert.match(out, /CODE: 16/, out);
    assert.match(out, /User:RocketMQ has no permission to access Topic:V1Made from 127\.0\.0\.1, the decision is deny\./, out);
    assert.doesNotMatch(out, /success/, out);
  });

  it('4.9.8 producer and push consumer (AclClientRPCHook, normal account) send and consume every message of its PUB|SUB topic in its SUB group', () => {
    assert.deepEqual(linesOf(run4, 'error'), [], run4.stderr.slice(-3000));
    const sent = linesOf(run4, 'sent').filter((s) => s.case === 'ok-normal');
    assert.deepEqual(sent.map((s) => s.status), Array(N).fill('SEND_OK'));
    const keys = new Set(linesOf(run4, 'recv').filter((r) => r.case === 'ok-normal').map((r) => r.key));
    for (let i = 0; i < N; i++) assert.ok(keys.has(`ok-normal-k${i}`), `ok-normal-k${i} not consumed; got ${[...keys].join(',')}`);
  });

  it('4.9.8 producer as the admin account (Super) sends to the topic the normal account is denied', () => {
    assert.deepEqual(linesOf(run4, 'sent').filter((s) => s.case === 'ok-admin').map((s) => s.status), Array(N).fill('SEND_OK'));
  });

  for (const [kase, remark] of [
    ['topicDeny', /User:RocketMQ has no permission to access Topic:V1Secret from 127\.0\.0\.1, the decision is deny\./],
    ['defaultDeny', /User:RocketMQ has no permission to access Topic:V1Made from 127\.0\.0\.1, the decision is deny\./],
    ['wrongSecret', /check signature failed\./],
    ['unknownKey', /User:nobody is not found\./],
  ] as const) {
    it(`4.9.8 refusal: ${kase} → NO_PERMISSION (16), "${remark.source}"`, () => {
      const r = refused(kase);
      assert.equal(r.code, 16, JSON.stringify(r));
      assert.match(r.message as string, remark, JSON.stringify(r));
    });
  }

  it('a refusal ACL 1.0 would have let through (the account\'s whiteRemoteAddress 127.0.0.1 skipped signature and permission checks) is logged with why and what to do; the client keeps Apache\'s remark', () => {
    assert.match(
      broker.log,
      /authentication refused for SEND_MESSAGE(_V2)? \(\d+\) from 127\.0\.0\.1:\d+, AccessKey \\?"RocketMQ\\?": check signature failed\. \[upgraded from ACL 1\.0: plain_acl\.yml gave account \\?"RocketMQ\\?" whiteRemoteAddress \\?"127\.0\.0\.1\\?", which let 127\.0\.0\.1 in without checking its signature or permissions under ACL 1\.0; ACL 2\.0 checks every request: the client must sign with the account's secretKey/,
      broker.log.slice(-4000),
    );
    assert.doesNotMatch(refused('wrongSecret').message as string, /upgraded from ACL 1\.0/);
  });

  it('Go client (primitive.Credentials) as the normal account: sends and push-consumes on its topic; refused on the DENY topic', { skip: goSkipReason() }, async () => {
    const peer = await goPeer!;
    const creds = { accessKey: 'RocketMQ', secretKey: '12345678' };
    const [send, refusedSend] = await Promise.all([
      runGoPeer(peer, broker.namesrvAddr, 'send', { ...creds, topic: 'V1Topic', n: 4, modes: 'sync', prefix: 'gov1', retry: 0 }),
      runGoPeer(peer, broker.namesrvAddr, 'send', { ...creds, topic: 'V1Secret', n: 1, modes: 'sync', prefix: 'gov1deny', retry: 0, producerGroup: 'PID_GO_DENY' }),
    ]);
    assert.deepEqual(goLinesOf(send, 'error'), [], explainGo(send));
    assert.deepEqual(goLinesOf(send, 'sent').map((l) => l.key), ['gov1-sync-0', 'gov1-sync-1', 'gov1-sync-2', 'gov1-sync-3'], explainGo(send));
    assert.equal(goLinesOf(refusedSend, 'sent').length, 0, explainGo(refusedSend));
    const err = goLinesOf(refusedSend, 'error').map((l) => String(l.message)).join('\n');
    assert.match(err, /CODE: 16/, explainGo(refusedSend));
    assert.match(err, /User:RocketMQ has no permission to access Topic:V1Secret from 127\.0\.0\.1, the decision is deny\./, explainGo(refusedSend));
    // GV1go is covered by defaultGroupPerm SUB
    const push: GoRun = await runGoPeer(peer, broker.namesrvAddr, 'push', { ...creds, topic: 'V1Topic', group: 'GV1go', expect: N + 4, idleMs: 1000, timeoutMs: 20_000 });
    assert.deepEqual(goLinesOf(push, 'error'), [], explainGo(push));
    const bodies = new Set(goLinesOf(push, 'recv').map((l) => String(l.body)));
    for (let i = 0; i < 4; i++) assert.ok(bodies.has(`gov1-sync-${i}`), `gov1-sync-${i} not consumed; got ${[...bodies].join(',')}`);
  });

  it('4.9.8 mqadmin updateAclConfig (code 50, ACL 1.0 only): REQUEST_CODE_NOT_SUPPORTED (3) for admin and normal accounts, as Apache 5.3.3; no account is created', () => {
    for (const kase of ['v1admin-super', 'v1admin-normal']) {
      const r = refused(kase);
      assert.equal(r.code, 3, JSON.stringify(r));
      assert.match(r.message as string, /request type 50 not supported \(UPDATE_AND_CREATE_ACL_CONFIG is ACL 1\.0, removed in Apache RocketMQ 5\.3\.3 as in tsmq: manage users and ACLs with mqadmin 5\.x createUser\/createAcl\/updateAcl/, JSON.stringify(r));
    }
    const users = readFileSync(join(storeDir, 'config', 'users.json'), 'utf8');
    assert.doesNotMatch(users, /newAccount/);
    assert.doesNotMatch(readFileSync(join(home, 'conf', 'plain_acl.yml'), 'utf8'), /newAccount/);
  });
});
