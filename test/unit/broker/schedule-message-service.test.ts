import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerHarness } from './support/broker-harness.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { FakeMessageStore } from './support/fake-message-store.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { ipv4Address } from '../../../src/common/message/msgid.js';
import type { MessageInner } from '../../../src/common/message/message.js';
import { DelayLevelTable } from '../../../src/broker/schedule/delay-level-table.js';
import { messageTimeUp } from '../../../src/broker/schedule/schedule-message-service.js';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { encodeRecord } from '../../../src/common/message/record-codec.js';

let h: BrokerHarness;
afterEach(async () => {
  await h?.close();
});

function scheduled(level: number, realTopic: string, body: string): MessageInner {
  return {
    topic: 'SCHEDULE_TOPIC_XXXX',
    queueId: level - 1,
    flag: 0,
    body: Buffer.from(body),
    properties: new Map([['DELAY', String(level)], ['REAL_TOPIC', realTopic], ['REAL_QID', '0'], ['TAGS', 'TagA']]),
    sysFlag: 0,
    bornTimestamp: 1,
    bornHost: ipv4Address(127, 0, 0, 1, 1),
    storeHost: ipv4Address(127, 0, 0, 1, 10911),
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
  };
}

function delayOffsetFile(dir: string): Record<string, number> {
  return JSON.parse(readFileSync(join(dir, 'config', 'delayOffset.json'), 'utf8')).offsetTable;
}

describe('delay levels', () => {
  it('parses messageDelayLevel with s/m/h/d units', () => {
    const t = new DelayLevelTable('1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h');
    assert.equal(t.maxLevel, 18);
    assert.equal(t.delayMs(1), 1000);
    assert.equal(t.delayMs(4), 30_000);
    assert.equal(t.delayMs(18), 7_200_000);
    assert.equal(new DelayLevelTable('1d').delayMs(1), 86_400_000);
    assert.equal(t.delayMs(19), undefined);
    assert.throws(() => new DelayLevelTable('1s 5x'), /"5x"/);
  });
});

describe('ScheduleMessageService', () => {
  it('B37 progress past the queue max is corrected to max on load (persisted), then the next message is delivered after 30 s', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const store = new FakeMessageStore(clock);
    for (let i = 0; i < 5; i++) await store.putMessage(scheduled(4, 'Old', `old${i}`));
    assert.equal(store.getMaxOffsetInQueue('SCHEDULE_TOPIC_XXXX', 3), 5);
    const dir = mkdtempSync(join(tmpdir(), 'tsmq-b37-'));
    mkdirSync(join(dir, 'config'));
    writeFileSync(join(dir, 'config', 'delayOffset.json'), '{"offsetTable":{4:1000},"dataVersion":{"counter":1,"timestamp":1}}');
    h = await BrokerHarness.create({ store, clock, dir });
    const broker = h.broker;
    const sms = broker.scheduleMessageService;
    try {
      assert.equal(sms.offsetOf(4), 5, 'corrected into [min, max] = [0, 5]');
      await sms.whenPersisted();
      assert.equal(delayOffsetFile(dir)['4'], 5, 'correction persisted');

      const r = await h.send('RealTopic', 'new', { tags: 'TagZ', props: { DELAY: '4' } });
      assert.equal(r!.code, 0);
      assert.equal(r!.extFields!.queueOffset, 5, 'schedule offset 5');

      clock.advance(29_999);
      assert.ok((await sms.deliverDueMessages(4)) <= 1000);
      assert.equal(store.getMaxOffsetInQueue('RealTopic', 0), 0, 'not delivered before 30 s');
      assert.equal(sms.offsetOf(4), 5);

      clock.advance(1);
      await sms.deliverDueMessages(4);
      assert.equal(store.getMaxOffsetInQueue('RealTopic', 0), 1, 'delivered to its real topic');
      assert.equal(sms.offsetOf(4), 6);
      const delivered = store.puts.at(-1)!;
      assert.equal(delivered.topic, 'RealTopic');
      assert.equal(delivered.body.toString(), 'new');
      assert.equal(delivered.properties.get('DELAY'), '4', 'the stored copy keeps DELAY, as Apache\'s (a consumer sees getDelayTimeLevel() 4)');
      assert.equal(delivered.properties.get('REAL_TOPIC'), 'RealTopic');
      assert.equal(delivered.properties.get('TAGS'), 'TagZ');
    } finally {
      await broker.shutdown();
    }
    assert.equal(delayOffsetFile(dir)['4'], 6, 'progress persisted at shutdown');
  });

  it('progress below the queue min is raised to min', async () => {
    h = await BrokerHarness.create();
    for (let i = 0; i < 4; i++) await h.fake.putMessage(scheduled(2, 'X', `m${i}`));
    h.fake.setMinOffset('SCHEDULE_TOPIC_XXXX', 1, 3);
    const sms = h.broker.scheduleMessageService;
    assert.equal(sms.offsetOf(2), 0);
    assert.equal(sms.correctDelayOffsets(), 1);
    assert.equal(sms.offsetOf(2), 3);
  });

  it('delivers due messages in order, stops at the first one not yet due, and skips undeliverable ones', async () => {
    h = await BrokerHarness.create();
    const store = h.fake;
    await store.putMessage(scheduled(1, 'A', 'first'));
    const broken = scheduled(1, 'A', 'no real topic');
    broken.properties.delete('REAL_TOPIC');
    await store.putMessage(broken);
    h.clock.advance(500);
    await store.putMessage(scheduled(1, 'A', 'second'));
    const sms = h.broker.scheduleMessageService;
    h.clock.advance(600); // first two due (1 s), the third at +500 ms
    const wait = await sms.deliverDueMessages(1);
    assert.equal(sms.offsetOf(1), 2);
    assert.equal(wait, 400);
    assert.deepEqual(store.puts.filter((p) => p.topic === 'A').map((p) => p.body.toString()), ['first']);
    h.clock.advance(400);
    await sms.deliverDueMessages(1);
    assert.equal(sms.offsetOf(1), 3);
    assert.deepEqual(store.puts.filter((p) => p.topic === 'A').map((p) => p.body.toString()), ['first', 'second']);
  });

  it('a failed re-put is retried later from the same entry', async () => {
    h = await BrokerHarness.create();
    await h.fake.putMessage(scheduled(1, 'A', 'm'));
    h.clock.advance(1000);
    h.fake.nextPutStatus = { status: 'OS_PAGE_CACHE_BUSY' };
    assert.equal(await h.broker.scheduleMessageService.deliverDueMessages(1), 10_000);
    assert.equal(h.broker.scheduleMessageService.offsetOf(1), 0);
    await h.broker.scheduleMessageService.deliverDueMessages(1);
    assert.equal(h.broker.scheduleMessageService.offsetOf(1), 1);
  });

  it('the timers deliver on their own (first run after 1 s)', async () => {
    h = await BrokerHarness.create();
    await h.fake.putMessage(scheduled(1, 'Auto', 'm'));
    h.clock.advance(1000);
    h.broker.scheduleMessageService.start();
    const deadline = Date.now() + 3000;
    while (h.fake.getMaxOffsetInQueue('Auto', 0) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(h.fake.getMaxOffsetInQueue('Auto', 0), 1);
  });

  it('a delivery counts in the broker stats as Apache ScheduleMessageService.PutResultProcess.onSuccess: put of the real topic, SCHEDULE_TOPIC_XXXX@SCHEDULE_CONSUMER get, metrics in as delay', async () => {
    h = await BrokerHarness.create();
    const stats = h.ctx.brokerStats;
    const puts: Array<[string, string, number, number]> = [];
    stats.setListener({ onPut: (topic, type, n, bytes) => void puts.push([topic, type, n, bytes]), onRpc: () => undefined });
    const item = (name: string, key: string): number | undefined => stats.getStatsItem(name, key)?.value;
    const r = await h.send('RealTopic', 'later', { props: { DELAY: '1' } });
    assert.equal(r!.code, 0);
    const totalsAfterSend = { ...stats.totals };
    const brokerPutsAfterSend = item('BROKER_PUT_NUMS', 'DefaultCluster')!;
    // the send itself: under the topic it was stored under, as Apache's SendMessageProcessor reads it after the put hooks
    assert.equal(item('TOPIC_PUT_NUMS', 'SCHEDULE_TOPIC_XXXX'), 1, 'the send counts under SCHEDULE_TOPIC_XXXX');
    assert.equal(item('TOPIC_PUT_SIZE', 'SCHEDULE_TOPIC_XXXX'), totalsAfterSend.putMessageSizeTotal);
    assert.equal(item('TOPIC_PUT_NUMS', 'RealTopic'), undefined, 'not under the topic the client sent to');
    assert.deepEqual(puts, [['SCHEDULE_TOPIC_XXXX', 'delay', 1, totalsAfterSend.putMessageSizeTotal]], 'messages_in of the send: stored topic, delay');
    puts.length = 0;

    h.clock.advance(999);
    await h.broker.scheduleMessageService.deliverDueMessages(1);
    assert.equal(stats.totals.putMessageTimesTotal, totalsAfterSend.putMessageTimesTotal, 'nothing counted before the delivery');
    h.clock.advance(1);
    await h.broker.scheduleMessageService.deliverDueMessages(1);
    const delivered = await h.fake.getMessage('g', 'RealTopic', 0, 0, 1, null);
    const sizeBytes = delivered.messages[0]!.length;
    assert.ok(sizeBytes > 0);

    assert.equal(item('TOPIC_PUT_NUMS', 'RealTopic'), 1, 'incTopicPutNums(real topic)');
    assert.equal(item('TOPIC_PUT_SIZE', 'RealTopic'), sizeBytes, 'incTopicPutSize(real topic, wroteBytes)');
    assert.equal(item('TOPIC_PUT_NUMS', 'SCHEDULE_TOPIC_XXXX'), 1, 'the delivery is not a put of the schedule topic');
    assert.equal(item('BROKER_PUT_NUMS', 'DefaultCluster'), brokerPutsAfterSend + 1, 'incBrokerPutNums');
    assert.equal(item('GROUP_GET_NUMS', 'SCHEDULE_TOPIC_XXXX@SCHEDULE_CONSUMER'), 1, 'incGroupGetNums(SCHEDULE_CONSUMER, SCHEDULE_TOPIC_XXXX)');
    assert.equal(item('GROUP_GET_SIZE', 'SCHEDULE_TOPIC_XXXX@SCHEDULE_CONSUMER'), sizeBytes);
    assert.equal(item('BROKER_GET_NUMS', 'DefaultCluster'), undefined, 'no broker get');
    assert.equal(stats.totals.putMessageTimesTotal, totalsAfterSend.putMessageTimesTotal + 1, 'the store counts every put');
    assert.equal(stats.totals.putMessageSizeTotal, totalsAfterSend.putMessageSizeTotal + sizeBytes);
    assert.equal(stats.totals.getTransferredMsgCount, totalsAfterSend.getTransferredMsgCount, 'nothing pulled');
    assert.deepEqual(puts, [['RealTopic', 'delay', 1, sizeBytes]], 'messages_in / throughput_in / message_size under the real topic, message_type delay');

    // a %RETRY% topic (consumer send-back) is counted in too; a failed re-put is not counted
    await h.fake.putMessage(scheduled(2, '%RETRY%G1', 'again'));
    h.clock.advance(5000);
    h.fake.nextPutStatus = { status: 'OS_PAGE_CACHE_BUSY' };
    assert.equal(await h.broker.scheduleMessageService.deliverDueMessages(2), 10_000);
    assert.equal(item('TOPIC_PUT_NUMS', '%RETRY%G1'), undefined, 'a refused re-put counts nothing');
    await h.broker.scheduleMessageService.deliverDueMessages(2);
    assert.equal(item('TOPIC_PUT_NUMS', '%RETRY%G1'), 1);
    assert.equal(item('GROUP_GET_NUMS', 'SCHEDULE_TOPIC_XXXX@SCHEDULE_CONSUMER'), 2);
    assert.deepEqual(puts.slice(1).map((p) => p.slice(0, 3)), [['%RETRY%G1', 'delay', 1]]);
  });

  it('runtime info (brokerStatus) carries scheduleMessageOffset_<level> = "<delivered up to>,<queue max>" as Apache buildRunningStats', async () => {
    h = await BrokerHarness.create();
    const runtime = async (): Promise<Record<string, string>> => JSON.parse((await h.call(RequestCode.GET_BROKER_RUNTIME_INFO, null)).body!.toString('utf8')).table;
    for (let i = 0; i < 3; i++) await h.fake.putMessage(scheduled(3, 'Lvl3', `m${i}`));
    h.clock.advance(10_000);
    await h.fake.putMessage(scheduled(3, 'Lvl3', 'later'));
    assert.deepEqual(Object.keys(await runtime()).filter((k) => k.startsWith('scheduleMessageOffset')), [], 'no progress recorded yet');
    await h.broker.scheduleMessageService.deliverDueMessages(3);
    const rt = await runtime();
    assert.equal(rt.scheduleMessageOffset_3, '3,4', 'three delivered of four in queue 2');
    assert.deepEqual(Object.keys(rt).filter((k) => k.startsWith('scheduleMessageOffset')), ['scheduleMessageOffset_3']);
  });

  it('enableScheduleMessageStats=false: deliveries count in no broker stats (Apache MessageStoreConfig key)', async () => {
    h = await BrokerHarness.create({ config: { enableScheduleMessageStats: 'false' } });
    await h.fake.putMessage(scheduled(1, 'Quiet', 'm'));
    h.clock.advance(1000);
    await h.broker.scheduleMessageService.deliverDueMessages(1);
    assert.equal(h.fake.getMaxOffsetInQueue('Quiet', 0), 1, 'delivered');
    assert.equal(h.ctx.brokerStats.getStatsItem('TOPIC_PUT_NUMS', 'Quiet'), undefined);
    assert.equal(h.ctx.brokerStats.getStatsItem('GROUP_GET_NUMS', 'SCHEDULE_TOPIC_XXXX@SCHEDULE_CONSUMER'), undefined);
    assert.equal(h.ctx.brokerStats.totals.putMessageTimesTotal, 0);
  });

  it('messageTimeUp restores topic/queue; the put decides without DELAY (WAIT=false) but stores the properties as they were, as Apache', () => {
    const rec = encodeRecord(scheduled(3, 'Real', 'b'));
    const ext = decodeRecord(rec);
    const up = messageTimeUp(ext)!;
    assert.equal(up.topic, 'Real');
    assert.equal(up.queueId, 0);
    assert.equal(up.properties.has('DELAY'), false);
    assert.equal(up.properties.get('WAIT'), 'false');
    assert.equal(up.properties.get('REAL_TOPIC'), 'Real');
    const stored = decodeRecord(encodeRecord(up));
    assert.deepEqual([...stored.properties], [...ext.properties], 'stored: DELAY, REAL_TOPIC, REAL_QID, TAGS as in the schedule record');
  });
});
