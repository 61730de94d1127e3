/**
 * gRPC consumers are listed by GET_CONSUMER_CONNECTION_LIST (203, what `mqadmin consumerConnection`
 * sends), as Apache's proxy registers them in the broker's ConsumerManager: real
 * rocketmq-client-nodejs SimpleConsumer and PushConsumer of one group over the gRPC front, the
 * request over the broker's remoting port. Before src/grpc/consumer-registration.ts the group was
 * answered 206 "not online" while both were consuming. A consumer that shuts down
 * (NotifyClientTermination) leaves the list; the last one leaving makes the group 206 again.
 * A SimpleConsumer group is CONSUME_ACTIVELY (consume_mode "pull" in the connection gauge), a
 * PushConsumer group CONSUME_PASSIVELY ("push"), protocol_type "remoting" for both: Apache 5.3.3's
 * proxy registers them so (ClientActivity.buildConsumeType) and its broker labels every connection
 * "remoting".
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import type { PushConsumer, SimpleConsumer } from 'rocketmq-client-nodejs';
import { startHarness, type Harness } from './grpc-harness.js';
import { startPushConsumer, startSimpleConsumer } from './grpc-clients.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { clientVersionOrdinal } from '../../../src/grpc/client-registration.js';
import { versionDesc } from '../../../src/remoting/protocol/mq-version.js';
import { BrokerMetrics } from '../../../src/metrics/broker-metrics.js';

const nodeClientVersion = (createRequire(import.meta.url)('rocketmq-client-nodejs/package.json') as { version: string }).version;

interface ConsumerConnection {
  connectionSet: Array<{ clientAddr: string; clientId: string; language: string; version: number }>;
  consumeType: string;
  messageModel: string;
  consumeFromWhere: string;
  subscriptionTable: Record<string, { topic: string; subString: string; expressionType: string; tagsSet: string[] }>;
}

describe('gRPC consumers in GET_CONSUMER_CONNECTION_LIST (mqadmin consumerConnection)', { timeout: 60_000 }, () => {
  let h: Harness;
  const remoting = new RemotingClient({ logger: silentLogger });
  let simple: SimpleConsumer | null = null;
  let push: PushConsumer | null = null;

  let metrics: BrokerMetrics;
  const connections = async (group: string): Promise<{ code: number; remark: string | null; body: ConsumerConnection | null }> => {
    const r = await remoting.invokeSync(`127.0.0.1:${h.broker.port}`, createRequestCommand(RequestCode.GET_CONSUMER_CONNECTION_LIST, { consumerGroup: group }), 5000);
    return { code: r.code, remark: r.remark ?? null, body: r.code === ResponseCode.SUCCESS ? (JSON.parse(r.body!.toString('utf8')) as ConsumerConnection) : null };
  };

  before(async () => {
    h = await startHarness();
    metrics = new BrokerMetrics();
    metrics.attach(h.broker);
  });

  after(async () => {
    await simple?.shutdown().catch(() => {});
    await push?.shutdown().catch(() => {});
    await remoting.close();
    await h?.stop();
  });

  /** Asks 203 every 100 ms until `done` holds; returns that answer. */
  const until = async (done: (r: Awaited<ReturnType<typeof connections>>) => boolean, group = 'CC_G'): Promise<Awaited<ReturnType<typeof connections>>> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const r = await connections(group);
      if (done(r)) return r;
      if (Date.now() > deadline) throw new Error(`timed out; last answer ${JSON.stringify(r)}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  };

  it('a user-agent version maps to its MQVersion release entry, anything else to V5_0_0', () => {
    assert.equal(versionDesc(clientVersionOrdinal('5.0.8')), 'V5_0_8');
    assert.equal(versionDesc(clientVersionOrdinal('4.9.4')), 'V4_9_4');
    assert.equal(versionDesc(clientVersionOrdinal('5.3.3')), 'V5_3_3');
    assert.equal(versionDesc(clientVersionOrdinal('1.0.8')), 'V5_0_0');
    assert.equal(versionDesc(clientVersionOrdinal(undefined)), 'V5_0_0');
  });

  it('lists a SimpleConsumer and a PushConsumer of one group with their subscription; both leaving → 206', async () => {
    assert.equal((await connections('CC_G')).code, ResponseCode.CONSUMER_NOT_ONLINE);
    simple = await startSimpleConsumer(h, 'CC_G', 'CC_T', 1000, 'TagA || TagB');
    push = await startPushConsumer(h, 'CC_G', 'CC_T', async () => 'SUCCESS' as never);
    const cc = (await until((r) => r.body?.connectionSet.length === 2)).body!;
    // a group with both kinds has the type of its latest registration (Apache ConsumerGroupInfo.updateChannel)
    assert.equal(cc.messageModel, 'CLUSTERING');
    assert.equal(cc.consumeFromWhere, 'CONSUME_FROM_LAST_OFFSET');
    for (const c of cc.connectionSet) {
      assert.equal(c.language, 'NODE_JS');
      assert.match(c.clientAddr, /^127\.0\.0\.1:\d+$/);
      assert.ok(c.clientId.length > 0);
      assert.equal(c.version, clientVersionOrdinal(nodeClientVersion), `user agent version ${nodeClientVersion}`);
    }
    assert.equal(new Set(cc.connectionSet.map((c) => c.clientId)).size, 2);
    assert.deepEqual(Object.keys(cc.subscriptionTable), ['CC_T']);
    assert.equal(cc.subscriptionTable.CC_T!.expressionType, 'TAG');

    await simple.shutdown();
    simple = null;
    await until((r) => r.body?.connectionSet.length === 1);
    await push.shutdown();
    push = null;
    const gone = await until((r) => r.code === ResponseCode.CONSUMER_NOT_ONLINE);
    assert.equal(gone.remark, 'the consumer group[CC_G] not online');
  });

  it('a SimpleConsumer group: CONSUME_ACTIVELY, consume_mode="pull"; a PushConsumer group: CONSUME_PASSIVELY, "push"; protocol_type="remoting"', async () => {
    const s1 = await startSimpleConsumer(h, 'CC_S', 'CC_T', 1000);
    const p1 = await startPushConsumer(h, 'CC_P', 'CC_T', async () => 'SUCCESS' as never);
    try {
      assert.equal((await until((r) => r.body?.connectionSet.length === 1, 'CC_S')).body!.consumeType, 'CONSUME_ACTIVELY');
      assert.equal((await until((r) => r.body?.connectionSet.length === 1, 'CC_P')).body!.consumeType, 'CONSUME_PASSIVELY');
      const text = await metrics.text();
      const series = text.split('\n').filter((l) => l.startsWith('rocketmq_consumer_connections{') && /consumer_group="CC_[SP]"/.test(l)).sort();
      const version = versionDesc(clientVersionOrdinal(nodeClientVersion)).toLowerCase();
      assert.deepEqual(series, [
        `rocketmq_consumer_connections{consumer_group="CC_P",language="node_js",version="${version}",consume_mode="push",protocol_type="remoting",is_system="false",cluster="DefaultCluster",node_type="broker",node_id="broker-a"} 1`,
        `rocketmq_consumer_connections{consumer_group="CC_S",language="node_js",version="${version}",consume_mode="pull",protocol_type="remoting",is_system="false",cluster="DefaultCluster",node_type="broker",node_id="broker-a"} 1`,
      ]);
    } finally {
      await s1.shutdown().catch(() => {});
      await p1.shutdown().catch(() => {});
    }
  });
});
