/**
 * The remoting side of transactions over the shared TransactionalMessageService:
 * END_TRANSACTION (37) commit / rollback / unknown / wrong group, and CHECK_TRANSACTION_STATE (39)
 * sent to a producer connection of the half message's group, with the half message (real topic
 * restored) as a CommitLog record body. On-disk layout: half in RMQ_SYS_TRANS_HALF_TOPIC, ops in
 * RMQ_SYS_TRANS_OP_HALF_TOPIC with tag 'd' and the half queue offset as body.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from './grpc-harness.js';
import { EndTransactionProcessor } from '../../../src/broker/transaction/end-transaction-processor.js';
import { remotingTransactionChecker } from '../../../src/broker/transaction/remoting-transaction-checker.js';
import { createRequestCommand, markOneway } from '../../../src/remoting/protocol/commands.js';
import type { RemotingChannel } from '../../../src/remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';
import { socketAddressOf } from '../../../src/common/message/msgid.js';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import type { MessageInner } from '../../../src/common/message/message.js';

function fakeChannel(sent: RemotingCommand[] = []): RemotingChannel {
  return { remoteAddress: '127.0.0.1:5555', id: 'ch-1', closed: false, send: (c) => void sent.push(c), close() {}, onClose() {} };
}

function txMessage(key: string): MessageInner {
  return {
    topic: 'RTX_T',
    queueId: 1,
    flag: 0,
    body: Buffer.from(key),
    properties: new Map([['KEYS', key], ['UNIQ_KEY', `U-${key}`], ['TRAN_MSG', 'true'], ['PGROUP', 'PID_RTX']]),
    sysFlag: 0x4,
    bornTimestamp: Date.now(),
    bornHost: socketAddressOf('127.0.0.1', 5555),
    storeHost: socketAddressOf('127.0.0.1', 10911),
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
  };
}

describe('remoting END_TRANSACTION / CHECK_TRANSACTION_STATE', { timeout: 30_000 }, () => {
  let h: Harness;
  let processor: EndTransactionProcessor;

  before(async () => {
    h = await startHarness({ transactionTimeOut: '200', transactionCheckInterval: '100000', transactionCheckMax: '2' });
    h.broker.ctx.topicConfigManager.createTopicInSendMessageBackMethod('RTX_T', 4, 6, 0);
    processor = new EndTransactionProcessor(h.front.transactions);
  });

  after(async () => {
    await h?.stop();
  });

  const end = (clo: number, qo: number, type: number, group = 'PID_RTX', oneway = false): Promise<RemotingCommand | null> => {
    const cmd = createRequestCommand(37, { producerGroup: group, tranStateTableOffset: qo, commitLogOffset: clo, commitOrRollback: type, fromTransactionCheck: false, msgId: '' });
    return processor.process({ channel: fakeChannel(), request: oneway ? markOneway(cmd) : cmd });
  };

  it('commits, rolls back, rejects a wrong group, ignores unknown', async () => {
    const store = h.broker.ctx.store;
    const a = (await h.front.transactions.prepare(txMessage('rtx-a'))).result.appendResult!;
    const b = (await h.front.transactions.prepare(txMessage('rtx-b'))).result.appendResult!;
    assert.equal(store.getMaxOffsetInQueue('RTX_T', 1), 0, 'half messages are not on the real topic');
    const half = await store.lookMessageByOffset(a.wroteOffset);
    assert.equal(half!.topic, 'RMQ_SYS_TRANS_HALF_TOPIC');
    assert.equal(half!.properties.get('REAL_TOPIC'), 'RTX_T');
    assert.equal(half!.properties.get('REAL_QID'), '1');
    assert.equal(half!.properties.get('__transactionId__'), 'U-rtx-a');

    assert.equal(await end(a.wroteOffset, a.queueOffset, 0), null, 'state unknown: no reply');
    const wrong = await end(a.wroteOffset, a.queueOffset, 8, 'PID_OTHER');
    assert.equal(wrong!.code, 1);
    assert.match(wrong!.remark ?? '', /producer group wrong/);
    assert.equal((await end(a.wroteOffset, a.queueOffset, 8))!.code, 0);
    assert.equal((await end(a.wroteOffset, a.queueOffset, 8))!.code, 0, 'a second commit is answered, not re-put');
    assert.equal(await end(b.wroteOffset, b.queueOffset, 12, 'PID_RTX', true), null, 'oneway: no reply');
    await new Promise((r) => setTimeout(r, 300));
    const got = await store.getMessage('T', 'RTX_T', 1, 0, 10);
    assert.equal(got.messages.length, 1, 'one committed message, b rolled back');
    const committed = decodeRecord(got.messages[0]!);
    assert.equal(committed.body.toString(), 'rtx-a');
    assert.equal(committed.sysFlag & 0xc, 0x8);
    assert.equal(committed.preparedTransactionOffset, a.wroteOffset);
    assert.equal(committed.properties.has('TRAN_MSG'), false);
    const ops = await store.getMessage('T', 'RMQ_SYS_TRANS_OP_HALF_TOPIC', 0, 0, 10);
    assert.deepEqual(ops.messages.map((r) => decodeRecord(r).body.toString()).sort(), [String(a.queueOffset), String(b.queueOffset)].sort());
    assert.ok(ops.messages.every((r) => decodeRecord(r).properties.get('TAGS') === 'd'));
  });

  it('checks an unresolved half message with its producer group over code 39', async () => {
    const sent: RemotingCommand[] = [];
    const channel = fakeChannel(sent);
    h.front.transactions.addChecker(remotingTransactionChecker((g) => (g === 'PID_RTX' ? [channel] : [])));
    const c = (await h.front.transactions.prepare(txMessage('rtx-c'))).result.appendResult!;
    await new Promise((r) => setTimeout(r, 300));
    await h.front.transactions.check();
    assert.equal(sent.length, 1);
    const cmd = sent[0]!;
    assert.equal(cmd.code, 39);
    assert.equal(cmd.flag & 2, 2, 'oneway');
    assert.equal(cmd.extFields!.commitLogOffset, String(c.wroteOffset));
    assert.equal(cmd.extFields!.tranStateTableOffset, String(c.queueOffset));
    assert.equal(cmd.extFields!.msgId, 'U-rtx-c');
    assert.equal(cmd.extFields!.transactionId, 'U-rtx-c');
    const body = decodeRecord(cmd.body!);
    assert.equal(body.topic, 'RTX_T');
    assert.equal(body.queueId, 1);
    assert.equal(body.body.toString(), 'rtx-c');
    await h.front.transactions.check();
    assert.equal(sent.length, 1, 'not checked again before transactionTimeOut');
    assert.equal((await end(c.wroteOffset, c.queueOffset, 8))!.code, 0);
    assert.equal(h.front.transactions.pendingHalves().length, 0);
  });

  it('rebuilds unresolved half messages from the half and op topics after a restart', async () => {
    const d = (await h.front.transactions.prepare(txMessage('rtx-d'))).result.appendResult!;
    const e = (await h.front.transactions.prepare(txMessage('rtx-e'))).result.appendResult!;
    assert.equal((await end(e.wroteOffset, e.queueOffset, 12))!.code, 0);
    await h.restart();
    processor = new EndTransactionProcessor(h.front.transactions);
    assert.deepEqual(h.front.transactions.pendingHalves().map((p) => p.uniqKey), ['U-rtx-d']);
    assert.equal((await end(d.wroteOffset, d.queueOffset, 8))!.code, 0);
    assert.equal(h.front.transactions.pendingHalves().length, 0);
  });

  it('discards a half message into TRANS_CHECK_MAX_TIME_TOPIC after transactionCheckMax checks', async () => {
    const f = (await h.front.transactions.prepare({ ...txMessage('rtx-f'), properties: new Map([['UNIQ_KEY', 'U-rtx-f'], ['TRAN_MSG', 'true'], ['PGROUP', 'PID_NOBODY']]) })).result.appendResult!;
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 250));
      await h.front.transactions.check();
    }
    assert.equal(h.front.transactions.pendingHalves().length, 0);
    const store = h.broker.ctx.store;
    const got = await store.getMessage('T', 'TRANS_CHECK_MAX_TIME_TOPIC', 0, 0, 10);
    assert.deepEqual(got.messages.map((r) => decodeRecord(r).properties.get('UNIQ_KEY')), ['U-rtx-f']);
    assert.equal(store.getMaxOffsetInQueue('RTX_T', 1) > 0, true);
    const committed = await store.getMessage('T', 'RTX_T', 1, 0, 10);
    assert.ok(!committed.messages.some((r) => decodeRecord(r).properties.get('UNIQ_KEY') === 'U-rtx-f'), 'never committed');
    assert.ok(f.queueOffset >= 0);
  });
});
