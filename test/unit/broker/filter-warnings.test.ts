/**
 * Broker log lines for filter expressions the broker cannot use (ali-ons only shows the pull
 * remark): an SQL92 selector that does not compile is logged with group, topic, expression and
 * the parser's message, at most once a minute per group + topic + expression, and the pull
 * remark carries the reason; an SQL92 subscription while enablePropertyFilter=false keeps
 * Apache's remark and logs one hint per group.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerHarness } from './support/broker-harness.js';
import { capturingLogger, type LogLine } from '../../support/store-fixtures.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';

const TOPIC = 'OrderTopic';
const REASON = "Invalid SQL92 expression: expected a value, a property or '(' but found end of expression at line 1, column 10";

let h: BrokerHarness;
afterEach(async () => {
  await h?.close();
});

async function start(enablePropertyFilter: boolean): Promise<LogLine[]> {
  const lines: LogLine[] = [];
  h = await BrokerHarness.create({ logger: capturingLogger(lines), config: { enablePropertyFilter: String(enablePropertyFilter) } });
  assert.equal((await h.send(TOPIC, 'm0', { props: { amount: '5' } })).code, ResponseCode.SUCCESS);
  lines.length = 0;
  return lines;
}

/** An ali-ons pull: sysFlag 4 (subscription in the request), the SQL92 selector. */
const pullSql = (group: string, sql: string, queueId = 0): Promise<RemotingCommand> =>
  h.call(RequestCode.PULL_MESSAGE, {
    consumerGroup: group, topic: TOPIC, queueId, queueOffset: 0, maxMsgNums: 32, sysFlag: 4, commitOffset: -1,
    suspendTimeoutMillis: 0, subscription: sql, subVersion: 1, expressionType: 'SQL92',
  });

const heartbeatSql = (group: string, sql: string): Promise<RemotingCommand> =>
  h.call(RequestCode.HEART_BEAT, null, Buffer.from(JSON.stringify({
    clientID: `127.0.0.1@${group}`,
    consumerDataSet: [{ groupName: group, consumeType: 'CONSUME_PASSIVELY', messageModel: 'CLUSTERING', consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET', unitMode: false,
      subscriptionDataSet: [{ topic: TOPIC, subString: sql, expressionType: 'SQL92', tagsSet: [], codeSet: [], subVersion: 1, classFilterMode: false }] }],
    producerDataSet: [],
  })));

const warnings = (lines: LogLine[]): string[] => lines.filter((l) => l.level === 'warn').map((l) => l.msg);

describe('SQL92 selector that does not compile (enablePropertyFilter=true)', () => {
  it("pull → 23 with Apache's remark + the parser's reason; one warning per group+expression per minute", async () => {
    const lines = await start(true);
    const r = await pullSql('GID_ORDER', 'amount > ');
    assert.equal(r.code, ResponseCode.SUBSCRIPTION_PARSE_FAILED);
    assert.equal(r.remark, `parse the consumer's subscription failed: ${REASON}`);
    assert.deepEqual(warnings(lines), [
      `consumer group GID_ORDER topic OrderTopic: SQL92 expression "amount > " does not compile: ${REASON}; pulls answered SUBSCRIPTION_PARSE_FAILED (23)`,
    ]);

    // ali-ons retries every queue for ever: no more lines within the minute
    for (let q = 0; q < 4; q++) assert.equal((await pullSql('GID_ORDER', 'amount > ', q)).code, ResponseCode.SUBSCRIPTION_PARSE_FAILED);
    h.clock.advance(59_999);
    assert.equal((await pullSql('GID_ORDER', 'amount > ')).code, ResponseCode.SUBSCRIPTION_PARSE_FAILED);
    assert.equal(warnings(lines).length, 1);

    // another group, or another expression, gets its own line at once
    await pullSql('GID_OTHER', 'amount > ');
    await pullSql('GID_ORDER', "a = 'x");
    assert.equal(warnings(lines).length, 3);
    assert.equal(warnings(lines)[1], `consumer group GID_OTHER topic OrderTopic: SQL92 expression "amount > " does not compile: ${REASON}; pulls answered SUBSCRIPTION_PARSE_FAILED (23)`);
    assert.equal(warnings(lines)[2], `consumer group GID_ORDER topic OrderTopic: SQL92 expression "a = 'x" does not compile: Invalid SQL92 expression: unterminated string literal at line 1, column 5; pulls answered SUBSCRIPTION_PARSE_FAILED (23)`);

    // a minute after the first line: logged again, with the count of suppressed ones (4 + 1)
    h.clock.advance(1);
    await pullSql('GID_ORDER', 'amount > ');
    assert.equal(warnings(lines).length, 4);
    assert.equal(warnings(lines)[3], `consumer group GID_ORDER topic OrderTopic: SQL92 expression "amount > " does not compile: ${REASON}; pulls answered SUBSCRIPTION_PARSE_FAILED (23) (5 more like this suppressed)`);
  });

  it("an empty SQL92 selector → 23 with \"Expression can't be null! SQL92\"", async () => {
    await start(true);
    const r = await pullSql('GID_EMPTY', '');
    assert.equal(r.code, ResponseCode.SUBSCRIPTION_PARSE_FAILED);
    assert.equal(r.remark, "parse the consumer's subscription failed: Expression can't be null! SQL92");
  });

  it('registered by HEART_BEAT: heartbeats and the 27 pulls share the one-a-minute line', async () => {
    const lines = await start(true);
    assert.equal((await heartbeatSql('GID_HB', 'amount > ')).code, ResponseCode.SUCCESS);
    assert.equal((await heartbeatSql('GID_HB', 'amount > ')).code, ResponseCode.SUCCESS);
    const r = await h.call(RequestCode.PULL_MESSAGE, {
      consumerGroup: 'GID_HB', topic: TOPIC, queueId: 0, queueOffset: 0, maxMsgNums: 32, sysFlag: 0, commitOffset: -1, suspendTimeoutMillis: 0, subVersion: 1,
    });
    assert.equal(r.code, ResponseCode.FILTER_DATA_NOT_EXIST);
    assert.equal(r.remark, "The broker's consumer filter data is not exist!Your expression may be wrong!");
    assert.deepEqual(warnings(lines), [
      `consumer group GID_HB topic OrderTopic: SQL92 expression "amount > " does not compile: ${REASON}; registered by consumer 127.0.0.1@GID_HB; its pulls get FILTER_DATA_NOT_EXIST (27)`,
    ]);
  });
});

describe('SQL92 while enablePropertyFilter=false', () => {
  const NOT_SUPPORTED = 'The broker does not support consumer to filter message by SQL92';
  const hint = (group: string) =>
    `consumer group ${group} subscribes to topic OrderTopic with a SQL92 filter, but property filtering is off on this broker; its requests are refused ("${NOT_SUPPORTED}"). Set enablePropertyFilter=true in the broker config to turn SQL92 filtering on (logged once per group)`;

  it("Apache's remark unchanged; one warning per consumer group naming enablePropertyFilter=true", async () => {
    const lines = await start(false);
    for (let q = 0; q < 4; q++) {
      const r = await pullSql('GID_OFF', 'amount > 100', q);
      assert.equal(r.code, ResponseCode.SYSTEM_ERROR);
      assert.equal(r.remark, NOT_SUPPORTED);
    }
    h.clock.advance(3_600_000);
    assert.equal((await pullSql('GID_OFF', 'amount > 100')).remark, NOT_SUPPORTED);
    assert.equal((await heartbeatSql('GID_OFF', 'amount > 100')).code, ResponseCode.SUCCESS);
    assert.deepEqual(warnings(lines), [hint('GID_OFF')]);

    // a second group: its own line, from the heartbeat
    assert.equal((await heartbeatSql('GID_OFF2', 'amount > 100')).code, ResponseCode.SUCCESS);
    assert.equal((await pullSql('GID_OFF2', 'amount > 100')).remark, NOT_SUPPORTED);
    // CHECK_CLIENT_CONFIG (Java consumers) too
    const check = await h.call(RequestCode.CHECK_CLIENT_CONFIG, null, Buffer.from(JSON.stringify({
      clientId: 'c', group: 'GID_JAVA', subscriptionData: { topic: TOPIC, subString: 'a = 1', expressionType: 'SQL92' },
    })));
    assert.equal(check.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(check.remark, NOT_SUPPORTED);
    assert.deepEqual(warnings(lines), [hint('GID_OFF'), hint('GID_OFF2'), hint('GID_JAVA')]);
  });
});
