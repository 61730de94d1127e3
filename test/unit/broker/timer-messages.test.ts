/**
 * Timer messages through a real broker (sockets, real store, durable timer wheel), remoting front:
 * TIMER_DELIVER_MS / TIMER_DELAY_SEC / TIMER_DELAY_MS as Apache 5.x reads them, the send answer's
 * recall handle, delivery into the real topic with Apache's properties, never early, batch
 * sends, refusals (bad value, beyond timerMaxDelaySec, wheel disabled), RECALL_MESSAGE (370) with
 * Apache's codes, delay levels untouched, and a clean restart with pending timers (each delivered
 * exactly once).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { encodeProperties } from '../../../src/common/message/properties.js';
import { encodeBatchBody } from '../../../src/common/message/batch-codec.js';
import type { MessageExt } from '../../../src/common/message/message.js';
import { buildRecallHandle, decodeRecallHandle } from '../../../src/broker/timer/recall-handle.js';
import { decodeMessageId } from '../../../src/common/message/msgid.js';
import { tempDir, removeDir } from '../../support/store-fixtures.js';

const PRECISION_MS = 100;

describe('timer messages (remoting, real broker)', { timeout: 60_000 }, () => {
  let dir: string;
  let broker: BrokerController;
  let client: RemotingClient;
  let addr: string;
  let seq = 0;

  const config = (extra: Record<string, string> = {}) => ({
    storePathRootDir: dir,
    listenPort: '0',
    namesrvAddr: '',
    brokerName: 'broker-t',
    mappedFileSizeCommitLog: String(1024 * 1024),
    mappedFileSizeConsumeQueue: String(1000 * 20),
    timerPrecisionMs: String(PRECISION_MS),
    timerFlushIntervalMs: '200',
    recallMessageEnable: 'true',
    ...extra,
  });

  const open = async (extra: Record<string, string> = {}) => {
    broker = await BrokerController.create({ brokerConfig: config(extra), logger: silentLogger, timerSlotsTotal: 3600 });
    await broker.start();
    addr = `127.0.0.1:${broker.port}`;
  };

  before(async () => {
    dir = tempDir('tsmq-timer-broker-');
    client = new RemotingClient({ logger: silentLogger });
    await open();
  });

  after(async () => {
    await broker.shutdown();
    await client.close();
    removeDir(dir);
  });

  const send = (topic: string, props: Record<string, string>, body = 'b', queueId = 0) => {
    const uniq = `UNIQ${String(++seq).padStart(8, '0')}`;
    const properties = encodeProperties(new Map([['UNIQ_KEY', uniq], ['TAGS', 'TagT'], ...Object.entries(props)]));
    const req = createRequestCommand(RequestCode.SEND_MESSAGE_V2, { a: 'PG', b: topic, c: 'TBW102', d: 4, e: queueId, f: 0, g: Date.now(), h: 0, i: properties, j: 0, k: false }, Buffer.from(body));
    return client.invokeSync(addr, req, 3000).then((r) => ({ r, uniq }));
  };

  const messagesOf = async (topic: string, queueId = 0): Promise<MessageExt[]> => {
    const got = await broker.ctx.store.getMessage('G', topic, queueId, 0, 1000, null);
    return got.messages.map((m) => decodeRecord(m));
  };

  const waitFor = async <T>(what: string, fn: () => Promise<T | null>, timeoutMs = 5000): Promise<T> => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await fn();
      if (v !== null) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('TIMER_DELIVER_MS: stored in rmq_sys_wheel_timer, delivered to its topic at (never before) its time with Apache properties', async () => {
    const deliverMs = Date.now() + 700;
    const { r, uniq } = await send('TT_A', { TIMER_DELIVER_MS: String(deliverMs) }, 'hello');
    assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    const handle = decodeRecallHandle(String(r.extFields!.recallHandle));
    assert.deepEqual(handle, { topic: 'TT_A', brokerName: 'broker-t', timestampStr: String(Math.floor(deliverMs / PRECISION_MS) * PRECISION_MS - (deliverMs % PRECISION_MS === 0 ? PRECISION_MS : 0) + 1), messageId: uniq });
    assert.equal((await messagesOf('TT_A')).length, 0, 'not in its topic before its time');
    const wheel = await messagesOf('rmq_sys_wheel_timer');
    const stored = wheel.find((m) => m.properties.get('UNIQ_KEY') === uniq)!;
    assert.equal(stored.properties.get('REAL_TOPIC'), 'TT_A');
    assert.equal(stored.properties.get('REAL_QID'), '0');
    assert.equal(stored.properties.get('TIMER_OUT_MS'), String(Number(handle!.timestampStr) - 1));
    const [m] = await waitFor('delivery', async () => {
      const ms = await messagesOf('TT_A');
      return ms.length > 0 ? ms : null;
    });
    assert.ok(m!.storeTimestamp >= deliverMs, `stored at ${m!.storeTimestamp}, due ${deliverMs}: never early`);
    assert.ok(m!.storeTimestamp - deliverMs < 1000, `late by ${m!.storeTimestamp - deliverMs} ms`);
    assert.equal(m!.body.toString(), 'hello');
    const p = m!.properties;
    assert.equal(p.get('UNIQ_KEY'), uniq);
    assert.equal(p.get('TIMER_DELIVER_MS'), String(deliverMs));
    assert.equal(p.get('TIMER_OUT_MS'), stored.properties.get('TIMER_OUT_MS'));
    // As Apache 5.3.3 stores it (checked in test/interop/timer-compat-5.test.ts): REAL_TOPIC /
    // REAL_QID stay, TIMER_ENQUEUE_MS / TIMER_DEQUEUE_MS are added, nothing else changes.
    assert.equal(p.get('REAL_TOPIC'), 'TT_A');
    assert.equal(p.get('REAL_QID'), '0');
    assert.ok(Number(p.get('TIMER_ENQUEUE_MS')) > 0 && Number(p.get('TIMER_ENQUEUE_MS')) <= deliverMs);
    assert.ok(Number(p.get('TIMER_DEQUEUE_MS')) >= deliverMs);
    assert.equal(p.has('WAIT'), false);
    assert.equal(p.get('TAGS'), 'TagT');
    assert.deepEqual([...p.keys()].sort(), ['CLUSTER', 'REAL_QID', 'REAL_TOPIC', 'TAGS', 'TIMER_DELIVER_MS', 'TIMER_DEQUEUE_MS', 'TIMER_ENQUEUE_MS', 'TIMER_OUT_MS', 'UNIQ_KEY']);
  });

  it('a delivered timer counts in the broker stats as Apache TimerMessageStore.doPut does (TOPIC_PUT_NUMS/SIZE of its topic, putMessageTimesTotal)', async () => {
    const runtime = async (): Promise<Record<string, string>> => {
      const r = await client.invokeSync(addr, createRequestCommand(RequestCode.GET_BROKER_RUNTIME_INFO, {}), 3000);
      assert.equal(r.code, ResponseCode.SUCCESS);
      return (JSON.parse(r.body!.toString('utf8')) as { table: Record<string, string> }).table;
    };
    // an earlier test's delivery may still be counted (its .then runs after the message is visible): wait for quiet
    let before = Number((await runtime()).putMessageTimesTotal);
    for (let quiet = 0; quiet < 3; ) {
      await new Promise((res) => setTimeout(res, 150));
      const now = Number((await runtime()).putMessageTimesTotal);
      quiet = now === before ? quiet + 1 : 0;
      before = now;
    }
    const stats = broker.ctx.brokerStats;
    const putNums = (topic: string): number => stats.getStatsItem('TOPIC_PUT_NUMS', topic)?.value ?? 0;
    const wheelPutsBefore = putNums('rmq_sys_wheel_timer');
    const wheelSizeBefore = stats.getStatsItem('TOPIC_PUT_SIZE', 'rmq_sys_wheel_timer')?.value ?? 0;
    const { r } = await send('TT_STATS', { TIMER_DELIVER_MS: String(Date.now() + 300) }, 'counted');
    assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    assert.equal(Number((await runtime()).putMessageTimesTotal), before + 1, 'the send');
    assert.equal(putNums('rmq_sys_wheel_timer'), wheelPutsBefore + 1, 'the send, under the topic it was stored under (Apache SendMessageProcessor reads it after the put hooks)');
    assert.equal(putNums('TT_STATS'), 0, 'not under the topic the client sent to');
    const [m] = await waitFor('delivery', async () => {
      const ms = await messagesOf('TT_STATS');
      return ms.length > 0 ? ms : null;
    });
    await waitFor('the delivery counted', async () => (putNums('TT_STATS') === 1 ? true : null), 2000);
    assert.equal(Number((await runtime()).putMessageTimesTotal), before + 2, 'send + delivery, as Apache counts every CommitLog put');
    const sendRecord = (await broker.ctx.store.lookMessageByOffset(decodeMessageId(String(r.extFields!.msgId)).commitLogOffset))!;
    assert.equal(sendRecord.topic, 'rmq_sys_wheel_timer');
    assert.equal(stats.getStatsItem('TOPIC_PUT_SIZE', 'rmq_sys_wheel_timer')!.value, wheelSizeBefore + sendRecord.storeSize, 'the send record size');
    assert.equal(stats.getStatsItem('TOPIC_PUT_SIZE', 'TT_STATS')!.value, m!.storeSize, 'the delivery record size');
  });

  it('timers of one slot delivered as one prepared block count one put per message per topic (TOPIC_PUT_NUMS/SIZE value and times)', async () => {
    const stats = broker.ctx.brokerStats;
    const due = Math.ceil((Date.now() + 1500) / 1000) * 1000;
    const topics = ['TT_BLK1', 'TT_BLK2', 'TT_BLK1', 'TT_BLK1', 'TT_BLK2'];
    for (const [i, t] of topics.entries()) assert.equal((await send(t, { TIMER_DELIVER_MS: String(due) }, `block ${i}`)).r.code, ResponseCode.SUCCESS);
    const prepared = broker.timerMessageService!.stats.deliveredPrepared;
    const got = await waitFor('both topics delivered', async () => {
      const a = await messagesOf('TT_BLK1');
      const b = await messagesOf('TT_BLK2');
      return a.length === 3 && b.length === 2 && (stats.getStatsItem('TOPIC_PUT_NUMS', 'TT_BLK2')?.value ?? 0) === 2 && (stats.getStatsItem('TOPIC_PUT_NUMS', 'TT_BLK1')?.value ?? 0) === 3 ? { a, b } : null;
    });
    assert.ok(broker.timerMessageService!.stats.deliveredPrepared >= prepared + topics.length, 'delivered by the prepared path');
    for (const [topic, ms] of [['TT_BLK1', got.a], ['TT_BLK2', got.b]] as const) {
      const nums = stats.getStatsItem('TOPIC_PUT_NUMS', topic)!;
      const size = stats.getStatsItem('TOPIC_PUT_SIZE', topic)!;
      assert.equal(nums.value, ms.length);
      assert.equal(nums.times, ms.length, 'one put per message, as Apache doPut counts');
      assert.equal(size.value, ms.reduce((n, m) => n + m.storeSize, 0));
      assert.equal(size.times, ms.length);
    }
  });

  it('TIMER_DELAY_SEC and TIMER_DELAY_MS are relative to the broker clock; a past time is stored at once', async () => {
    const t0 = Date.now();
    await send('TT_B', { TIMER_DELAY_SEC: '1' });
    await send('TT_B', { TIMER_DELAY_MS: '400' });
    const past = await send('TT_B', { TIMER_DELIVER_MS: String(t0 - 5000) });
    assert.equal(past.r.extFields!.recallHandle, undefined, 'no handle for a message stored at once');
    const now = await messagesOf('TT_B');
    assert.equal(now.length, 1);
    assert.equal(now[0]!.properties.get('UNIQ_KEY'), past.uniq);
    const all = await waitFor('both timers', async () => {
      const ms = await messagesOf('TT_B');
      return ms.length === 3 ? ms : null;
    });
    const byMs = all.find((m) => m.properties.has('TIMER_DELAY_MS'))!;
    const bySec = all.find((m) => m.properties.has('TIMER_DELAY_SEC'))!;
    assert.ok(byMs.storeTimestamp >= t0 + 400 - PRECISION_MS && byMs.storeTimestamp < bySec.storeTimestamp);
    assert.ok(bySec.storeTimestamp >= t0 + 1000 - PRECISION_MS);
  });

  it('refuses an unparsable time and one beyond timerMaxDelaySec with Apache codes; stores nothing', async () => {
    const before = broker.ctx.store.getMaxOffsetInQueue('rmq_sys_wheel_timer', 0);
    const bad = await send('TT_C', { TIMER_DELIVER_MS: '12ab' });
    assert.equal(bad.r.code, ResponseCode.MESSAGE_ILLEGAL);
    assert.match(bad.r.remark ?? '', /^timer message illegal, the delay time should not be bigger than the max delay 259200000ms/);
    const far = await send('TT_C', { TIMER_DELAY_SEC: String(3 * 24 * 3600 + 5) });
    assert.equal(far.r.code, ResponseCode.MESSAGE_ILLEGAL);
    const farOk = await send('TT_C', { TIMER_DELAY_SEC: String(3 * 24 * 3600 - 5) });
    assert.equal(farOk.r.code, ResponseCode.SUCCESS);
    assert.equal(broker.ctx.store.getMaxOffsetInQueue('rmq_sys_wheel_timer', 0), before + 1);
    assert.equal(broker.ctx.store.getMaxOffsetInQueue('TT_C', 0), 0);
  });

  it('batch sends: every item with a timer goes through the wheel and is delivered in time', async () => {
    const deliverMs = Date.now() + 500;
    const items = [0, 1, 2].map((i) => ({ flag: 0, body: Buffer.from(`item${i}`), properties: new Map([['UNIQ_KEY', `BATCH${i}`], ['TIMER_DELIVER_MS', String(deliverMs)]]) }));
    const req = createRequestCommand(RequestCode.SEND_BATCH_MESSAGE, { a: 'PG', b: 'TT_D', c: 'TBW102', d: 4, e: 0, f: 0, g: Date.now(), h: 0, i: '', j: 0, k: false, m: true }, encodeBatchBody(items));
    const r = await client.invokeSync(addr, req, 3000);
    assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    assert.equal(r.extFields!.recallHandle, undefined, 'Apache attaches no recall handle to batch sends');
    assert.equal((await messagesOf('TT_D')).length, 0);
    const got = await waitFor('batch delivery', async () => {
      const ms = await messagesOf('TT_D');
      return ms.length === 3 ? ms : null;
    });
    assert.deepEqual(got.map((m) => m.body.toString()).sort(), ['item0', 'item1', 'item2']);
    for (const m of got) assert.ok(m.storeTimestamp >= deliverMs);
  });

  it('a batch mixing timer and plain items is refused whole (it could not be one atomic block)', async () => {
    const before = broker.ctx.store.getMaxOffsetInQueue('rmq_sys_wheel_timer', 0);
    const items = [
      { flag: 0, body: Buffer.from('timed'), properties: new Map([['UNIQ_KEY', 'MIX0'], ['TIMER_DELAY_MS', '500']]) },
      { flag: 0, body: Buffer.from('plain'), properties: new Map([['UNIQ_KEY', 'MIX1']]) },
    ];
    const req = createRequestCommand(RequestCode.SEND_BATCH_MESSAGE, { a: 'PG', b: 'TT_MIX', c: 'TBW102', d: 4, e: 0, f: 0, g: Date.now(), h: 0, i: '', j: 0, k: false, m: true }, encodeBatchBody(items));
    const r = await client.invokeSync(addr, req, 3000);
    assert.equal(r.code, ResponseCode.MESSAGE_ILLEGAL);
    assert.match(r.remark ?? '', /may not mix timer messages/);
    assert.equal(broker.ctx.store.getMaxOffsetInQueue('rmq_sys_wheel_timer', 0), before, 'nothing filed in the wheel');
    assert.equal(broker.ctx.store.getMaxOffsetInQueue('TT_MIX', 0), 0, 'nothing stored in the topic');
  });

  it('RECALL_MESSAGE (370): a recalled timer is never delivered; bad and expired handles get ILLEGAL_OPERATION', async () => {
    const keep = await send('TT_E', { TIMER_DELAY_MS: '600' }, 'keep');
    const drop = await send('TT_E', { TIMER_DELAY_MS: '600' }, 'drop');
    const recall = (topic: string, recallHandle: string) => client.invokeSync(addr, createRequestCommand(RequestCode.RECALL_MESSAGE, { producerGroup: 'PG', topic, recallHandle }), 3000);
    const ok = await recall('TT_E', String(drop.r.extFields!.recallHandle));
    assert.equal(ok.code, ResponseCode.SUCCESS, ok.remark ?? '');
    assert.equal(ok.extFields!.msgId, drop.uniq);
    const invalid = await recall('TT_E', 'not a handle!');
    assert.equal(invalid.code, ResponseCode.ILLEGAL_OPERATION);
    assert.equal(invalid.remark, 'recall handle is invalid');
    const otherTopic = await recall('TT_E', buildRecallHandle('TT_X', 'broker-t', String(Date.now() + 5000), 'X'));
    assert.equal(otherTopic.remark, 'recall failed, topic not match');
    const expired = await recall('TT_E', buildRecallHandle('TT_E', 'broker-t', String(Date.now() - 1), 'X'));
    assert.equal(expired.code, ResponseCode.ILLEGAL_OPERATION);
    assert.equal(expired.remark, 'recall failed, timestamp invalid');
    const noTopic = await recall('TT_NOPE', String(drop.r.extFields!.recallHandle));
    assert.equal(noTopic.code, ResponseCode.TOPIC_NOT_EXIST);
    await waitFor('the kept one', async () => ((await messagesOf('TT_E')).length > 0 ? true : null));
    await new Promise((r) => setTimeout(r, 3 * PRECISION_MS));
    const got = await messagesOf('TT_E');
    assert.deepEqual(got.map((m) => m.body.toString()), ['keep']);
    assert.equal(got[0]!.properties.get('UNIQ_KEY'), keep.uniq);
    assert.ok(broker.timerMessageService!.stats.recalled >= 1);
  });

  it('a transactional half message with a timer is filed in the wheel at commit, delivered at its time', async () => {
    const props = new Map([['UNIQ_KEY', 'TXTIMER1'], ['TIMER_DELAY_MS', '500'], ['TRAN_MSG', 'true'], ['PGROUP', 'PG']]);
    const { result } = await broker.transactionService.prepare({
      topic: 'TT_TX', queueId: 0, flag: 0, body: Buffer.from('tx'), properties: props, sysFlag: 0x4 /* PREPARED */, bornTimestamp: Date.now(),
      bornHost: broker.ctx.storeHost, storeHost: broker.ctx.storeHost, reconsumeTimes: 0, preparedTransactionOffset: 0,
    });
    assert.ok(result.appendResult, result.remark);
    await new Promise((r) => setTimeout(r, 300));
    const committedAt = Date.now();
    const end = await broker.transactionService.end({ commitLogOffset: result.appendResult!.wroteOffset, resolution: 'COMMIT', fromCheck: false });
    assert.equal(end.ok, true);
    assert.equal((await messagesOf('TT_TX')).length, 0, 'not delivered at commit: TIMER_DELAY_MS counts from the commit');
    const [m] = await waitFor('committed timer', async () => {
      const ms = await messagesOf('TT_TX');
      return ms.length > 0 ? ms : null;
    });
    assert.ok(m!.storeTimestamp >= committedAt + 500 - PRECISION_MS, `delivered ${committedAt + 500 - m!.storeTimestamp} ms before commit + delay`);
    assert.equal(m!.properties.get('UNIQ_KEY'), 'TXTIMER1');
    assert.equal(m!.body.toString(), 'tx');
  });

  it('delay levels keep SCHEDULE_TOPIC_XXXX, and DELAY wins over timer properties (Apache)', async () => {
    const before = broker.ctx.store.getMaxOffsetInQueue('SCHEDULE_TOPIC_XXXX', 0);
    const { r } = await send('TT_F', { DELAY: '1', TIMER_DELAY_SEC: '30' });
    assert.equal(r.code, ResponseCode.SUCCESS);
    assert.equal(r.extFields!.recallHandle, undefined);
    assert.equal(broker.ctx.store.getMaxOffsetInQueue('SCHEDULE_TOPIC_XXXX', 0), before + 1);
    const [m] = (await broker.ctx.store.getMessage('G', 'SCHEDULE_TOPIC_XXXX', 0, before, 1, null)).messages.map((b) => decodeRecord(b));
    assert.equal(m!.properties.has('TIMER_DELAY_SEC'), false);
    assert.equal(m!.properties.get('REAL_TOPIC'), 'TT_F');
  });

  it('a clean restart delivers every pending timer exactly once', async () => {
    const deliverMs = Date.now() + 1500;
    const sent: string[] = [];
    for (let i = 0; i < 20; i++) sent.push((await send('TT_G', { TIMER_DELIVER_MS: String(deliverMs + (i % 4) * 100) }, `r${i}`, 0)).uniq);
    await new Promise((r) => setTimeout(r, 250)); // enqueued into the wheel and checkpointed
    await broker.shutdown();
    await open();
    const got = await waitFor('20 after restart', async () => {
      const ms = await messagesOf('TT_G');
      return ms.length >= 20 ? ms : null;
    });
    await new Promise((r) => setTimeout(r, 5 * PRECISION_MS));
    const again = await messagesOf('TT_G');
    assert.equal(again.length, 20, 'no duplicate after a clean restart');
    assert.deepEqual(got.map((m) => m.properties.get('UNIQ_KEY')).sort(), sent.sort());
    for (const m of again) assert.ok(m.storeTimestamp >= deliverMs);
  });

  it('timerWheelEnable=false refuses timer messages (SYSTEM_ERROR, Apache text)', async () => {
    await broker.shutdown();
    await open({ timerWheelEnable: 'false' });
    const { r } = await send('TT_H', { TIMER_DELAY_SEC: '5' });
    assert.equal(r.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(r.remark, 'accurate timer message is not enabled, timerWheelEnable is false');
    assert.equal(broker.timerMessageService, null);
  });

  it('recallMessageEnable=false (Apache 5.3.3 default): RECALL_MESSAGE answers NO_PERMISSION with Apache text, the timer is delivered', async () => {
    await broker.shutdown();
    await open({ recallMessageEnable: 'false' });
    const sent = await send('TT_R', { TIMER_DELAY_MS: '300' }, 'not-recalled');
    assert.equal(sent.r.code, ResponseCode.SUCCESS, sent.r.remark ?? '');
    assert.match(String(sent.r.extFields!.recallHandle), /^[A-Za-z0-9_-]+=*$/, 'Apache attachRecallHandle does not look at recallMessageEnable');
    const r = await client.invokeSync(addr, createRequestCommand(RequestCode.RECALL_MESSAGE, { producerGroup: 'PG', topic: 'TT_R', recallHandle: String(sent.r.extFields!.recallHandle) }), 3000);
    assert.equal(r.code, ResponseCode.NO_PERMISSION);
    assert.equal(r.remark, 'recall failed, operation is forbidden');
    const got = await waitFor('the timer', async () => {
      const ms = await messagesOf('TT_R');
      return ms.length > 0 ? ms : null;
    });
    assert.deepEqual(got.map((m) => m.body.toString()), ['not-recalled']);
  });
});
