/**
 * Apache RocketMQ 5.3.3 remoting client (test/interop/java/rocketmq5 TimerPeer) against
 * `tsmq start`: Message.setDeliverTimeMs and setDelayTimeMs timers are delivered to a push
 * consumer not before their time and within the default precision (1 s), with Apache's
 * properties; the SendResult carries a recall handle and DefaultMQProducer.recallMessage
 * cancels a pending timer; an expired handle gets Apache's ILLEGAL_OPERATION (604) from the broker;
 * a TIMER_DEL_UNIQKEY deletion marker cancels another timer; a time beyond timerMaxDelaySec gets
 * MESSAGE_ILLEGAL (13) with Apache's text; a transactional half message with setDeliverTimeMs,
 * committed by its TransactionMQProducer, is delivered at its time. One JVM, one broker. Skips without java/mvn (fails in CI).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess } from '../support/tsmq-process.js';
import { assertRanOk, buildPeer, javaSkipReason, runJava, type JavaRun } from './support/java-peers.js';

const N = 8;
const DELAY_MS = 3000;
type Line = Record<string, unknown>;

describe('Apache RocketMQ 5.3.3 client: timer messages and recall against tsmq start', { skip: javaSkipReason(), timeout: 300_000 }, () => {
  let storeDir: string;
  let broker: TsmqProcess;
  let run: JavaRun;
  const of = (type: string): Line[] => run.lines.filter((l) => l.type === type);

  before(async () => {
    const peer = await buildPeer('rocketmq5');
    storeDir = mkdtempSync(join(tmpdir(), 'tsmq-interop-timer-'));
    broker = await TsmqProcess.start({ storeDir, options: { mappedFileSizeCommitLog: String(4 * 1024 * 1024), recallMessageEnable: 'true' } });
    run = await runJava(peer, 'tsmq.interop.rocketmq5.TimerPeer', [broker.namesrvAddr, 'topic=IopTimer5', 'group=GID_IOP_TIMER5', `n=${N}`, `delayMs=${DELAY_MS}`, 'recall=1', 'cancel=1', 'tx=1', 'timeoutMs=40000', 'idleMs=2500'], { timeoutMs: 120_000 });
    assertRanOk(run, 'TimerPeer');
  });

  after(async () => {
    await broker?.stop();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  it('every timer send is SEND_OK with a recall handle for its topic and broker', () => {
    const sent = of('sent').filter((s) => s.key !== 'delmark-0');
    assert.equal(sent.length, N + 1, JSON.stringify(of('error')));
    for (const s of sent) {
      assert.equal(s.status, 'SEND_OK');
      const raw = Buffer.from(String(s.recallHandle), 'base64url').toString('utf8').split(' ');
      assert.equal(raw[0], 'v1');
      assert.equal(raw[1], 'IopTimer5');
      assert.equal(raw[4], s.msgId, 'the handle names the message by its UNIQ_KEY');
    }
  });

  it('recallMessage succeeds with the handle; a bad handle is refused; an expired one gets ILLEGAL_OPERATION from the broker', () => {
    const recalled = of('recalled');
    assert.equal(recalled.length, 1, JSON.stringify(of('error')));
    const last = of('sent').find((s) => s.key === `timer-${N - 1}`)!;
    assert.equal(recalled[0]!.msgId, last.msgId);
    // The 5.3.3 client decodes the handle itself and refuses this one before sending anything.
    assert.match(String(of('badRecall')[0]?.message), /^recall handle is invalid/);
    const expired = of('expiredRecall');
    assert.equal(expired.length, 1, JSON.stringify(of('error')));
    assert.equal(expired[0]!.code, 604, 'ResponseCode.ILLEGAL_OPERATION, as Apache RecallMessageProcessor');
    assert.equal(expired[0]!.message, 'recall failed, timestamp invalid');
  });

  it('a TIMER_DEL_UNIQKEY marker is accepted and cancels its timer; a time beyond timerMaxDelaySec is MESSAGE_ILLEGAL', () => {
    const marker = of('sent').find((s) => s.key === 'delmark-0');
    assert.equal(marker?.status, 'SEND_OK', JSON.stringify(of('error')));
    assert.equal(marker!.cancels, of('sent').find((s) => s.key === `timer-${N - 2}`)!.msgId);
    const far = of('farSend');
    assert.equal(far.length, 1, JSON.stringify(of('error')));
    assert.equal(far[0]!.code, 13, 'ResponseCode.MESSAGE_ILLEGAL for WHEEL_TIMER_MSG_ILLEGAL');
    assert.equal(far[0]!.message, 'timer message illegal, the delay time should not be bigger than the max delay 259200000ms; or if set del msg, the delay time should be bigger than the current time');
  });

  it('timers arrive not before, and less than the precision plus 1 s after, their time; the recalled and the cancelled one never', () => {
    const recv = of('recv');
    const keys = recv.map((r) => r.key as string).sort();
    const want = [...Array.from({ length: N - 2 }, (_, i) => `timer-${i}`), 'delayms-0', 'tx-0'].sort();
    assert.deepEqual(keys, want, JSON.stringify(of('error')));
    const tx = of('txSent');
    assert.equal(tx.length, 1, JSON.stringify(of('error')));
    assert.equal(tx[0]!.status, 'SEND_OK');
    assert.equal(tx[0]!.localState, 'COMMIT_MESSAGE');
    const deliverOf = new Map([...of('sent'), ...tx].map((s) => [s.key as string, Number(s.deliverMs)]));
    for (const r of recv) {
      const due = deliverOf.get(r.key as string)!;
      assert.ok(Number(r.storeTimestamp) >= due - 5, `${r.key as string} stored ${due - Number(r.storeTimestamp)} ms early`);
      assert.ok(Number(r.at) - due < 2000, `${r.key as string} consumed ${Number(r.at) - due} ms late`);
      assert.equal(r.realTopic, 'IopTimer5', 'REAL_TOPIC kept in the stored properties, as Apache 5.3.3 stores it');
      assert.ok(Number(r.timerOutMs) > 0, 'TIMER_OUT_MS kept');
      assert.equal(r.tags, 'TagT');
      assert.equal(r.body, r.key);
    }
  });
});
