/**
 * The mqadmin interop suite, one `it` per command: Apache's MQAdminStartup (rocketmq-tools 4.9.8
 * or 5.3.3, one JVM for the whole list, mqadmin-run.ts) against `tsmq start`, with 20 messages
 * produced and consumed by the Apache Java client of the same peer first. Each test asserts the
 * values the command printed (offsets, counts, rates > 0, perms, the persisted files...).
 * Before the JVM starts, one DELAY=1 message is sent (lean TS client) and waited for until the
 * delay-level service delivered it, so brokerStatus shows a delivery counted as Apache counts it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess } from '../../support/tsmq-process.js';
import { javaSkipReason } from '../support/java-peers.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { LeanClient } from '../../support/lean-client.js';
import { sampleSum } from '../../support/prometheus-text.js';
import { APACHE_533_METRIC_LABELS, NOT_EXPORTED_BY_TSMQ, metricLabelKeys } from '../support/apache-metric-labels.js';
import { runMqadmin, type CmdResult, type MqadminRun, type StatsDataResult } from './mqadmin-run.js';
import { BROKER_NAME, CLONE_GROUP, CLUSTER, GROUP, PRODUCER_GROUP, SENT, SUB_GROUP, TOPIC, TOPIC2, mqadminSteps, type Version } from './mqadmin-steps.js';

/** Rows of a whitespace-separated table whose first cell is `first`. */
function rows(out: string, first: string): string[][] {
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((cells) => cells[0] === first);
}

/** `key : value` (brokerStatus) or `key = value` (getBrokerConfig / getNamesrvConfig) lines. */
function keyValues(out: string, sep: ':' | '='): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of out.split('\n')) {
    const i = line.indexOf(sep);
    if (i > 0) m.set(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  return m;
}

/** Topic of the one delay-level message (auto-created by its send). */
const DELAY_TOPIC = 'MqaDelayTopic';

/** Sends one DELAY=1 message to DELAY_TOPIC queue 0 and waits until it was delivered there (GET_MAX_OFFSET 30 = 1). */
async function deliverOneDelayed(brokerAddr: string): Promise<void> {
  const c = new LeanClient(brokerAddr);
  await c.ready;
  try {
    const r = await c.send(DELAY_TOPIC, 0, Buffer.from('delayed'), { DELAY: '1', WAIT: 'true' });
    assert.equal(r.code, 0, r.remark ?? '');
    const deadline = Date.now() + 10_000;
    for (;;) {
      const m = await c.invoke(RequestCode.GET_MAX_OFFSET, { topic: DELAY_TOPIC, queueId: 0 });
      if (m.code === 0 && m.extFields.offset === '1') return;
      if (Date.now() > deadline) throw new Error(`the delayed message was not delivered within 10 s (${JSON.stringify(m.extFields)})`);
      await new Promise((res) => setTimeout(res, 100));
    }
  } finally {
    c.close();
  }
}

export function defineMqadminSuite(version: Version): void {
  const versionDesc = version === 5 ? 'V5_3_3' : 'V4_9_8';
  describe(`Apache mqadmin (rocketmq-tools ${version === 5 ? '5.3.3' : '4.9.8'}) against tsmq start`, { skip: javaSkipReason(), timeout: 300_000 }, () => {
    let storeDir: string;
    let broker: TsmqProcess;
    let run: MqadminRun;
    let startedAt = 0;

    before(async () => {
      storeDir = mkdtempSync(join(tmpdir(), `tsmq-mqadmin${version}-`));
      broker = await TsmqProcess.start({ storeDir });
      startedAt = Date.now();
      await deliverOneDelayed(broker.brokerAddr);
      assert.ok(broker.metricsUrl, `banner names the metrics URL:\n${broker.log}`);
      run = await runMqadmin(version === 5 ? 'rocketmq5' : 'rocketmq4', broker, mqadminSteps(version, broker.brokerAddr, storeDir, broker.metricsUrl));
    });

    after(async () => {
      await broker?.stop();
      if (storeDir) rmSync(storeDir, { recursive: true, force: true });
    });

    /** The command's result; fails with its stderr when it printed an exception. */
    function cmd(id: string, allowError = false): CmdResult {
      const c = run.cmds.get(id);
      assert.ok(c, `step ${id} did not run; JVM stderr tail:\n${run.stderr.slice(-3000)}`);
      // (a client-side race of the admin's route-refresh task with its shutdown logs a
      // RemotingSendRequestException now and then; only the command's own failure counts)
      if (!allowError) assert.doesNotMatch(c.err, /SubCommandException|MQBrokerException|MQClientException|NullPointerException|not supported/, `${id} failed:\n${c.err.split('\n').filter((l) => !/^\s+at /.test(l)).slice(0, 12).join('\n')}\n--- stdout:\n${c.out.slice(0, 1500)}`);
      return c;
    }
    const p1 = (k: string): string => String(run.sent.get('p1')?.[k]);

    it('setup: the Java producer sent 20 messages and the push consumer received them', () => {
      assert.equal(run.sent.get('p1')?.ok, SENT);
      assert.ok((run.consumed.get(GROUP) ?? 0) >= SENT, `consumed ${run.consumed.get(GROUP)}`);
    });

    it('updateTopic: created on the broker with 4/4 queues', () => {
      const out = cmd('updateTopic').out;
      assert.match(out, new RegExp(`create topic to ${broker.brokerAddr} success`));
      assert.match(out, /topicName=MqaTopic, readQueueNums=4, writeQueueNums=4, perm=RW-/);
    });

    it('clusterList: the broker with its version, real in/out TPS and disk use', () => {
      const out = cmd('clusterList').out;
      const row = rows(out, CLUSTER).find((r) => r[1] === BROKER_NAME);
      assert.ok(row, out);
      assert.deepEqual(row.slice(2, 5), ['0', broker.brokerAddr, 'V4_9_4']);
      const inTps = Number(/^([\d.]+)\(/.exec(row[5]!)?.[1]);
      const outTps = Number(/^([\d.]+)\(/.exec(row[6]!)?.[1]);
      assert.ok(inTps > 0, `InTPS ${row[5]}`);
      assert.ok(outTps > 0, `OutTPS ${row[6]}`);
      if (version === 5) assert.equal(row[row.length - 1], 'true', 'ACTIVATED');
      const space = Number(row[version === 5 ? row.length - 2 : row.length - 1]);
      assert.ok(space > 0 && space < 1, `SPACE ${space}`);
    });

    it('brokerStatus: totals, offsets and rates are the real ones (a delay-level delivery counted as Apache counts it)', () => {
      const kv = keyValues(cmd('brokerStatus').out, ':');
      assert.equal(kv.get('brokerVersionDesc'), 'V4_9_4');
      assert.equal(kv.get('brokerVersion'), '401', 'the ordinal of V4_9_4');
      assert.equal(kv.get('remainTransientStoreBufferNumbs'), '2147483647', "Apache's value without a transient store pool");
      assert.equal(kv.get('totalMemKBytes'), String(Math.floor(totalmem() / 1024)));
      // SENT + the delayed send (stored in SCHEDULE_TOPIC_XXXX) + its delivery (ScheduleMessageService counts it)
      assert.equal(kv.get('putMessageTimesTotal'), String(SENT + 2));
      // Apache BrokerStats: BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC, so the send stored under SCHEDULE_TOPIC_XXXX is not in it
      assert.equal(kv.get('msgPutTotalTodayNow'), String(SENT + 1));
      assert.equal(kv.get('scheduleMessageOffset_1'), '1,1', 'level 1: delivered up to 1 of 1');
      assert.ok(Number(kv.get('msgGetTotalTodayNow')) >= SENT, `msgGetTotalTodayNow ${kv.get('msgGetTotalTodayNow')}`);
      assert.equal(kv.get('commitLogMaxOffset'), kv.get('putMessageSizeTotal'), 'every put byte is in the CommitLog');
      assert.equal(kv.get('commitLogMinOffset'), '0');
      assert.ok(Number(kv.get('putTps')!.split(' ')[0]) > 0, `putTps ${kv.get('putTps')}`);
      assert.ok(Number(kv.get('getTransferredTps')!.split(' ')[0]) > 0);
      const ratio = Number(kv.get('commitLogDiskRatio'));
      assert.ok(ratio > 0 && ratio < 1, `commitLogDiskRatio ${ratio}`);
      const earliest = Number(kv.get('earliestMessageTimeStamp'));
      assert.ok(earliest >= startedAt - 1000 && earliest <= Date.now(), `earliestMessageTimeStamp ${earliest}`);
      assert.equal(kv.get('dispatchBehindBytes'), '0');
      assert.equal(kv.get('brokerActive'), 'true');
    });

    it('getBrokerConfig: broker and store keys with their values', () => {
      const kv = keyValues(cmd('getBrokerConfig').out, '=');
      assert.equal(kv.get('brokerName'), BROKER_NAME);
      assert.equal(kv.get('brokerClusterName'), CLUSTER);
      assert.equal(kv.get('flushConsumerOffsetInterval'), '5000');
      assert.equal(kv.get('storePathRootDir'), storeDir);
      assert.equal(kv.get('mappedFileSizeCommitLog'), String(1024 * 1024 * 1024));
      assert.equal(kv.get('dataReadAheadEnable'), 'true', 'Apache MessageStoreConfig default, shown before any setCommitLogReadAheadMode');
      // keys of the components (transactions, timers, pop, controller, netty) and the per-queue stats switch
      assert.equal(kv.get('transactionTimeOut'), '6000');
      assert.equal(kv.get('transactionCheckMax'), '15');
      assert.equal(kv.get('timerWheelEnable'), 'true');
      assert.equal(kv.get('timerMaxDelaySec'), String(3 * 24 * 3600));
      assert.equal(kv.get('enableControllerMode'), 'false');
      assert.equal(kv.get('serverChannelMaxIdleTimeSeconds'), '120');
      assert.equal(kv.get('enableDetailStat'), 'true');
      assert.equal(kv.get('clientCallbackExecutorThreads'), String(availableParallelism()));
    });

    it('updateBrokerConfig: applied (getBrokerConfig shows it) and persisted to config/broker.properties', () => {
      assert.match(cmd('updateBrokerConfig').out, new RegExp(`update broker config success, ${broker.brokerAddr}`));
      assert.equal(keyValues(cmd('getBrokerConfigAfter').out, '=').get('flushConsumerOffsetInterval'), '4000');
      const persisted = readFileSync(join(storeDir, 'config', 'broker.properties'), 'utf8');
      assert.match(persisted, /^flushConsumerOffsetInterval=4000$/m);
    });

    it('updateBrokerConfig: the body is read as Java Properties.load reads it (Region\\East → RegionEast, as Apache)', () => {
      assert.match(cmd('updateBrokerConfigEscape').out, new RegExp(`update broker config success, ${broker.brokerAddr}`));
      assert.equal(keyValues(cmd('getBrokerConfigEscape').out, '=').get('regionId'), 'RegionEast');
      const persisted = readFileSync(join(storeDir, 'config', 'broker.properties'), 'utf8');
      assert.match(persisted, /^regionId=RegionEast$/m);
    });

    it('topicList: created, auto-created and retry topics', () => {
      const names = cmd('topicList').out.split('\n').map((l) => l.trim());
      for (const t of [TOPIC, TOPIC2, `%RETRY%${GROUP}`, 'TBW102']) assert.ok(names.includes(t), `${t} missing from ${names.join(',')}`);
    });

    it('topicRoute: broker address, 4/4 queues, perm 6', () => {
      const out = cmd('topicRoute').out;
      assert.match(out, new RegExp(`"brokerAddrs":\\{0:"${broker.brokerAddr}"`));
      assert.match(out, /"perm":6,\s*"readQueueNums":4,\s*"topicSysFlag":0,\s*"writeQueueNums":4/);
    });

    it('topicStatus: per-queue min/max offsets add up to the messages sent', () => {
      const out = cmd('topicStatus').out;
      const qs = rows(out, BROKER_NAME);
      assert.equal(qs.length, 4, out);
      assert.deepEqual(qs.map((r) => r[2]), ['0', '0', '0', '0']);
      assert.equal(qs.reduce((s, r) => s + Number(r[3]), 0), SENT);
      // 5.3.3 prints "Topic Put TPS" from a table it rebuilds client-side without the broker's
      // topicPutTps, so it reads 0.0 against Apache too; the broker's value is unit-tested (202).
      if (version === 5) assert.match(out, /Topic Put TPS: /);
    });

    it('topicClusterList: the cluster serving the topic', () => {
      assert.equal(cmd('topicClusterList').out.trim(), CLUSTER);
    });

    it('updateTopicPerm: 6 → 4, and the route shows perm 4', () => {
      assert.match(cmd('updateTopicPerm').out, new RegExp(`update topic perm from 6 to 4 in ${broker.brokerAddr} success`));
      assert.match(cmd('topicRoute2').out, /"perm":4,\s*"readQueueNums":2/);
    });

    it(`updateSubGroup: created with retryMaxTimes 3, broadcast on${version === 5 ? ', consumeMessageOrderly' : ''} (subscriptionGroup.json)`, () => {
      const out = cmd('updateSubGroup').out;
      assert.match(out, new RegExp(`create subscription group to ${broker.brokerAddr} success`));
      assert.match(out, /retryMaxTimes=3/);
      type Groups = { subscriptionGroupTable: Record<string, Record<string, unknown>> };
      const saved = (JSON.parse(run.files.get('groupsAfterUpdate') ?? '{}') as Groups).subscriptionGroupTable?.[SUB_GROUP];
      assert.ok(saved, 'subscriptionGroup.json holds the new group');
      assert.equal(saved.retryMaxTimes, 3);
      assert.equal(saved.consumeBroadcastEnable, true);
      assert.equal(saved.consumeFromMinEnable, false);
      assert.equal(saved.consumeMessageOrderly, version === 5, 'only 5.x updateSubGroup has -o');
      if (version === 5) assert.match(out, /consumeMessageOrderly=true/);
    });

    it('deleteSubGroup: gone from the broker (subscriptionGroup.json)', () => {
      assert.match(cmd('deleteSubGroup').out, new RegExp(`delete subscription group \\[${SUB_GROUP}\\] from broker \\[${broker.brokerAddr}\\] success`));
      const saved = JSON.parse(run.files.get('groupsAfterDelete') ?? '{}') as { subscriptionGroupTable: Record<string, unknown> };
      assert.ok(saved.subscriptionGroupTable, 'subscriptionGroup.json read');
      assert.equal(saved.subscriptionGroupTable[SUB_GROUP], undefined);
      assert.ok(saved.subscriptionGroupTable[GROUP], 'the consuming group is kept');
    });

    it('consumerConnection: the live push consumer, its subscription and settings', () => {
      const out = cmd('consumerConnection').out;
      const client = out.split('\n').find((l) => l.includes('@mqadmin-runner'));
      assert.ok(client, out);
      assert.match(client, new RegExp(`JAVA\\s+${versionDesc}`));
      assert.match(out, new RegExp(`${TOPIC}\\s+\\*`));
      assert.match(out, /ConsumeType: CONSUME_PASSIVELY/);
      assert.match(out, /MessageModel: CLUSTERING/);
      assert.match(out, /ConsumeFromWhere: CONSUME_FROM_FIRST_OFFSET/);
    });

    it('producerConnection: the live producer', () => {
      const out = cmd('producerConnection').out;
      assert.match(out, new RegExp(`^0001\\s+\\S+@mqadmin-runner\\s+127\\.0\\.0\\.1:\\d+\\s+JAVA\\s+${versionDesc}`, 'm'));
    });

    if (version === 5) {
      it('producer -b: every live producer group with its clientId, address and language (GET_ALL_PRODUCER_INFO 328)', () => {
        const clientId = /^0001\s+(\S+@mqadmin-runner)\s/m.exec(cmd('producerConnection').out)?.[1];
        assert.ok(clientId, cmd('producerConnection').out);
        const out = cmd('producer').out;
        const line = out.split('\n').find((l) => l.startsWith(`producer group (${PRODUCER_GROUP}) instance : `));
        assert.ok(line, out);
        const m = /clientId=(\S+),remoteIP=\/127\.0\.0\.1:\d+, language=JAVA, version=(\d+), lastUpdateTimestamp=(\d+)$/.exec(line);
        assert.ok(m, line);
        assert.equal(m[1], clientId, 'the same producer as producerConnection shows');
        assert.ok(Number(m[3]) >= startedAt && Number(m[3]) <= Date.now(), `lastUpdateTimestamp ${m[3]}`);
      });
    }

    it('consumerProgress (all groups): the group is online with its version, push, clustering', () => {
      const row = rows(cmd('consumerProgressAll').out, GROUP)[0];
      assert.ok(row, cmd('consumerProgressAll').out);
      assert.deepEqual(row.slice(1, 5), ['1', versionDesc, 'PUSH', 'CLUSTERING']);
      assert.equal(row[row.length - 1], '0', 'diff total');
    });

    it('consumerProgress -g: every queue consumed to its max, real consume TPS', () => {
      const out = cmd('consumerProgress').out;
      const qs = rows(out, TOPIC);
      assert.equal(qs.length, 4, out);
      for (const r of qs) assert.equal(r[3], r[4], `broker offset = consumer offset: ${r.join(' ')}`);
      assert.equal(qs.reduce((s, r) => s + Number(r[3]), 0), SENT);
      assert.ok(Number(/Consume TPS: ([\d.]+)/.exec(out)?.[1]) > 0, out);
      assert.match(out, /Diff Total: 0/);
      if (version === 5) assert.match(out, /Consume Inflight Total: 0/);
    });

    it('consumerStatus: running info fetched from the client through the broker (307)', () => {
      const out = cmd('consumerStatus').out;
      assert.match(out, new RegExp(`1\\s+\\S+@mqadmin-runner\\s+${versionDesc}`));
      assert.match(out, /Same subscription in the same group of consumer/);
      assert.match(out, /Rebalance OK/);
    });

    it('brokerConsumeStats: the group on each queue, no backlog', () => {
      const out = cmd('brokerConsumeStats').out;
      const qs = rows(out, TOPIC).filter((r) => r[1] === GROUP);
      assert.equal(qs.length, 4, out);
      for (const r of qs) assert.equal(r[6], '0', r.join(' '));
      assert.match(out, /Diff Total: 0/);
    });

    it('statsAll: real in/out TPS and 24 h counts (VIEW_BROKER_STATS_DATA)', () => {
      const row = rows(cmd('statsAll').out, TOPIC).find((r) => r[1] === GROUP);
      assert.ok(row, cmd('statsAll').out);
      const [accumulation, inTps, outTps, in24h, out24h] = row.slice(2).map(Number);
      assert.equal(accumulation, 0);
      assert.ok(inTps! > 0 && outTps! > 0, row.join(' '));
      assert.equal(in24h, SENT);
      assert.equal(out24h, SENT);
    });

    /** viewBrokerStatsData's figures of one step; fails with the refusal when there is one. */
    const statsOf = (id: string): StatsDataResult => {
      const r = run.stats.get(id);
      assert.ok(r, `step ${id} did not run; JVM stderr tail:\n${run.stderr.slice(-3000)}`);
      return r;
    };
    const statsSum = (id: string): number => {
      const r = statsOf(id);
      assert.equal(r.ok, true, `${id}: ${r.error}`);
      assert.equal(r.hourSum, r.daySum, `${id}: one hour and one day of history hold the same`);
      return r.daySum!;
    };

    it('viewBrokerStatsData (DefaultMQAdminExt): QUEUE_* per-queue stats as Apache 5.3.3 counts them (the one delay-level message only)', () => {
      // the DELAY=1 send stored under SCHEDULE_TOPIC_XXXX queue 0 (delay level 1 - 1), then delivered
      assert.equal(statsSum('queuePutNumsSchedule'), 1);
      const putSize = statsSum('queuePutSizeSchedule');
      assert.ok(putSize > 100, `record size ${putSize}`);
      assert.equal(putSize, statsSum('topicPutSizeSchedule'), 'the only SCHEDULE_TOPIC_XXXX put is on queue 0');
      assert.equal(statsSum('queueGetNumsSchedule'), 1);
      const getSize = statsSum('queueGetSizeSchedule');
      assert.ok(getSize > 100, `delivered record size ${getSize}`);
      assert.equal(getSize, statsSum('groupGetSizeSchedule'), 'the only delivery was of level 1');
      // plain sends and pulls are not counted per queue (Apache: only the schedule topic's)
      for (const id of ['queuePutNumsPlain', 'queueGetNumsPlain']) {
        const r = statsOf(id);
        assert.equal(r.ok, false, `${id} exists: ${JSON.stringify(r)}`);
        assert.match(r.error ?? '', /The stats <QUEUE_(PUT|GET)_NUMS> <MqaTopic@0(@GID_MQA)?> not exist/);
      }
    });

    it('exportMetrics: runtimeEnv (cpuNum, totalMemKBytes), runtimeQuota and runtimeVersion with real values', () => {
      assert.match(cmd('exportMetrics').out, /export .*metrics\.json success/);
      const text = run.files.get('exportedMetrics');
      assert.ok(text, 'metrics.json written');
      const doc = JSON.parse(text) as { evaluateReport: Record<string, { runtimeEnv: Record<string, unknown>; runtimeQuota: Record<string, unknown>; runtimeVersion: { rocketmqVersion: string; clientInfo: string[] } }> };
      const report = doc.evaluateReport[BROKER_NAME];
      assert.ok(report, text);
      assert.deepEqual(report.runtimeEnv, { cpuNum: String(availableParallelism()), totalMemKBytes: String(Math.floor(totalmem() / 1024)) });
      const oneDay = report.runtimeQuota.oneDayNum as Record<string, number>;
      assert.equal(oneDay.scheduleOneDayInNum, 1, 'TOPIC_PUT_NUMS of SCHEDULE_TOPIC_XXXX: the one delay-level send');
      assert.equal(oneDay.transOneDayInNum, 0);
      assert.equal(report.runtimeVersion.rocketmqVersion, versionDesc);
      assert.ok(report.runtimeVersion.clientInfo.includes(`JAVA%${versionDesc}`), JSON.stringify(report.runtimeVersion));
    });

    it('metrics endpoint with the Java clients connected: Apache 5.3.3 label values for them and their traffic', () => {
      const text = run.files.get('metricsWithClients');
      assert.ok(text, 'the metrics endpoint answered');
      const v = versionDesc.toLowerCase();
      assert.equal(sampleSum(text, 'rocketmq_consumer_connections', { consumer_group: GROUP, language: 'java', version: v, consume_mode: 'push', protocol_type: 'remoting', is_system: 'false' }), 1);
      assert.ok(sampleSum(text, 'rocketmq_producer_connections', { language: 'java', version: v, protocol_type: 'remoting' })! >= 1, 'the producer group');
      assert.equal(sampleSum(text, 'rocketmq_messages_in_total', { topic: TOPIC, message_type: 'normal', is_system: 'false' }), SENT);
      assert.equal(sampleSum(text, 'rocketmq_messages_out_total', { topic: TOPIC, consumer_group: GROUP, is_system: 'false' }), SENT);
      const lag = { topic: TOPIC, consumer_group: GROUP, is_retry: 'false', is_system: 'false' };
      assert.equal(sampleSum(text, 'rocketmq_consumer_lag_messages', lag), 0, 'all 20 consumed and committed');
      assert.equal(sampleSum(text, 'rocketmq_consumer_ready_messages', lag), 0);
      assert.equal(sampleSum(text, 'rocketmq_consumer_lag_latency_milliseconds', lag), 0);
      assert.equal(sampleSum(text, 'rocketmq_consumer_queueing_latency_milliseconds', lag), 0);
      assert.ok(sampleSum(text, 'rocketmq_rpc_latency_milliseconds_count', { request_code: 'send_message_v2', response_code: 'success', result: 'success', is_long_polling: 'false' })! >= SENT);
      assert.ok(sampleSum(text, 'rocketmq_rpc_latency_milliseconds_count', { request_code: 'heart_beat', response_code: 'success' })! >= 1);
      // updateTopic -b and updateTopic -c ran before: two creates, timed as Apache's AdminBrokerProcessor does
      assert.equal(sampleSum(text, 'rocketmq_topic_create_execution_time_milliseconds_count', { invocation_status: 'success', is_system: 'false' }), 2);
    });

    it("metrics endpoint: every Apache 5.3.3 metric a broker with these clients prints is there with Apache's label keys (recorded from a real Apache broker)", () => {
      const tsmq = metricLabelKeys(run.files.get('metricsWithClients') ?? '');
      const missing: string[] = [];
      const differing: string[] = [];
      for (const [name, keys] of Object.entries(APACHE_533_METRIC_LABELS)) {
        if (NOT_EXPORTED_BY_TSMQ.test(name)) continue;
        const have = tsmq.get(name);
        if (have === undefined) missing.push(name);
        else if (have !== keys.join(',')) differing.push(`${name}: tsmq {${have}} Apache {${keys.join(',')}}`);
      }
      assert.deepEqual(missing, [], 'Apache metrics absent from the scrape');
      assert.deepEqual(differing, [], 'label keys differ');
    });

    it('queryMsgByKey: the keyed message with its queue and offset', () => {
      const r = rows(cmd('queryMsgByKey').out, p1('msgId'))[0];
      assert.ok(r, cmd('queryMsgByKey').out);
      assert.deepEqual(r.slice(1), [p1('queueId'), p1('queueOffset')]);
    });

    const messageShown = (id: string, track = true): void => {
      const out = cmd(id).out;
      assert.match(out, new RegExp(`Topic:\\s+${TOPIC}`));
      assert.match(out, /Keys:\s+\[mqa-0\]/);
      assert.match(out, new RegExp(`Queue ID:\\s+${p1('queueId')}`));
      assert.match(out, new RegExp(`Queue Offset:\\s+${p1('queueOffset')}`));
      // the offset msgId ends with the CommitLog offset (16 hex digits); the delayed message and its delivery come first
      assert.match(out, new RegExp(`CommitLog Offset:\\s+${BigInt(`0x${p1('offsetMsgId').slice(-16)}`)}\\n`));
      if (track) assert.match(out, new RegExp(`MessageTrack \\[consumerGroup=${GROUP}, trackType=CONSUMED`), 'QUERY_TOPIC_CONSUME_BY_WHO (300) names the group');
    };
    it('queryMsgById: the message and who consumed it', () => messageShown('queryMsgById'));
    it('queryMsgById -g -d: the broker has the live consumer consume it directly (CONSUME_MESSAGE_DIRECTLY 309)', () => {
      assert.match(cmd('consumeMessageDirectly').out, /ConsumeMessageDirectlyResult \[order=false, autoCommit=true, consumeResult=CR_SUCCESS/);
    });
    it('queryMsgByOffset: the message at that queue offset and who consumed it', () => messageShown('queryMsgByOffset'));
    // 4.9.8's queryMsgByUniqueKey prints no message track
    it('queryMsgByUniqueKey: the message by client msgId (and, 5.x, who consumed it)', () => messageShown('queryMsgByUniqueKey', version === 5));

    it('printMsg: every message of the topic', () => {
      const out = cmd('printMsg').out;
      assert.equal((out.match(/^MSGID: /gm) ?? []).length, SENT);
    });

    it('cloneGroupOffset: the clone group has the source offsets (CLONE_GROUP_OFFSET 314)', () => {
      assert.match(cmd('cloneGroupOffset').out, new RegExp(`clone group offset success. srcGroup\\[${GROUP}\\], destGroup=\\[${CLONE_GROUP}\\], topic\\[${TOPIC}\\]`));
      const qs = rows(cmd('consumerProgressClone').out, TOPIC);
      assert.equal(qs.length, 4);
      assert.equal(qs.reduce((s, r) => s + Number(r[4]), 0), SENT);
    });

    it('sendMessage: SEND_OK with a msgId', () => {
      assert.match(cmd('sendMessage').out, new RegExp(`^${BROKER_NAME}\\s+\\d\\s+SEND_OK\\s+[0-9A-F]{32}`, 'm'));
    });

    it('consumeMessage: reads the first message at its queue offset', () => {
      const out = cmd('consumeMessage').out;
      assert.match(out, /Consume ok/);
      assert.match(out, new RegExp(`MSGID: ${p1('msgId')}`));
    });

    it('skipAccumulatedMessage: every queue set to its max (21 messages incl. sendMessage)', () => {
      const qs = rows(cmd('skipAccumulatedMessage').out, BROKER_NAME);
      assert.equal(qs.length, 4);
      assert.equal(qs.reduce((s, r) => s + Number(r[2]), 0), SENT + 1);
    });

    it('resetOffsetByTime: every queue back to 0', () => {
      const qs = rows(cmd('resetOffsetByTime').out, BROKER_NAME);
      assert.equal(qs.length, 4);
      assert.deepEqual(qs.map((r) => r[2]), ['0', '0', '0', '0']);
    });

    it('wipeWritePerm / addWritePerm: the nameserver route loses and regains the write bit', () => {
      const count = Number(/wipe write perm of broker\[broker-a\] in name server\[[^\]]+\] OK, (\d+)/.exec(cmd('wipeWritePerm').out)?.[1]);
      assert.ok(count >= 2, cmd('wipeWritePerm').out);
      assert.match(cmd('topicRouteWiped').out, /"perm":4,\s*"readQueueNums":4/);
      assert.match(cmd('addWritePerm').out, new RegExp(`add write perm of broker\\[broker-a\\] in name server\\[[^\\]]+\\] OK, ${count}`));
      assert.match(cmd('topicRouteAdded').out, /"perm":6,\s*"readQueueNums":4/);
    });

    it('updateKvConfig: stored in the nameserver (read back with GET_KV_CONFIG 101)', async () => {
      assert.match(cmd('updateKvConfig').out, /create or update kv config to namespace success/);
      const client = new RemotingClient();
      try {
        const r = await client.invokeSync(broker.namesrvAddr, createRequestCommand(RequestCode.GET_KV_CONFIG, { namespace: 'ORDER_TOPIC_CONFIG', key: 'MqaOrderTopic' }), 3000);
        assert.equal(r.code, 0);
        assert.equal(r.extFields?.value, `${BROKER_NAME}:4`);
      } finally {
        await client.close();
      }
    });

    it('getNamesrvConfig: the nameserver listen port', () => {
      assert.equal(keyValues(cmd('getNamesrvConfig').out, '=').get('listenPort'), String(broker.namesrvPort));
    });

    it('cleanExpiredCQ: succeeds, the live topic keeps its queues', () => {
      assert.match(cmd('cleanExpiredCQ').out, /success/);
      assert.equal(rows(cmd('skipAccumulatedMessage').out, BROKER_NAME).length, 4);
    });

    it('deleteTopic: removed from broker and nameserver; topicRoute then fails with TOPIC_NOT_EXIST (no TBW102 fallback)', () => {
      const out = cmd('deleteTopic').out;
      assert.match(out, new RegExp(`delete topic \\[${TOPIC2}\\] from cluster \\[${CLUSTER}\\] success`));
      assert.match(out, new RegExp(`delete topic \\[${TOPIC2}\\] from NameServer success`));
      const after = cmd('topicRouteDeleted', true);
      assert.equal(after.out.trim(), '');
      assert.match(after.err, new RegExp(`CODE: 17\\s+DESC: No topic route info in name server for the topic: ${TOPIC2}`));
      assert.equal(run.sent.get('p2')?.ok, 1, 'a Java producer re-creates the deleted topic by sending (auto-create)');
      assert.match(cmd('topicRouteRecreated').out, /"writeQueueNums":4/);
    });

    if (version === 4) {
      it('haStatus: not a 4.9.8 command (the tool says so; nothing to serve)', () => {
        assert.match(cmd('haStatus').out, /The sub command haStatus not exist/);
      });
    }
    if (version === 5) {
      it('getColdDataFlowCtrInfo: the disabled flow control, as Apache 5.3.3 prints it (empty tables, default thresholds)', () => {
        const out = cmd('getColdDataFlowCtrInfo').out;
        assert.match(out, new RegExp(`============${broker.brokerAddr}============`));
        assert.doesNotMatch(out, /has no cold ctr table/);
        const json = JSON.parse(out.slice(out.indexOf('{'), out.lastIndexOf('}') + 1)) as Record<string, unknown>;
        assert.deepEqual(json, { globalAcc: 0, cgColdReadThreshold: 3 * 1024 * 1024, configTable: {}, globalColdReadThreshold: 100 * 1024 * 1024, runtimeTable: {} });
      });

      it('update/removeColdDataFlowCtrGroupConfig: the group thresholds appear in and leave getColdDataFlowCtrInfo\'s configTable', () => {
        const info = (id: string): Record<string, unknown> => {
          const out = cmd(id).out;
          return JSON.parse(out.slice(out.indexOf('{'), out.lastIndexOf('}') + 1)) as Record<string, unknown>;
        };
        assert.equal(cmd('updateColdDataFlowCtrGroupConfig').out.trim(), `updateColdDataFlowCtrGroupConfig success, ${broker.brokerAddr}`);
        assert.equal(cmd('updateColdDataFlowCtrGroupConfigCluster').out.trim(), `updateColdDataFlowCtrGroupConfig success, ${broker.brokerAddr}`);
        assert.deepEqual(info('getColdDataFlowCtrInfoUpdated').configTable, { [GROUP]: 1048576, [CLONE_GROUP]: 2048 });
        assert.equal(cmd('removeColdDataFlowCtrGroupConfig').out.trim(), `remove broker cold read threshold success, ${broker.brokerAddr}`);
        assert.deepEqual(info('getColdDataFlowCtrInfoRemoved'), { globalAcc: 0, cgColdReadThreshold: 3 * 1024 * 1024, configTable: { [CLONE_GROUP]: 2048 }, globalColdReadThreshold: 100 * 1024 * 1024, runtimeTable: {} });
      });

      it('setCommitLogReadAheadMode: the broker\'s success remark is printed and dataReadAheadEnable follows the mode', () => {
        const banner = `============${broker.brokerAddr}============`;
        assert.equal(cmd('setCommitLogReadAheadModeRandom').out.trim(), `${banner}\ncommitLog set readAhead mode rstStrset commitlog readahead mode success, mode: 1`);
        assert.equal(keyValues(cmd('getBrokerConfigReadAheadOff').out, '=').get('dataReadAheadEnable'), 'false');
        assert.equal(cmd('setCommitLogReadAheadModeNormal').out.trim(), `${banner}\ncommitLog set readAhead mode rstStrset commitlog readahead mode success, mode: 0`);
        assert.equal(keyValues(cmd('getBrokerConfigReadAheadOn').out, '=').get('dataReadAheadEnable'), 'true');
      });

      it('resetMasterFlushOffset: a master answers SUCCESS (Apache changes nothing on a master)', () => {
        assert.equal(cmd('resetMasterFlushOffset').out.trim(), 'reset master flush offset to 1024 success');
      });

      it('exportPopRecord: SUCCESS (no RocksDB pop store to export from)', () => {
        assert.equal(cmd('exportPopRecord').out.trim(), `Export broker records, brokerName=${BROKER_NAME}, brokerAddr=${broker.brokerAddr}, dryRun=false`);
      });

      it('haStatus: master with its CommitLog max offset, no slave', () => {
        const out = cmd('haStatus').out;
        assert.match(out, new RegExp(`#MasterAddr\\s+${broker.brokerAddr}`));
        assert.ok(Number(/#MasterCommitLogMaxOffset\s+(\d+)/.exec(out)?.[1]) > 0, out);
        assert.match(out, /#SlaveNum\s+0/);
      });
    }

    it(`the whole ${version === 5 ? '5.3.3' : '4.9.8'} command list ran in one JVM in well under 60 s`, (t) => {
      const slowest = [...run.cmds].sort(([, a], [, b]) => b.ms - a.ms).slice(0, 3).map(([id, c]) => `${id} ${c.ms} ms`);
      const phases = `produce ${String(run.sent.get('p1')?.ms)} ms, consume ${String(run.phaseMs.get('consume'))} ms`;
      t.diagnostic(`JVM ${run.ms} ms for ${run.cmds.size} commands (${phases}); slowest: ${slowest.join(', ')}`);
      assert.ok(run.ms < 45_000, `JVM took ${run.ms} ms`);
    });

  });
}
