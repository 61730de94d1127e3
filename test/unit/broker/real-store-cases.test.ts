/**
 * Case rows through the processors with the real DefaultMessageStore (no sockets): B23, B36, B37.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerHarness } from './support/broker-harness.js';
import { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { decodeRecord, readRecordTotalSize } from '../../../src/common/message/record-codec.js';
import type { MessageExt } from '../../../src/common/message/message.js';

let h: BrokerHarness;
afterEach(async () => {
  await h?.close();
});

async function harness(prepare?: (dir: string) => void): Promise<BrokerHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'tsmq-real-'));
  prepare?.(dir);
  const clock = new ManualClock(1_700_000_000_000);
  const store = await DefaultMessageStore.open(
    { storePathRootDir: dir, mappedFileSizeCommitLog: 16 * 1024 * 1024, mappedFileSizeConsumeQueue: 200 },
    { clock, logger: silentLogger },
  );
  return BrokerHarness.create({ store, clock, dir });
}

async function pullAll(topic: string, queueId = 0, from = 0): Promise<MessageExt[]> {
  const r = await h.pull('READER', topic, queueId, from, { sysFlag: 4 });
  const out: MessageExt[] = [];
  let p = 0;
  while (r?.code === ResponseCode.SUCCESS && p < r.body!.length) {
    out.push(decodeRecord(r.body!, p));
    p += readRecordTotalSize(r.body!, p);
  }
  return out;
}

function sendBack(msg: MessageExt, group: string, delayLevel: number, maxReconsumeTimes: number) {
  return h.call(RequestCode.CONSUMER_SEND_MSG_BACK, {
    offset: msg.commitLogOffset, group, delayLevel, originMsgId: msg.msgId, originTopic: msg.topic, unitMode: false, maxReconsumeTimes,
  });
}

describe('cases with the real store', () => {
  it('B23 a 4 MiB - 10 B body is accepted, sent back and redelivered from %RETRY%; 4 MiB + 1 B is rejected with 13', async () => {
    h = await harness();
    const body = Buffer.alloc(4 * 1024 * 1024 - 10, 0x5a);
    assert.equal((await h.send('T23', body, { tags: 'TagA', props: { KEYS: 'k23' } })).code, ResponseCode.SUCCESS);
    const [original] = await pullAll('T23');
    assert.equal(original!.body.length, body.length);
    assert.equal((await sendBack(original!, 'G23', 0, 16)).code, ResponseCode.SUCCESS);
    h.clock.advance(10_000); // level 3
    await h.broker.scheduleMessageService.deliverDueMessages(3);
    const [retry] = await pullAll('%RETRY%G23');
    assert.ok(retry, 'redelivered from the retry topic');
    assert.deepEqual(retry.body, body);
    assert.equal(retry.reconsumeTimes, 1);
    assert.equal(retry.properties.get('RETRY_TOPIC'), 'T23');
    const over = await h.send('T23', Buffer.alloc(4 * 1024 * 1024 + 1));
    assert.equal(over.code, ResponseCode.MESSAGE_ILLEGAL);
  });

  it('B36 the final failure is stored in %DLQ% at once, without DELAY, never in SCHEDULE_TOPIC_XXXX', async () => {
    h = await harness();
    await h.send('T36', 'always fails', { tags: 'T' });
    let [msg] = await pullAll('T36');
    const originalId = msg!.msgId;
    let retryFrom = 0;
    for (let i = 0; i < 2; i++) {
      assert.equal((await sendBack(msg!, 'G36', 4, 2)).code, ResponseCode.SUCCESS);
      h.clock.advance(30_000);
      await h.broker.scheduleMessageService.deliverDueMessages(4);
      [msg] = await pullAll('%RETRY%G36', 0, retryFrom++);
    }
    assert.equal(msg!.reconsumeTimes, 2);
    const scheduleMax = h.store.getMaxOffsetInQueue('SCHEDULE_TOPIC_XXXX', 3);
    const at = h.clock.nowMs();
    assert.equal((await sendBack(msg!, 'G36', 4, 2)).code, ResponseCode.SUCCESS);
    assert.equal(h.store.getMaxOffsetInQueue('SCHEDULE_TOPIC_XXXX', 3), scheduleMax, 'nothing new in the schedule topic');
    const [dlq] = await pullAll('%DLQ%G36');
    assert.ok(dlq);
    assert.equal(dlq.storeTimestamp, at);
    assert.equal(dlq.properties.has('DELAY'), false);
    assert.equal(dlq.properties.get('RETRY_TOPIC'), 'T36');
    assert.equal(dlq.properties.get('ORIGIN_MESSAGE_ID'), originalId);
    assert.equal(dlq.reconsumeTimes, 3);
  });

  it('B37 stale progress 1000 for level 4 is corrected to the queue max 5 on start, persisted, and the next delayed message is delivered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsmq-b37r-'));
    const clock = new ManualClock(1_700_000_000_000);
    const open = () => DefaultMessageStore.open({ storePathRootDir: dir, mappedFileSizeCommitLog: 1024 * 1024, mappedFileSizeConsumeQueue: 200 }, { clock, logger: silentLogger });
    // First run: 5 delayed messages at level 4, all delivered (queue max 5).
    let store = await open();
    h = await BrokerHarness.create({ store, clock, dir });
    for (let i = 0; i < 5; i++) await h.send('T37', `old${i}`, { props: { DELAY: '4' } });
    clock.advance(30_000);
    await h.broker.scheduleMessageService.deliverDueMessages(4);
    assert.equal(h.broker.scheduleMessageService.offsetOf(4), 5);
    assert.equal(store.getMaxOffsetInQueue('SCHEDULE_TOPIC_XXXX', 3), 5);
    await h.broker.shutdown(); // keeps the directory
    // Restart on the same store with delayOffset.json saying 1000.
    mkdirSync(join(dir, 'config'), { recursive: true });
    writeFileSync(join(dir, 'config', 'delayOffset.json'), '{"offsetTable":{4:1000}}');
    store = await open();
    h = await BrokerHarness.create({ store, clock, dir });
    const sms = h.broker.scheduleMessageService;
    assert.equal(sms.offsetOf(4), 5);
    await sms.whenPersisted();
    assert.equal(JSON.parse(readFileSync(join(dir, 'config', 'delayOffset.json'), 'utf8')).offsetTable['4'], 5);
    const sent = await h.send('T37', 'new', { props: { DELAY: '4' } });
    assert.equal(sent.extFields!.queueOffset, 5);
    clock.advance(30_000);
    await sms.deliverDueMessages(4);
    assert.equal(sms.offsetOf(4), 6);
    const delivered = await pullAll('T37');
    assert.deepEqual(delivered.map((m) => m.body.toString()), ['old0', 'old1', 'old2', 'old3', 'old4', 'new']);
  });
});
