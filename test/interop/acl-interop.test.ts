/**
 * ACL 2.0 judged by Apache's own clients: `tsmq start` with authenticationEnabled and
 * authorizationEnabled and an initAuthenticationUser (super user), then
 *   1. Apache RocketMQ 5.3.3 mqadmin (MQAdminStartup, AclClientRPCHook of the super user):
 *      updateTopic, createUser/updateUser/getUser/listUser/deleteUser, createAcl/updateAcl/getAcl/
 *      deleteAcl/listAcl (codes 3001-3010), a 5.3.3 producer and push consumer as a normal user;
 *   2. Apache RocketMQ 4.9.8 producer and push consumer with AclClientRPCHook;
 * and every refusal case a named test: unsigned, wrong secret, unknown user, disabled user, no Pub
 * permission, body altered after signing, a normal user managing users. Each must be refused with
 * NO_PERMISSION (16) and Apache's remark. Skips when `java` or `mvn` is missing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess } from '../support/tsmq-process.js';
import { assertRanOk, buildPeer, javaSkipReason, runJava, type JavaRun } from './support/java-peers.js';

type Line = Record<string, unknown>;
const linesOf = (run: JavaRun, type: string): Line[] => run.lines.filter((l) => l.type === type);
const ADMIN = { ak: 'rocketmq2', sk: '12345678' };
const TOPIC = 'AclIopTopic';
const GROUP = 'GAclIop';
const N = 8;

describe('ACL 2.0 against Apache RocketMQ 5.3.3 (client + mqadmin) and 4.9.8 clients with AclClientRPCHook', { skip: javaSkipReason(), timeout: 300_000 }, () => {
  let storeDir: string;
  let broker: TsmqProcess;
  let run5: JavaRun;
  let run4: JavaRun;
  let runG: JavaRun;

  const mq = (cmd: string, nth = 0): string => (linesOf(run5, 'mqadmin').filter((l) => l.cmd === cmd)[nth]?.output as string) ?? '';
  const refused = (run: JavaRun, kase: string): Line => {
    const r = linesOf(run, 'refused').find((l) => l.case === kase);
    assert.ok(r, `no refusal line for ${kase}; unexpected: ${JSON.stringify(linesOf(run, 'unexpected'))}\n${run.stderr.slice(-2000)}`);
    return r;
  };

  before(async () => {
    const [p5, p4, pg] = await Promise.all([buildPeer('rocketmq5'), buildPeer('rocketmq4'), buildPeer('grpc5')]);
    storeDir = mkdtempSync(join(tmpdir(), 'tsmq-interop-acl-'));
    broker = await TsmqProcess.start({
      storeDir,
      options: {
        authenticationEnabled: 'true',
        authorizationEnabled: 'true',
        initAuthenticationUser: JSON.stringify({ username: ADMIN.ak, password: ADMIN.sk }),
      },
    });
    run5 = await runJava(p5, 'tsmq.interop.AclPeer5', [broker.namesrvAddr, broker.brokerAddr, ADMIN.ak, ADMIN.sk, TOPIC, GROUP, String(N)], { timeoutMs: 120_000 });
    assertRanOk(run5, 'AclPeer5');
    run4 = await runJava(p4, 'tsmq.interop.AclPeer4', [broker.namesrvAddr, TOPIC, GROUP, String(N)], { timeoutMs: 90_000 });
    assertRanOk(run4, 'AclPeer4');
    runG = await runJava(pg, 'tsmq.interop.grpc5.AclGrpcPeer', [broker.grpcEndpoints, TOPIC, GROUP, String(N)], { timeoutMs: 120_000 });
    assertRanOk(runG, 'AclGrpcPeer');
  });

  after(async () => {
    await broker?.stop();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  it('5.3.3 mqadmin manages users and ACLs with the super user (codes 3001-3010), durably in config/users.json and acls.json', () => {
    assert.deepEqual(linesOf(run5, 'error'), [], run5.stderr.slice(-3000));
    assert.match(mq('updateTopic'), /create topic to .* success/, mq('updateTopic'));
    assert.match(mq('createUser', 0), /create user to .* success/i, mq('createUser', 0));
    assert.match(mq('getUser'), /alice/);
    assert.match(mq('getUser'), /Normal/);
    const list1 = mq('listUser', 0);
    for (const u of ['rocketmq2', 'alice', 'bob', 'carol']) assert.match(list1, new RegExp(u), list1);
    assert.match(list1, /disable/, 'carol was disabled by updateUser');
    const bobAcl = mq('getAcl');
    assert.match(bobAcl, /Topic:Other\*/, bobAcl);
    assert.match(bobAcl, /Deny/, 'updateAcl changed the Topic:Other* entry to Get/Deny');
    const listAcl = mq('listAcl');
    assert.match(listAcl, /User:alice/);
    assert.match(listAcl, new RegExp(`Group:${GROUP}`));
    assert.doesNotMatch(listAcl, /Other\*/, 'deleteAcl removed the Topic:Other* entry');
    const list2 = mq('listUser', 1);
    assert.doesNotMatch(list2, /carol/, 'deleteUser removed carol');
    assert.match(list2, /alice/);
    const users = JSON.parse(readFileSync(join(storeDir, 'config', 'users.json'), 'utf8')) as { users: Array<{ username: string; userType: string }> };
    assert.deepEqual(users.users.map((u) => `${u.username}:${u.userType}`), ['alice:Normal', 'bob:Normal', 'rocketmq2:Super']);
    const acls = JSON.parse(readFileSync(join(storeDir, 'config', 'acls.json'), 'utf8')) as { acls: Array<{ subject: string; policies: Array<{ entries: Array<{ resource: string; actions: string[]; sourceIps?: string[] }> }> }> };
    const bob = acls.acls.find((a) => a.subject === 'User:bob');
    assert.deepEqual(bob?.policies[0]?.entries, [{ resource: `Topic:${TOPIC}`, actions: ['Sub'], sourceIps: ['127.0.0.1', '10.0.0.0/8'], decision: 'Allow' }]);
  });

  it('5.3.3: a normal user is refused createUser (NO_PERMISSION, no permission on Cluster)', () => {
    const out = mq('createUser', 3);
    assert.match(out, /CODE: 16|NO_PERMISSION|no permission/i, out);
    assert.match(out, /User:alice has no permission to access Cluster:/, out);
  });

  it('5.3.3 producer and push consumer as alice send and read every message', () => {
    assert.equal(linesOf(run5, 'sent').filter((s) => s.status === 'SEND_OK').length, N);
    const keys = new Set(linesOf(run5, 'recv').map((r) => r.key));
    for (let i = 0; i < N; i++) assert.ok(keys.has(`k${i}`), `k${i} not consumed; got ${[...keys].join(',')}`);
  });

  for (const [kase, remark] of [
    ['unsigned', /username cannot be null/],
    ['wrongSecret', /check signature failed/],
    ['unknownUser', /User:nobody is not found/],
    ['disabledUser', /User:carol is disabled/],
    ['noPubPermission', /User:bob has no permission to access Topic:AclIopTopic from 127\.0\.0\.1, no matched policies/],
    ['alteredBody', /check signature failed/],
  ] as const) {
    it(`5.3.3 refusal: ${kase} send → NO_PERMISSION (16), "${remark.source}"`, () => {
      const r = refused(run5, kase);
      assert.equal(r.code, 16, JSON.stringify(r));
      assert.match(r.message as string, remark, JSON.stringify(r));
    });
  }

  it('4.9.8 producer and push consumer with AclClientRPCHook send and read every message', () => {
    assert.deepEqual(linesOf(run4, 'error'), [], run4.stderr.slice(-3000));
    assert.equal(linesOf(run4, 'sent').filter((s) => s.status === 'SEND_OK').length, N);
    const keys = new Set(linesOf(run4, 'recv').map((r) => r.key));
    for (let i = 0; i < N; i++) assert.ok(keys.has(`v4-k${i}`), `v4-k${i} not consumed; got ${[...keys].join(',')}`);
  });

  for (const [kase, remark] of [
    ['unsigned', /username cannot be null/],
    ['wrongSecret', /check signature failed/],
    ['noPubPermission', /User:bob has no permission to access Topic:AclIopTopic/],
    ['alteredBody', /check signature failed/],
  ] as const) {
    it(`4.9.8 refusal: ${kase} send → NO_PERMISSION (16)`, () => {
      const r = refused(run4, kase);
      assert.equal(r.code, 16, JSON.stringify(r));
      assert.match(r.message as string, remark, JSON.stringify(r));
    });
  }

  it('rocketmq-client-java 5.x (gRPC) with SessionCredentialsProvider: alice sends and receives every message', () => {
    assert.deepEqual(linesOf(runG, 'error'), [], runG.stderr.slice(-3000));
    assert.equal(linesOf(runG, 'sent').length, N);
    const keys = new Set(linesOf(runG, 'recv').map((r) => r.key));
    for (let i = 0; i < N; i++) assert.ok(keys.has(`g5-k${i}`), `g5-k${i} not received; got ${[...keys].join(',')}`);
  });

  for (const [kase, remark] of [
    ['unsigned', /username cannot be null/],
    ['wrongSecret', /check signature failed/],
    ['noPubPermission', /User:bob has no permission to access Topic:AclIopTopic/],
    ['groupNotAllowed', /User:alice has no permission to access Group:GAclIop-other/],
  ] as const) {
    it(`gRPC refusal: ${kase} → UNAUTHORIZED status with Apache's message`, () => {
      const r = refused(runG, kase);
      assert.match(r.message as string, remark, JSON.stringify(r));
    });
  }

  it('refusals are logged (rate-limited) with the access key and request code', () => {
    // which refusal is logged first depends on timing (later similar ones are suppressed): any one names code and key
    assert.match(broker.log, /authentication refused for [A-Z_0-9]+ \(\d+\) from 127\.0\.0\.1:\d+, AccessKey/, broker.log.slice(-3000));
    assert.match(broker.log, /authorization refused for [A-Z_0-9]+ \(\d+\) from 127\.0\.0\.1:\d+, AccessKey \\?"[a-z]+\\?", resource /, broker.log.slice(-3000));
    assert.doesNotMatch(broker.log, /config key (authenticationEnabled|authorizationEnabled|initAuthenticationUser) is not used/);
  });
});
