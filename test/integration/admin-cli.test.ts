/**
 * `tsmq admin` mqadmin equivalents against a real `tsmq start` child process: update-topic (17),
 * topic-list (206), topic-route (105), topic-status (202), consumer-progress (208), and the
 * day-one set (cluster-list, broker-status, get/update-broker-config, update/delete-sub-group,
 * delete-topic, consumer/producer-connection with a live client, query-msg-by-key/-id/-offset,
 * print-msg, reset-offset-by-time, send-message, consume-message) on real sends, as tables and
 * as --json, plus the error answers. Most commands run in-process through commander (fast);
 * a few run as `node src/cli/main.ts admin …` child processes to pin the registration and the
 * exit code.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TsmqProcess } from '../support/tsmq-process.js';
import { rawInvoke, sendV2Frame } from '../support/raw-remoting.js';
import { formatTimeMillis, formatTimeSeconds, parseFastjson } from '../../src/cli/commands/admin-support.js';
import { RemotingClient } from '../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../src/remoting/codes/request-code.js';
import type { ResetQueueRow as ResetRow } from '../../src/cli/commands/admin-reset-offset.js';
import { runAdminCli as runCli } from '../support/admin-cli-runner.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

async function runMain(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), 'admin', ...args], {
    cwd: repoRoot,
    env: { ...process.env, NODE_TEST_CONTEXT: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}

async function json<T>(args: string[]): Promise<T> {
  const r = await runCli([...args, '--json']);
  assert.equal(r.error, null, r.error?.message);
  return JSON.parse(r.out.join('\n')) as T;
}

describe('tsmq admin against tsmq start', { timeout: 120_000 }, () => {
  let storeDir: string;
  let tsmq: TsmqProcess;
  let broker: string;
  let namesrv: string;
  let sentAt: [number, number];

  before(async () => {
    storeDir = mkdtempSync(join(tmpdir(), 'tsmq-admin-'));
    tsmq = await TsmqProcess.start({ storeDir });
    broker = tsmq.brokerAddr;
    namesrv = tsmq.namesrvAddr;
  });

  after(async () => {
    await live?.close();
    await tsmq?.stop();
    rmSync(storeDir, { recursive: true, force: true });
  });

  it('update-topic creates a topic with 4 read / 4 write queues; defaults are 8/8/6; --json', async () => {
    const r = await runCli(['update-topic', '-b', broker, '-t', 'ADMIN_T', '-r', '4', '-w', '4']);
    assert.equal(r.error, null, r.error?.message);
    assert.deepEqual(r.out, [`create topic to ${broker} success.`, 'topic ADMIN_T: readQueueNums 4, writeQueueNums 4, perm 6 (RW), order false']);
    const d = await json<Record<string, unknown>>(['update-topic', '-b', broker, '-t', 'ADMIN_DEFAULTS']);
    assert.deepEqual(d, { brokerAddr: broker, topic: 'ADMIN_DEFAULTS', readQueueNums: 8, writeQueueNums: 8, perm: 6, order: false });
    const ro = await runCli(['update-topic', '-b', broker, '-t', 'ADMIN_RO', '-r', '2', '-w', '1', '-p', '4']);
    assert.equal(ro.out[1], 'topic ADMIN_RO: readQueueNums 2, writeQueueNums 1, perm 4 (R), order false');
    const typed = await runCli(['update-topic', '-b', broker, '-t', 'ADMIN_FIFO', '-r', '2', '-w', '2', '-a', '+message.type=FIFO']);
    assert.equal(typed.out[1], 'topic ADMIN_FIFO: readQueueNums 2, writeQueueNums 2, perm 6 (RW), order false, attributes +message.type=FIFO');
    const cfg = await rawInvoke(broker, { code: RequestCode.GET_TOPIC_CONFIG, extFields: { topic: 'ADMIN_FIFO' } });
    assert.deepEqual(JSON.parse(cfg.body.toString()).attributes, { 'message.type': 'FIFO' });
    const byCluster = await runCli(['update-topic', '-c', 'DefaultCluster', '-n', namesrv, '-t', 'ADMIN_BY_CLUSTER', '-r', '3', '-w', '3']);
    assert.equal(byCluster.error, null, byCluster.error?.message);
    assert.deepEqual(byCluster.out, [`create topic to ${broker} success.`, 'topic ADMIN_BY_CLUSTER: readQueueNums 3, writeQueueNums 3, perm 6 (RW), order false'], 'mqadmin updateTopic -c: every master of the cluster');
    const created = await rawInvoke(broker, { code: RequestCode.GET_TOPIC_CONFIG, extFields: { topic: 'ADMIN_BY_CLUSTER' } });
    assert.equal(JSON.parse(created.body.toString()).writeQueueNums, 3);
    assert.equal((await runCli(['update-topic', '-c', 'NoCluster', '-n', namesrv, '-t', 'T'])).error?.message, 'cluster NoCluster is not known to the nameserver (clusters: DefaultCluster)');
    assert.equal((await runCli(['update-topic', '-t', 'T'])).error?.message, 'give -b <broker address> or -c <cluster> (with -n <nameserver>)');
    const refused = await runCli(['update-topic', '-b', broker, '-t', 'ADMIN_FIFO', '-a', '+colour=red']);
    assert.equal(refused.error?.message, `${broker} refused: code 1 (SYSTEM_ERROR), unsupported key: colour`);
  });

  it('update-topic errors: bad options before any request, the broker refusing a system topic', async () => {
    // only 2, 4 and 6 (mqadmin's "2|4|6"): 1 (inherit) only matters on the auto-create template topic
    for (const p of ['9', '5', '1', '7', '0', '3', 'x', '6.0']) {
      assert.equal((await runCli(['update-topic', '-b', broker, '-t', 'T', '-p', p])).error?.message, `-p/--perm must be 2 (W, write only), 4 (R, read only) or 6 (RW, read + write), got ${p}`);
    }
    assert.equal((await runCli(['update-topic', '-b', broker, '-t', 'T', '-r', 'x'])).error?.message, '-r/--read-queue-nums must be an integer in [1, 1024], got x');
    assert.equal((await runCli(['update-topic', '-b', broker, '-t', 'bad topic'])).error?.message, '-t: topic "bad topic" contains characters other than [%|a-zA-Z0-9_-]');
    assert.equal((await runCli(['update-topic', '-b', 'nohostport', '-t', 'T'])).error?.message, 'broker address "nohostport" is not host:port');
    const sys = await runCli(['update-topic', '-b', broker, '-t', 'SCHEDULE_TOPIC_XXXX']);
    assert.equal(sys.error?.message, `${broker} refused: code 1 (SYSTEM_ERROR), The topic[SCHEDULE_TOPIC_XXXX] is conflict with system topic.`);
  });

  it('topic-status after 10 messages over 4 queues: max offsets 3,3,2,2 and the last store times', async () => {
    const t0 = Date.now();
    for (let i = 0; i < 10; i++) {
      const r = await sendV2Frame(broker, 'ADMIN_T', Buffer.from(`admin-${i}`), i % 4);
      assert.equal(r.header.code, 0);
      assert.equal(Number(r.header.extFields!.queueOffset), Math.floor(i / 4));
    }
    sentAt = [t0, Date.now()];
    const j = await json<{ brokerAddr: string; topic: string; queues: Array<{ brokerName: string; queueId: number; minOffset: number; maxOffset: number; lastUpdateTimestamp: number }> }>([
      'topic-status',
      '-b',
      broker,
      '-t',
      'ADMIN_T',
    ]);
    assert.equal(j.brokerAddr, broker);
    assert.equal(j.topic, 'ADMIN_T');
    assert.deepEqual(j.queues.map((q) => [q.brokerName, q.queueId, q.minOffset, q.maxOffset]), [
      ['broker-a', 0, 0, 3],
      ['broker-a', 1, 0, 3],
      ['broker-a', 2, 0, 2],
      ['broker-a', 3, 0, 2],
    ]);
    for (const q of j.queues) assert.ok(q.lastUpdateTimestamp >= sentAt[0] && q.lastUpdateTimestamp <= sentAt[1], String(q.lastUpdateTimestamp));
    // queue 3 got message 7 last, queue 0 message 8: later store time
    assert.ok(j.queues[0]!.lastUpdateTimestamp >= j.queues[3]!.lastUpdateTimestamp);
    const t = await runCli(['topic-status', '-b', broker, '-t', 'ADMIN_T']);
    assert.equal(t.error, null);
    const time = (i: number): string => formatTimeMillis(j.queues[i]!.lastUpdateTimestamp);
    assert.deepEqual(t.out, [
      '#Broker Name  #QID  #Min Offset  #Max Offset  #Last Updated',
      `broker-a      0     0            3            ${time(0)}`,
      `broker-a      1     0            3            ${time(1)}`,
      `broker-a      2     0            2            ${time(2)}`,
      `broker-a      3     0            2            ${time(3)}`,
    ]);
    assert.match(time(0), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}$/);
    // an empty topic: empty "Last Updated"; an unknown one: the broker's refusal
    const empty = await runCli(['topic-status', '-b', broker, '-t', 'ADMIN_RO']);
    assert.deepEqual(empty.out, ['#Broker Name  #QID  #Min Offset  #Max Offset  #Last Updated', 'broker-a      0     0            0']);
    const none = await runCli(['topic-status', '-b', broker, '-t', 'NO_SUCH_TOPIC']);
    assert.equal(none.error?.message, `${broker} refused: code 17 (TOPIC_NOT_EXIST), topic[NO_SUCH_TOPIC] not exist`);
  });

  it('consumer-progress: per-queue broker/consumer offset and diff after commits, total diff, -t, --json', async () => {
    const group = 'GID_ADMIN';
    const before = await runCli(['consumer-progress', '-b', broker, '-g', group]);
    assert.deepEqual(before.out, [`consumer group ${group} has no consume progress on ${broker}`]);
    // What a remoting consumer sends every 5 s: UPDATE_CONSUMER_OFFSET (15).
    for (const [queueId, commitOffset] of [[0, 2], [2, 2]] as const) {
      const r = await rawInvoke(broker, { code: 15, extFields: { consumerGroup: group, topic: 'ADMIN_T', queueId, commitOffset } });
      assert.equal(r.header.code, 0);
    }
    const j = await json<{ brokerAddr: string; group: string; consumeTps: number; diffTotal: number; queues: Array<Record<string, number | string>> }>(['consumer-progress', '-b', broker, '-g', group]);
    assert.equal(j.group, group);
    assert.equal(j.diffTotal, 6);
    assert.equal(j.consumeTps, 0);
    assert.deepEqual(j.queues.map((q) => [q.topic, q.brokerName, q.queueId, q.brokerOffset, q.consumerOffset, q.diff]), [
      ['ADMIN_T', 'broker-a', 0, 3, 2, 1],
      ['ADMIN_T', 'broker-a', 1, 3, 0, 3],
      ['ADMIN_T', 'broker-a', 2, 2, 2, 0],
      ['ADMIN_T', 'broker-a', 3, 2, 0, 2],
    ]);
    const [q0, , q2, q3] = j.queues.map((q) => Number(q.lastTimestamp));
    assert.ok(q0! >= sentAt[0] && q0! <= sentAt[1]);
    assert.ok(q2! >= sentAt[0] && q2! <= sentAt[1]);
    assert.equal(q3, 0);
    const t = await runCli(['consumer-progress', '-b', broker, '-g', group]);
    assert.equal(t.error, null);
    assert.deepEqual(t.out, [
      '#Topic   #Broker Name  #QID  #Broker Offset  #Consumer Offset  #Diff  #LastTime',
      `ADMIN_T  broker-a      0     3               2                 1      ${formatTimeSeconds(q0!)}`,
      'ADMIN_T  broker-a      1     3               0                 3      N/A',
      `ADMIN_T  broker-a      2     2               2                 0      ${formatTimeSeconds(q2!)}`,
      'ADMIN_T  broker-a      3     2               0                 2      N/A',
      '',
      'Consume TPS: 0.00',
      'Consume Diff Total: 6',
    ]);
    // the group consumed everything of queue 1: the diff moves
    await rawInvoke(broker, { code: 15, extFields: { consumerGroup: group, topic: 'ADMIN_T', queueId: 1, commitOffset: 3 } });
    const after = await json<{ diffTotal: number }>(['consumer-progress', '-b', broker, '-g', group, '-t', 'ADMIN_T']);
    assert.equal(after.diffTotal, 3);
    const other = await runCli(['consumer-progress', '-b', broker, '-g', group, '-t', 'ADMIN_DEFAULTS']);
    assert.equal(other.out.at(-1), 'Consume Diff Total: 0');
    assert.equal(other.out.length, 8 + 1 + 3, 'header, 8 queues, blank, TPS, total');
  });

  it('topic-route (child process): the table and --json from the nameserver', async () => {
    // the broker re-registers after update-topic; wait until the nameserver has the topic
    const deadline = Date.now() + 15_000;
    while (!(await runCli(['topic-list', '-n', namesrv])).out.includes('ADMIN_T')) {
      if (Date.now() > deadline) throw new Error('ADMIN_T never reached the nameserver');
      await new Promise((r) => setTimeout(r, 200));
    }
    const r = await runMain(['topic-route', '-n', namesrv, '-t', 'ADMIN_T']);
    assert.equal(r.code, 0, r.stderr);
    const addrs = `0=${broker}`;
    const w = Math.max('#BrokerAddrs'.length, addrs.length);
    assert.deepEqual(r.stdout.split('\n'), [
      `#ClusterName    #BrokerName  ${'#BrokerAddrs'.padEnd(w)}  #ReadQueue  #WriteQueue  #Perm`,
      `DefaultCluster  broker-a     ${addrs.padEnd(w)}  4           4            6`,
      '',
      `Total:          1            ${''.padEnd(w)}  4           4`,
      '',
    ]);
    const j = await json<{ brokerDatas: Array<{ brokerAddrs: Record<string, string>; brokerName: string; cluster: string }>; queueDatas: Array<Record<string, unknown>> }>(['topic-route', '-n', namesrv, '-t', 'ADMIN_T']);
    assert.deepEqual(j.brokerDatas.map((b) => [b.cluster, b.brokerName, b.brokerAddrs]), [['DefaultCluster', 'broker-a', { 0: broker }]]);
    assert.deepEqual(j.queueDatas, [{ brokerName: 'broker-a', perm: 6, readQueueNums: 4, topicSysFlag: 0, writeQueueNums: 4 }]);
  });

  it('topic-route of a topic the nameserver does not know: code 17, exit 1 (mqadmin against Apache; the TBW102 route is only for ali-ons)', async () => {
    const r = await runMain(['topic-route', '-n', namesrv, '-t', 'NoSuchTopic2']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /refused: code 17 \(TOPIC_NOT_EXIST\), No topic route info in name server for the topic: NoSuchTopic2/);
    const known = await runCli(['topic-route', '-n', namesrv, '-t', 'ADMIN_T']);
    assert.equal(known.out.some((l) => l.startsWith('Note:')), false);
  });

  it('delete-expired-commitlog --json; `tsmq admin bogus` lists the admin commands (exit 1)', async () => {
    const d = await json<Record<string, unknown>>(['delete-expired-commitlog', '-b', broker]);
    assert.deepEqual(d, { brokerAddr: broker, success: true, message: `broker ${broker}: expired CommitLog files deleted` });
    const bogus = await runMain(['bogus']);
    assert.equal(bogus.code, 1);
    assert.equal(bogus.stdout, '');
    assert.equal(
      bogus.stderr,
      "error: unknown command 'bogus'\nadmin commands: delete-expired-commitlog, update-topic, topic-list, topic-route, topic-status, consumer-progress, get-controller-metadata, get-sync-state-set, get-broker-epoch, elect-master, cluster-list, broker-status, get-broker-config, update-broker-config, update-sub-group, delete-sub-group, delete-topic, consumer-connection, producer-connection, query-msg-by-key, query-msg-by-id, query-msg-by-offset, print-msg, reset-offset-by-time, send-message, consume-message (tsmq admin --help describes them)\n",
    );
    const typo = await runMain(['topic-rout']);
    assert.equal(typo.code, 1);
    assert.equal(typo.stderr.split('\n')[0], "error: unknown command 'topic-rout' (did you mean topic-route?)");
  });

  it('topic-list (child process): sorted, system topics included, --json the same list; errors exit 1', async () => {
    const r = await runMain(['topic-list', '-n', namesrv]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.deepEqual(lines, [...lines].sort());
    for (const t of ['ADMIN_DEFAULTS', 'ADMIN_RO', 'ADMIN_T', 'TBW102', 'SCHEDULE_TOPIC_XXXX']) assert.ok(lines.includes(t), t);
    assert.deepEqual(await json<{ topicList: string[] }>(['topic-list', '-n', namesrv]), { topicList: lines });
    // a dead first nameserver is skipped
    const dead = await runCli(['topic-list', '-n', `127.0.0.1:1;${namesrv}`]);
    assert.deepEqual(dead.out, lines);
    const bad = await runMain(['topic-status', '-b', broker, '-t', 'NO_SUCH_TOPIC']);
    assert.equal(bad.code, 1);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, new RegExp(`${broker} refused: code 17 \\(TOPIC_NOT_EXIST\\), topic\\[NO_SUCH_TOPIC\\] not exist`));
  });
  // ---- day-one commands (issue 12, item 5): one topic with real sends, a live client over a kept connection ----

  const MSG_TOPIC = 'ADMIN_MSG';
  let single: { msgId: string; offsetMsgId: string };
  let live: RemotingClient | null = null;

  /** Waits until the nameserver routes `topic` (the broker re-registers after a change). */
  async function waitForRoute(topic: string, present = true): Promise<void> {
    const deadline = Date.now() + 15_000;
    while ((await runCli(['topic-list', '-n', namesrv])).out.includes(topic) !== present) {
      if (Date.now() > deadline) throw new Error(`${topic} never ${present ? 'reached' : 'left'} the nameserver`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** HEART_BEAT (34) over a connection kept open: a live push consumer GID_LIVE (TagA || TagB on ADMIN_MSG) and producer PID_LIVE. */
  async function startLiveClient(): Promise<RemotingClient> {
    const client = new RemotingClient();
    const body = {
      clientID: '127.0.0.1@admin-live',
      consumerDataSet: [
        {
          groupName: 'GID_LIVE',
          consumeType: 'CONSUME_PASSIVELY',
          messageModel: 'CLUSTERING',
          consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
          unitMode: false,
          subscriptionDataSet: [{ topic: MSG_TOPIC, subString: 'TagA || TagB', tagsSet: ['TagA', 'TagB'], codeSet: [], subVersion: Date.now(), classFilterMode: false, expressionType: 'TAG' }],
        },
      ],
      producerDataSet: [{ groupName: 'PID_LIVE' }],
    };
    const r = await client.invokeSync(broker, createRequestCommand(34, null, Buffer.from(JSON.stringify(body))), 5000);
    assert.equal(r.code, 0, r.remark ?? '');
    return client;
  }

  const commit = async (group: string, topic: string, queueId: number, commitOffset: number): Promise<void> => {
    const r = await rawInvoke(broker, { code: 15, extFields: { consumerGroup: group, topic, queueId, commitOffset } });
    assert.equal(r.header.code, 0);
  };

  it('send-message: one message (mqadmin table, SEND_OK, unique MsgId) to a chosen queue; a measured batch of 40 round robin over 4 queues', async () => {
    await runCli(['update-topic', '-b', broker, '-t', MSG_TOPIC, '-r', '4', '-w', '4']);
    await waitForRoute(MSG_TOPIC);
    const one = await runCli(['send-message', '-n', namesrv, '-t', MSG_TOPIC, '-p', 'hello-admin', '-k', 'key-1 key-x', '-c', 'TagA', '-b', 'broker-a', '-i', '1']);
    assert.equal(one.error, null, one.error?.message);
    assert.equal(one.out[0], '#Broker Name  #QID  #Send Result  #MsgId');
    const row = /^broker-a {6}1 {5}SEND_OK {7}([0-9A-F]{32})$/.exec(one.out[1]!);
    assert.ok(row, one.out[1]);
    assert.match(one.out[2]!, /^sent 1 messages \(ok 1, failed 0\) in \d+ ms: [\d.]+ msg\/s, \d+ bytes\/s; RT avg [\d.]+ ms, max [\d.]+ ms$/);
    const batch = await json<{ sent: number; ok: number; failed: number; tps: number; elapsedMs: number; queues: Array<{ queueId: number; sent: number }>; results: Array<{ queueId: number; queueOffset: number; status: string; msgId: string; offsetMsgId: string }> }>([
      'send-message', '-n', namesrv, '-t', MSG_TOPIC, '--size', '64', '--count', '40', '--concurrency', '4',
    ]);
    assert.deepEqual([batch.sent, batch.ok, batch.failed], [40, 40, 0]);
    assert.ok(batch.tps > 0 && batch.elapsedMs >= 0, String(batch.tps));
    assert.deepEqual(batch.queues.map((q) => [q.queueId, q.sent]), [[0, 10], [1, 10], [2, 10], [3, 10]]);
    assert.equal(new Set(batch.results.map((r) => r.msgId)).size, 40, 'unique ids');
    // queue 1 already held the single message: the batch got offsets 1..10 there
    assert.deepEqual(batch.results.filter((r) => r.queueId === 1).map((r) => r.queueOffset).sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const status = await json<{ queues: Array<{ queueId: number; maxOffset: number }> }>(['topic-status', '-b', broker, '-t', MSG_TOPIC]);
    assert.deepEqual(status.queues.map((q) => q.maxOffset), [10, 11, 10, 10]);
    // the single message's ids, from the by-key lookup below
    const byKey = await json<{ messages: Array<{ msgId: string; offsetMsgId: string; queueId: number; queueOffset: number }> }>(['query-msg-by-key', '-n', namesrv, '-t', MSG_TOPIC, '-k', 'key-1']);
    assert.deepEqual(byKey.messages.map((m) => [m.msgId, m.queueId, m.queueOffset]), [[row[1]!, 1, 0]]);
    single = { msgId: row[1]!, offsetMsgId: byKey.messages[0]!.offsetMsgId };
    // errors: -i without -b, no body
    assert.match((await runCli(['send-message', '-n', namesrv, '-t', MSG_TOPIC, '-p', 'x', '-i', '1'])).error?.message ?? '', /-i\/--qid needs -b\/--broker-name/);
    assert.equal((await runCli(['send-message', '-n', namesrv, '-t', MSG_TOPIC])).error?.message, 'give -p/--body <text> or --size <bytes>');
    // a topic the nameserver does not know (17): sent by TBW102's route with 4 queues, as mqadmin's producer; the broker creates it
    const fresh = await json<{ ok: number; queues: Array<{ queueId: number; sent: number }> }>(['send-message', '-n', namesrv, '-t', 'ADMIN_MSG_NEW', '--size', '8', '--count', '8']);
    assert.equal(fresh.ok, 8);
    assert.deepEqual(fresh.queues.map((q) => [q.queueId, q.sent]), [[0, 2], [1, 2], [2, 2], [3, 2]]);
    assert.deepEqual((await json<{ queues: Array<{ maxOffset: number }> }>(['topic-status', '-b', broker, '-t', 'ADMIN_MSG_NEW'])).queues.map((q) => q.maxOffset), [2, 2, 2, 2]);
  });

  it('cluster-list and broker-status: the broker with its version, real put rate and totals', async () => {
    const rows = await json<Array<Record<string, unknown>>>(['cluster-list', '-n', namesrv]);
    assert.equal(rows.length, 1);
    const r = rows[0]!;
    assert.deepEqual([r.cluster, r.brokerName, r.brokerId, r.addr, r.version, r.activated], ['DefaultCluster', 'broker-a', 0, broker, 'V4_9_4', true]);
    assert.ok((r.inTps as number) > 0, `inTps ${String(r.inTps)}: 41 sends in the last 10 s`);
    assert.ok((r.space as number) > 0 && (r.space as number) < 1, String(r.space));
    assert.ok((r.hour as number) >= 0 && (r.hour as number) < 1, String(r.hour));
    const t = await runCli(['cluster-list', '-n', namesrv, '-c', 'DefaultCluster']);
    assert.match(t.out[0]!, /^#Cluster Name {3}#Broker Name {2}#BID {2}#Addr +#Version {2}#InTPS\(LOAD\) +#OutTPS\(LOAD\) +#Timer\(Progress\) +#PCWait\(ms\) {2}#Hour {2}#SPACE {2}#ACTIVATED$/);
    assert.match(t.out[1]!, new RegExp(`^DefaultCluster {2}broker-a {6}0 {5}${broker.replace(/\./g, '\\.')} +V4_9_4 +[\\d.]+\\(0,0ms\\) +[\\d.]+\\(0,0ms\\|0,0ms\\) +0-0\\(0\\.0w, 0\\.0, 0\\.0\\) +0 +0\\.\\d\\d +0\\.\\d{4} +true$`));
    assert.equal((await runCli(['cluster-list', '-n', namesrv, '-c', 'NoCluster'])).error?.message, 'cluster NoCluster is not known to the nameserver');

    const s = await json<{ brokerAddr: string; table: Record<string, string> }>(['broker-status', '-b', broker]);
    assert.equal(s.brokerAddr, broker);
    assert.equal(s.table.brokerVersionDesc, 'V4_9_4');
    assert.equal(s.table.commitLogMaxOffset, s.table.putMessageSizeTotal, 'every byte put is in the CommitLog');
    assert.ok(Number(s.table.msgPutTotalTodayNow) >= 51, `msgPutTotalTodayNow ${s.table.msgPutTotalTodayNow}: 10 + 41 sent by this file`);
    const text = await runCli(['broker-status', '-b', broker]);
    const keys = text.out.map((l) => l.slice(0, l.indexOf(': ')).trim());
    assert.deepEqual(keys, Object.keys(s.table).sort());
    assert.ok(text.out.includes(`${'brokerVersionDesc'.padEnd(32)}: V4_9_4`));
    const byCluster = await runCli(['broker-status', '-c', 'DefaultCluster', '-n', namesrv]);
    assert.ok(byCluster.out.includes(`${broker.padEnd(24)} ${'brokerVersionDesc'.padEnd(32)}: V4_9_4`), byCluster.out.slice(0, 3).join('\n'));
    assert.equal((await runCli(['broker-status'])).error?.message, 'give -b <broker address> or -c <cluster> (with -n <nameserver>)');
  });

  it('query-msg-by-key / -by-id / -by-offset: the message, its detail and body; unknown ids are errors', async () => {
    const k = await runCli(['query-msg-by-key', '-n', namesrv, '-t', MSG_TOPIC, '-k', 'key-x']);
    assert.deepEqual(k.out, [`${'#Message ID'.padEnd(32)}  #QID  #Offset`, `${single.msgId}  1     0`]);
    assert.deepEqual((await runCli(['query-msg-by-key', '-n', namesrv, '-t', MSG_TOPIC, '-k', 'key-none'])).out, ['#Message ID  #QID  #Offset']);
    const detail = (out: string[]): Map<string, string> => new Map(out.filter((l) => /^[A-Z][\w ]+: /.test(l)).map((l) => [l.slice(0, 20).trim(), l.slice(21)]));
    for (const args of [
      ['query-msg-by-id', '-n', namesrv, '-t', MSG_TOPIC, '-i', single.msgId, '-f', 'UTF-8'],
      ['query-msg-by-id', '-i', single.offsetMsgId, '-f', 'UTF-8'],
      ['query-msg-by-offset', '-n', namesrv, '-t', MSG_TOPIC, '-b', 'broker-a', '-i', '1', '-o', '0', '-f', 'UTF-8'],
    ]) {
      const r = await runCli(args);
      assert.equal(r.error, null, `${args[0]}: ${r.error?.message}`);
      const d = detail(r.out);
      assert.equal(d.get('OffsetID:'), single.offsetMsgId, args.join(' '));
      assert.equal(d.get('Topic:'), MSG_TOPIC);
      assert.equal(d.get('Tags:'), '[TagA]');
      assert.equal(d.get('Keys:'), '[key-1 key-x]');
      assert.equal(d.get('Queue ID:'), '1');
      assert.equal(d.get('Queue Offset:'), '0');
      assert.equal(d.get('Store Host:'), broker);
      assert.equal(d.get('Message Body Size:'), '11');
      assert.equal(d.get('Message Body:'), 'hello-admin');
      assert.match(d.get('Properties:')!, new RegExp(`UNIQ_KEY=${single.msgId}`));
      assert.match(d.get('Store Timestamp:')!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}$/);
      assert.deepEqual(r.out.slice(-2), ['', 'WARN: No Consumer'], 'no group has offsets on the topic yet');
    }
    const j = await json<Array<{ message: Record<string, unknown>; tracks: unknown[] }>>(['query-msg-by-id', '-i', single.offsetMsgId]);
    assert.deepEqual([j[0]!.message.msgId, j[0]!.message.queueOffset, j[0]!.message.bodyBytes, j[0]!.tracks], [single.msgId, 0, 11, []]);
    assert.match((await runCli(['query-msg-by-id', '-n', namesrv, '-t', MSG_TOPIC, '-i', '7F00000100000001000000000000FFFF'])).error?.message ?? '', /^message 7F00000100000001000000000000FFFF not found in topic ADMIN_MSG by unique key, nor as an offset message id: /);
    assert.equal((await runCli(['query-msg-by-offset', '-n', namesrv, '-t', MSG_TOPIC, '-b', 'broker-a', '-i', '1', '-o', '11'])).error?.message, 'no message at ADMIN_MSG broker-a queue 1 offset 11: NO_NEW_MSG (queue offsets 0..11)');
    assert.equal((await runCli(['query-msg-by-offset', '-n', namesrv, '-t', MSG_TOPIC, '-b', 'broker-b', '-i', '1', '-o', '0'])).error?.message, 'broker broker-b has no master in the route of topic ADMIN_MSG');
  });

  it('consumer-connection / producer-connection: a live client (heartbeat on a kept connection); the message track names the group', async () => {
    live = await startLiveClient();
    const c = await runCli(['consumer-connection', '-b', broker, '-g', 'GID_LIVE']);
    assert.equal(c.error, null, c.error?.message);
    assert.equal(c.out[0], '#ClientId             #ClientAddr      #Language  #Version');
    assert.match(c.out[1]!, /^127\.0\.0\.1@admin-live {2}127\.0\.0\.1:\d+ {1,}JAVA {7}V4_9_4$/);
    assert.deepEqual(c.out.slice(2), ['', 'Below is subscription:', '#Topic     #SubExpression', 'ADMIN_MSG  TagA || TagB', '', 'ConsumeType: CONSUME_PASSIVELY', 'MessageModel: CLUSTERING', 'ConsumeFromWhere: CONSUME_FROM_FIRST_OFFSET']);
    const cj = await json<{ brokerAddr: string; connectionSet: Array<{ clientId: string; versionDesc: string; version: number }> }>(['consumer-connection', '-b', broker, '-g', 'GID_LIVE']);
    assert.deepEqual(cj.connectionSet.map((x) => [x.clientId, x.version, x.versionDesc]), [['127.0.0.1@admin-live', 401, 'V4_9_4']]);
    // with -n: the brokers of the route of %RETRY%GID_LIVE (the heartbeat created that topic)
    await waitForRoute('%RETRY%GID_LIVE');
    assert.deepEqual((await runCli(['consumer-connection', '-n', namesrv, '-g', 'GID_LIVE'])).out, c.out);
    assert.equal((await runCli(['consumer-connection', '-b', broker, '-g', 'GID_NOBODY'])).error?.message, `${broker} refused: code 206 (CONSUMER_NOT_ONLINE), the consumer group[GID_NOBODY] not online`);
    const p = await runCli(['producer-connection', '-n', namesrv, '-g', 'PID_LIVE', '-t', MSG_TOPIC]);
    assert.equal(p.error, null, p.error?.message);
    assert.match(p.out[1]!, /^0001 {2}127\.0\.0\.1@admin-live {2}127\.0\.0\.1:\d+ +JAVA {7}V4_9_4$/);
    assert.match((await runCli(['producer-connection', '-n', namesrv, '-g', 'PID_NOBODY', '-t', MSG_TOPIC])).error?.message ?? '', /^Not found the producer group connection/);
    // the group committed past the message on queue 1: CONSUMED; an offline group with offsets: NOT_ONLINE
    await commit('GID_LIVE', MSG_TOPIC, 1, 1);
    await commit('GID_GONE', MSG_TOPIC, 1, 0);
    const q = await runCli(['query-msg-by-id', '-i', single.offsetMsgId]);
    assert.deepEqual(q.out.slice(-3), [
      '',
      'MessageTrack [consumerGroup=GID_GONE, trackType=NOT_ONLINE, exceptionDesc=CODE:206 DESC:the consumer group[GID_GONE] not online]',
      'MessageTrack [consumerGroup=GID_LIVE, trackType=CONSUMED, exceptionDesc=null]',
    ]);
    // queue 1 offset 1 (a batch message) is not consumed yet by GID_LIVE
    const next = await json<Array<{ tracks: Array<{ consumerGroup: string; trackType: string }> }>>(['query-msg-by-offset', '-n', namesrv, '-t', MSG_TOPIC, '-b', 'broker-a', '-i', '1', '-o', '1']);
    assert.deepEqual(next[0]!.tracks.map((t) => [t.consumerGroup, t.trackType]), [['GID_GONE', 'NOT_ONLINE'], ['GID_LIVE', 'NOT_CONSUME_YET']]);
  });

  it('consume-message and print-msg: the messages pulled, counted and timed; tag filter; nothing committed', async () => {
    const first = await json<{ consumed: number; bytes: number; queues: Array<{ queueId: number; fromOffset: number; nextOffset: number; consumed: number }>; messages: Array<{ queueOffset: number }> }>([
      'consume-message', '-n', namesrv, '-t', MSG_TOPIC, '-c', '5',
    ]);
    assert.equal(first.consumed, 5);
    assert.equal(first.bytes, 5 * 64);
    assert.deepEqual(first.queues, [{ brokerName: 'broker-a', queueId: 0, fromOffset: 0, nextOffset: 5, consumed: 5 }]);
    assert.deepEqual(first.messages.map((m) => m.queueOffset), [0, 1, 2, 3, 4]);
    const all = await runCli(['consume-message', '-n', namesrv, '-t', MSG_TOPIC, '--quiet', '-c', '1000']);
    assert.equal(all.out.length, 1);
    assert.match(all.out[0]!, /^consumed 41 messages \(2571 bytes\) from 4 queues in \d+ ms: [\d.]+ msg\/s$/);
    const one = await runCli(['consume-message', '-n', namesrv, '-t', MSG_TOPIC, '-b', 'broker-a', '-i', '1', '-o', '0', '-c', '1']);
    assert.equal(one.out[0], 'Consume ok');
    assert.match(one.out[1]!, new RegExp(`^MSGID: ${single.msgId} MessageExt \\[brokerName=broker-a, queueId=1, .*queueOffset=0, .*msgId=${single.offsetMsgId}, .*tags=TagA, keys=key-1 key-x\\] BODY: hello-admin$`));
    assert.match(one.out.at(-1)!, /^consumed 1 messages \(11 bytes\) from 1 queues/);
    assert.match((await runCli(['consume-message', '-n', namesrv, '-t', MSG_TOPIC, '-o', '3'])).error?.message ?? '', /-o\/--offset needs -i\/--queue-id/);
    // mqadmin's consumeMessage commits nothing: the tools group has no progress
    assert.deepEqual((await runCli(['consumer-progress', '-b', broker, '-g', 'TOOLS_CONSUMER'])).out, [`consumer group TOOLS_CONSUMER has no consume progress on ${broker}`]);

    const p = await runCli(['print-msg', '-n', namesrv, '-t', MSG_TOPIC, '-d', 'false']);
    assert.equal(p.out.filter((l) => l.startsWith('MSGID: ')).length, 41);
    assert.deepEqual(p.out.filter((l) => l.startsWith('minOffset=')), [0, 1, 2, 3].map((q) => `minOffset=0, maxOffset=${q === 1 ? 11 : 10}, MessageQueue [topic=ADMIN_MSG, brokerName=broker-a, queueId=${q}]`));
    assert.ok(p.out.filter((l) => l.startsWith('MSGID: ')).every((l) => l.endsWith(' BODY: NOT PRINT BODY')));
    const tagged = await json<{ queues: Array<{ queueId: number; messages: Array<{ msgId: string; body: string }> }> }>(['print-msg', '-n', namesrv, '-t', MSG_TOPIC, '-s', 'TagA']);
    assert.deepEqual(tagged.queues.flatMap((q) => q.messages.map((m) => [q.queueId, m.msgId, m.body])), [[1, single.msgId, 'hello-admin']]);
    const later = await json<{ queues: Array<{ minOffset: number; maxOffset: number; messages: unknown[] }> }>(['print-msg', '-n', namesrv, '-t', MSG_TOPIC, '-b', String(Date.now() + 60_000)]);
    assert.deepEqual(later.queues.map((q) => q.messages.length), [0, 0, 0, 0], 'nothing stored after a future time');
  });

  it('reset-offset-by-time: online group through the broker (222), offline group the old way (208 + 29 + 15), one queue with -b -q', async () => {
    for (const q of [0, 1, 2, 3]) await commit('GID_LIVE', MSG_TOPIC, q, q === 1 ? 11 : 10);
    const online = await runCli(['reset-offset-by-time', '-n', namesrv, '-g', 'GID_LIVE', '-t', MSG_TOPIC, '-s', '0']);
    assert.equal(online.error, null, online.error?.message);
    assert.deepEqual(online.out, [
      'start reset consumer offset by specified, group[GID_LIVE], topic[ADMIN_MSG], force[true], timestamp(string)[0], timestamp(long)[0]',
      '#brokerName  #queueId  #offset',
      'broker-a     0         0',
      'broker-a     1         0',
      'broker-a     2         0',
      'broker-a     3         0',
    ]);
    assert.equal((await json<{ diffTotal: number }>(['consumer-progress', '-b', broker, '-g', 'GID_LIVE'])).diffTotal, 41);
    // offline: GID_GONE committed 0 on queue 1 (the broker's consume stats list every queue of the topic); to now → each queue's max
    const off = await json<{ mode: string; queues: ResetRow[] }>(['reset-offset-by-time', '-n', namesrv, '-g', 'GID_GONE', '-t', MSG_TOPIC, '-s', 'now']);
    assert.equal(off.mode, 'offline');
    assert.deepEqual(off.queues.map((r) => [r.queueId, r.brokerOffset, r.consumerOffset, r.timestampOffset, r.offset]), [
      [0, 10, 0, 10, 10],
      [1, 11, 0, 11, 11],
      [2, 10, 0, 10, 10],
      [3, 10, 0, 10, 10],
    ]);
    assert.equal((await json<{ diffTotal: number }>(['consumer-progress', '-b', broker, '-g', 'GID_GONE'])).diffTotal, 0);
    // -f false only moves back: to 0 is back
    const back = await runCli(['reset-offset-by-time', '-n', namesrv, '-g', 'GID_GONE', '-t', MSG_TOPIC, '-s', '0', '-f', 'false']);
    assert.deepEqual(back.out.slice(1, 3), ['#brokerName  #queueId  #brokerOffset  #consumerOffset  #timestampOffset  #resetOffset', 'broker-a     0         10             10               0                 0']);
    assert.equal((await json<{ diffTotal: number }>(['consumer-progress', '-b', broker, '-g', 'GID_GONE'])).diffTotal, 41);
    // -f false does not move forward: to now from 0 keeps 0
    const fwd = await json<{ queues: ResetRow[] }>(['reset-offset-by-time', '-n', namesrv, '-g', 'GID_GONE', '-t', MSG_TOPIC, '-s', 'now', '-f', 'false']);
    assert.deepEqual(fwd.queues.map((r) => [r.timestampOffset, r.offset]), [[10, 0], [11, 0], [10, 0], [10, 0]]);
    // a group that never committed: every read queue placed (mqadmin stops with "THe consumer group … not exist")
    const fresh = await json<{ mode: string; queues: ResetRow[] }>(['reset-offset-by-time', '-n', namesrv, '-g', 'GID_FRESH', '-t', MSG_TOPIC, '-s', '-1']);
    assert.deepEqual(fresh.queues.map((r) => [r.queueId, r.offset]), [[0, 10], [1, 11], [2, 10], [3, 10]]);
    assert.equal((await json<{ diffTotal: number }>(['consumer-progress', '-b', broker, '-g', 'GID_FRESH'])).diffTotal, 0);
    const oneQ = await runCli(['reset-offset-by-time', '-b', broker, '-q', '2', '-o', '4', '-g', 'GID_FRESH', '-t', MSG_TOPIC, '-s', 'now']);
    assert.equal(oneQ.out[1], 'reset consumer offset to 4');
    assert.equal((await json<{ diffTotal: number }>(['consumer-progress', '-b', broker, '-g', 'GID_FRESH'])).diffTotal, 6);
    assert.match((await runCli(['reset-offset-by-time', '-n', namesrv, '-g', 'G', '-t', MSG_TOPIC, '-s', 'yesterday'])).error?.message ?? '', /^-s\/--timestamp must be now, epoch ms or yyyy-MM-dd#HH:mm:ss:SSS/);
  });

  it('get-broker-config / update-broker-config: every key; a change read back and persisted; an unknown key refused before sending', async () => {
    const g = await runCli(['get-broker-config', '-b', broker]);
    assert.equal(g.out[0], `============${broker}============`);
    assert.ok(g.out.includes(`${'brokerName'.padEnd(50)}=  broker-a`));
    assert.ok(g.out.includes(`${'flushConsumerOffsetInterval'.padEnd(50)}=  5000`));
    assert.equal(g.out.at(-1), '');
    const u = await runCli(['update-broker-config', '-b', broker, '-k', 'flushConsumerOffsetInterval', '-v', '4000']);
    assert.deepEqual(u.out, [`update broker config success, ${broker}`]);
    const after = await json<Array<{ brokerAddr: string; config: Record<string, string> }>>(['get-broker-config', '-c', 'DefaultCluster', '-n', namesrv]);
    assert.deepEqual([after[0]!.brokerAddr, after[0]!.config.flushConsumerOffsetInterval, after[0]!.config.brokerClusterName], [broker, '4000', 'DefaultCluster']);
    assert.match(readFileSync(join(storeDir, 'config', 'broker.properties'), 'utf8'), /^flushConsumerOffsetInterval=4000$/m);
    assert.equal((await runCli(['get-broker-config', '-c', 'DefaultCluster', '-n', namesrv])).out[0], `============Master: ${broker}============`);
    assert.equal(
      (await runCli(['update-broker-config', '-b', broker, '-k', 'flushconsumeroffsetinterval', '-v', '1'])).error?.message,
      `broker ${broker} has no config key flushconsumeroffsetinterval (keys are case-sensitive; get-broker-config lists them); nothing changed`,
    );
    assert.equal((await runCli(['update-broker-config', '-b', broker, '-k', 'a=b', '-v', '1'])).error?.message, `-k/--key must be a config key (no spaces, '=', ':', '#', '!'), got "a=b"`);
    // the value goes as escaped Properties text, so a backslash arrives (mqadmin's raw body drops it)
    const r = await runCli(['update-broker-config', '-b', broker, '-k', 'regionId', '-v', 'C:\\region\\a']);
    assert.deepEqual(r.out, [`update broker config success, ${broker}`], 'the value read back is the value sent (no note)');
    assert.match(readFileSync(join(storeDir, 'config', 'broker.properties'), 'utf8'), /^regionId=C:\\\\region\\\\a$/m);
  });

  it('update-sub-group / delete-sub-group: orderly, retry and broadcast settings read back from the broker and subscriptionGroup.json; only the options given change', async () => {
    const groupsFile = join(storeDir, 'config', 'subscriptionGroup.json');
    const saved = (g: string): Record<string, unknown> | undefined => (JSON.parse(readFileSync(groupsFile, 'utf8')) as { subscriptionGroupTable: Record<string, Record<string, unknown>> }).subscriptionGroupTable[g];
    const c = await runCli(['update-sub-group', '-b', broker, '-g', 'GID_SUB', '-o', 'true', '-r', '3', '-q', '2', '-d', 'true']);
    assert.deepEqual(c.out, [
      `create subscription group to ${broker} success.`,
      'group GID_SUB: consumeEnable true, consumeFromMinEnable false, consumeBroadcastEnable true, consumeMessageOrderly true, retryQueueNums 2, retryMaxTimes 3, brokerId 0, whichBrokerWhenConsumeSlowly 1, notifyConsumerIdsChangedEnable true',
    ]);
    assert.deepEqual([saved('GID_SUB')?.consumeMessageOrderly, saved('GID_SUB')?.retryMaxTimes, saved('GID_SUB')?.retryQueueNums, saved('GID_SUB')?.consumeBroadcastEnable], [true, 3, 2, true]);
    // mqadmin would reset -o and -d to false here; tsmq keeps what is not given
    const u = await json<Array<{ config: Record<string, unknown> }>>(['update-sub-group', '-c', 'DefaultCluster', '-n', namesrv, '-g', 'GID_SUB', '-r', '5', '-d', 'false']);
    assert.deepEqual([u[0]!.config.retryMaxTimes, u[0]!.config.consumeMessageOrderly, u[0]!.config.consumeBroadcastEnable, u[0]!.config.retryQueueNums], [5, true, false, 2]);
    assert.equal(saved('GID_SUB')?.retryMaxTimes, 5);
    assert.equal((await runCli(['update-sub-group', '-b', broker, '-g', 'GID_SUB', '-o', 'yes'])).error?.message, '-o/--consume-message-orderly must be true or false, got yes');
    assert.match((await runCli(['update-sub-group', '-b', broker, '-g', 'bad group'])).error?.message ?? '', /^-g: /);
    const d = await runCli(['delete-sub-group', '-b', broker, '-g', 'GID_SUB']);
    assert.deepEqual(d.out, [`delete subscription group [GID_SUB] from broker [${broker}] success.`]);
    assert.equal(saved('GID_SUB'), undefined);
    // -c also deletes the group's retry and DLQ topics (mqadmin)
    await runCli(['update-sub-group', '-b', broker, '-g', 'GID_SUB2']);
    const dc = await json<{ brokers: string[]; deletedTopics: string[] }>(['delete-sub-group', '-c', 'DefaultCluster', '-n', namesrv, '-g', 'GID_SUB2', '-r', 'true']);
    assert.deepEqual(dc, { group: 'GID_SUB2', brokers: [broker], removeOffset: true, deletedTopics: ['%RETRY%GID_SUB2', '%DLQ%GID_SUB2'] });
    assert.equal(saved('GID_SUB2'), undefined);
  });

  it('delete-topic: gone from the broker and the nameserver (route 17, topic-status 17)', async () => {
    await runCli(['update-topic', '-b', broker, '-t', 'ADMIN_DEL', '-r', '2', '-w', '2']);
    await waitForRoute('ADMIN_DEL');
    const d = await runCli(['delete-topic', '-n', namesrv, '-c', 'DefaultCluster', '-t', 'ADMIN_DEL']);
    assert.deepEqual(d.out, ['delete topic [ADMIN_DEL] from cluster [DefaultCluster] success.', 'delete topic [ADMIN_DEL] from NameServer success.']);
    assert.equal((await runCli(['topic-route', '-n', namesrv, '-t', 'ADMIN_DEL'])).error?.message, `${namesrv} refused: code 17 (TOPIC_NOT_EXIST), No topic route info in name server for the topic: ADMIN_DEL`);
    assert.equal((await runCli(['topic-status', '-b', broker, '-t', 'ADMIN_DEL'])).error?.message, `${broker} refused: code 17 (TOPIC_NOT_EXIST), topic[ADMIN_DEL] not exist`);
    assert.equal((await runCli(['delete-topic', '-n', namesrv, '-c', 'NoCluster', '-t', 'ADMIN_DEL'])).error?.message, 'cluster NoCluster is not known to the nameserver (clusters: DefaultCluster)');
  });

  it('cluster-list (child process): registered in tsmq, exit 0; a dead nameserver is an error, exit 1', async () => {
    const r = await runMain(['cluster-list', '-n', namesrv]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout.split('\n')[1]!, /^DefaultCluster {2}broker-a {6}0 /);
    const dead = await runMain(['cluster-list', '-n', '127.0.0.1:1']);
    assert.equal(dead.code, 1);
    assert.equal(dead.stdout, '');
    assert.match(dead.stderr, /127\.0\.0\.1:1/);
    await live?.close();
  });

});

describe('parseFastjson', () => {
  it('reads MessageQueue object keys and bare number keys', () => {
    const v = parseFastjson('{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:{"maxOffset":3}},"x":{0:12,1:7},"s":"a\\"}"}') as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(v.offsetTable!), ['{"brokerName":"b","queueId":1,"topic":"T"}']);
    assert.deepEqual(v.x, { 0: 12, 1: 7 });
    assert.equal(v.s, 'a"}');
    assert.throws(() => parseFastjson('{"a":1'), /expected , or \} at position 6/);
  });
});
