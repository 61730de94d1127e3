/**
 * gRPC producers in the broker's ProducerManager, judged by Apache's tools: a real
 * rocketmq-client-java 5.0.8 Producer of two topics (Grpc5Peer produce-hold) over tsmq's gRPC
 * front, and Apache's mqadmin 5.3.3 `producerConnection -g <topic> -t <topic>` over the
 * nameserver and the broker's remoting port. Apache's proxy registers a gRPC producer under each
 * of its publishing topics as producer group (ClientActivity.registerProducer); before
 * src/grpc/client-registration.ts registered producers, mqadmin answered "Not found the producer
 * group connection". After the producer shuts down (NotifyClientTermination) both groups are
 * gone. Skips when `java` or `mvn` is not installed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../src/common/logging/logger.js';
import { startHarness, type Harness } from '../integration/grpc/grpc-harness.js';
import { invokeInProcess } from '../../src/console/in-process-request.js';
import { createRequestCommand } from '../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../src/remoting/codes/response-code.js';
import { assertRanOk, buildPeer, javaSkipReason, runJava, type BuiltPeer, type JavaRun } from './support/java-peers.js';
import { runMqadmin } from './mqadmin/mqadmin-run.js';

const TOPIC_A = 'G5_PC_A';
const TOPIC_B = 'G5_PC_B';

describe('rocketmq-client-java 5.0.8 producer in mqadmin producerConnection (5.3.3)', { skip: javaSkipReason(), timeout: 180_000 }, () => {
  let h: Harness;
  let peer: BuiltPeer;
  const dir = mkdtempSync(join(tmpdir(), 'tsmq-pc-'));

  before(async () => {
    const [built, harness] = await Promise.all([buildPeer('grpc5'), startHarness({}, silentLogger, true)]);
    peer = built;
    h = harness;
    for (const topic of [TOPIC_A, TOPIC_B]) {
      const r = await invokeInProcess(h.broker, createRequestCommand(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic, defaultTopic: 'TBW102', readQueueNums: '2', writeQueueNums: '2', perm: '6', topicFilterType: 'SINGLE_TAG' }));
      assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    }
  });

  after(async () => {
    await h?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const connections = async (group: string): Promise<Array<{ clientId: string; clientAddr: string; language: string; version: number }>> => {
    const r = await invokeInProcess(h.broker, createRequestCommand(RequestCode.GET_PRODUCER_CONNECTION_LIST, { producerGroup: group }));
    if (r.code !== ResponseCode.SUCCESS) return [];
    return (JSON.parse(r.body!.toString('utf8')) as { connectionSet: Array<{ clientId: string; clientAddr: string; language: string; version: number }> }).connectionSet;
  };

  it('listed under each publishing topic while it runs (mqadmin prints client id, address, JAVA, V5_0_8); gone after it shut down', async () => {
    const release = join(dir, 'release');
    const running: Promise<JavaRun> = runJava(peer, 'tsmq.interop.grpc5.Grpc5Peer', [h.endpoints, 'produce-hold', `topics=${TOPIC_A},${TOPIC_B}`, `releaseFile=${release}`], { timeoutMs: 120_000 });
    let run: JavaRun | null = null;
    void running.then((r) => (run = r));
    try {
      const deadline = Date.now() + 60_000;
      let listed: Awaited<ReturnType<typeof connections>> = [];
      while (Date.now() < deadline && run === null) {
        listed = await connections(TOPIC_B);
        if (listed.length > 0) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.equal(listed.length, 1, `the producer never showed up in GET_PRODUCER_CONNECTION_LIST of ${TOPIC_B}${run ? `\n${(run as JavaRun).stderr.slice(-3000)}` : ''}`);
      const clientId = listed[0]!.clientId;
      assert.deepEqual((await connections(TOPIC_A)).map((c) => c.clientId), [clientId]);

      const admin = await runMqadmin('rocketmq5', { namesrvAddr: h.namesrvAddr }, [
        { op: 'mqadmin', id: 'pcA', args: ['producerConnection', '-g', TOPIC_A, '-t', TOPIC_A] },
        { op: 'mqadmin', id: 'pcB', args: ['producerConnection', '-g', TOPIC_B, '-t', TOPIC_B] },
      ]);
      for (const id of ['pcA', 'pcB']) {
        const out = admin.cmds.get(id)!;
        const m = /^0001\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$/m.exec(out.out);
        assert.ok(m, `${id} printed no connection:\n${out.out}\n${out.err}`);
        assert.equal(m[1], clientId);
        assert.match(m[2]!, /^127\.0\.0\.1:\d+$/);
        assert.equal(m[3], 'JAVA');
        assert.equal(m[4], 'V5_0_8');
      }
    } finally {
      writeFileSync(release, '');
    }
    const done = await running;
    assertRanOk(done, 'Grpc5Peer produce-hold');
    assert.deepEqual(done.lines.filter((l) => l.type === 'error'), [], done.stderr.slice(-3000));
    assert.equal(done.lines.filter((l) => l.type === 'closed').length, 1);
    assert.deepEqual(await connections(TOPIC_A), [], 'NotifyClientTermination removed the producer');
    assert.deepEqual(await connections(TOPIC_B), []);
  });
});
