import { describe, it, afterEach, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TopicConfigManager } from '../../../src/broker/topic/topic-config-manager.js';
import { newTopicConfig } from '../../../src/broker/topic/topic-config.js';
import { SubscriptionGroupManager } from '../../../src/broker/subscription/subscription-group-manager.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { BrokerHarness } from './support/broker-harness.js';
import { ipv4Address } from '../../../src/common/message/msgid.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';

let dir: string;
const clock = new ManualClock(1_700_000_000_000);
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tsmq-topics-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function manager(opts: Partial<ConstructorParameters<typeof TopicConfigManager>[1]> = {}): TopicConfigManager {
  return new TopicConfigManager(join(dir, 'topics.json'), {
    clock,
    brokerName: 'broker-a',
    brokerClusterName: 'DefaultCluster',
    autoCreateTopicEnable: true,
    ...opts,
  });
}

describe('TopicConfigManager', () => {
  it("has Apache's system topics", () => {
    const m = manager();
    const q = (t: string) => {
      const c = m.selectTopicConfig(t)!;
      return [c.readQueueNums, c.writeQueueNums, c.perm];
    };
    assert.deepEqual(q('TBW102'), [8, 8, 7]);
    assert.deepEqual(q('SCHEDULE_TOPIC_XXXX'), [18, 18, 6]);
    assert.deepEqual(q('SELF_TEST_TOPIC'), [1, 1, 6]);
    assert.deepEqual(q('OFFSET_MOVED_EVENT'), [1, 1, 6]);
    assert.deepEqual(q('DefaultCluster'), [16, 16, 7]);
    assert.deepEqual(q('broker-a'), [1, 1, 7]);
    assert.deepEqual(q('DefaultCluster_REPLY_TOPIC'), [1, 1, 6]);
    assert.equal(manager({ autoCreateTopicEnable: false }).selectTopicConfig('TBW102'), undefined);
  });

  it('persists topics.json in the RocketMQ shape and reloads it, data version bumped per change', async () => {
    const m = manager();
    const seen: string[] = [];
    m.onChange((t) => seen.push(t));
    m.createTopicInSendMessageMethod('TopicX', 'TBW102', 4, 0);
    m.createTopicInSendMessageBackMethod('%RETRY%G', 1, 6, 0);
    assert.deepEqual(seen, ['TopicX', '%RETRY%G']);
    assert.equal(m.dataVersion.counter, 2);
    await m.whenPersisted();
    const doc = JSON.parse(readFileSync(join(dir, 'topics.json'), 'utf8'));
    assert.deepEqual(doc.topicConfigTable.TopicX, {
      topicName: 'TopicX', readQueueNums: 4, writeQueueNums: 4, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false, attributes: {},
    });
    assert.deepEqual(Object.keys(doc.dataVersion).sort(), ['counter', 'stateVersion', 'timestamp']);
    const again = manager();
    again.load();
    assert.equal(again.selectTopicConfig('%RETRY%G')!.writeQueueNums, 1);
    assert.equal(again.dataVersion.counter, 2);
  });

  it('auto-creation takes min(client queue count, TBW102 write queues) and needs the inherit bit', () => {
    const m = manager();
    assert.equal(m.createTopicInSendMessageMethod('Big', 'TBW102', 64, 0)!.writeQueueNums, 8);
    assert.equal(m.createTopicInSendMessageMethod('X', 'SELF_TEST_TOPIC', 4, 0), undefined, 'perm 6 has no inherit bit');
    assert.equal(m.createTopicInSendMessageMethod('Y', 'NoSuchDefault', 4, 0), undefined);
  });

  it('loads an Apache topics.json', () => {
    writeFileSync(
      join(dir, 'topics.json'),
      '{"dataVersion":{"counter":7,"timestamp":1},"topicConfigTable":{"TopicTest":{"order":false,"perm":6,"readQueueNums":2,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":2}}}',
    );
    const m = manager();
    m.load();
    assert.equal(m.selectTopicConfig('TopicTest')!.readQueueNums, 2);
    assert.equal(m.selectTopicConfig('TBW102')!.perm, 7, 'system topics stay');
  });
});

describe('SubscriptionGroupManager', () => {
  it('auto-creates groups with retryQueueNums 1 and retryMaxTimes 16 and persists them', async () => {
    const m = new SubscriptionGroupManager(join(dir, 'subscriptionGroup.json'), { clock, autoCreateSubscriptionGroup: true });
    const g = m.findSubscriptionGroupConfig('GID_X')!;
    assert.deepEqual([g.retryQueueNums, g.retryMaxTimes, g.consumeEnable, g.whichBrokerWhenConsumeSlowly], [1, 16, true, 1]);
    await m.whenPersisted();
    const doc = JSON.parse(readFileSync(join(dir, 'subscriptionGroup.json'), 'utf8'));
    assert.equal(doc.subscriptionGroupTable.GID_X.retryMaxTimes, 16);
    const off = new SubscriptionGroupManager(join(dir, 'other.json'), { clock, autoCreateSubscriptionGroup: false });
    assert.equal(off.findSubscriptionGroupConfig('GID_Y'), undefined);
  });
});

describe('topic admin requests (17, 21, 215)', () => {
  let h: BrokerHarness;
  afterEach(async () => {
    await h?.close();
  });

  it('creates, lists and deletes a topic', async () => {
    h = await BrokerHarness.create();
    const created = await h.call(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: 'Admin1', defaultTopic: 'TBW102', readQueueNums: 2, writeQueueNums: 3, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false });
    assert.equal(created.code, ResponseCode.SUCCESS);
    const all = await h.call(RequestCode.GET_ALL_TOPIC_CONFIG, null);
    const table = JSON.parse(all.body!.toString()).topicConfigTable;
    assert.deepEqual([table.Admin1.readQueueNums, table.Admin1.writeQueueNums], [2, 3]);
    await h.send('Admin1', 'x');
    h.ctx.consumerOffsetManager.commitOffset('c', 'G', 'Admin1', 0, 1);
    assert.equal((await h.call(RequestCode.DELETE_TOPIC_IN_BROKER, { topic: 'Admin1' })).code, ResponseCode.SUCCESS);
    assert.equal(h.ctx.topicConfigManager.selectTopicConfig('Admin1'), undefined);
    assert.equal(h.ctx.consumerOffsetManager.queryOffset('G', 'Admin1', 0), -1);
    assert.equal(h.store.getMaxOffsetInQueue('Admin1', 0), 0);
  });

  it('refuses illegal names, system topics and the cluster name', async () => {
    h = await BrokerHarness.create();
    for (const topic of ['bad name', 'SCHEDULE_TOPIC_XXXX', 'DefaultCluster']) {
      const r = await h.call(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic, readQueueNums: 1, writeQueueNums: 1, perm: 6 });
      assert.equal(r.code, ResponseCode.SYSTEM_ERROR, topic);
    }
    assert.equal((await h.call(RequestCode.DELETE_TOPIC_IN_BROKER, { topic: 'TBW102' })).code, ResponseCode.SYSTEM_ERROR);
  });
});

describe('316 CLEAN_UNUSED_TOPIC (mqadmin cleanUnusedTopic)', () => {
  let h: BrokerHarness;
  afterEach(async () => {
    await h?.close();
  });

  it('drops the ConsumeQueues of topics without a topic config; configured and system topics keep theirs', async () => {
    h = await BrokerHarness.create();
    for (const t of ['Kept', 'Orphan']) for (let i = 0; i < 3; i++) assert.equal((await h.send(t, `${t}-${i}`)).code, ResponseCode.SUCCESS);
    h.ctx.topicConfigManager.deleteTopicConfig('Orphan'); // as if topics.json lost it: the queues stay
    // a system topic without a topic config (trace topic written by the store directly)
    const put = await h.store.putMessage({
      topic: 'RMQ_SYS_TRACE_TOPIC', queueId: 0, flag: 0, body: Buffer.from('trace'), properties: new Map<string, string>(), sysFlag: 0,
      bornTimestamp: 1, bornHost: ipv4Address(127, 0, 0, 1, 1), storeHost: ipv4Address(127, 0, 0, 1, 10911), reconsumeTimes: 0, preparedTransactionOffset: 0,
    });
    assert.equal(put.status, 'PUT_OK');
    assert.equal(h.ctx.topicConfigManager.selectTopicConfig('RMQ_SYS_TRACE_TOPIC'), undefined);
    const before = h.store.getTopicQueueTable();
    assert.deepEqual([before.has('Kept'), before.has('Orphan'), before.has('RMQ_SYS_TRACE_TOPIC')], [true, true, true]);
    assert.equal((await h.call(RequestCode.CLEAN_UNUSED_TOPIC, null)).code, ResponseCode.SUCCESS);
    const after = h.store.getTopicQueueTable();
    assert.deepEqual([after.has('Kept'), after.has('Orphan'), after.has('RMQ_SYS_TRACE_TOPIC')], [true, false, true]);
    assert.equal(h.store.getMaxOffsetInQueue('Kept', 0), 3);
    assert.equal(h.store.getMaxOffsetInQueue('Orphan', 0), 0);
    assert.equal((await h.call(RequestCode.CLEAN_UNUSED_TOPIC, null)).code, ResponseCode.SUCCESS, 'nothing left to clean');
  });
});

describe('18 UPDATE_AND_CREATE_TOPIC_LIST (mqadmin updateTopicList)', () => {
  let h: BrokerHarness;
  afterEach(async () => {
    await h?.close();
  });

  it('creates every topic of the list; a refused one (system topic, too many queues) → 1 naming it and none is created', async () => {
    h = await BrokerHarness.create();
    const list = { topicConfigList: [
      { topicName: 'TL1', readQueueNums: 2, writeQueueNums: 2, perm: 6, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false, attributes: {} },
      { topicName: 'TL2', readQueueNums: 3, writeQueueNums: 1, perm: 4, order: true },
    ] };
    assert.equal((await h.call(RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, null, Buffer.from(JSON.stringify(list)))).code, ResponseCode.SUCCESS);
    const table = JSON.parse((await h.call(RequestCode.GET_ALL_TOPIC_CONFIG, null)).body!.toString()).topicConfigTable;
    assert.deepEqual([table.TL1.readQueueNums, table.TL1.writeQueueNums, table.TL1.perm, table.TL1.order], [2, 2, 6, false]);
    assert.deepEqual([table.TL2.readQueueNums, table.TL2.writeQueueNums, table.TL2.perm, table.TL2.order], [3, 1, 4, true]);
    await h.ctx.topicConfigManager.durable('TL2');
    for (const bad of [{ topicName: 'SCHEDULE_TOPIC_XXXX', readQueueNums: 1, writeQueueNums: 1 }, { topicName: 'TooMany', readQueueNums: 100000, writeQueueNums: 1 }]) {
      const r = await h.call(RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, null, Buffer.from(JSON.stringify({ topicConfigList: [{ topicName: 'TL3', readQueueNums: 1, writeQueueNums: 1 }, bad] })));
      assert.equal(r.code, ResponseCode.SYSTEM_ERROR, bad.topicName);
      assert.match(r.remark ?? '', new RegExp(bad.topicName));
      assert.equal(h.ctx.topicConfigManager.selectTopicConfig('TL3'), undefined, 'nothing created when one is refused');
    }
    for (const body of ['{nope', '{"topicConfigList":{}}', '{"topicConfigList":[{"readQueueNums":1}]}', '{"topicConfigList":[{"topicName":"X","perm":"6"}]}']) {
      assert.equal((await h.call(RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, null, Buffer.from(body))).code, ResponseCode.SYSTEM_ERROR, body);
    }
  });
});

describe('TopicConfigManager.recoverFromConsumeQueues (topics.json behind the data)', () => {
  it('re-creates topics that have ConsumeQueues but no config, with queues = highest id + 1, perm 6, in one write', async () => {
    const m = manager();
    m.updateTopicConfig({ ...m.selectTopicConfig('TBW102')!, topicName: 'Known', readQueueNums: 2, writeQueueNums: 2, perm: 4 });
    await m.whenPersisted();
    const before = m.writesCompleted;
    const queues = new Map<string, Map<number, number>>([
      ['Known', new Map([[0, 5], [7, 1]])],
      ['Lost', new Map([[0, 3], [5, 9]])],
      ['%RETRY%GID_LOST', new Map([[0, 1]])],
      ['SCHEDULE_TOPIC_XXXX', new Map([[40, 1]])],
      ['rmq_sys_wheel_timer', new Map([[0, 1]])],
      ['bad/name', new Map([[0, 1]])],
    ]);
    assert.deepEqual(m.recoverFromConsumeQueues(queues), ['Lost', '%RETRY%GID_LOST']);
    await m.whenPersisted();
    assert.equal(m.writesCompleted, before + 1);
    const lost = m.selectTopicConfig('Lost')!;
    assert.deepEqual([lost.readQueueNums, lost.writeQueueNums, lost.perm], [6, 6, 6]);
    assert.deepEqual([m.selectTopicConfig('Known')!.readQueueNums, m.selectTopicConfig('Known')!.perm], [2, 4], 'a known topic is kept as configured');
    assert.equal(m.selectTopicConfig('SCHEDULE_TOPIC_XXXX')!.readQueueNums, 18, 'system topics untouched');
    assert.equal(m.selectTopicConfig('bad/name'), undefined);
    const onDisk = JSON.parse(readFileSync(join(dir, 'topics.json'), 'utf8')) as { topicConfigTable: Record<string, { writeQueueNums: number }> };
    assert.equal(onDisk.topicConfigTable.Lost?.writeQueueNums, 6);
    assert.deepEqual(m.recoverFromConsumeQueues(queues), [], 'idempotent');
  });

  it('durable(topic) is the pending write of a topic created by a request, null once it is on disk', async () => {
    const m = manager();
    const tc = m.createTopicInSendMessageMethod('NewTopic', 'TBW102', 4, 0)!;
    assert.equal(tc.writeQueueNums, 4);
    const pending = m.durable('NewTopic');
    assert.ok(pending, 'a write is pending');
    assert.equal(m.durable('TBW102'), null);
    await pending;
    assert.equal(m.durable('NewTopic'), null);
    const onDisk = JSON.parse(readFileSync(join(dir, 'topics.json'), 'utf8')) as { topicConfigTable: Record<string, unknown> };
    assert.ok('NewTopic' in onDisk.topicConfigTable);
  });
});

describe('TopicConfigManager topics.json rendering (per-topic cache)', () => {
  it('writes exactly JSON.stringify(encode(), null, 2) through creates, updates, deletes, recoveries and a reload', async () => {
    const m = manager();
    const file = join(dir, 'topics.json');
    const check = async (what: string) => {
      await m.persist();
      assert.equal(readFileSync(file, 'utf8'), JSON.stringify(m.encode(), null, 2), what);
    };
    await check('system topics only');
    for (let i = 0; i < 5; i++) m.updateTopicConfig({ ...m.selectTopicConfig('TBW102')!, topicName: `Ren"\\${i}`, perm: 6, attributes: { '+message.type': 'NORMAL' } });
    await check('created, names needing escapes, attributes');
    m.updateTopicConfig({ ...m.selectTopicConfig('Ren"\\2')!, writeQueueNums: 3, attributes: {} });
    await check('updated one');
    assert.ok(readFileSync(file, 'utf8').includes('"writeQueueNums": 3'));
    assert.equal(m.deleteTopicConfig('Ren"\\1'), true);
    await check('deleted one');
    m.createTopicInSendMessageMethod('AutoRen', 'TBW102', 4, 0);
    m.recoverFromConsumeQueues(new Map([['FromCq', new Map([[2, 10]])]]));
    await check('auto-created and recovered');
    const reloaded = manager();
    assert.equal(reloaded.load(), true);
    await reloaded.persist();
    assert.equal(readFileSync(file, 'utf8'), JSON.stringify(m.encode(), null, 2), 'a reloaded manager writes the same text');
  });
});

describe('registration wrappers of a broker that is not read-write (Apache 5.3.3: perm & brokerPermission)', () => {
  it('full and increment wrappers AND each topic perm with the mask; without a mask perms are as stored', () => {
    const m = manager();
    m.updateTopicConfig(newTopicConfig('RW', { readQueueNums: 1, writeQueueNums: 1, perm: 6 }));
    m.updateTopicConfig(newTopicConfig('WriteOnly', { readQueueNums: 1, writeQueueNums: 1, perm: 2 }));
    m.updateTopicConfig(newTopicConfig('ReadOnly', { readQueueNums: 1, writeQueueNums: 1, perm: 4 }));
    const readOnlyBroker = 4;
    const full = m.buildSerializeWrapper(readOnlyBroker).topicConfigTable;
    // Apache 4.9 replaced every perm by brokerPermission (WriteOnly would have become readable: 4)
    assert.deepEqual([full.RW!.perm, full.WriteOnly!.perm, full.ReadOnly!.perm, full.TBW102!.perm], [4, 0, 4, 4]);
    const inc = m.buildIncrementWrapper(['WriteOnly', 'ReadOnly'], 2)!.topicConfigTable;
    assert.deepEqual([inc.WriteOnly!.perm, inc.ReadOnly!.perm], [2, 0]);
    assert.equal(m.buildSerializeWrapper().topicConfigTable.WriteOnly!.perm, 2);
    assert.equal(m.selectTopicConfig('RW')!.perm, 6, 'the stored config is untouched');
  });
});
