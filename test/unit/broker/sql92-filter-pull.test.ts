/**
 * SQL92 property filtering over the remoting protocol (real sockets, real store, BrokerController
 * without a nameserver): pulls with the subscription in the request and with the one registered
 * by HEART_BEAT, offsets advancing over filtered-out messages, long polling woken only by a
 * matching message, CHECK_CLIENT_CONFIG (46), and the answers with enablePropertyFilter=false.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { decodeRecord, readRecordTotalSize } from '../../../src/common/message/record-codec.js';

const SQL = "a BETWEEN 5 AND 9 AND TAGS IN ('T1')";
const TOPIC = 'SqlTopic';
/** Message i has property a=i and tag T2 when i % 3 == 0, else T1. */
const tagOf = (i: number): string => (i % 3 === 0 ? 'T2' : 'T1');
// a in 5..9 with tag T1: 5, 7, 8 (6 and 9 are T2)
const EXPECTED = ['m5', 'm7', 'm8'];

/** Bodies of the records of a pull reply body. */
function bodies(body: Buffer | null): string[] {
  const out: string[] = [];
  for (let at = 0; body && at < body.length; at += readRecordTotalSize(body, at)) out.push(decodeRecord(body, at).body.toString());
  return out;
}

async function startBroker(enablePropertyFilter: boolean): Promise<{ broker: BrokerController; addr: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tsmq-sql92-'));
  const broker = await BrokerController.create({
    brokerConfig: {
      storePathRootDir: dir,
      listenPort: '0',
      namesrvAddr: '',
      mappedFileSizeCommitLog: String(1024 * 1024),
      mappedFileSizeConsumeQueue: String(100 * 20),
      flushConsumerOffsetInterval: '100000',
      enablePropertyFilter: String(enablePropertyFilter),
    },
    logger: silentLogger,
  });
  await broker.start();
  return { broker, addr: `127.0.0.1:${broker.port}`, dir };
}

describe('SQL92 filter over remoting (enablePropertyFilter=true)', { timeout: 60_000 }, () => {
  let broker: BrokerController;
  let addr: string;
  let dir: string;
  const client = new RemotingClient({ logger: silentLogger });
  const call = (code: number, ext: Record<string, string | number | boolean>, body?: Buffer): Promise<RemotingCommand> =>
    client.invokeSync(addr, createRequestCommand(code, ext, body ?? null), 10_000);
  const send = (i: number, tags = tagOf(i), a = String(i)): Promise<RemotingCommand> =>
    call(RequestCode.SEND_MESSAGE_V2, { a: 'PID_SQL', b: TOPIC, c: 'TBW102', d: 1, e: 0, f: 0, g: Date.now(), h: 0, i: `TAGS\u0001${tags}\u0002a\u0001${a}\u0002`, j: 0, k: false }, Buffer.from(`m${i}`));
  /** sysFlag 5 = commit offset + subscription; 7 adds suspend. */
  const pull = (group: string, offset: number, opts: { max?: number; sql?: string; sysFlag?: number; suspendMs?: number; commitOffset?: number } = {}): Promise<RemotingCommand> =>
    call(RequestCode.PULL_MESSAGE, {
      consumerGroup: group, topic: TOPIC, queueId: 0, queueOffset: offset, maxMsgNums: opts.max ?? 32,
      sysFlag: opts.sysFlag ?? 5, commitOffset: opts.commitOffset ?? offset, suspendTimeoutMillis: opts.suspendMs ?? 0,
      subscription: opts.sql ?? SQL, subVersion: 1, expressionType: 'SQL92',
    });
  const heartbeat = (group: string, sql: string, clientID = '127.0.0.1@sql'): Promise<RemotingCommand> =>
    call(RequestCode.HEART_BEAT, {}, Buffer.from(JSON.stringify({
      clientID,
      consumerDataSet: [{ groupName: group, consumeType: 'CONSUME_PASSIVELY', messageModel: 'CLUSTERING', consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET', unitMode: false,
        subscriptionDataSet: [{ topic: TOPIC, subString: sql, expressionType: 'SQL92', tagsSet: [], codeSet: [], subVersion: 1, classFilterMode: false }] }],
      producerDataSet: [],
    })));
  const checkClientConfig = (sql: string, expressionType = 'SQL92'): Promise<RemotingCommand> =>
    call(RequestCode.CHECK_CLIENT_CONFIG, {}, Buffer.from(JSON.stringify({
      clientId: '127.0.0.1@sql', group: 'GID_CHECK',
      subscriptionData: { topic: TOPIC, subString: sql, expressionType, tagsSet: [], codeSet: [], subVersion: 1, classFilterMode: false },
    })));
  const committed = async (group: string): Promise<number> => {
    const r = await call(RequestCode.QUERY_CONSUMER_OFFSET, { consumerGroup: group, topic: TOPIC, queueId: 0 });
    assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    return Number(r.extFields!.offset);
  };

  before(async () => {
    ({ broker, addr, dir } = await startBroker(true));
    for (let i = 0; i < 20; i++) {
      const r = await send(i);
      assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
      assert.equal(Number(r.extFields!.queueOffset), i);
    }
  });

  after(async () => {
    await client.close();
    await broker?.shutdown();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`20 messages a=0..19 pulled with "${SQL}": exactly m5, m7, m8, and the consumer offset reaches 20`, async () => {
    const got: string[] = [];
    const steps: string[] = [];
    let offset = 0;
    for (let n = 0; n < 10; n++) {
      const r = await pull('GID_SQL_1', offset);
      const next = Number(r.extFields!.nextBeginOffset);
      steps.push(`${offset}→${r.code}:${next}`);
      got.push(...bodies(r.code === ResponseCode.SUCCESS ? r.body : null));
      if (r.code === ResponseCode.PULL_NOT_FOUND) break;
      offset = next;
    }
    assert.deepEqual(got, EXPECTED);
    // one pull takes the three matches and skips the rest; the next one (committing 20) finds nothing new
    assert.deepEqual(steps, ['0→0:20', '20→19:20']);
    assert.equal(await committed('GID_SQL_1'), 20);
  });

  it('one message per pull: filtered-out messages advance the offset (PULL_RETRY_IMMEDIATELY when nothing matched)', async () => {
    const got: string[] = [];
    const steps: string[] = [];
    let offset = 0;
    for (let n = 0; n < 20; n++) {
      const r = await pull('GID_SQL_2', offset, { max: 1 });
      const next = Number(r.extFields!.nextBeginOffset);
      steps.push(`${offset}→${r.code}:${next}`);
      got.push(...bodies(r.code === ResponseCode.SUCCESS ? r.body : null));
      if (r.code === ResponseCode.PULL_NOT_FOUND) break;
      offset = next;
    }
    assert.deepEqual(got, EXPECTED);
    assert.deepEqual(steps, ['0→0:6', '6→0:8', '8→0:9', '9→20:20', '20→19:20']);
    assert.equal(await committed('GID_SQL_2'), 20);
  });

  it('the subscription registered by HEART_BEAT filters pulls without the subscription flag', async () => {
    const hb = await heartbeat('GID_SQL_HB', 'a >= 17 OR a IN (\'3\')');
    assert.equal(hb.code, ResponseCode.SUCCESS);
    const r = await pull('GID_SQL_HB', 0, { sysFlag: 1 });
    assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    assert.deepEqual(bodies(r.body), ['m3', 'm17', 'm18', 'm19']);
  });

  it('a heartbeat SQL92 subscription that does not compile: its pulls get FILTER_DATA_NOT_EXIST (27)', async () => {
    assert.equal((await heartbeat('GID_SQL_BAD', 'a >', '127.0.0.1@bad')).code, ResponseCode.SUCCESS);
    const r = await pull('GID_SQL_BAD', 0, { sysFlag: 1 });
    assert.equal(r.code, ResponseCode.FILTER_DATA_NOT_EXIST);
    assert.equal(r.remark, "The broker's consumer filter data is not exist!Your expression may be wrong!");
  });

  it('a selector in the pull that does not compile → SUBSCRIPTION_PARSE_FAILED (23); an empty one too', async () => {
    const bad = await pull('GID_SQL_3', 0, { sql: "a = 'x" });
    assert.equal(bad.code, ResponseCode.SUBSCRIPTION_PARSE_FAILED);
    assert.equal(bad.remark, "parse the consumer's subscription failed: Invalid SQL92 expression: unterminated string literal at line 1, column 5");
    assert.equal((await pull('GID_SQL_3', 0, { sql: '' })).code, ResponseCode.SUBSCRIPTION_PARSE_FAILED);
  });

  it('CHECK_CLIENT_CONFIG (46): valid → 0, syntax error → 23 with the reason, TAG → 0', async () => {
    const ok = await checkClientConfig(SQL);
    assert.equal(ok.code, ResponseCode.SUCCESS, ok.remark ?? '');
    const bad = await checkClientConfig('a > 0.0');
    assert.equal(bad.code, ResponseCode.SUBSCRIPTION_PARSE_FAILED);
    assert.equal(bad.remark, 'Invalid SQL92 expression: decimal literal 0.0 must be greater than 0 (RocketMQ refuses 0.0; write 0) at line 1, column 5');
    assert.equal((await checkClientConfig('TagA || TagB', 'TAG')).code, ResponseCode.SUCCESS);
    assert.equal((await call(RequestCode.CHECK_CLIENT_CONFIG, {})).code, ResponseCode.SUCCESS, 'no body: nothing to check');
  });

  it('long polling: a held SQL92 pull ignores a non-matching arrival and wakes for a matching one', async () => {
    let settled = false;
    const t0 = Date.now();
    const held = pull('GID_SQL_1', 20, { sysFlag: 7, suspendMs: 8000 }).finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await send(20, 'T1', '100')).code, ResponseCode.SUCCESS); // a=100: no match
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(settled, false, 'not woken by a message the selector refuses');
    assert.equal((await send(21, 'T1', '6')).code, ResponseCode.SUCCESS); // a=6, T1: match
    const r = await held;
    assert.ok(Date.now() - t0 < 5000, `woken by the arrival, not the ${8000} ms timeout`);
    assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    assert.deepEqual(bodies(r.body), ['m21']);
    assert.equal(Number(r.extFields!.nextBeginOffset), 22);
  });
});

describe('SQL92 filter over remoting (enablePropertyFilter=false, the default): Apache\'s answers', { timeout: 60_000 }, () => {
  let broker: BrokerController;
  let addr: string;
  let dir: string;
  const client = new RemotingClient({ logger: silentLogger });
  const call = (code: number, ext: Record<string, string | number | boolean>, body?: Buffer): Promise<RemotingCommand> =>
    client.invokeSync(addr, createRequestCommand(code, ext, body ?? null), 10_000);
  const NOT_SUPPORTED = 'The broker does not support consumer to filter message by SQL92';

  before(async () => {
    ({ broker, addr, dir } = await startBroker(false));
    const r = await call(RequestCode.SEND_MESSAGE_V2, { a: 'PID_SQL', b: TOPIC, c: 'TBW102', d: 1, e: 0, f: 0, g: Date.now(), h: 0, i: 'a\u00011\u0002', j: 0, k: false }, Buffer.from('x'));
    assert.equal(r.code, ResponseCode.SUCCESS);
  });

  after(async () => {
    await client.close();
    await broker?.shutdown();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const pull = (sysFlag: number, subscription: string, group = 'GID_OFF'): Promise<RemotingCommand> =>
    call(RequestCode.PULL_MESSAGE, {
      consumerGroup: group, topic: TOPIC, queueId: 0, queueOffset: 0, maxMsgNums: 32, sysFlag, commitOffset: -1,
      suspendTimeoutMillis: 0, subscription, subVersion: 1, expressionType: 'SQL92',
    });

  it('pull with an SQL92 subscription → SYSTEM_ERROR (1), valid or not; an empty one → 23', async () => {
    for (const sql of ['a = 1', 'a >']) {
      const r = await pull(4, sql);
      assert.equal(r.code, ResponseCode.SYSTEM_ERROR, sql);
      assert.equal(r.remark, NOT_SUPPORTED);
    }
    assert.equal((await pull(4, '')).code, ResponseCode.SUBSCRIPTION_PARSE_FAILED);
  });

  it('registered by HEART_BEAT: valid → 1 at pull; invalid → 27 (the filter data check comes first, as in Apache)', async () => {
    for (const [group, sql, code] of [['GID_OFF_OK', 'a = 1', ResponseCode.SYSTEM_ERROR], ['GID_OFF_BAD', 'a >', ResponseCode.FILTER_DATA_NOT_EXIST]] as const) {
      const hb = await call(RequestCode.HEART_BEAT, {}, Buffer.from(JSON.stringify({
        clientID: `127.0.0.1@${group}`,
        consumerDataSet: [{ groupName: group, consumeType: 'CONSUME_PASSIVELY', messageModel: 'CLUSTERING', consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET', unitMode: false,
          subscriptionDataSet: [{ topic: TOPIC, subString: sql, expressionType: 'SQL92', tagsSet: [], codeSet: [], subVersion: 1, classFilterMode: false }] }],
        producerDataSet: [],
      })));
      assert.equal(hb.code, ResponseCode.SUCCESS);
      const r = await pull(0, '', group);
      assert.equal(r.code, code, `${group}: ${r.remark}`);
    }
  });

  it('CHECK_CLIENT_CONFIG (46) with SQL92 → SYSTEM_ERROR with Apache\'s remark; TAG → 0', async () => {
    const body = (expressionType: string, subString: string): Buffer =>
      Buffer.from(JSON.stringify({ clientId: 'c', group: 'g', subscriptionData: { topic: TOPIC, subString, expressionType } }));
    const r = await call(RequestCode.CHECK_CLIENT_CONFIG, {}, body('SQL92', 'a = 1'));
    assert.equal(r.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(r.remark, NOT_SUPPORTED);
    assert.equal((await call(RequestCode.CHECK_CLIENT_CONFIG, {}, body('TAG', '*'))).code, ResponseCode.SUCCESS);
  });
});
