import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerHarness } from './support/broker-harness.js';
import { FakeMessageStore } from './support/fake-message-store.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { ipv4Address } from '../../../src/common/message/msgid.js';

let h: BrokerHarness;
afterEach(async () => {
  await h?.close();
});

const query = (group: string, topic: string, queueId: number, extra: Record<string, boolean> = {}) =>
  h.call(RequestCode.QUERY_CONSUMER_OFFSET, { consumerGroup: group, topic, queueId, ...extra });

describe('offset requests', () => {
  it('QUERY_CONSUMER_OFFSET: stored offset, else 0 for a queue whose min is 0, else 22', async () => {
    h = await BrokerHarness.create();
    for (let i = 0; i < 10; i++) await h.send('TQ', `m${i}`, { queueId: 0 });
    for (let i = 0; i < 10; i++) await h.send('TQ', `m${i}`, { queueId: 1 });
    h.fake.setMinOffset('TQ', 1, 5);
    await h.call(RequestCode.UPDATE_CONSUMER_OFFSET, { consumerGroup: 'G', topic: 'TQ', queueId: 0, commitOffset: 7 });
    const stored = await query('G', 'TQ', 0);
    assert.equal(stored.code, ResponseCode.SUCCESS);
    assert.equal(stored.extFields!.offset, 7);
    const young = await query('NewGroup', 'TQ', 0);
    assert.equal(young.code, ResponseCode.SUCCESS);
    assert.equal(young.extFields!.offset, 0);
    const empty = await query('NewGroup', 'TQ', 2);
    assert.equal(empty.code, ResponseCode.SUCCESS);
    assert.equal(empty.extFields!.offset, 0);
    const old = await query('NewGroup', 'TQ', 1);
    assert.equal(old.code, ResponseCode.QUERY_NOT_FOUND);
    assert.match(old.remark!, /Not found/);
    const noZero = await query('NewGroup', 'TQ', 0, { setZeroIfNotFound: false });
    assert.equal(noZero.code, ResponseCode.QUERY_NOT_FOUND);
  });

  it('UPDATE_CONSUMER_OFFSET ignores negative offsets (ali-ons sends -1 for 0)', async () => {
    h = await BrokerHarness.create();
    await h.send('T', 'm'); // the commit needs an existing topic
    await h.call(RequestCode.UPDATE_CONSUMER_OFFSET, { consumerGroup: 'G', topic: 'T', queueId: 0, commitOffset: 4 });
    const r = await h.call(RequestCode.UPDATE_CONSUMER_OFFSET, { consumerGroup: 'G', topic: 'T', queueId: 0, commitOffset: -1 });
    assert.equal(r.code, ResponseCode.SUCCESS);
    assert.equal(h.ctx.consumerOffsetManager.queryOffset('G', 'T', 0), 4);
  });

  it('UPDATE_CONSUMER_OFFSET with an illegal group name (26) or an unknown topic (17) stores nothing (no made-up keys in consumerOffset.json)', async () => {
    h = await BrokerHarness.create();
    await h.send('T', 'm');
    for (const bad of ['G@x', ' ', 'a/../b', 'G'.repeat(256)]) {
      const r = await h.call(RequestCode.UPDATE_CONSUMER_OFFSET, { consumerGroup: bad, topic: 'T', queueId: 0, commitOffset: 1 });
      assert.equal(r.code, ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, bad);
      assert.ok(r.remark!.startsWith(`Group ${bad} not exist! (`), r.remark!);
      assert.equal(h.ctx.consumerOffsetManager.queryOffset(bad, 'T', 0), -1);
    }
    const noTopic = await h.call(RequestCode.UPDATE_CONSUMER_OFFSET, { consumerGroup: 'G', topic: 'T@y', queueId: 0, commitOffset: 1 });
    assert.deepEqual([noTopic.code, noTopic.remark], [ResponseCode.TOPIC_NOT_EXIST, 'Topic T@y not exist!']);
    assert.equal(h.ctx.consumerOffsetManager.queryOffset('G', 'T@y', 0), -1);
    // a legal group that has no subscription config yet is accepted (tsmq admin places offsets before the first consumer)
    const good = await h.call(RequestCode.UPDATE_CONSUMER_OFFSET, { consumerGroup: 'NotYetCreated', topic: 'T', queueId: 0, commitOffset: 1 });
    assert.equal(good.code, ResponseCode.SUCCESS);
    assert.equal(h.ctx.consumerOffsetManager.queryOffset('NotYetCreated', 'T', 0), 1);
  });

  it('GET_MAX_OFFSET / GET_MIN_OFFSET / SEARCH_OFFSET_BY_TIMESTAMP / GET_EARLIEST_MSG_STORETIME', async () => {
    h = await BrokerHarness.create();
    const t0 = h.clock.nowMs();
    for (let i = 0; i < 6; i++) {
      await h.send('TO', `m${i}`, { queueId: 0 });
      h.clock.advance(1000);
    }
    h.fake.setMinOffset('TO', 0, 2);
    assert.equal((await h.call(RequestCode.GET_MAX_OFFSET, { topic: 'TO', queueId: 0 })).extFields!.offset, 6);
    assert.equal((await h.call(RequestCode.GET_MIN_OFFSET, { topic: 'TO', queueId: 0 })).extFields!.offset, 2);
    assert.equal((await h.call(RequestCode.GET_MAX_OFFSET, { topic: 'none', queueId: 0 })).extFields!.offset, 0);
    const lower = await h.call(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, { topic: 'TO', queueId: 0, timestamp: t0 + 3500 });
    assert.equal(lower.extFields!.offset, 4);
    const upper = await h.call(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, { topic: 'TO', queueId: 0, timestamp: t0 + 3500, boundaryType: 'UPPER' });
    assert.equal(upper.extFields!.offset, 3);
    const earliest = await h.call(RequestCode.GET_EARLIEST_MSG_STORETIME, { topic: 'TO', queueId: 0 });
    assert.equal(earliest.extFields!.timestamp, t0 + 2000);
  });

  it('B35 committed offsets above a truncated queue max are clamped at start-up; the consumer reads the new 6..9', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsmq-b35-'));
    const clock = new ManualClock(1_700_000_000_000);
    const store = new FakeMessageStore(clock);
    const msg = (i: number) => ({
      topic: 'T', queueId: 0, flag: 0, body: Buffer.from(`old${i}`), properties: new Map<string, string>(), sysFlag: 0,
      bornTimestamp: 1, bornHost: ipv4Address(127, 0, 0, 1, 1), storeHost: ipv4Address(127, 0, 0, 1, 10911), reconsumeTimes: 0, preparedTransactionOffset: 0,
    });
    await store.fill('T', 0, 10, msg);
    store.truncateQueue('T', 0, 6); // unclean failover: tail lost, max = 6
    mkdirSync(join(dir, 'config'));
    writeFileSync(join(dir, 'config', 'consumerOffset.json'), '{"offsetTable":{"T@G":{0:10},"T@H":{0:4}}}');
    const broker = await BrokerController.create({ brokerConfig: { storePathRootDir: dir, namesrvAddr: '' }, clock, logger: silentLogger, store });
    try {
      assert.equal(broker.ctx.consumerOffsetManager.queryOffset('G', 'T', 0), 6);
      assert.equal(broker.ctx.consumerOffsetManager.queryOffset('H', 'T', 0), 4, 'offsets below max untouched');
      assert.match(readFileSync(join(dir, 'config', 'consumerOffset.json'), 'utf8'), /"0": 6/, 'correction persisted');
      for (let i = 0; i < 4; i++) await store.putMessage({ ...msg(i), body: Buffer.from(`new${i}`) });
      const handler = broker.handlerFor(RequestCode.PULL_MESSAGE)!;
      broker.ctx.topicConfigManager.createTopicInSendMessageBackMethod('T', 1, 6, 0);
      const channel = { remoteAddress: '127.0.0.1:1', id: 'c', closed: false, send() {}, close() {}, onClose() {} };
      const qh = broker.handlerFor(RequestCode.QUERY_CONSUMER_OFFSET)!;
      const { createRequestCommand } = await import('../../../src/remoting/protocol/commands.js');
      const q = await qh({ channel, request: createRequestCommand(RequestCode.QUERY_CONSUMER_OFFSET, { consumerGroup: 'G', topic: 'T', queueId: 0 }) });
      assert.equal(q!.extFields!.offset, 6);
      const r = await handler({
        channel,
        request: createRequestCommand(RequestCode.PULL_MESSAGE, {
          consumerGroup: 'G', topic: 'T', queueId: 0, queueOffset: 6, maxMsgNums: 32, sysFlag: 4, commitOffset: -1, suspendTimeoutMillis: 0, subscription: '*', subVersion: 1,
        }),
      });
      assert.equal(r!.code, ResponseCode.SUCCESS);
      assert.equal(r!.extFields!.nextBeginOffset, 10);
    } finally {
      await broker.shutdown();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('B35 clampToMax lowers every group on that queue only, and a query clamps a stale offset too', async () => {
    h = await BrokerHarness.create();
    const com = h.ctx.consumerOffsetManager;
    com.commitOffset('c', 'G1', 'T', 0, 10);
    com.commitOffset('c', 'G2', 'T', 0, 8);
    com.commitOffset('c', 'G1', 'T', 1, 10);
    com.commitOffset('c', 'G1', 'T2', 0, 10);
    assert.equal(com.clampToMax('T', 0, 6), 2);
    assert.deepEqual([com.queryOffset('G1', 'T', 0), com.queryOffset('G2', 'T', 0), com.queryOffset('G1', 'T', 1), com.queryOffset('G1', 'T2', 0)], [6, 6, 10, 10]);
    for (let i = 0; i < 3; i++) await h.send('T3', 'x');
    com.commitOffset('c', 'G', 'T3', 0, 9);
    assert.equal((await query('G', 'T3', 0)).extFields!.offset, 3);
    assert.equal(com.queryOffset('G', 'T3', 0), 3);
  });
});
