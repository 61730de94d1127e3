/**
 * Apache's Go client (`github.com/apache/rocketmq-client-go/v2`, the version pinned in
 * test/interop/go/go.mod) against one `tsmq start` (nameserver + broker, child process): sync,
 * async, oneway and batch sends; ordered send + orderly push consumer; clustering push consumers
 * with a tag expression and a SQL92 selector; broadcasting; delay levels and delivery timestamps;
 * retry after ConsumeRetryLater; transactions (commit, rollback, UNKNOW resolved by the check);
 * PullConsumer (PullFrom and Poll/ACK with committed offsets); request-reply; message trace; the
 * admin API.
 *
 * The peer (test/interop/go, one Go process per scenario) prints JSON lines; every assertion is on
 * the values it saw. Skips without `go` outside CI; in CI (CI=true) a missing `go` fails the file.
 * `GO_JUDGE_APACHE=1` runs the same file against Apache RocketMQ 5.3.3's NamesrvStartup +
 * BrokerStartup (Maven Central jars, needs java + mvn) instead of tsmq, to check that every
 * assertion holds for Apache too. See docs/interop.md ("Go client scenarios").
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess } from '../support/tsmq-process.js';
import { rawInvoke } from '../support/raw-remoting.js';
import { RequestCode } from '../../src/remoting/codes/request-code.js';
import { freePortTriple, startApacheBroker, startApacheNamesrv, waitRegistered, type ServerProc } from './support/apache-server.js';
import { assertGoRanOk, buildGoPeer, explainGo, goSkipReason, linesOf, runGoPeer, type BuiltGoPeer, type GoLine, type GoRun } from './support/go-peer.js';

const SEND_TOPIC = 'GoSendTopic';
const N = 4; // messages per send mode
const MODES = ['sync', 'async', 'oneway'] as const;
const BIG = 2; // 10 KiB (compressed) messages sent to the same topic

/** The broker under test: tsmq (default) or, with GO_JUDGE_APACHE=1, Apache 5.3.3. */
interface Judged {
  namesrvAddr: string;
  brokerAddr: string;
  stop(): Promise<void>;
}

const AGAINST_APACHE = process.env.GO_JUDGE_APACHE === '1';

const BROKER_OPTIONS = {
  enablePropertyFilter: 'true', // SQL92 selector
  // RMQ_SYS_TRACE_TOPIC exists from the start: the Go client's trace dispatcher sends only to a
  // topic the nameserver has a route for (no TBW102 fallback), and Apache's nameserver has none
  // for a topic no broker registered (tsmq's answers with TBW102's, get-route-info-by-topic.ts).
  traceTopicEnable: 'true',
  transactionCheckInterval: '1000', // the UNKNOW transaction is checked back within ~2 s
  // Apache 5.3.3 writes the op (commit/rollback) records in batches every 3 s
  // (transactionOpBatchInterval), so with a short timeout it checks committed and rolled-back
  // half messages back too (seen with 1000 and, sometimes, 4000 ms); tsmq writes them at once.
  // Against Apache the file uses Apache's default, 6000 ms.
  transactionTimeOut: AGAINST_APACHE ? '6000' : '1000',
};

async function startJudged(storeDir: string): Promise<Judged> {
  if (!AGAINST_APACHE) {
    const tsmq = await TsmqProcess.start({
      storeDir,
      options: { ...BROKER_OPTIONS, mappedFileSizeCommitLog: String(4 * 1024 * 1024), mappedFileSizeConsumeQueue: String(1000 * 20) },
    });
    return { namesrvAddr: tsmq.namesrvAddr, brokerAddr: tsmq.brokerAddr, stop: async () => void (await tsmq.stop()) };
  }
  const nsPort = await freePortTriple();
  const brokerPort = await freePortTriple();
  const store = join(storeDir, 'store');
  mkdirSync(store, { recursive: true });
  const conf = join(storeDir, 'broker.conf');
  const lines = ['brokerClusterName=DefaultCluster', 'brokerName=broker-a', 'brokerId=0', `namesrvAddr=127.0.0.1:${nsPort}`, `listenPort=${brokerPort}`, 'brokerIP1=127.0.0.1', `storePathRootDir=${store}`, `storePathCommitLog=${join(store, 'commitlog')}`, 'autoCreateTopicEnable=true'];
  for (const [k, v] of Object.entries(BROKER_OPTIONS)) lines.push(`${k}=${v}`);
  writeFileSync(conf, `${lines.join('\n')}\n`);
  const procs: ServerProc[] = [await startApacheNamesrv(storeDir, nsPort)];
  procs.push(await startApacheBroker(storeDir, conf));
  await waitRegistered(`127.0.0.1:${nsPort}`, 'DefaultCluster', `127.0.0.1:${brokerPort}`);
  return {
    namesrvAddr: `127.0.0.1:${nsPort}`,
    brokerAddr: `127.0.0.1:${brokerPort}`,
    stop: async () => {
      for (const p of procs.reverse()) await p.stop();
    },
  };
}

const str = (l: GoLine, k: string): string => l[k] as string;
const num = (l: GoLine, k: string): number => l[k] as number;
const sorted = (xs: string[]): string[] => [...xs].sort();
const bodies = (lines: GoLine[]): string[] => sorted(lines.map((l) => str(l, 'body')));

describe(`Apache RocketMQ Go client (rocketmq-client-go/v2) against ${AGAINST_APACHE ? 'Apache RocketMQ 5.3.3' : 'tsmq'}`, { skip: goSkipReason(), timeout: 600_000 }, () => {
  let storeDir: string;
  let broker: Judged;
  let peer: BuiltGoPeer;

  before(async () => {
    storeDir = mkdtempSync(join(tmpdir(), 'tsmq-interop-go-'));
    const built = buildGoPeer();
    built.catch(() => undefined); // reported below, after the broker is up
    broker = await startJudged(storeDir);
    peer = await built;
    console.log(`# Go peer: ${peer.how} in ${peer.ms} ms ${peer.goVersion}`);
  });

  after(async () => {
    await broker?.stop();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  async function go(subcommand: string, opts: Record<string, string | number> = {}, timeoutMs = 60_000): Promise<GoRun> {
    const run = await runGoPeer(peer, broker.namesrvAddr, subcommand, opts, timeoutMs);
    assertGoRanOk(run);
    return run;
  }

  let sent: GoLine[] = [];

  it(`SendSync, SendAsync and SendOneWay: ${N} messages each, every one read back by PullConsumer.PullFrom at its queue and offset`, async () => {
    const run = await go('send', { topic: SEND_TOPIC, n: N, modes: MODES.join(','), prefix: 'go' });
    sent = linesOf(run, 'sent');
    for (const mode of MODES) assert.equal(sent.filter((l) => l.mode === mode).length, N, `${mode} sends${explainGo(run)}`);
    const acked = sent.filter((l) => l.mode !== 'oneway');
    assert.deepEqual(acked.map((l) => l.status), Array(2 * N).fill(0), 'SendOK for every sync and async send');
    assert.equal(new Set(acked.map((l) => `${num(l, 'queueId')}@${num(l, 'queueOffset')}`)).size, 2 * N, 'no two sends got the same queue offset');
    assert.equal(new Set(acked.map((l) => str(l, 'msgId'))).size, 2 * N, 'distinct UNIQ_KEY message ids');

    // 10 KiB bodies: the Go producer compresses them (zlib, sysFlag COMPRESSED_FLAG 0x1)
    const big = await go('send', { topic: SEND_TOPIC, n: BIG, modes: 'big', prefix: 'go' });
    const bigSent = linesOf(big, 'sent');
    assert.deepEqual(bigSent.map((l) => l.status), Array(BIG).fill(0), `big sends${explainGo(big)}`);
    acked.push(...bigSent);

    const pull = await go('pull', { topic: SEND_TOPIC, group: 'GID_GO_PULLFROM' });
    const recv = linesOf(pull, 'recv');
    const expected = MODES.flatMap((m) => Array.from({ length: N }, (_, i) => `go-${m}-${i}`));
    const bigBodies = Array.from({ length: BIG }, (_, i) => `go-big-${i}|…`);
    assert.deepEqual(bodies(recv), sorted([...expected, ...bigBodies]), `bodies read back${explainGo(pull)}`);
    for (const r of recv.filter((x) => str(x, 'body').startsWith('go-big-'))) {
      assert.equal(r.bodyLen, 10 * 1024, 'the whole 10 KiB body, decompressed by the client');
      assert.equal(num(r, 'sysFlag') & 1, 1, 'stored with COMPRESSED_FLAG as the producer sent it');
    }
    for (const r of recv) {
      const [, mode, idx] = str(r, 'body').replace('|…', '').split('-');
      assert.equal(r.keys, str(r, 'body').replace('|…', ''), 'KEYS');
      assert.equal(r.tags, `T${mode}`, 'TAGS');
      assert.equal((r.props as Record<string, string>).idx, idx, 'user property idx');
      assert.equal(r.topic, SEND_TOPIC);
      assert.equal(r.reconsumeTimes, 0);
    }
    // every acknowledged send is found at the queue id and offset its SendResult named, with its msgId
    for (const s of acked) {
      const at = recv.find((r) => r.queueId === s.queueId && r.queueOffset === s.queueOffset);
      assert.equal(String(at?.body).replace('|…', ''), s.key, `message at ${String(s.queueId)}@${String(s.queueOffset)}`);
      assert.equal(at?.msgId, s.msgId, 'msgId (UNIQ_KEY) read back = SendResult.MsgID');
      assert.equal(at?.offsetMsgId, s.offsetMsgId, 'offsetMsgId read back = SendResult.OffsetMsgID');
    }
    // per queue the offsets are 0..count-1 and the broker's max offset says the same
    const pulled = linesOf(pull, 'pulled');
    for (const q of new Set(recv.map((r) => num(r, 'queueId')))) {
      const offsets = recv.filter((r) => r.queueId === q).map((r) => num(r, 'queueOffset'));
      assert.deepEqual(offsets, offsets.map((_, i) => i), `queue ${q} offsets in order from 0`);
      assert.equal(pulled.find((p) => p.queueId === q && (p.found as number) > 0)?.maxOffset, offsets.length, `queue ${q} maxOffset`);
    }
  });

  it('batch: SendSync(ctx, 10 messages) is stored as one contiguous block of one queue, in order, with one store time', async () => {
    const run = await go('batch', { topic: 'GoBatchTopic', n: 10, prefix: 'batch' });
    const [s] = linesOf(run, 'sent');
    assert.equal(s?.status, 0, `batch SendOK${explainGo(run)}`);
    const offsetMsgIds = str(s!, 'offsetMsgId').split(',');
    assert.equal(offsetMsgIds.length, 10, 'the response names the 10 stored messages (offset message ids, comma-separated)');
    // Go client (this version): SendResult.MsgID of a batch is '' (ProcessSendResponse reads the
    // UNIQ_KEY of the encoded batch, which has none) and the messages of a batch get no UNIQ_KEY at
    // all, unlike the Java client's MessageBatch; so a consumer sees msgId = offsetMsgId. The same
    // against Apache's broker; pinned here, not worked around.
    assert.equal(s!.msgId, '');
    const pull = await go('pull', { topic: 'GoBatchTopic', group: 'GID_GO_PULLBATCH', queues: num(s!, 'queueId') });
    const recv = linesOf(pull, 'recv');
    const first = num(s!, 'queueOffset');
    assert.deepEqual(recv.map((r) => r.body), Array.from({ length: 10 }, (_, i) => `batch-${i}`), `batch read back in order${explainGo(pull)}`);
    assert.deepEqual(recv.map((r) => r.queueOffset), Array.from({ length: 10 }, (_, i) => first + i), 'consecutive queue offsets from SendResult.QueueOffset');
    assert.deepEqual(recv.map((r) => r.offsetMsgId), offsetMsgIds, 'offset message ids as the send response listed them');
    assert.deepEqual(recv.map((r) => r.msgId), offsetMsgIds, 'no UNIQ_KEY in Go batches: msgId falls back to the offset message id');
    const phys = recv.map((r) => num(r, 'commitLogOffset'));
    assert.ok(phys.every((p, i) => i === 0 || p > phys[i - 1]!), 'commit log positions increase');
    assert.equal(new Set(recv.map((r) => r.storeTimestamp)).size, 1, 'one store timestamp for the whole batch');
    assert.deepEqual(recv.map((r) => r.tags), Array(10).fill('TBatch'));
  });

  it('ordered: WithQueueSelector(NewHashQueueSelector()) keeps each sharding key on one queue; an orderly push consumer gets every order step by step', async () => {
    const orders = 3;
    const steps = 6;
    const send = await go('orderly-send', { topic: 'GoOrderTopic', orders, steps });
    const sentLines = linesOf(send, 'sent');
    assert.equal(sentLines.length, orders * steps, `ordered sends${explainGo(send)}`);
    const queueOf = new Map<number, number>();
    for (const l of sentLines) {
      const q = queueOf.get(num(l, 'order'));
      if (q === undefined) queueOf.set(num(l, 'order'), num(l, 'queueId'));
      else assert.equal(l.queueId, q, `order ${String(l.order)} stays on queue ${q}`);
    }
    const run = await go('push', { topic: 'GoOrderTopic', group: 'GID_GO_ORDER', orderly: 'true', expect: orders * steps, idleMs: 1000, timeoutMs: 25_000 });
    const recv = linesOf(run, 'recv');
    assert.equal(recv.length, orders * steps, `deliveries${explainGo(run)}`);
    for (let o = 0; o < orders; o++) {
      const mine = recv.filter((r) => str(r, 'body').startsWith(`order-${o}-`));
      assert.deepEqual(mine.map((r) => r.body), Array.from({ length: steps }, (_, s) => `order-${o}-step-${s}`), `order ${o} consumed in step order`);
      assert.ok(mine.every((r) => r.queueId === queueOf.get(o)), `order ${o} read from its queue`);
    }
    for (const q of new Set(recv.map((r) => num(r, 'queueId')))) {
      const offs = recv.filter((r) => r.queueId === q).map((r) => num(r, 'queueOffset'));
      assert.deepEqual(offs, offs.map((_, i) => i), `queue ${q}: offsets consumed in order, none twice`);
    }
  });

  it("clustering push consumer, tag expression 'Tsync || Tasync': exactly the sync and async messages", async () => {
    const run = await go('push', { topic: SEND_TOPIC, group: 'GID_GO_TAGS', tags: 'Tsync || Tasync', expect: 2 * N, idleMs: 1000 });
    const recv = linesOf(run, 'recv');
    assert.deepEqual(bodies(recv), sorted(['sync', 'async'].flatMap((m) => Array.from({ length: N }, (_, i) => `go-${m}-${i}`))), `tag-filtered deliveries${explainGo(run)}`);
  });

  it("clustering push consumer, SQL92 selector on the user property and TAGS: exactly the matching messages", async () => {
    const sql = "idx BETWEEN 1 AND 2 AND TAGS IN ('Tsync', 'Toneway')";
    const run = await go('push', { topic: SEND_TOPIC, group: 'GID_GO_SQL', sql, expect: 4, idleMs: 1000 });
    assert.deepEqual(bodies(linesOf(run, 'recv')), ['go-oneway-1', 'go-oneway-2', 'go-sync-1', 'go-sync-2'], `SQL92-filtered deliveries${explainGo(run)}`);
  });

  it('broadcasting: two consumers of one group each get every oneway message', async () => {
    const run = await go('push', { topic: SEND_TOPIC, group: 'GID_GO_BCAST', model: 'broadcasting', consumers: 2, tags: 'Toneway', expect: 2 * N, idleMs: 1000 });
    const recv = linesOf(run, 'recv');
    const oneway = Array.from({ length: N }, (_, i) => `go-oneway-${i}`);
    assert.deepEqual(bodies(recv.filter((r) => r.consumer === 0)), oneway, `consumer 0${explainGo(run)}`);
    assert.deepEqual(bodies(recv.filter((r) => r.consumer === 1)), oneway, 'consumer 1');
  });

  it('WithDelayTimeLevel(2) arrives no earlier than 5 s, WithDelayTimestamp no earlier than its time; an undelayed one at once', async () => {
    const run = await go('delay', { topic: 'GoDelayTopic', group: 'GID_GO_DELAY', level: 2, timerMs: 3000, timeoutMs: 20_000 });
    const sentBy = new Map(linesOf(run, 'sent').map((l) => [str(l, 'key'), l]));
    const recvBy = new Map(linesOf(run, 'recv').map((l) => [str(l, 'keys'), l]));
    assert.deepEqual([...recvBy.keys()].sort(), ['delay-level', 'delay-now', 'delay-timer'], `deliveries${explainGo(run)}`);
    const now = recvBy.get('delay-now')!;
    assert.ok(num(now, 'recvMs') - num(sentBy.get('delay-now')!, 'sentMs') < 2000, 'undelayed message within 2 s');
    const level = recvBy.get('delay-level')!;
    const levelWait = num(level, 'recvMs') - num(sentBy.get('delay-level')!, 'sentMs');
    assert.ok(levelWait >= 5000 && levelWait < 8000, `delay level 2 (5 s) took ${levelWait} ms`);
    assert.equal(level.queueId, sentBy.get('delay-level')!.queueId, 'delivered to the queue it was sent to');
    assert.equal(level.msgId, sentBy.get('delay-level')!.msgId, 'same msgId');
    assert.equal(level.topic, 'GoDelayTopic');
    const timer = recvBy.get('delay-timer')!;
    const deliverMs = num(sentBy.get('delay-timer')!, 'deliverMs');
    const late = num(timer, 'recvMs') - deliverMs;
    assert.ok(late >= 0 && late < 2500, `delivery timestamp: received ${late} ms after its time`);
  });

  it('ConsumeRetryLater (DelayLevelWhenNextConsume=1): each message comes back with reconsumeTimes 1, then 2, ≥ 1 s apart', async () => {
    const send = await go('send', { topic: 'GoRetryTopic', n: 2, modes: 'sync', prefix: 'retry' });
    const msgIds = new Map(linesOf(send, 'sent').map((l) => [str(l, 'key'), str(l, 'msgId')]));
    // The Go consumer asks for the %RETRY% topic's route at start, before its HEART_BEAT makes the
    // broker create that topic: Apache's nameserver has no route then, and the Go client sees the
    // retried messages only after its next route refresh (30 s) and rebalance (20 s); tsmq's
    // nameserver answers with a route built from TBW102's brokers (get-route-info-by-topic.ts).
    const run = await go('push', { topic: 'GoRetryTopic', group: 'GID_GO_RETRY', retryLater: 2, retryDelayLevel: 1, expect: 2, idleMs: 800, timeoutMs: AGAINST_APACHE ? 70_000 : 20_000 }, 90_000);
    const recv = linesOf(run, 'recv');
    for (const key of ['retry-sync-0', 'retry-sync-1']) {
      const mine = recv.filter((r) => r.body === key);
      assert.deepEqual(mine.map((r) => [r.reconsumeTimes, r.result]), [[0, 'retry'], [1, 'retry'], [2, 'success']], `${key} deliveries${explainGo(run)}`);
      assert.ok(mine.every((r) => r.msgId === msgIds.get(key)), 'the same msgId (UNIQ_KEY) every time');
      assert.ok(mine.every((r) => r.topic === 'GoRetryTopic' && r.keys === key && r.tags === 'Tsync'), 'topic, keys and tag restored');
      assert.equal((mine[1]!.props as Record<string, string>).RETRY_TOPIC, 'GoRetryTopic', 'RETRY_TOPIC names the original topic');
      for (let i = 1; i < mine.length; i++) {
        const gap = num(mine[i]!, 'recvMs') - num(mine[i - 1]!, 'recvMs');
        assert.ok(gap >= 950, `${key}: redelivery ${i} after ${gap} ms (level 1 = 1 s)`);
      }
    }
  });

  it('WithMaxReconsumeTimes(1): a message that keeps failing goes to %DLQ%<group> after its retry, readable there with its msgId', async () => {
    const send = await go('send', { topic: 'GoDlqTopic', n: 1, modes: 'sync', prefix: 'dlq' });
    const sentLine = linesOf(send, 'sent')[0]!;
    const run = await go('push', { topic: 'GoDlqTopic', group: 'GID_GO_DLQ', retryLater: 99, retryDelayLevel: 1, maxReconsumeTimes: 1, expect: 0, minMs: AGAINST_APACHE ? 60_000 : 2500, idleMs: 1000, timeoutMs: 90_000 }, 120_000);
    assert.deepEqual(linesOf(run, 'recv').map((r) => [r.body, r.reconsumeTimes, r.result]), [['dlq-sync-0', 0, 'retry'], ['dlq-sync-0', 1, 'retry']], `deliveries${explainGo(run)}`);
    const pull = await go('pull', { topic: '%DLQ%GID_GO_DLQ', group: 'GID_GO_DLQ_READER', queues: 0 });
    const [dead] = linesOf(pull, 'recv');
    assert.equal(dead?.body, 'dlq-sync-0', `the dead letter${explainGo(pull)}`);
    assert.equal(dead!.topic, '%DLQ%GID_GO_DLQ');
    assert.equal(dead!.msgId, sentLine.msgId, 'same msgId (UNIQ_KEY)');
    assert.equal(dead!.keys, 'dlq-sync-0');
    assert.equal(dead!.queueOffset, 0);
    assert.equal((dead!.props as Record<string, string>).RETRY_TOPIC, 'GoDlqTopic', 'RETRY_TOPIC names the original topic');
  });

  it('transactions: commit is delivered, rollback never, UNKNOW after the broker checks back (CheckLocalTransaction → commit)', async () => {
    const run = await go('tx', { topic: 'GoTxTopic', prefix: 'tx', waitCheckMs: 15_000 }, 30_000);
    const sentBy = new Map(linesOf(run, 'sent').map((l) => [str(l, 'key'), l]));
    assert.deepEqual([...sentBy.keys()].sort(), ['tx-commit', 'tx-rollback', 'tx-unknown'], `half messages sent${explainGo(run)}`);
    // LocalTransactionState: 1 commit, 2 rollback, 3 unknown
    assert.deepEqual(['tx-commit', 'tx-rollback', 'tx-unknown'].map((k) => sentBy.get(k)!.state), [1, 2, 3]);
    const checks = linesOf(run, 'check');
    assert.ok(checks.length >= 1 && checks.every((c) => c.keys === 'tx-unknown'), `only the UNKNOW one is checked: ${checks.map((c) => String(c.keys)).join(', ')}`);
    assert.equal(checks[0]!.transactionId, sentBy.get('tx-unknown')!.transactionId, 'the check carries the transaction id');
    assert.equal(checks[0]!.msgId, sentBy.get('tx-unknown')!.msgId, 'the check carries the msgId');
    const consumed = await go('push', { topic: 'GoTxTopic', group: 'GID_GO_TX', expect: 2, idleMs: 1500 });
    const recv = linesOf(consumed, 'recv');
    assert.deepEqual(bodies(recv), ['tx-commit', 'tx-unknown'], `committed messages${explainGo(consumed)}`);
    for (const r of recv) assert.equal(r.msgId, sentBy.get(str(r, 'body'))!.msgId, 'msgId of the committed message = the half message\'s');
  });

  it('PullConsumer.Poll + ACK reads every message once and commits the offsets; a second run of the group resumes at the end', async () => {
    const total = 3 * N + BIG;
    const run = await go('poll', { topic: SEND_TOPIC, group: 'GID_GO_POLL', expect: total, timeoutMs: 15_000 });
    const recv = linesOf(run, 'recv');
    assert.equal(recv.length, total, `polled${explainGo(run)}`);
    assert.equal(new Set(recv.map((r) => r.body)).size, total, 'no message twice');
    const offsets = linesOf(run, 'offset').map((l) => num(l, 'offset'));
    assert.equal(offsets.reduce((a, b) => a + b, 0), total, `CurrentOffset per queue sums to ${total}: ${offsets.join(', ')}`);
    // PersistOffset sends UPDATE_CONSUMER_OFFSET oneway and the peer exits right after: wait until the
    // broker has every queue's offset (a client-side race; under CI load the second run once started first)
    const want = linesOf(run, 'offset').map((l) => [num(l, 'queueId'), num(l, 'offset')] as const);
    const missing = async (): Promise<number[]> => {
      const out: number[] = [];
      for (const [queueId, offset] of want) {
        const r = await rawInvoke(broker.brokerAddr, { code: RequestCode.QUERY_CONSUMER_OFFSET, extFields: { consumerGroup: 'GID_GO_POLL', topic: SEND_TOPIC, queueId: String(queueId) } });
        if (offset > 0 && (r.header.code !== 0 || Number(r.header.extFields?.offset) !== offset)) out.push(queueId);
      }
      return out;
    };
    let lacking = await missing();
    for (const until = Date.now() + 10_000; lacking.length > 0 && Date.now() < until; lacking = await missing()) await new Promise((res) => setTimeout(res, 200));
    if (lacking.length > 0) {
      // The Go client persists only the queues in its processQueueTable at that moment (consumer.go
      // persistConsumerOffset; remoteBrokerOffsetStore.persist deletes the others' offsets unsent): in
      // 2 of 4 clean-clone CI runs some queues' commits never reached the broker (none was refused).
      // Not the broker's part: commit what the client reported, say so, and test the resume below.
      console.log(`# Go PersistOffset did not reach the broker for queues ${lacking.join(', ')} within 10 s: committed from the client's CurrentOffset`);
      for (const [queueId, offset] of want.filter(([q]) => lacking.includes(q))) {
        const r = await rawInvoke(broker.brokerAddr, { code: RequestCode.UPDATE_CONSUMER_OFFSET, extFields: { consumerGroup: 'GID_GO_POLL', topic: SEND_TOPIC, queueId: String(queueId), commitOffset: String(offset) } });
        assert.equal(r.header.code, 0, `UPDATE_CONSUMER_OFFSET queue ${queueId}: ${r.header.remark}`);
      }
      assert.deepEqual(await missing(), [], 'the broker holds every committed offset');
    }
    const again = await go('poll', { topic: SEND_TOPIC, group: 'GID_GO_POLL', expect: 0, minMs: 2000 });
    assert.deepEqual(linesOf(again, 'recv').map((r) => r.body), [], 'nothing again after the committed offsets');
    assert.deepEqual(linesOf(again, 'offset').map((l) => l.offset), linesOf(run, 'offset').map((l) => l.offset), 'offsets from the broker');
  });

  it('request-reply: Request and RequestAsync get the responder\'s CreateReplyMessage answer pushed back (SEND_REPLY_MESSAGE → PUSH_REPLY_MESSAGE_TO_CLIENT)', async () => {
    const n = 2;
    const run = await go('request', { topic: 'GoRequestTopic', group: 'GID_GO_REPLY', n, ttlMs: 5000 }, 30_000);
    const keys = [...Array.from({ length: n }, (_, i) => `request-${i}`), ...Array.from({ length: n }, (_, i) => `request-async-${i}`)];
    const served = linesOf(run, 'served');
    assert.deepEqual(sorted(served.map((l) => str(l, 'body'))), sorted(keys), `the responder saw each request once${explainGo(run)}`);
    assert.deepEqual(served.map((l) => l.replyError ?? l.replyStatus), served.map(() => 0), 'each reply was accepted (SendOK: pushed to the requester)');
    assert.ok(served.every((l) => l.replyTopic === 'DefaultCluster_REPLY_TOPIC'), 'replies go to <cluster>_REPLY_TOPIC');
    const replies = linesOf(run, 'reply');
    assert.deepEqual(sorted(replies.map((l) => str(l, 'key'))), sorted(keys), 'every request got its reply');
    const requesterId = (served[0]!.props as Record<string, string>).REPLY_TO_CLIENT;
    assert.match(requesterId ?? '', /@requester-/, 'the request names the requester\'s client id');
    for (const r of replies) {
      const props = r.props as Record<string, string>;
      assert.equal(r.body, `reply-to-${str(r, 'key')}`, 'the reply body');
      assert.equal(r.topic, 'DefaultCluster_REPLY_TOPIC');
      assert.equal(props.MSG_TYPE, 'reply');
      assert.equal(props.REPLY_TO_CLIENT, requesterId);
      const request = served.find((l) => l.body === r.key)!;
      assert.equal(props.CORRELATION_ID, (request.props as Record<string, string>).CORRELATION_ID, 'correlation id of its request');
      assert.ok(Number(props.PUSH_REPLY_TIME) >= num(request, 'bornTimestamp'), 'PUSH_REPLY_TIME set by the broker when it pushed');
    }
    // Go client (this version): RequestAsync runs its callback twice per reply (request.go); pinned.
    assert.equal(linesOf(run, 'async')[0]?.callbacks, 2 * n);
  });

  it('message trace (WithTrace, RIP-6): Pub, SubBefore and SubAfter records land in RMQ_SYS_TRACE_TOPIC with the msgIds and keys', async () => {
    const run = await go('trace', { topic: 'GoTraceTopic', group: 'GID_GO_TRACE', n: 2 }, 30_000);
    const sentBy = new Map(linesOf(run, 'sent').map((l) => [str(l, 'key'), l]));
    assert.deepEqual(bodies(linesOf(run, 'recv')), ['trace-0', 'trace-1'], `traced messages consumed${explainGo(run)}`);
    const traces = await go('poll', { topic: 'RMQ_SYS_TRACE_TOPIC', group: 'GID_GO_TRACE_READER', expect: 1, minMs: 1500 });
    // a trace message body holds records separated by \u0002, fields by \u0001 (Go's encoding)
    const records = linesOf(traces, 'recv').flatMap((r) => str(r, 'body').split('\u0002').filter(Boolean).map((rec) => rec.split('\u0001')));
    for (const [key, sent] of sentBy) {
      const pub = records.find((f) => f[0] === 'Pub' && f.includes(str(sent, 'msgId')));
      assert.ok(pub, `a Pub record for ${key}${explainGo(traces)}`);
      assert.equal(pub[3], 'PID_GO_TRACE', 'producer group');
      assert.equal(pub[4], 'GoTraceTopic', 'topic');
      assert.equal(pub[7], key, 'keys');
      assert.equal(pub[12], sent.offsetMsgId, 'offset msgId');
      assert.equal(pub[13], 'true', 'success');
      assert.ok(records.some((f) => f[0] === 'SubBefore' && f.includes(str(sent, 'msgId')) && f[3] === 'GID_GO_TRACE'), `SubBefore for ${key}`);
      assert.ok(records.some((f) => f[0] === 'SubAfter' && f.includes(str(sent, 'msgId')) && f.includes('true')), `SubAfter for ${key}`);
    }
  });

  it('admin API: CreateTopic, FetchAllTopicList, FetchPublishMessageQueues, FetchClusterList, GetAllSubscriptionGroup, DeleteTopic', async () => {
    const run = await go('admin', { topic: 'GoAdminTopic', brokerAddr: broker.brokerAddr, queues: 3 });
    const op = (name: string): GoLine => {
      const l = linesOf(run, 'admin').find((a) => a.op === name);
      assert.ok(l, `${name} ran${explainGo(run)}`);
      assert.equal(l.ok, true, `${name}: ${String(l.error)}`);
      return l;
    };
    op('CreateTopic');
    const topics = op('FetchAllTopicList').topics as string[];
    for (const t of ['GoAdminTopic', SEND_TOPIC, 'GoBatchTopic', '%RETRY%GID_GO_RETRY']) assert.ok(topics.includes(t), `topic list has ${t}`);
    assert.deepEqual(op('FetchPublishMessageQueues').queueIds, [0, 1, 2], 'the 3 write queues CreateTopic asked for');
    assert.deepEqual(op('FetchClusterList').clusters, ['DefaultCluster']);
    const groups = op('GetAllSubscriptionGroup');
    for (const g of ['GID_GO_ORDER', 'GID_GO_TAGS', 'GID_GO_BCAST', 'GID_GO_RETRY', 'GID_GO_DLQ', 'GID_GO_TX', 'GID_GO_POLL']) {
      assert.ok((groups.groups as string[]).includes(g), `subscription group ${g}`);
    }
    const retryCfg = (groups.configs as Record<string, Record<string, unknown>>).GID_GO_RETRY!;
    assert.equal(retryCfg.GroupName, 'GID_GO_RETRY');
    assert.equal(retryCfg.ConsumeEnable, true);
    assert.equal(retryCfg.RetryMaxTimes, 16);
    assert.equal(retryCfg.RetryQueueNums, 1);
    op('DeleteTopic');
    assert.ok(!(op('FetchAllTopicList(after delete)').topics as string[]).includes('GoAdminTopic'), 'deleted topic gone from the list');
  });
});
