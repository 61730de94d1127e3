/**
 * Metrics of transactional sends on a real broker (sockets, real store) scraped from the
 * Prometheus endpoint, as Apache 5.3.3 counts them: the half send in rocketmq_messages_in_total /
 * rocketmq_throughput_in_total under RMQ_SYS_TRANS_HALF_TOPIC with message_type transaction
 * (SendMessageProcessor reads the topic after the half rewrite); the commit (END_TRANSACTION) is
 * not counted in again (EndTransactionProcessor.sendFinalMessage only counts broker stats and
 * rocketmq_commit_messages_total).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BrokerController } from '../../../src/broker/broker-controller.js';
import type { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { encodeProperties } from '../../../src/common/message/properties.js';
import { decodeMessageId } from '../../../src/common/message/msgid.js';
import { startMetricsBroker, type MetricsBroker } from '../../support/metrics-broker.js';
import { sampleSum } from '../../support/prometheus-text.js';

const TOPIC = 'TxMetricsT';
const HALF = 'RMQ_SYS_TRANS_HALF_TOPIC';

describe('metrics of transactional sends (Apache 5.3.3 counting)', { timeout: 60_000 }, () => {
  let mb: MetricsBroker;
  let broker: BrokerController;
  let client: RemotingClient;
  let addr: string;

  before(async () => {
    mb = await startMetricsBroker('tsmq-tx-metrics-', { brokerName: 'broker-tx', transactionCheckInterval: '600000' });
    ({ broker, client, addr } = mb);
  });

  after(async () => {
    await mb?.stop();
  });

  const send = async (key: string, transactional: boolean): Promise<{ commitLogOffset: number; queueOffset: number }> => {
    const props = new Map([['UNIQ_KEY', `U-${key}`], ['KEYS', key], ['WAIT', 'true']]);
    if (transactional) {
      props.set('TRAN_MSG', 'true');
      props.set('PGROUP', 'PID_TXM');
    }
    const header = { a: 'PID_TXM', b: TOPIC, c: 'TBW102', d: 4, e: 0, f: 0, g: Date.now(), h: transactional ? 4 : 0, i: encodeProperties(props), j: 0, k: false };
    const r = await client.invokeSync(addr, createRequestCommand(RequestCode.SEND_MESSAGE_V2, header, Buffer.from(`body-${key}`)), 3000);
    assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    return { commitLogOffset: decodeMessageId(String(r.extFields!.msgId)).commitLogOffset, queueOffset: Number(r.extFields!.queueOffset) };
  };

  const endTransaction = async (half: { commitLogOffset: number; queueOffset: number }, key: string, commitOrRollback: 8 | 12): Promise<void> => {
    const header = { producerGroup: 'PID_TXM', tranStateTableOffset: half.queueOffset, commitLogOffset: half.commitLogOffset, commitOrRollback, fromTransactionCheck: false, msgId: `U-${key}` };
    const r = await client.invokeSync(addr, createRequestCommand(RequestCode.END_TRANSACTION, header), 3000);
    assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
  };

  /** Sum of the stored record sizes of `topic` queue `queueId`. */
  const recordBytes = async (topic: string, queueId: number): Promise<number> => {
    const got = await broker.ctx.store.getMessage('G', topic, queueId, 0, 100);
    return got.messages.reduce((sum, m) => sum + m.length, 0);
  };

  it('a half send counts once under RMQ_SYS_TRANS_HALF_TOPIC / transaction; the commit is not counted again', async () => {
    await send('normal', false);
    const a = await send('tx-commit', true);
    const b = await send('tx-rollback', true);
    await endTransaction(a, 'tx-commit', 8);
    await endTransaction(b, 'tx-rollback', 12);
    const committedQueue = [0, 1, 2, 3].filter((q) => broker.ctx.store.getMaxOffsetInQueue(TOPIC, q) > 0);
    assert.equal(committedQueue.reduce((n, q) => n + broker.ctx.store.getMaxOffsetInQueue(TOPIC, q), 0), 2, 'the normal and the committed message are on the topic');

    const text = await mb.scrape();
    assert.equal(sampleSum(text, 'rocketmq_messages_in_total', { topic: HALF, message_type: 'transaction', is_system: 'true' }), 2);
    assert.equal(sampleSum(text, 'rocketmq_messages_in_total', { topic: HALF }), 2, 'no other type on the half topic');
    assert.equal(sampleSum(text, 'rocketmq_throughput_in_total', { topic: HALF, message_type: 'transaction' }), await recordBytes(HALF, 0));
    assert.equal(sampleSum(text, 'rocketmq_messages_in_total', { topic: TOPIC, message_type: 'normal', is_system: 'false' }), 1, 'only the normal send; the commit is not counted in');
    assert.equal(sampleSum(text, 'rocketmq_messages_in_total', { topic: TOPIC }), 1);
    assert.equal(sampleSum(text, 'rocketmq_messages_in_total', { topic: TOPIC, message_type: 'transaction' }), undefined);
    const normalQueue = (await broker.ctx.store.lookMessageByOffset(0))!.queueId;
    const normalBytes = (await broker.ctx.store.getMessage('G', TOPIC, normalQueue, 0, 1)).messages[0]!.length;
    assert.equal(sampleSum(text, 'rocketmq_throughput_in_total', { topic: TOPIC }), normalBytes);
    assert.equal(sampleSum(text, 'rocketmq_commit_messages_total', { topic: TOPIC }), 1);
    assert.equal(sampleSum(text, 'rocketmq_rollback_messages_total', { topic: TOPIC }), 1);
  });

  it('rocketmq_half_messages counts the unresolved halves per real topic (0 once all are resolved); rocketmq_finish_message_latency_milliseconds times each commit from the birth', async () => {
    const born = Date.now();
    const open1 = await send('tx-open-1', true);
    const open2 = await send('tx-open-2', true);
    let text = await mb.scrape();
    assert.equal(sampleSum(text, 'rocketmq_half_messages', { topic: TOPIC }), 2, 'two halves not yet ended');
    await new Promise((r) => setTimeout(r, 50));
    await endTransaction(open1, 'tx-open-1', 8);
    text = await mb.scrape();
    assert.equal(sampleSum(text, 'rocketmq_half_messages', { topic: TOPIC }), 1);
    // the commit of the first test and this one
    assert.equal(sampleSum(text, 'rocketmq_finish_message_latency_milliseconds_count', { topic: TOPIC }), 2);
    const sum = sampleSum(text, 'rocketmq_finish_message_latency_milliseconds_sum', { topic: TOPIC })!;
    assert.ok(sum >= 50 && sum <= 2 * (Date.now() - born) + 60_000, `finish latency sum ${sum} ms`);
    assert.equal(sampleSum(text, 'rocketmq_finish_message_latency_milliseconds_bucket', { topic: TOPIC, le: '5000' }), 2, 'both within 5 s');
    await endTransaction(open2, 'tx-open-2', 12);
    text = await mb.scrape();
    assert.equal(sampleSum(text, 'rocketmq_half_messages', { topic: TOPIC }), 0, 'the series stays at 0');
    assert.equal(sampleSum(text, 'rocketmq_finish_message_latency_milliseconds_count', { topic: TOPIC }), 2, 'a rollback is no finish latency (Apache times commits)');
  });
});
