/**
 * Static topics on a one-broker cluster (`tsmq start`), judged by Apache mqadmin and the Java
 * client 5.3.3 in one JVM (mqadmin-run.ts): `updateStaticTopic -c DefaultCluster -qn 8` puts all
 * 8 logic queues on broker-a, topicRoute carries the mapping, a producer's 16 sends and a push
 * consumer's receipt go through the logic queues, topicStatus and consumerProgress show them in
 * logic terms, and the mapping survives a broker restart. Skips without java/mvn.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess } from '../support/tsmq-process.js';
import { javaSkipReason } from './support/java-peers.js';
import { runMqadmin, type CmdResult, type MqadminRun } from './mqadmin/mqadmin-run.js';
import { LeanClient } from '../support/lean-client.js';
import { RequestCode } from '../../src/remoting/codes/request-code.js';
import { parseLenientJson } from '../../src/broker/config-file/lenient-json.js';

const T = 'StaticOne';
const GROUP = 'StaticOneCG';
const MOCK_BROKER = '__syslo__global__';

describe('static topic on one tsmq broker: mqadmin 5.3.3 and the Java 5.3.3 client', { skip: javaSkipReason(), timeout: 300_000 }, () => {
  let storeDir: string;
  let broker: TsmqProcess;
  let run: MqadminRun;

  before(async () => {
    storeDir = mkdtempSync(join(tmpdir(), 'tsmq-static1-'));
    broker = await TsmqProcess.start({ storeDir });
    run = await runMqadmin('rocketmq5', broker, [
      { op: 'mqadmin', id: 'create', args: ['updateStaticTopic', '-t', T, '-qn', '8', '-c', 'DefaultCluster'] },
      { op: 'mqadmin', id: 'route', args: ['topicRoute', '-t', T] },
      { op: 'produce', as: 'p', group: 'StaticOnePG', topic: T, count: 16, tag: 'TagA', keyPrefix: 'k' },
      { op: 'consume', group: GROUP, topic: T, expect: 16 },
      { op: 'mqadmin', id: 'status', args: ['topicStatus', '-t', T] },
      { op: 'mqadmin', id: 'progress', args: ['consumerProgress', '-g', GROUP, '-t', T] },
    ]);
  });

  after(async () => {
    await broker?.stop();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  function cmd(id: string): CmdResult {
    const c = run.cmds.get(id);
    assert.ok(c, `step ${id} did not run; JVM stderr tail:\n${run.stderr.slice(-3000)}`);
    assert.doesNotMatch(c.err, /SubCommandException|MQBrokerException|MQClientException|NullPointerException|not supported/, `${id} failed:\n${c.err.slice(0, 3000)}\n--- stdout:\n${c.out.slice(0, 1500)}`);
    return c;
  }

  it('updateStaticTopic -c: 8 physical queues on broker-a, logic i → physical i in the route', () => {
    assert.match(cmd('create').out, /The new mapping data is written to file/);
    const out = cmd('route').out;
    const route = parseLenientJson(out.slice(out.indexOf('{'))) as { queueDatas: Array<{ writeQueueNums: number }>; topicQueueMappingByBroker: Record<string, { currIdMap: Record<string, number>; totalQueues: number }> };
    assert.equal(route.queueDatas[0]!.writeQueueNums, 8);
    const info = route.topicQueueMappingByBroker['broker-a']!;
    assert.equal(info.totalQueues, 8);
    assert.deepEqual(Object.keys(info.currIdMap).map(Number).sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('the Java producer sent 16 and the push consumer received 16', () => {
    assert.equal(run.sent.get('p')?.ok, 16);
    assert.equal(run.consumed.get(GROUP), 16);
  });

  it('topicStatus and consumerProgress: 8 logic queues under the mock broker name, all 16 consumed', () => {
    const status = cmd('status').out.split('\n').map((l) => l.trim().split(/\s+/)).filter((r) => r[0] === MOCK_BROKER);
    assert.equal(status.length, 8, cmd('status').out);
    assert.equal(status.reduce((s, r) => s + Number(r[3]), 0), 16);
    const out = cmd('progress').out;
    const rows = out.split('\n').map((l) => l.trim().split(/\s+/)).filter((r) => r[0] === T && r[1] === MOCK_BROKER);
    assert.equal(rows.length, 8, out);
    for (const r of rows) assert.equal(r[3], r[4], `broker offset = consumer offset: ${r.join(' ')}`);
    assert.equal(rows.reduce((s, r) => s + Number(r[3]), 0), 16, out);
  });

  it('after a restart the broker still serves the mapping (351 lo=true) and GET_MAX_OFFSET on a logic queue reads its physical queue', async () => {
    await broker.stop();
    broker = await TsmqProcess.start({ storeDir, namesrvPort: broker.namesrvPort, listenPort: broker.listenPort });
    const c = new LeanClient(broker.brokerAddr);
    await c.ready;
    try {
      const r = await c.invoke(RequestCode.GET_TOPIC_CONFIG, { topic: T, lo: 'true' });
      assert.equal(r.code, 0, r.remark ?? '');
      const detail = JSON.parse(r.body!.toString('utf8')).mappingDetail;
      assert.equal(detail.bname, 'broker-a');
      assert.equal(Object.keys(detail.hostedQueues).length, 8);
      const max = await c.invoke(RequestCode.GET_MAX_OFFSET, { topic: T, queueId: 3 });
      const leader = detail.hostedQueues['3'].at(-1);
      const phyMax = await c.invoke(RequestCode.GET_MAX_OFFSET, { topic: T, queueId: leader.queueId, lo: 'false' });
      assert.equal(max.extFields.offset, phyMax.extFields.offset, 'logic 3 reads its physical queue');
    } finally {
      c.close();
    }
  });
});
