/**
 * `tsmq admin` mqadmin equivalents against a real `tsmq start` child process: update-topic (17),
 * topic-list (206), topic-route (105), topic-status (202), consumer-progress (208), as tables
 * and as --json, plus the error answers. Most commands run in-process through commander (fast);
 * a few run as `node src/cli/main.ts admin …` child processes to pin the registration and the
 * exit code.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { TsmqProcess } from '../support/tsmq-process.js';
import { rawInvoke, sendV2Frame } from '../support/raw-remoting.js';
import { registerAdminCommands } from '../../src/cli/commands/admin-delete-expired.js';
import { registerAdminToolCommands } from '../../src/cli/commands/admin-commands.js';
import { formatTimeMillis, formatTimeSeconds, parseFastjson } from '../../src/cli/commands/admin-support.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

async function runCli(args: string[]): Promise<{ out: string[]; error: Error | null }> {
  const program = new Command().exitOverride();
  registerAdminCommands(program);
  registerAdminToolCommands(program);
  const out: string[] = [];
  const log = console.log;
  console.log = (...a: unknown[]) => void out.push(...a.join(' ').split('\n'));
  try {
    await program.parseAsync(['node', 'tsmq', 'admin', ...args]);
    return { out, error: null };
  } catch (e) {
    return { out, error: e as Error };
  } finally {
    console.log = log;
  }
}

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

  it('topic-route of a topic the nameserver does not list: the auto-create route, a note, "autoRoute": true, exit 0', async () => {
    const r = await runMain(['topic-route', '-n', namesrv, '-t', 'NoSuchTopic2']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    assert.match(lines[1]!, /^DefaultCluster {2}broker-a {5}0=127\.0\.0\.1:\d+ {2}/);
    assert.equal(
      lines.at(-2),
      "Note: topic NoSuchTopic2 does not exist on the nameserver (it is not in the topic list); the route above is the auto-create template TBW102's, which the nameserver answers for unknown topics (a producer's first send creates the topic when the broker has autoCreateTopicEnable=true)",
    );
    assert.equal(lines.at(-1), '');
    const j = await json<{ autoRoute: boolean; brokerDatas: Array<{ brokerName: string }> }>(['topic-route', '-n', namesrv, '-t', 'NoSuchTopic2']);
    assert.equal(j.autoRoute, true);
    assert.deepEqual(j.brokerDatas.map((b) => b.brokerName), ['broker-a']);
    // a listed topic: no note, "autoRoute": false
    assert.equal((await json<{ autoRoute: boolean }>(['topic-route', '-n', namesrv, '-t', 'ADMIN_T'])).autoRoute, false);
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
      "error: unknown command 'bogus'\nadmin commands: delete-expired-commitlog, update-topic, topic-list, topic-route, topic-status, consumer-progress, get-controller-metadata, get-sync-state-set, get-broker-epoch, elect-master (tsmq admin --help describes them)\n",
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
