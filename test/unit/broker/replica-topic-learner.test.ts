/**
 * A slave learns the config of a topic it replicated messages of (src/broker/ha/
 * replica-topic-learner.ts) instead of answering TOPIC_NOT_EXIST until its next periodic sync.
 * One in-process ASYNC_MASTER and one SLAVE (real stores, real HA socket, PULL_MESSAGE over
 * remoting); the slave's periodic sync is pushed out to 10 min, its master's remoting address is
 * given the way a registration reply gives it.
 *
 * 1. The master has the topic (8 queues), a message reaches queue 1: the slave fetches the
 *    master's table at once — its config equals the master's (8 queues, not 2) — and a pull
 *    from the slave returns the message.
 * 2. The master has no config for the topic (messages without one): the slave asked, the master
 *    answered without it, so the slave still answers TOPIC_NOT_EXIST (17).
 * 3. The master's remoting address does not answer (a dead master): the slave serves the
 *    replicated messages with a config made from its ConsumeQueues (queues = highest id + 1).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { SLAVE_SYNC_FIRST_DELAY_MS } from '../../../src/broker/ha/slave-synchronize.js';
import { newTopicConfig } from '../../../src/broker/topic/topic-config.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { freePort, waitUntil } from '../../support/ha-cluster.js';
import { makeMessage, removeDir, tempDir } from '../../support/store-fixtures.js';

describe('a slave learns replicated topics (no TOPIC_NOT_EXIST window)', { timeout: 60_000 }, () => {
  const dirs: string[] = [];
  let master: BrokerController;
  let slave: BrokerController;
  const client = new RemotingClient({ logger: silentLogger });
  const conf = (extra: Record<string, string>): Record<string, string> => {
    const dir = tempDir('tsmq-learner-');
    dirs.push(dir);
    return { storePathRootDir: dir, listenPort: '0', namesrvAddr: '', brokerIP1: '127.0.0.1', slaveSynchronizeInterval: '600000', ...extra };
  };
  const pullFromSlave = (topic: string, queueId: number): Promise<RemotingCommand> =>
    client.invokeSync(
      `127.0.0.1:${slave.port}`,
      createRequestCommand(RequestCode.PULL_MESSAGE, {
        consumerGroup: 'GID_LEARNER', topic, queueId, queueOffset: 0, maxMsgNums: 32, sysFlag: 4, commitOffset: 0,
        suspendTimeoutMillis: 0, subscription: '*', subVersion: 1, expressionType: 'TAG',
      }),
      10_000,
    );
  const bodies = (r: RemotingCommand): string[] => {
    const out: string[] = [];
    for (let pos = 0, b = r.body ?? Buffer.alloc(0); pos < b.length; ) {
      const size = b.readInt32BE(pos);
      out.push(decodeRecord(b, pos).body.toString());
      pos += size;
    }
    return out;
  };
  const replicated = (topic: string, queueId: number, n: number): Promise<void> =>
    waitUntil(() => slave.ctx.store.getMaxOffsetInQueue(topic, queueId) === n, 10_000, () => `${topic}/${queueId} not replicated`);
  const tellSlaveItsMaster = async (masterAddr: string): Promise<void> => {
    slave.replication!.onRegistered([{ namesrvAddr: 'test', ok: true, masterAddr }]);
    await slave.replication!.syncNow(); // the round a new master address starts is over before the topic exists
  };

  before(async () => {
    const haPort = await freePort();
    master = await BrokerController.create({ brokerConfig: conf({ brokerRole: 'ASYNC_MASTER', haListenPort: String(haPort) }), logger: silentLogger });
    await master.start();
    slave = await BrokerController.create({ brokerConfig: conf({ brokerRole: 'SLAVE', brokerId: '1', haMasterAddress: `127.0.0.1:${haPort}` }), logger: silentLogger });
    await slave.start();
    // the slave's first periodic round runs SLAVE_SYNC_FIRST_DELAY_MS after start; the next one in 10 min
    await new Promise((r) => setTimeout(r, SLAVE_SYNC_FIRST_DELAY_MS + 500));
  });

  after(async () => {
    await client.close();
    await slave?.shutdown();
    await master?.shutdown();
    for (const d of dirs) removeDir(d);
  });

  it("learns the master's config of the topic at once and serves the pull", async () => {
    await tellSlaveItsMaster(`127.0.0.1:${master.port}`);
    master.ctx.topicConfigManager.updateTopicConfig(newTopicConfig('LearnedTopic', { readQueueNums: 8, writeQueueNums: 8, perm: 6 }));
    assert.equal(slave.ctx.topicConfigManager.selectTopicConfig('LearnedTopic'), undefined, 'not synced yet');
    assert.equal((await master.ctx.putMessage(makeMessage({ topic: 'LearnedTopic', queueId: 1, body: 'learned-0' }))).status, 'PUT_OK');
    await replicated('LearnedTopic', 1, 1);
    await waitUntil(() => slave.ctx.topicConfigManager.selectTopicConfig('LearnedTopic') !== undefined, 5000, () => 'topic not learned');
    assert.deepEqual(slave.ctx.topicConfigManager.selectTopicConfig('LearnedTopic'), master.ctx.topicConfigManager.selectTopicConfig('LearnedTopic'));
    const r = await pullFromSlave('LearnedTopic', 1);
    assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    assert.deepEqual(bodies(r), ['learned-0']);
  });

  it('a topic the master has no config for stays unknown: TOPIC_NOT_EXIST', async () => {
    assert.equal((await master.ctx.putMessage(makeMessage({ topic: 'NoConfigTopic', queueId: 0, body: 'x' }))).status, 'PUT_OK');
    await replicated('NoConfigTopic', 0, 1);
    const r = await pullFromSlave('NoConfigTopic', 0);
    assert.equal(r.code, ResponseCode.TOPIC_NOT_EXIST, r.remark ?? '');
    assert.equal(slave.ctx.topicConfigManager.selectTopicConfig('NoConfigTopic'), undefined);
  });

  it('with the master unreachable, the replicated messages are served with a config from the ConsumeQueues', async () => {
    await tellSlaveItsMaster(`127.0.0.1:${await freePort()}`); // nothing listens there
    master.ctx.topicConfigManager.updateTopicConfig(newTopicConfig('OrphanTopic', { readQueueNums: 4, writeQueueNums: 4, perm: 6 }));
    for (const body of ['o-0', 'o-1']) assert.equal((await master.ctx.putMessage(makeMessage({ topic: 'OrphanTopic', queueId: 2, body }))).status, 'PUT_OK');
    await replicated('OrphanTopic', 2, 2);
    const r = await pullFromSlave('OrphanTopic', 2);
    assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    assert.deepEqual(bodies(r), ['o-0', 'o-1']);
    const tc = slave.ctx.topicConfigManager.selectTopicConfig('OrphanTopic');
    assert.deepEqual([tc?.readQueueNums, tc?.writeQueueNums, tc?.perm], [3, 3, 6]);
  });
});
