/**
 * Apache RocketMQ Java client 4.9.8 with `MessageSelector.bySql` against `tsmq start -o
 * enablePropertyFilter=true` (child process): DefaultMQPushConsumer (CHECK_CLIENT_CONFIG at start,
 * subscription from HEART_BEAT, pulls without the subscription) and DefaultLitePullConsumer (the
 * subscription in every pull) receive exactly the messages the selector accepts; a selector that
 * does not compile stops the push consumer's start with SUBSCRIPTION_PARSE_FAILED (23).
 * The behaviour without enablePropertyFilter is checked in client-interop.test.ts.
 * Skips when `java` or `mvn` is not installed. See docs/sql92-filter.md.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess } from '../support/tsmq-process.js';
import { assertRanOk, buildPeer, javaSkipReason, runJava, type BuiltPeer, type JavaRun } from './support/java-peers.js';
import { ClientGaps } from './support/client-gaps.js';

const TOPIC = 'IopSqlTopic';
const SQL = "a BETWEEN 5 AND 9 AND TAGS IN ('T1')";
// produce-props: message i has a=i, tag T2 when i % 3 == 0 else T1 → 5, 7, 8 match
const EXPECTED = ['sql-5', 'sql-7', 'sql-8'];

type Line = Record<string, unknown>;
const linesOf = (run: JavaRun, type: string): Line[] => run.lines.filter((l) => l.type === type);

function explain(run: JavaRun): string {
  const errs = linesOf(run, 'error').map((e) => `${e.op as string}: ${e.code ?? '-'} ${e.message as string}`);
  return `${errs.length ? `\nerrors:\n  ${errs.slice(0, 15).join('\n  ')}` : ''}\nstderr (tail):\n${run.stderr.split('\n').filter((l) => !/^\s+at /.test(l)).slice(-25).join('\n')}`;
}

/** Responses to CHECK_CLIENT_CONFIG (46) recorded by the client's RPC hook. */
function checkConfigAnswers(run: JavaRun): Record<string, number> {
  return (linesOf(run, 'rpc').find((l) => l.code === 46)?.responses as Record<string, number> | undefined) ?? {};
}

describe('Apache RocketMQ Java client 4.9.8: MessageSelector.bySql against tsmq (enablePropertyFilter=true)', { skip: javaSkipReason(), timeout: 300_000 }, () => {
  let storeDir: string;
  let broker: TsmqProcess;
  let peer: BuiltPeer;
  const gaps = new ClientGaps();

  before(async () => {
    peer = await buildPeer('rocketmq4');
    storeDir = mkdtempSync(join(tmpdir(), 'tsmq-interop-sql-'));
    broker = await TsmqProcess.start({
      storeDir,
      options: {
        enablePropertyFilter: 'true',
        mappedFileSizeCommitLog: String(4 * 1024 * 1024),
        mappedFileSizeConsumeQueue: String(1000 * 20),
      },
    });
  });

  after(async () => {
    await broker?.stop();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  async function java(scenario: string, cmd: string, opts: Record<string, string | number>, countGaps = true): Promise<JavaRun> {
    const args = [broker.namesrvAddr, cmd, ...Object.entries(opts).map(([k, v]) => `${k}=${v}`)];
    const run = await runJava(peer, 'tsmq.interop.ClientPeer', args, { timeoutMs: 90_000 });
    if (countGaps) gaps.add(scenario, run);
    assertRanOk(run, `ClientPeer ${cmd}`);
    return run;
  }

  it('DefaultMQProducer sends 20 messages with user property a = 0..19', async () => {
    const run = await java('produce-props', 'produce-props', { topic: TOPIC, n: 20 });
    const ok = linesOf(run, 'sent').filter((l) => l.status === 'SEND_OK');
    assert.equal(ok.length, 20, `SEND_OK ${ok.length}/20${explain(run)}`);
  });

  it(`DefaultMQPushConsumer, MessageSelector.bySql("${SQL}"): exactly sql-5, sql-7, sql-8`, async () => {
    const run = await java('push bySql', 'push', { topic: TOPIC, group: 'GID_IOP_SQL_PUSH', sql: SQL, expect: EXPECTED.length, timeoutMs: 25_000, idleMs: 2500 });
    const recv = linesOf(run, 'recv');
    assert.deepEqual(recv.map((r) => r.key as string).sort(), EXPECTED, `received${explain(run)}`);
    assert.deepEqual(recv.map((r) => r.tags), ['T1', 'T1', 'T1']);
    assert.deepEqual(recv.filter((r) => r.bodyOk !== true).map((r) => r.key), [], 'bodies differ');
    assert.deepEqual(checkConfigAnswers(run), { 0: 1 }, 'CHECK_CLIENT_CONFIG sent once at start and accepted');
  });

  it(`DefaultLitePullConsumer, MessageSelector.bySql("${SQL}"): exactly sql-5, sql-7, sql-8`, async () => {
    const run = await java('lite-pull bySql', 'lite-pull', { topic: TOPIC, group: 'GID_IOP_SQL_LITE', sql: SQL, expect: EXPECTED.length, timeoutMs: 25_000, idleMs: 2500 });
    const recv = linesOf(run, 'recv');
    assert.deepEqual(recv.map((r) => r.key as string).sort(), EXPECTED, `received${explain(run)}`);
  });

  it('a selector that does not compile: the push consumer does not start (CHECK_CLIENT_CONFIG → 23 with the reason)', async () => {
    const run = await java('push bySql invalid', 'push', { topic: TOPIC, group: 'GID_IOP_SQL_BAD', sql: 'a BETWEEN 9 AND 5', expect: 1, timeoutMs: 3000 }, false);
    const err = linesOf(run, 'error').find((e) => e.op === 'push');
    assert.ok(err, `the consumer started${explain(run)}`);
    assert.equal(err.code, 23);
    assert.equal(err.message, 'Invalid SQL92 expression: BETWEEN lower bound 9 is greater than the upper bound 5 at line 1, column 13');
    assert.deepEqual(linesOf(run, 'recv'), []);
  });

  it('every request code the Java client sent was answered as Apache would (gap list)', () => {
    const list = gaps.gaps();
    assert.deepEqual(list, [], `tsmq answered ${list.length} request code(s) wrongly:\n  ${list.join('\n  ')}`);
  });
});
