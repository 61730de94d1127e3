/**
 * `tsmq admin` with Apache's Java client 5.3.3 on both sides of the same `tsmq start`: a Java
 * producer and push consumer (kept alive in the mqadmin runner JVM) are what `tsmq admin`
 * consumer-connection, producer-connection, consumer-progress, query-msg-by-key / -by-id (with
 * the message track) and consume-message see; the message `tsmq admin send-message` sent is
 * what the Java consumer receives and what Apache's mqadmin queryMsgById / queryMsgByKey find
 * by the unique id tsmq generated. One JVM, one broker; skips without java/mvn.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess } from '../support/tsmq-process.js';
import { buildPeer, javaSkipReason } from './support/java-peers.js';
import { runMqadmin, type MqadminRun } from './mqadmin/mqadmin-run.js';
import { runAdminCli as runCli } from '../support/admin-cli-runner.js';

const TOPIC = 'JavaAdminTopic';

async function until<T>(what: string, fn: () => Promise<T | null>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('tsmq admin with Apache Java client 5.3.3 peers', { skip: javaSkipReason(), timeout: 240_000 }, () => {
  let storeDir: string;
  let tsmq: TsmqProcess;
  let namesrv: string;
  let tsmqMsgId = '';
  /** What tsmq admin printed while the Java clients were alive. */
  const seen = new Map<string, string[]>();
  let javaKeyMsgId = '';
  let run: MqadminRun;

  before(async () => {
    // build (or find cached) first, so the waits below only wait for the JVM
    await buildPeer('rocketmq5');
    storeDir = mkdtempSync(join(tmpdir(), 'tsmq-admin-java-'));
    tsmq = await TsmqProcess.start({ storeDir });
    namesrv = tsmq.namesrvAddr;
    assert.equal((await runCli(['update-topic', '-b', tsmq.brokerAddr, '-t', TOPIC, '-r', '4', '-w', '4'])).error, null);
    await until('the route', async () => ((await runCli(['topic-list', '-n', namesrv])).out.includes(TOPIC) ? true : null));
    const sent = await runCli(['send-message', '-n', namesrv, '-t', TOPIC, '-p', 'from-tsmq-admin', '-k', 'tsmq-key', '-c', 'TagT', '-b', 'broker-a', '-i', '2']);
    assert.equal(sent.error, null, sent.error?.message);
    tsmqMsgId = /SEND_OK\s+([0-9A-F]{32})/.exec(sent.out[1]!)![1]!;
    const jvm = runMqadmin('rocketmq5', tsmq, [
      { op: 'produce', as: 'p1', group: 'PID_JAVA', topic: TOPIC, count: 5, tag: 'TagJ', keyPrefix: 'java' },
      { op: 'consume', group: 'GID_JAVA', topic: TOPIC, expect: 6 },
      { op: 'mqadmin', id: 'queryMsgById', args: ['queryMsgById', '-i', tsmqMsgId, '-t', TOPIC] },
      { op: 'mqadmin', id: 'queryMsgByKey', args: ['queryMsgByKey', '-t', TOPIC, '-k', 'tsmq-key'] },
      // the Java clients stay connected while tsmq admin looks at them
      { op: 'sleep', ms: 12_000 },
    ]);
    try {
      // the consumer is online and has committed everything (the runner persists its offsets after consuming)
      await until('GID_JAVA consumed everything', async () => {
        const r = await runCli(['consumer-progress', '-b', tsmq.brokerAddr, '-g', 'GID_JAVA', '--json']);
        if (r.error) return null;
        // (the group's %RETRY% queue is listed too)
        const qs = (JSON.parse(r.out.join('\n')) as { queues: Array<{ topic: string; diff: number; brokerOffset: number }> }).queues.filter((q) => q.topic === TOPIC);
        return qs.length === 4 && qs.every((q) => q.diff === 0) && qs.reduce((n, q) => n + q.brokerOffset, 0) === 6 ? true : null;
      });
      for (const [id, args] of [
        ['consumer-connection', ['consumer-connection', '-n', namesrv, '-g', 'GID_JAVA']],
        ['producer-connection', ['producer-connection', '-n', namesrv, '-g', 'PID_JAVA', '-t', TOPIC]],
        ['consumer-progress', ['consumer-progress', '-b', tsmq.brokerAddr, '-g', 'GID_JAVA']],
        ['query-msg-by-key', ['query-msg-by-key', '-n', namesrv, '-t', TOPIC, '-k', 'java-0']],
      ] as const) {
        const r = await runCli([...args]);
        seen.set(id, r.error ? [`ERROR ${r.error.message}`] : r.out);
      }
      javaKeyMsgId = /^([0-9A-F]+) /.exec(seen.get('query-msg-by-key')?.[1] ?? '')?.[1] ?? '';
      const byId = await runCli(['query-msg-by-id', '-n', namesrv, '-t', TOPIC, '-i', javaKeyMsgId, '-f', 'UTF-8']);
      seen.set('query-msg-by-id', byId.error ? [`ERROR ${byId.error.message}`] : byId.out);
    } finally {
      run = await jvm;
    }
  });

  after(async () => {
    await tsmq?.stop();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  it('the Java consumer received the message tsmq admin sent, and the 5 Java ones', () => {
    assert.equal(run.sent.get('p1')?.ok, 5);
    assert.ok((run.consumed.get('GID_JAVA') ?? 0) >= 6, `consumed ${run.consumed.get('GID_JAVA')}`);
  });

  it("Apache mqadmin finds tsmq admin's message by its unique id and by key", () => {
    const byId = run.cmds.get('queryMsgById')!.out;
    assert.match(byId, new RegExp(`Topic:\\s+${TOPIC}`));
    assert.match(byId, /Tags:\s+\[TagT\]/);
    assert.match(byId, /Keys:\s+\[tsmq-key\]/);
    assert.match(byId, /Queue ID:\s+2/);
    assert.match(byId, /Queue Offset:\s+0/);
    assert.match(run.cmds.get('queryMsgByKey')!.out, new RegExp(`^${tsmqMsgId}\\s+2\\s+0$`, 'm'));
  });

  it('consumer-connection / producer-connection: the live Java clients (JAVA V5_3_3), subscription and settings', () => {
    const c = seen.get('consumer-connection')!;
    assert.match(c[1]!, /^\S+@mqadmin-runner\s+127\.0\.0\.1:\d+\s+JAVA\s+V5_3_3$/, c.join('\n'));
    // the push consumer subscribes its retry topic too
    assert.deepEqual(c.filter((l) => /^\S+\s+\*$/.test(l)).map((l) => l.split(/\s+/)[0]), ['%RETRY%GID_JAVA', TOPIC]);
    assert.deepEqual(c.slice(-3), ['ConsumeType: CONSUME_PASSIVELY', 'MessageModel: CLUSTERING', 'ConsumeFromWhere: CONSUME_FROM_FIRST_OFFSET']);
    const p = seen.get('producer-connection')!;
    assert.match(p[1]!, /^0001\s+\S+@\S+\s+127\.0\.0\.1:\d+\s+JAVA\s+V5_3_3$/, p.join('\n'));
  });

  it("consumer-progress: the Java consumer's committed offsets cover all 6 messages", () => {
    const lines = seen.get('consumer-progress')!;
    const rows = lines.filter((l) => l.startsWith(TOPIC)).map((l) => l.split(/\s+/));
    assert.equal(rows.length, 4, lines.join('\n'));
    assert.equal(rows.reduce((s, r) => s + Number(r[3]), 0), 6);
    for (const r of rows) assert.equal(r[3], r[4]);
    assert.equal(lines.at(-1), 'Consume Diff Total: 0');
    assert.ok(Number(/^Consume TPS: ([\d.]+)$/.exec(lines.at(-2)!)?.[1]) > 0, lines.at(-2));
  });

  it("query-msg-by-key / -by-id: the Java producer's message by its unique id, body, and the track CONSUMED by the Java group", () => {
    assert.equal(javaKeyMsgId, run.sent.get('p1')?.msgId, 'the id the Java producer got back');
    assert.deepEqual(seen.get('query-msg-by-key')!.slice(1), [`${javaKeyMsgId}  ${String(run.sent.get('p1')?.queueId)}     ${String(run.sent.get('p1')?.queueOffset)}`]);
    const d = seen.get('query-msg-by-id')!;
    assert.ok(d.includes(`${'OffsetID:'.padEnd(20)} ${String(run.sent.get('p1')?.offsetMsgId)}`), d.join('\n'));
    assert.ok(d.includes(`${'Keys:'.padEnd(20)} [java-0]`));
    assert.ok(d.includes(`${'Tags:'.padEnd(20)} [TagJ]`));
    assert.ok(d.includes(`${'Message Body:'.padEnd(20)} body-java-0`));
    assert.equal(d.at(-1), 'MessageTrack [consumerGroup=GID_JAVA, trackType=CONSUMED, exceptionDesc=null]');
  });
});
