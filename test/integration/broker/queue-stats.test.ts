/**
 * Per-queue stats QUEUE_PUT_NUMS / QUEUE_PUT_SIZE over the wire (VIEW_BROKER_STATS_DATA 315),
 * counted as Apache 5.3.3 counts them: only puts stored under SCHEDULE_TOPIC_XXXX (a producer's
 * delay-level send, a consumer's send-back), keyed `SCHEDULE_TOPIC_XXXX@<delay level - 1>`;
 * plain sends are not counted per queue; `enableDetailStat=false` keeps no QUEUE_* item at all.
 * The delay-level deliveries (QUEUE_GET_*) are judged by Apache's admin API in the mqadmin suite.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { LeanClient } from '../../support/lean-client.js';
import { removeDir, tempDir } from '../../support/store-fixtures.js';

const SCHEDULE = 'SCHEDULE_TOPIC_XXXX';

interface Broker {
  broker: BrokerController;
  client: LeanClient;
  stop(): Promise<void>;
}

async function startBroker(extra: Record<string, string>): Promise<Broker> {
  const dir = tempDir('tsmq-queue-stats-');
  const broker = await BrokerController.create({
    brokerConfig: { storePathRootDir: dir, listenPort: '0', namesrvAddr: '', mappedFileSizeCommitLog: String(1024 * 1024), ...extra },
    logger: silentLogger,
  });
  await broker.start();
  const client = new LeanClient(`127.0.0.1:${broker.port}`);
  await client.ready;
  return {
    broker,
    client,
    async stop() {
      client.close();
      await broker.shutdown();
      removeDir(dir);
    },
  };
}

/** The day window's sum of one item (the whole life of a fresh broker), or the refusal's remark. */
async function daySum(c: LeanClient, statsName: string, statsKey: string): Promise<number | string> {
  const r = await c.invoke(RequestCode.VIEW_BROKER_STATS_DATA, { statsName, statsKey });
  if (r.code !== 0) return r.remark ?? `code ${r.code}`;
  return (JSON.parse(r.body.toString('utf8')) as { statsDay: { sum: number } }).statsDay.sum;
}

/** CommitLog offset of a SEND_MESSAGE_V2 reply's offset msgId (its last 16 hex digits). */
function commitLogOffsetOf(reply: { extFields: Record<string, string> }): number {
  return Number(BigInt(`0x${reply.extFields.msgId!.slice(-16)}`));
}

describe('per-queue stats (QUEUE_PUT_NUMS / QUEUE_PUT_SIZE), enableDetailStat default true', () => {
  let b: Broker;
  before(async () => {
    b = await startBroker({});
  });
  after(async () => {
    await b?.stop();
  });

  it('delay-level sends and a send-back count under SCHEDULE_TOPIC_XXXX@<level - 1> with their record bytes; plain sends not per queue', async () => {
    const c = b.client;
    const store = b.broker.ctx.store;
    // two DELAY=3 (10 s, stays in the schedule topic for this test) sends → queue 2
    for (let i = 0; i < 2; i++) {
      const r = await c.send('QsDelayTopic', 0, Buffer.from(`delayed-${i}`), { DELAY: '3', WAIT: 'true' });
      assert.equal(r.code, 0, r.remark ?? '');
    }
    const afterDelayed = store.getMaxPhyOffset();
    assert.equal(await daySum(c, 'QUEUE_PUT_NUMS', `${SCHEDULE}@2`), 2);
    assert.equal(await daySum(c, 'QUEUE_PUT_SIZE', `${SCHEDULE}@2`), afterDelayed, 'the two records are all the CommitLog holds');

    // a plain send: counted per topic, not per queue (Apache counts only SCHEDULE_TOPIC_XXXX per queue)
    const plain = await c.send('QsPlainTopic', 1, Buffer.from('plain'), { WAIT: 'true' });
    assert.equal(plain.code, 0, plain.remark ?? '');
    assert.equal(await daySum(c, 'TOPIC_PUT_NUMS', 'QsPlainTopic'), 1);
    assert.equal(await daySum(c, 'QUEUE_PUT_NUMS', 'QsPlainTopic@1'), 'The stats <QUEUE_PUT_NUMS> <QsPlainTopic@1> not exist');

    // a consumer's send-back with delay level 2 → stored under SCHEDULE_TOPIC_XXXX queue 1
    const beforeBack = store.getMaxPhyOffset();
    const back = await c.invoke(RequestCode.CONSUMER_SEND_MSG_BACK, {
      group: 'GID_QS', offset: String(commitLogOffsetOf(plain)), delayLevel: '2', originMsgId: plain.extFields.msgId, originTopic: 'QsPlainTopic', maxReconsumeTimes: '16',
    });
    assert.equal(back.code, 0, back.remark ?? '');
    assert.equal(await daySum(c, 'QUEUE_PUT_NUMS', `${SCHEDULE}@1`), 1);
    assert.equal(await daySum(c, 'QUEUE_PUT_SIZE', `${SCHEDULE}@1`), store.getMaxPhyOffset() - beforeBack);
    assert.equal(await daySum(c, 'QUEUE_PUT_NUMS', `${SCHEDULE}@2`), 2, 'queue 2 unchanged');
    assert.equal(await daySum(c, 'TOPIC_PUT_NUMS', SCHEDULE), 3, 'the topic item holds both queues');
  });

  it('deleting the topic forgets its per-queue items (Apache onTopicDeleted)', async () => {
    const c = b.client;
    const r = await c.send('QsGoneTopic', 0, Buffer.from('x'), { DELAY: '4', WAIT: 'true' });
    assert.equal(r.code, 0, r.remark ?? '');
    assert.equal(await daySum(c, 'QUEUE_PUT_NUMS', `${SCHEDULE}@3`), 1);
    b.broker.ctx.brokerStats.onTopicDeleted(SCHEDULE);
    assert.equal(await daySum(c, 'QUEUE_PUT_NUMS', `${SCHEDULE}@3`), `The stats <QUEUE_PUT_NUMS> <${SCHEDULE}@3> not exist`);
  });
});

describe('per-queue stats with enableDetailStat=false', () => {
  let b: Broker;
  before(async () => {
    b = await startBroker({ enableDetailStat: 'false' });
  });
  after(async () => {
    await b?.stop();
  });

  it('no QUEUE_* item is kept (315 answers "not exist"); the topic and broker stats still count', async () => {
    const c = b.client;
    const r = await c.send('QsDelayTopic', 0, Buffer.from('delayed'), { DELAY: '3', WAIT: 'true' });
    assert.equal(r.code, 0, r.remark ?? '');
    assert.equal(await daySum(c, 'QUEUE_PUT_NUMS', `${SCHEDULE}@2`), `The stats <QUEUE_PUT_NUMS> <${SCHEDULE}@2> not exist`);
    assert.equal(await daySum(c, 'QUEUE_PUT_SIZE', `${SCHEDULE}@2`), `The stats <QUEUE_PUT_SIZE> <${SCHEDULE}@2> not exist`);
    assert.equal(await daySum(c, 'TOPIC_PUT_NUMS', SCHEDULE), 1);
    assert.equal(b.broker.ctx.brokerStats.enableQueueStat, false);
  });
});
