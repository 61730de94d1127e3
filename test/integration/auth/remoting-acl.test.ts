/**
 * ACL 2.0 on the broker remoting port, in process (real store, real sockets; requests signed by
 * tsmq's signRemotingCommand, which the unit test pins to independently computed HMACs and the
 * interop test to Apache's AclClientRPCHook). For every request code that changes state or reads
 * messages, one named test each that (a) an unsigned request and (b) a request signed by a normal
 * user without a matching ACL entry are refused with NO_PERMISSION (16) and Apache's remark, and
 * that the state did not change; plus admin codes 3001-3010 and restart durability.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { signRemotingCommand, type SessionCredentials } from '../../../src/auth/acl-signature.js';
import type { ExtFieldValue, RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';

const ROOT: SessionCredentials = { accessKey: 'root', secretKey: 'root-secret' };
const ALICE: SessionCredentials = { accessKey: 'alice', secretKey: 'alice-secret' };
const EVE: SessionCredentials = { accessKey: 'eve', secretKey: 'eve-secret' };
const T = 'AclT';
const G = 'AclG';

const msgBody = Buffer.from('payload');
const heartbeat = (group: string, topic: string): Buffer =>
  Buffer.from(JSON.stringify({ clientID: 'c1', producerDataSet: [], consumerDataSet: [{ groupName: group, consumeType: 'CONSUME_PASSIVELY', messageModel: 'CLUSTERING', consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET', subscriptionDataSet: [{ topic, subString: '*', tagsSet: [], codeSet: [], subVersion: 1, expressionType: 'TAG' }], unitMode: false }] }));
const lockBody = Buffer.from(JSON.stringify({ consumerGroup: G, clientId: 'c1', onlyThisBroker: false, mqSet: [{ topic: T, brokerName: 'broker-acl', queueId: 0 }] }));

/** Every request code that changes state or reads messages or metadata: code → [name, extFields, body]. */
const GUARDED: Array<[string, number, Record<string, ExtFieldValue>, Buffer | null]> = [
  ['SEND_MESSAGE', RequestCode.SEND_MESSAGE, { producerGroup: 'PG', topic: T, defaultTopic: 'TBW102', defaultTopicQueueNums: '4', queueId: '0', sysFlag: '0', bornTimestamp: '1', flag: '0', properties: '', reconsumeTimes: '0', unitMode: 'false', batch: 'false' }, msgBody],
  ['SEND_MESSAGE_V2', RequestCode.SEND_MESSAGE_V2, { a: 'PG', b: T, c: 'TBW102', d: '4', e: '0', f: '0', g: '1', h: '0', i: '', j: '0', k: 'false', m: 'false' }, msgBody],
  ['SEND_BATCH_MESSAGE', RequestCode.SEND_BATCH_MESSAGE, { a: 'PG', b: T, c: 'TBW102', d: '4', e: '0', f: '0', g: '1', h: '0', i: '', j: '0', k: 'false', m: 'true' }, msgBody],
  ['PULL_MESSAGE', RequestCode.PULL_MESSAGE, { consumerGroup: G, topic: T, queueId: '0', queueOffset: '0', maxMsgNums: '32', sysFlag: '0', commitOffset: '0', suspendTimeoutMillis: '0', subVersion: '0' }, null],
  ['QUERY_MESSAGE', RequestCode.QUERY_MESSAGE, { topic: T, key: 'k', maxNum: '32', beginTimestamp: '0', endTimestamp: '9999999999999' }, null],
  ['VIEW_MESSAGE_BY_ID', RequestCode.VIEW_MESSAGE_BY_ID, { offset: '0' }, null],
  ['HEART_BEAT', RequestCode.HEART_BEAT, {}, heartbeat(G, T)],
  ['UNREGISTER_CLIENT', RequestCode.UNREGISTER_CLIENT, { clientID: 'c1', consumerGroup: G }, null],
  ['GET_CONSUMER_LIST_BY_GROUP', RequestCode.GET_CONSUMER_LIST_BY_GROUP, { consumerGroup: G }, null],
  ['QUERY_CONSUMER_OFFSET', RequestCode.QUERY_CONSUMER_OFFSET, { consumerGroup: G, topic: T, queueId: '0' }, null],
  ['UPDATE_CONSUMER_OFFSET', RequestCode.UPDATE_CONSUMER_OFFSET, { consumerGroup: G, topic: T, queueId: '0', commitOffset: '5' }, null],
  ['CONSUMER_SEND_MSG_BACK', RequestCode.CONSUMER_SEND_MSG_BACK, { group: G, offset: '0', delayLevel: '0', originMsgId: 'x', originTopic: T }, null],
  ['END_TRANSACTION', RequestCode.END_TRANSACTION, { producerGroup: 'PG', tranStateTableOffset: '0', commitLogOffset: '0', commitOrRollback: '8', fromTransactionCheck: 'false', msgId: 'x', topic: T }, null],
  ['LOCK_BATCH_MQ', RequestCode.LOCK_BATCH_MQ, {}, lockBody],
  ['UNLOCK_BATCH_MQ', RequestCode.UNLOCK_BATCH_MQ, {}, lockBody],
  ['UPDATE_AND_CREATE_TOPIC', RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: 'EveTopic', defaultTopic: 'TBW102', readQueueNums: '1', writeQueueNums: '1', perm: '6', topicFilterType: 'SINGLE_TAG' }, null],
  ['DELETE_TOPIC_IN_BROKER', RequestCode.DELETE_TOPIC_IN_BROKER, { topic: T }, null],
  ['GET_ALL_TOPIC_CONFIG', RequestCode.GET_ALL_TOPIC_CONFIG, {}, null],
  ['GET_ALL_SUBSCRIPTIONGROUP_CONFIG', RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, {}, null],
  ['GET_ALL_CONSUMER_OFFSET', RequestCode.GET_ALL_CONSUMER_OFFSET, {}, null],
  ['GET_ALL_DELAY_OFFSET', RequestCode.GET_ALL_DELAY_OFFSET, {}, null],
  ['INVOKE_BROKER_TO_RESET_OFFSET', RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, { topic: T, group: G, timestamp: '0', isForce: 'true' }, null],
  ['GET_MAX_OFFSET', RequestCode.GET_MAX_OFFSET, { topic: T, queueId: '0' }, null],
  ['GET_MIN_OFFSET', RequestCode.GET_MIN_OFFSET, { topic: T, queueId: '0' }, null],
  ['GET_EARLIEST_MSG_STORETIME', RequestCode.GET_EARLIEST_MSG_STORETIME, { topic: T, queueId: '0' }, null],
  ['SEARCH_OFFSET_BY_TIMESTAMP', RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, { topic: T, queueId: '0', timestamp: '0' }, null],
  ['GET_TOPIC_STATS_INFO', RequestCode.GET_TOPIC_STATS_INFO, { topic: T }, null],
  ['GET_CONSUME_STATS', RequestCode.GET_CONSUME_STATS, { consumerGroup: G, topic: T }, null],
  ['DELETE_EXPIRED_COMMITLOG', RequestCode.DELETE_EXPIRED_COMMITLOG, {}, null],
  ['POP_MESSAGE', RequestCode.POP_MESSAGE, { consumerGroup: G, topic: T, queueId: '-1', maxMsgNums: '32', invisibleTime: '60000', pollTime: '0', bornTime: '1', initMode: '0' }, null],
  ['ACK_MESSAGE', RequestCode.ACK_MESSAGE, { consumerGroup: G, topic: T, queueId: '0', extraInfo: '0 1 60000 0 0 broker-acl 0 0', offset: '0' }, null],
  ['PEEK_MESSAGE', RequestCode.PEEK_MESSAGE, { consumerGroup: G, topic: T, queueId: '0', maxMsgNums: '1' }, null],
  ['CHANGE_MESSAGE_INVISIBLETIME', RequestCode.CHANGE_MESSAGE_INVISIBLETIME, { consumerGroup: G, topic: T, queueId: '0', extraInfo: '0 1 60000 0 0 broker-acl 0 0', offset: '0', invisibleTime: '1000' }, null],
  ['NOTIFICATION', RequestCode.NOTIFICATION, { consumerGroup: G, topic: T, queueId: '-1', pollTime: '0', bornTime: '1' }, null],
  ['BATCH_ACK_MESSAGE', RequestCode.BATCH_ACK_MESSAGE, {}, Buffer.from(JSON.stringify({ acks: [{ c: G, t: T, r: '0', q: 0, so: 0, rq: 0, pt: 1, it: 60000, b: 'AQ==' }] }))],
  ['QUERY_ASSIGNMENT', RequestCode.QUERY_ASSIGNMENT, {}, Buffer.from(JSON.stringify({ topic: T, consumerGroup: G, clientId: 'c1', strategyName: 'AVG', messageModel: 'CLUSTERING' }))],
  ['SET_MESSAGE_REQUEST_MODE', RequestCode.SET_MESSAGE_REQUEST_MODE, {}, Buffer.from(JSON.stringify({ topic: T, consumerGroup: G, mode: 'POP', popShareQueueNum: 0 }))],
  ['AUTH_CREATE_USER', RequestCode.AUTH_CREATE_USER, { username: 'mallory' }, Buffer.from(JSON.stringify({ username: 'mallory', password: 'm-secret' }))],
  ['AUTH_UPDATE_USER', RequestCode.AUTH_UPDATE_USER, { username: 'alice' }, Buffer.from(JSON.stringify({ username: 'alice', password: 'stolen' }))],
  ['AUTH_DELETE_USER', RequestCode.AUTH_DELETE_USER, { username: 'alice' }, null],
  ['AUTH_GET_USER', RequestCode.AUTH_GET_USER, { username: 'root' }, null],
  ['AUTH_LIST_USER', RequestCode.AUTH_LIST_USER, {}, null],
  ['AUTH_CREATE_ACL', RequestCode.AUTH_CREATE_ACL, { subject: 'User:eve' }, Buffer.from(JSON.stringify({ subject: 'User:eve', policies: [{ entries: [{ resource: '*', actions: ['All'], decision: 'Allow' }] }] }))],
  ['AUTH_UPDATE_ACL', RequestCode.AUTH_UPDATE_ACL, { subject: 'User:eve' }, Buffer.from(JSON.stringify({ subject: 'User:eve', policies: [{ entries: [{ resource: '*', actions: ['All'], decision: 'Allow' }] }] }))],
  ['AUTH_DELETE_ACL', RequestCode.AUTH_DELETE_ACL, { subject: 'User:alice' }, null],
  ['AUTH_GET_ACL', RequestCode.AUTH_GET_ACL, { subject: 'User:alice' }, null],
  ['AUTH_LIST_ACL', RequestCode.AUTH_LIST_ACL, {}, null],
];

describe('ACL 2.0 on the broker remoting port (in process)', { timeout: 60_000 }, () => {
  let dir: string;
  let broker: BrokerController;
  let client: RemotingClient;
  let addr: string;
  const brokerConfig = (): Record<string, string> => ({
    storePathRootDir: dir,
    listenPort: '0',
    namesrvAddr: '',
    brokerName: 'broker-acl',
    brokerClusterName: 'AclCluster',
    mappedFileSizeCommitLog: String(1024 * 1024),
    authenticationEnabled: 'true',
    authorizationEnabled: 'true',
    initAuthenticationUser: JSON.stringify({ username: ROOT.accessKey, password: ROOT.secretKey }),
  });

  const call = (code: number, ext: Record<string, ExtFieldValue>, body: Buffer | null, who: SessionCredentials | null): Promise<RemotingCommand> => {
    const cmd = createRequestCommand(code, { ...ext }, body);
    if (who) signRemotingCommand(cmd, who);
    return client.invokeSync(addr, cmd, 5000);
  };
  const ok = async (p: Promise<RemotingCommand>): Promise<RemotingCommand> => {
    const r = await p;
    assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    return r;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsmq-acl-'));
    broker = await BrokerController.create({ brokerConfig: brokerConfig(), logger: silentLogger });
    await broker.start();
    addr = `127.0.0.1:${broker.port}`;
    client = new RemotingClient({ logger: silentLogger });
    await ok(call(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: T, defaultTopic: 'TBW102', readQueueNums: '2', writeQueueNums: '2', perm: '6', topicFilterType: 'SINGLE_TAG' }, null, ROOT));
    for (const u of [ALICE, EVE]) {
      await ok(call(RequestCode.AUTH_CREATE_USER, { username: u.accessKey }, Buffer.from(JSON.stringify({ password: u.secretKey })), ROOT));
    }
    await ok(call(RequestCode.AUTH_CREATE_ACL, { subject: 'User:alice' }, Buffer.from(JSON.stringify({ subject: 'User:alice', policies: [{ policyType: 'Custom', entries: [{ resource: `Topic:${T}`, actions: ['Pub', 'Sub', 'Get'], decision: 'Allow' }, { resource: `Group:${G}`, actions: ['Sub', 'Get', 'Update'], decision: 'Allow' }] }] })), ROOT));
    // eve has an ACL, but only for an unrelated topic: every request below must miss it
    await ok(call(RequestCode.AUTH_CREATE_ACL, { subject: 'User:eve' }, Buffer.from(JSON.stringify({ policies: [{ entries: [{ resource: 'Topic:Elsewhere', actions: ['All'], decision: 'Allow' }] }] })), ROOT));
    await ok(call(RequestCode.SEND_MESSAGE_V2, GUARDED[1]![2], msgBody, ALICE));
  });

  after(async () => {
    await client?.close();
    await broker?.shutdown();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const [name, code, ext, body] of GUARDED) {
    it(`${name} (${code}): unsigned → 16 "username cannot be null."; eve (no matching entry) → 16 "no matched policies."`, async () => {
      const unsigned = await call(code, ext, body, null);
      assert.equal(unsigned.code, ResponseCode.NO_PERMISSION, `${unsigned.code} ${unsigned.remark}`);
      assert.equal(unsigned.remark, 'username cannot be null.');
      const eve = await call(code, ext, body, EVE);
      assert.equal(eve.code, ResponseCode.NO_PERMISSION, `${eve.code} ${eve.remark}`);
      assert.match(eve.remark ?? '', /^User:eve has no permission to access (Topic|Group|Cluster):\S+ from 127\.0\.0\.1, no matched policies\.$/);
    });
  }

  it('nothing eve or an unsigned caller tried changed state: users, ACLs, topic, offsets intact', async () => {
    const users = JSON.parse((await ok(call(RequestCode.AUTH_LIST_USER, {}, null, ROOT))).body!.toString()) as Array<{ username: string; password: string }>;
    assert.deepEqual(users.map((u) => u.username), ['alice', 'eve', 'root']);
    assert.equal(users.find((u) => u.username === 'alice')!.password, ALICE.secretKey);
    assert.ok(broker.ctx.topicConfigManager.selectTopicConfig(T), 'topic still exists');
    assert.equal(broker.ctx.topicConfigManager.selectTopicConfig('EveTopic'), undefined);
    assert.equal(broker.ctx.consumerOffsetManager.queryOffset(G, T, 0), -1);
    const eveAcl = JSON.parse((await ok(call(RequestCode.AUTH_GET_ACL, { subject: 'User:eve' }, null, ROOT))).body!.toString()) as { policies: Array<{ entries: Array<{ resource: string }> }> };
    assert.deepEqual(eveAcl.policies[0]!.entries.map((e) => e.resource), ['Topic:Elsewhere']);
  });

  it('alice may do what her ACL allows: send, pull, commit an offset', async () => {
    const sent = await ok(call(RequestCode.SEND_MESSAGE_V2, GUARDED[1]![2], msgBody, ALICE));
    assert.ok(sent.extFields?.msgId);
    await ok(call(RequestCode.UPDATE_CONSUMER_OFFSET, { consumerGroup: G, topic: T, queueId: '0', commitOffset: '1' }, null, ALICE));
    const q = await ok(call(RequestCode.QUERY_CONSUMER_OFFSET, { consumerGroup: G, topic: T, queueId: '0' }, null, ALICE));
    assert.equal(Number(q.extFields?.offset), 1);
    const refused = await call(RequestCode.DELETE_TOPIC_IN_BROKER, { topic: T }, null, ALICE);
    assert.equal(refused.code, ResponseCode.NO_PERMISSION);
    assert.equal(refused.remark, `User:alice has no permission to access Topic:${T} from 127.0.0.1, no matched policies.`);
  });

  it('a body changed after signing, an added field and a wrong key are refused ("check signature failed.")', async () => {
    const cmd = signRemotingCommand(createRequestCommand(RequestCode.SEND_MESSAGE_V2, { ...GUARDED[1]![2] }, msgBody), ALICE);
    cmd.body = Buffer.from('payloaD');
    const r1 = await client.invokeSync(addr, cmd, 5000);
    assert.deepEqual([r1.code, r1.remark], [16, 'check signature failed.']);
    const cmd2 = signRemotingCommand(createRequestCommand(RequestCode.SEND_MESSAGE_V2, { ...GUARDED[1]![2] }, msgBody), ALICE);
    cmd2.extFields!.b = 'OtherTopic';
    const r2 = await client.invokeSync(addr, cmd2, 5000);
    assert.deepEqual([r2.code, r2.remark], [16, 'check signature failed.']);
    const r3 = await call(RequestCode.SEND_MESSAGE_V2, GUARDED[1]![2], msgBody, { accessKey: 'alice', secretKey: 'wrong' });
    assert.deepEqual([r3.code, r3.remark], [16, 'check signature failed.']);
  });

  it('CHECK_CLIENT_CONFIG needs authentication only (as Apache)', async () => {
    const r = await call(RequestCode.CHECK_CLIENT_CONFIG, { clientId: 'c1', group: G }, Buffer.from(JSON.stringify({ group: G, subscriptionData: { topic: T, subString: '*', expressionType: 'TAG' } })), EVE);
    assert.notEqual(r.code, ResponseCode.NO_PERMISSION, r.remark ?? '');
    const u = await call(RequestCode.CHECK_CLIENT_CONFIG, { clientId: 'c1', group: G }, null, null);
    assert.equal(u.code, ResponseCode.NO_PERMISSION);
  });

  it('a code the broker does not serve: unsigned or wrongly signed → 16 first; eve (no ACL for it) → 3, retired ACL 1.0 code 50 with its hint (Apache: auth pipeline, then the default processor)', async () => {
    for (const code of [9999, 50]) {
      const unsigned = await call(code, {}, null, null);
      assert.deepEqual([unsigned.code, unsigned.remark], [ResponseCode.NO_PERMISSION, 'username cannot be null.'], String(code));
      const wrong = await call(code, {}, null, { accessKey: 'eve', secretKey: 'wrong' });
      assert.deepEqual([wrong.code, wrong.remark], [ResponseCode.NO_PERMISSION, 'check signature failed.'], String(code));
    }
    const unknown = await call(9999, {}, null, EVE);
    assert.deepEqual([unknown.code, unknown.remark], [ResponseCode.REQUEST_CODE_NOT_SUPPORTED, ' request type 9999 not supported']);
    const retired = await call(50, {}, null, EVE);
    assert.equal(retired.code, ResponseCode.REQUEST_CODE_NOT_SUPPORTED);
    assert.match(retired.remark ?? '', /^ request type 50 not supported \(UPDATE_AND_CREATE_ACL_CONFIG is ACL 1\.0, removed in Apache RocketMQ 5\.3\.3/);
  });

  it('SEND_MESSAGE (V1) to a retry topic %RETRY%G needs Sub on G, whatever producerGroup (or an added `group` field) the signed request names', async () => {
    const MALLORY: SessionCredentials = { accessKey: 'mallory', secretKey: 'mallory-secret' };
    await ok(call(RequestCode.AUTH_CREATE_USER, { username: MALLORY.accessKey }, Buffer.from(JSON.stringify({ password: MALLORY.secretKey })), ROOT));
    // mallory may consume as group PG only
    await ok(call(RequestCode.AUTH_CREATE_ACL, { subject: 'User:mallory' }, Buffer.from(JSON.stringify({ policies: [{ entries: [{ resource: 'Group:PG', actions: ['Sub', 'Get'], decision: 'Allow' }, { resource: `Topic:${T}`, actions: ['Pub'], decision: 'Allow' }] }] })), ROOT));
    const v1 = (over: Record<string, ExtFieldValue>): Record<string, ExtFieldValue> => ({ ...GUARDED[0]![2], topic: `%RETRY%${G}`, producerGroup: 'PG', ...over });
    for (const ext of [v1({}), v1({ group: 'PG' }), v1({ producerGroup: 'PG', group: 'PG' })]) {
      const r = await call(RequestCode.SEND_MESSAGE, ext, msgBody, MALLORY);
      assert.deepEqual([r.code, r.remark], [ResponseCode.NO_PERMISSION, `User:mallory has no permission to access Group:${G} from 127.0.0.1, no matched policies.`], JSON.stringify(ext));
    }
    // alice has Sub on G: her send-back passes authorization, whatever producer group she names
    const a = await call(RequestCode.SEND_MESSAGE, v1({ producerGroup: 'SomeProducer' }), msgBody, ALICE);
    assert.notEqual(a.code, ResponseCode.NO_PERMISSION, a.remark ?? '');
    // a normal topic: Pub on the topic (mallory has it)
    const n = await call(RequestCode.SEND_MESSAGE, v1({ topic: T }), msgBody, MALLORY);
    assert.equal(n.code, ResponseCode.SUCCESS, n.remark ?? '');
  });

  it('admin rules: blank username → 29; existing user → 16 "The user is existed"; bad ACL bodies → 16 with Apache messages', async () => {
    const blank = await call(RequestCode.AUTH_CREATE_USER, {}, Buffer.from('{}'), ROOT);
    assert.deepEqual([blank.code, blank.remark], [ResponseCode.INVALID_PARAMETER, 'The username is blank']);
    const dup = await call(RequestCode.AUTH_CREATE_USER, { username: 'alice' }, Buffer.from(JSON.stringify({ password: 'x' })), ROOT);
    assert.deepEqual([dup.code, dup.remark], [16, 'The user is existed']);
    for (const [entry, msg] of [
      [{ resource: 'Bogus:x', actions: ['Pub'], decision: 'Allow' }, 'The resource is null.'],
      [{ resource: 'Topic:x', actions: ['Nope'], decision: 'Allow' }, 'The actions is empty.'],
      [{ resource: 'Topic:x', actions: ['Pub'], decision: 'Maybe' }, 'The decision is null or illegal.'],
      [{ resource: 'Topic:x', actions: ['Pub'], decision: 'Allow', sourceIps: ['300.1.1.1'] }, 'The source ip is invalid.'],
    ] as const) {
      const r = await call(RequestCode.AUTH_CREATE_ACL, { subject: 'User:alice' }, Buffer.from(JSON.stringify({ policies: [{ entries: [entry] }] })), ROOT);
      assert.deepEqual([r.code, r.remark], [16, msg]);
    }
    const ghost = await call(RequestCode.AUTH_CREATE_ACL, { subject: 'User:ghost' }, Buffer.from(JSON.stringify({ policies: [{ entries: [{ resource: '*', actions: ['All'], decision: 'Allow' }] }] })), ROOT);
    assert.deepEqual([ghost.code, ghost.remark], [16, 'The subject of User:ghost is not exist.']);
  });

  it('users and ACLs survive a restart (config/users.json, acls.json with .bak), and still authenticate', async () => {
    await ok(call(RequestCode.AUTH_UPDATE_USER, { username: 'eve' }, Buffer.from(JSON.stringify({ userStatus: 'disable' })), ROOT));
    await client.close();
    await broker.shutdown();
    assert.ok(existsSync(join(dir, 'config', 'users.json')) && existsSync(join(dir, 'config', 'users.json.bak')));
    assert.ok(existsSync(join(dir, 'config', 'acls.json')));
    const doc = JSON.parse(readFileSync(join(dir, 'config', 'users.json'), 'utf8')) as { users: Array<{ username: string; userStatus: string }> };
    assert.equal(doc.users.find((u) => u.username === 'eve')!.userStatus, 'disable');
    broker = await BrokerController.create({ brokerConfig: brokerConfig(), logger: silentLogger });
    await broker.start();
    addr = `127.0.0.1:${broker.port}`;
    client = new RemotingClient({ logger: silentLogger });
    const q = await ok(call(RequestCode.QUERY_CONSUMER_OFFSET, { consumerGroup: G, topic: T, queueId: '0' }, null, ALICE));
    assert.equal(Number(q.extFields?.offset), 1);
    const eve = await call(RequestCode.GET_MAX_OFFSET, { topic: T, queueId: '0' }, null, EVE);
    assert.deepEqual([eve.code, eve.remark], [16, 'User:eve is disabled.']);
  });
});
