/**
 * rocketmq-client-java 5.0.8 (Apache's RocketMQ 5 gRPC client, unpatched, from Maven Central)
 * against tsmq's gRPC front: nameserver + broker + GrpcFront in this process (the gRPC
 * integration harness), the Java side is test/interop/java/grpc5 Grpc5Peer, one JVM per scenario
 * group, printing JSON lines.
 *
 * The client opens its Telemetry stream with `grpc-timeout: 31536000M` (60 × 365 days); before
 * src/grpc/grpc-timeout-header.ts every client start-up failed or its session was dead.
 *
 * Covered: Producer normal / FIFO (message group) / delivery-timestamp sends; transactional
 * producer with commit, rollback and check-back; SimpleConsumer receive + ack,
 * changeInvisibleDuration, ack with a stale receipt handle (refused, 40013); PushConsumers with a
 * TAG filter and a SQL92 filter, retry after FAILURE, DLQ after max attempts.
 * Skips when `java` or `mvn` is not installed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../src/common/logging/logger.js';
import { startHarness, type Harness } from '../integration/grpc/grpc-harness.js';
import { configureGroup } from '../integration/grpc/grpc-clients.js';
import { invokeInProcess } from '../../src/console/in-process-request.js';
import { createRequestCommand } from '../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../src/remoting/codes/response-code.js';
import { assertRanOk, buildPeer, javaSkipReason, runJava, type BuiltPeer, type JavaRun } from './support/java-peers.js';

type Line = Record<string, unknown>;
const MAIN = 'tsmq.interop.grpc5.Grpc5Peer';
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

const N_NORMAL = 10;
const FIFO_GROUPS = 3;
const PER_GROUP = 5;
const DELAY_MS = 2000;
const N_PUSH = 12;
const RETRY_MAX_TIMES = 2;
const MAX_ATTEMPTS = RETRY_MAX_TIMES + 1;
const BACKOFF_MS = 300;

const linesOf = (run: JavaRun, type: string, scenario?: string): Line[] =>
  run.lines.filter((l) => l.type === type && (scenario === undefined || l.scenario === scenario));

function explain(run: JavaRun): string {
  const errs = linesOf(run, 'error').map((e) => `${e.op as string}: ${e.class as string} ${e.message as string}`);
  return `${errs.length ? `\nerrors:\n  ${errs.slice(0, 15).join('\n  ')}` : ''}\nstderr (tail):\n${run.stderr
    .split('\n')
    .filter((l) => !/^\s+at /.test(l))
    .slice(-25)
    .join('\n')}`;
}

describe('rocketmq-client-java 5.0.8 (gRPC) against tsmq', { skip: javaSkipReason(), timeout: 240_000 }, () => {
  let h: Harness;
  let peer: BuiltPeer;

  before(async () => {
    const [built, harness] = await Promise.all([
      buildPeer('grpc5'),
      startHarness(
        {
          enablePropertyFilter: 'true',
          transactionTimeOut: '800',
          transactionCheckInterval: '300',
          timerPrecisionMs: '50',
          grpcBackoffInitialMs: String(BACKOFF_MS),
          grpcBackoffMultiplier: '1',
          grpcBackoffMaxMs: String(BACKOFF_MS),
          grpcPushLongPollingTimeoutMs: '2000',
        },
        silentLogger,
        true,
      ),
    ]);
    peer = built;
    h = harness;
    configureGroup(h, 'G5_FIFO_G', { consumeMessageOrderly: true });
    configureGroup(h, 'G5_RETRY_G', { retryMaxTimes: RETRY_MAX_TIMES });
  });

  after(async () => {
    await h?.stop();
  });

  async function java(scenario: string, opts: Record<string, string | number>, timeoutMs = 90_000): Promise<JavaRun> {
    const args = [h.endpoints, scenario, ...Object.entries(opts).map(([k, v]) => `${k}=${v}`)];
    const run = await runJava(peer, MAIN, args, { timeoutMs });
    assertRanOk(run, `Grpc5Peer ${scenario}`);
    assert.ok(linesOf(run, 'end').length === 1, `Grpc5Peer ${scenario} did not finish${explain(run)}`);
    return run;
  }

  it('Producer, transactional Producer and SimpleConsumer', async (t) => {
    const run = await java('produce-simple', {
      normalTopic: 'G5_NORMAL',
      fifoTopic: 'G5_FIFO',
      delayTopic: 'G5_DELAY',
      invisTopic: 'G5_INVIS',
      staleTopic: 'G5_STALE',
      txTopic: 'G5_TX',
      n: N_NORMAL,
      fifoGroups: FIFO_GROUPS,
      perGroup: PER_GROUP,
      delayMs: DELAY_MS,
      normalGroup: 'G5_NORMAL_G',
      fifoGroup: 'G5_FIFO_G',
      delayGroup: 'G5_DELAY_G',
      invisGroup: 'G5_INVIS_G',
      staleGroup: 'G5_STALE_G',
      txGroup: 'G5_TX_G',
    });
    const sent = linesOf(run, 'sent');
    const sentId = new Map(sent.map((l) => [l.key as string, l.messageId as string]));

    await t.test('every client starts (Telemetry stream with grpc-timeout 31536000M stays open)', () => {
      const started = linesOf(run, 'started').map((l) => l.client);
      assert.deepEqual(started, ['producer', 'txProducer', 'simpleNormal', 'simpleFifo', 'simpleDelay', 'simpleTx', 'simpleInvis', 'simpleStale'], explain(run));
    });

    await t.test('normal send: every message SEND_OK with a message id; SimpleConsumer receives each once with body, tag, keys, property; acks succeed', () => {
      assert.equal(linesOf(run, 'sent', 'normal').length, N_NORMAL, explain(run));
      const recv = linesOf(run, 'recv', 'normal');
      assert.deepEqual(recv.map((r) => r.key as string).sort(), range(N_NORMAL).map((i) => `normal-${i}`).sort(), explain(run));
      for (const r of recv) {
        const i = Number((r.key as string).split('-')[1]);
        assert.equal(r.body, `body-${i}`);
        assert.equal(r.tag, i % 2 === 0 ? 'TagA' : 'TagB');
        assert.deepEqual((r.keys as string[]).slice().sort(), [`k2-${i}`, `normal-${i}`]);
        assert.equal((r.props as Record<string, string>).idx, String(i));
        assert.equal(r.messageId, sentId.get(r.key as string));
        assert.equal(r.topic, 'G5_NORMAL');
        assert.equal(r.attempt, 1);
      }
      assert.equal(linesOf(run, 'acked', 'normal').length, N_NORMAL, explain(run));
    });

    await t.test('FIFO: while a message is in flight the next one of its message group is held back', () => {
      const seq = run.lines.filter((l) => (l.type === 'recv' && l.scenario === 'fifo') || l.type === 'fifoHeadAcked');
      const head = seq[0]!;
      assert.equal(head.type, 'recv', explain(run));
      const group = head.messageGroup as string;
      assert.equal(head.key, `fifo-${group.split('-')[1]}-0`, 'the first message handed out is the head of its group');
      const ackedAt = seq.findIndex((l) => l.type === 'fifoHeadAcked');
      assert.ok(ackedAt > 0, `head never acked${explain(run)}`);
      const early = seq.slice(1, ackedAt).filter((l) => l.messageGroup === group).map((l) => l.key);
      assert.deepEqual(early, [], `${group} handed out while its head was in flight`);
      assert.ok(ackedAt > 1, 'other message groups were not served while the head was in flight');
    });

    await t.test('FIFO: each message group is received in send order, once', () => {
      assert.equal(linesOf(run, 'sent', 'fifo').length, FIFO_GROUPS * PER_GROUP, explain(run));
      const recv = linesOf(run, 'recv', 'fifo');
      for (const g of range(FIFO_GROUPS)) {
        const got = recv.filter((r) => r.messageGroup === `group-${g}`).map((r) => r.key);
        assert.deepEqual(got, range(PER_GROUP).map((s) => `fifo-${g}-${s}`), `group-${g}${explain(run)}`);
      }
      assert.equal(recv.length, FIFO_GROUPS * PER_GROUP);
      for (const r of recv) assert.equal(r.messageId, sentId.get(r.key as string));
    });

    await t.test(`delay: the delivery-timestamp message (${DELAY_MS} ms) arrives not before its time, with that timestamp`, () => {
      const info = linesOf(run, 'delaySent')[0]!;
      const recv = linesOf(run, 'recv', 'delay');
      assert.equal(recv.length, 1, explain(run));
      const r = recv[0]!;
      assert.equal(r.key, 'delay-0');
      assert.equal(r.body, 'delayed');
      assert.equal(r.deliveryTimestamp, info.due);
      assert.ok((r.at as number) >= (info.due as number), `received ${(info.due as number) - (r.at as number)} ms early`);
      assert.ok((r.at as number) - (info.due as number) < 5000, `received ${(r.at as number) - (info.due as number)} ms late`);
    });

    await t.test('transactions: commit delivered, rollback not; open ones are checked back and resolved by the checker', () => {
      assert.equal(linesOf(run, 'sent', 'tx').length, 4, explain(run));
      const recv = linesOf(run, 'recv', 'tx');
      assert.deepEqual(recv.map((r) => r.key).sort(), ['tx-check-commit', 'tx-commit'], explain(run));
      for (const r of recv) {
        assert.equal(r.body, `tx body ${r.key as string}`);
        assert.equal(r.messageId, sentId.get(r.key as string));
      }
      const checked = new Set(linesOf(run, 'checked').map((l) => l.key as string));
      assert.deepEqual([...checked].sort(), ['tx-check-commit', 'tx-check-rollback'], `checked back: ${[...checked].join(', ')}${explain(run)}`);
      for (const c of linesOf(run, 'checked')) assert.equal(c.messageId, sentId.get(c.key as string));
    });

    await t.test('changeInvisibleDuration: a message received for 30 s and shortened to 1 s comes back after ~1 s (attempt 2)', () => {
      const recv = linesOf(run, 'recv', 'invis');
      assert.deepEqual(recv.map((r) => [r.key, r.attempt]), [['invis-0', 1], ['invis-0', 2]], explain(run));
      const changedAt = linesOf(run, 'changed')[0]!.at as number;
      const back = (recv[1]!.at as number) - changedAt;
      assert.ok(back >= 900 && back < 10_000, `came back ${back} ms after the change`);
      assert.deepEqual(linesOf(run, 'acked', 'invis').map((l) => l.key), ['invis-0'], explain(run));
    });

    await t.test('ack with a stale receipt handle (invisible time over) is refused with INVALID_RECEIPT_HANDLE 40013; the message comes back and the fresh handle acks', () => {
      const refused = linesOf(run, 'refused').filter((l) => l.op === 'staleAck');
      assert.equal(refused.length, 1, `stale ack was accepted${explain(run)}`);
      assert.equal(refused[0]!.class, 'BadRequestException');
      assert.match(refused[0]!.message as string, /40013|INVALID_RECEIPT_HANDLE/);
      const recv = linesOf(run, 'recv', 'stale');
      assert.deepEqual(recv.map((r) => [r.key, r.attempt]), [['stale-0', 1], ['stale-0', 2]], explain(run));
      assert.deepEqual(linesOf(run, 'acked', 'stale').map((l) => l.key), ['stale-0']);
      assert.equal(linesOf(run, 'staleDrained')[0]?.count, 0, 'acked message delivered again');
    });

    await t.test('no client errors', () => assert.deepEqual(linesOf(run, 'error'), [], explain(run)));
  });

  it('PushConsumer: TAG filter, SQL92 filter, retry after FAILURE, DLQ after max attempts', async (t) => {
    const tagKeys = range(N_PUSH).filter((i) => i % 3 !== 1).map((i) => `push-${i}`);
    const sqlKeys = range(N_PUSH).filter((i) => i % 2 === 0 && i * 5 > 20).map((i) => `push-${i}`);
    const run = await java('push', {
      pushTopic: 'G5_PUSH',
      retryTopic: 'G5_RETRY',
      n: N_PUSH,
      expectTag: tagKeys.length,
      expectSql: sqlKeys.length,
      maxAttempts: MAX_ATTEMPTS,
      tagGroup: 'G5_PUSH_TAG_G',
      sqlGroup: 'G5_PUSH_SQL_G',
      retryGroup: 'G5_RETRY_G',
      dlqReaderGroup: 'G5_DLQ_READER_G',
      timeoutMs: 30_000,
    });

    await t.test('every client starts', () => {
      assert.deepEqual(linesOf(run, 'started').map((l) => l.client), ['pushTag', 'pushSql', 'pushRetry', 'producer', 'simpleDlq'], explain(run));
      assert.equal(linesOf(run, 'sent').length, N_PUSH + 3, explain(run));
    });

    await t.test('TAG filter "TagA || TagC": exactly the TagA and TagC messages, once each', () => {
      const recv = linesOf(run, 'recv', 'tag');
      assert.deepEqual(recv.map((r) => r.key as string).sort(), tagKeys.sort(), explain(run));
      for (const r of recv) {
        const i = Number((r.key as string).split('-')[1]);
        assert.equal(r.tag, ['TagA', 'TagB', 'TagC'][i % 3]);
        assert.equal(r.body, `push body ${i}`);
        assert.equal(r.attempt, 1);
      }
    });

    await t.test("SQL92 filter \"region = 'hz' AND price > 20\": exactly the matching messages, once each", () => {
      const recv = linesOf(run, 'recv', 'sql');
      assert.deepEqual(recv.map((r) => r.key as string).sort(), sqlKeys.sort(), explain(run));
      for (const r of recv) {
        const p = r.props as Record<string, string>;
        assert.equal(p.region, 'hz');
        assert.ok(Number(p.price) > 20, `price ${p.price}`);
      }
    });

    await t.test(`retry: a FAILURE is redelivered (attempt 2) after the ${BACKOFF_MS} ms backoff; a SUCCESS is not`, () => {
      const recv = linesOf(run, 'recv', 'retry');
      const of = (k: string): Line[] => recv.filter((r) => r.key === k);
      assert.deepEqual(of('retry-0').map((r) => [r.attempt, r.result]), [[1, 'FAILURE'], [2, 'SUCCESS']], explain(run));
      const gap = (of('retry-0')[1]!.at as number) - (of('retry-0')[0]!.at as number);
      assert.ok(gap >= BACKOFF_MS - 50, `redelivered after ${gap} ms`);
      assert.deepEqual(of('ok-0').map((r) => [r.attempt, r.result]), [[1, 'SUCCESS']]);
    });

    await t.test(`DLQ: a message failing ${MAX_ATTEMPTS} times (retryMaxTimes ${RETRY_MAX_TIMES}) is not delivered again and lands in %DLQ%G5_RETRY_G`, () => {
      const recv = linesOf(run, 'recv', 'retry').filter((r) => r.key === 'dlq-0');
      assert.deepEqual(recv.map((r) => r.attempt), range(MAX_ATTEMPTS).map((i) => i + 1), explain(run));
      const dlq = linesOf(run, 'recv', 'dlq');
      assert.equal(dlq.length, 1, `DLQ messages: ${dlq.length}${explain(run)}`);
      assert.equal(dlq[0]!.key, 'dlq-0');
      assert.equal(dlq[0]!.body, 'retry body dlq-0');
      assert.equal(dlq[0]!.topic, '%DLQ%G5_RETRY_G');
      const sentDlq = linesOf(run, 'sent', 'retry').find((l) => l.key === 'dlq-0')!;
      assert.equal(dlq[0]!.messageId, sentDlq.messageId, 'the DLQ copy keeps the message id');
      assert.equal(linesOf(run, 'acked', 'dlq').length, 1);
    });

    await t.test('no client errors', () => assert.deepEqual(linesOf(run, 'error'), [], explain(run)));
  });
  it('departed clients: a SIGKILLed PushConsumer\'s held messages come back within seconds; a closed SimpleConsumer\'s only after their invisible time (as Apache)', async (t) => {
    // PushConsumer (auto_renew): holds 3 messages in a listener that never returns, then kill -9
    // of its own JVM. The front notices the dropped Telemetry stream (grpcClientStreamLostExpireMs
    // 5 s + a 1 s scan), releases the held deliveries with invisibleTimeMillisWhenClear (1 s), and
    // another consumer of the group gets them long before the 60 s push invisible time.
    const die = await runJava(peer, MAIN, [h.endpoints, 'push-die', 'topic=G5_DIE', 'group=G5_DIE_G', 'n=3'], { timeoutMs: 40_000 });
    const dying = linesOf(die, 'dying');
    assert.equal(dying.length, 1, `push-die did not reach its kill${explain(die)}`);
    assert.equal(dying[0]!.held, 3, explain(die));
    assert.notEqual(die.code, 0, 'the JVM was killed');
    assert.equal(linesOf(die, 'end').length, 0, 'no orderly shutdown (no NotifyClientTermination)');
    const dieKeys = ['die-0', 'die-1', 'die-2'];
    assert.deepEqual(linesOf(die, 'recv', 'push-die').map((l) => l.key as string).sort(), dieKeys, explain(die));
    const killedAt = dying[0]!.at as number;
    const again = await java('receive', { topic: 'G5_DIE', group: 'G5_DIE_G', n: 3, timeoutMs: 15_000 });
    const recv = linesOf(again, 'recv', 'receive');
    await t.test('another consumer of the group gets exactly the 3 held messages, attempt 2', () => {
      assert.deepEqual(recv.map((l) => l.key as string).sort(), dieKeys, explain(again));
      assert.deepEqual(recv.map((l) => l.attempt), [2, 2, 2]);
    });
    await t.test('within stream-loss detection (5 s) + scan (1 s) + invisibleTimeMillisWhenClear (1 s) of the kill, not after the 60 s invisible time', () => {
      t.diagnostic(`redelivered ${recv.map((l) => (l.at as number) - killedAt).join(', ')} ms after the kill`);
      for (const l of recv) {
        const afterKillMs = (l.at as number) - killedAt;
        assert.ok(afterKillMs >= 1000 && afterKillMs <= 9500, `${l.key as string} redelivered ${afterKillMs} ms after the kill`);
      }
    });

    // SimpleConsumer (auto_renew false): Apache's proxy tracks no handles of simple consumers, so
    // close() (NotifyClientTermination) does not release them: they come back when their own
    // invisible_duration (4 s here) ends.
    const INVIS_MS = 4000;
    const closeRun = await java('simple-close', { topic: 'G5_CLOSE', group: 'G5_CLOSE_G', n: 2, invisibleMs: INVIS_MS, timeoutMs: 12_000 });
    await t.test(`a closed SimpleConsumer's unacked messages come back after their ${INVIS_MS} ms invisible time, not at close`, () => {
      const first = linesOf(closeRun, 'recv', 'simple-close-first');
      const second = linesOf(closeRun, 'recv', 'simple-close-second');
      assert.deepEqual(first.map((l) => l.key as string).sort(), ['close-0', 'close-1'], explain(closeRun));
      assert.deepEqual(second.map((l) => l.key as string).sort(), ['close-0', 'close-1'], explain(closeRun));
      assert.deepEqual(second.map((l) => l.attempt), [2, 2]);
      t.diagnostic(`back ${second.map((l) => (l.at as number) - (first.find((f) => f.key === l.key)!.at as number)).join(', ')} ms after the first delivery`);
      for (const l of second) {
        const firstAt = first.find((f) => f.key === l.key)!.at as number;
        const gap = (l.at as number) - firstAt;
        assert.ok(gap >= INVIS_MS - 100 && gap <= INVIS_MS + 3000, `${l.key as string} back ${gap} ms after its first delivery`);
      }
      assert.equal(linesOf(closeRun, 'acked', 'simple-close-second').length, 2);
      assert.deepEqual(linesOf(closeRun, 'error'), [], explain(closeRun));
    });
  });
  it('ClientConfiguration.setNamespace("ns5"): Producer and SimpleConsumer use topic ns5%G5_NS and group ns5%G5_NS_G (as Apache\'s proxy wraps them); MessageView.getTopic() is G5_NS', async () => {
    const run = await java('send-receive', { topic: 'G5_NS', group: 'G5_NS_G', n: 4, namespace: 'ns5' });
    const keys = range(4).map((i) => `sr-${i}`);
    assert.deepEqual(linesOf(run, 'acked', 'send-receive').map((l) => l.key as string).sort(), keys, explain(run));
    assert.deepEqual([...new Set(linesOf(run, 'recv', 'send-receive').map((l) => l.topic))], ['G5_NS']);
    const store = h.broker.ctx.store;
    const stored = (topic: string) => range(8).reduce((n, q) => n + Math.max(0, store.getMaxOffsetInQueue(topic, q)), 0);
    assert.deepEqual([stored('ns5%G5_NS'), stored('G5_NS')], [4, 0]);
    assert.ok(h.broker.ctx.topicConfigManager.selectTopicConfig('ns5%G5_NS'));
  });
  it('SimpleConsumer after an offset reset back to before the sends (INVOKE_BROKER_TO_RESET_OFFSET 222): the same 6 messages again, once each, attempt 1', async () => {
    const topic = 'G5_RESET';
    const group = 'G5_RESET_G';
    const t0 = Date.now() - 1;
    const first = await java('send-receive', { topic, group, n: 6 });
    const keys = range(6).map((i) => `sr-${i}`);
    assert.deepEqual(linesOf(first, 'acked', 'send-receive').map((l) => l.key as string).sort(), keys, explain(first));
    const reset = await invokeInProcess(h.broker, createRequestCommand(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, { topic, group, timestamp: String(t0), isForce: 'true', offset: '-1' }));
    assert.equal(reset.code, ResponseCode.SUCCESS, reset.remark ?? '');
    // ask for one more than was sent: exactly the 6 come back, none twice
    const again = await java('receive', { topic, group, n: 7, timeoutMs: 6000 });
    const recv = linesOf(again, 'recv', 'receive');
    assert.deepEqual(recv.map((l) => l.key as string).sort(), keys, explain(again));
    assert.deepEqual(recv.map((l) => l.attempt), [1, 1, 1, 1, 1, 1]);
    assert.equal(linesOf(again, 'acked', 'receive').length, 6, explain(again));
    assert.deepEqual(linesOf(again, 'error'), [], explain(again));
  });
});
