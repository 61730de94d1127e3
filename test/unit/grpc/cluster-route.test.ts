/**
 * ClusterRoutes (src/grpc/cluster-route.ts): the other brokers of a topic from the nameserver's
 * GET_ROUTEINFO_BY_TOPIC answer (fastjson text with numeric brokerAddrs keys), the local broker
 * and brokers without a master left out; cached for cacheMs; TOPIC_NOT_EXIST gives TBW102's
 * brokers (the route the nameserver gave tsmq's own calls before session 10), unreachable
 * nameservers none.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { ClusterRoutes } from '../../../src/grpc/cluster-route.js';
import { createResponseCommand } from '../../../src/remoting/protocol/commands.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';

const ROUTE = `{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"C"},` +
  `{"brokerAddrs":{0:"127.0.0.2:10921",1:"127.0.0.3:10931"},"brokerName":"broker-b","cluster":"C"},` +
  `{"brokerAddrs":{1:"127.0.0.4:10941"},"brokerName":"broker-c","cluster":"C"}],` +
  `"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4},` +
  `{"brokerName":"broker-b","perm":4,"readQueueNums":2,"topicSysFlag":0,"writeQueueNums":3},` +
  `{"brokerName":"broker-c","perm":6,"readQueueNums":1,"topicSysFlag":0,"writeQueueNums":1}]}`;

describe('ClusterRoutes', () => {
  it('lists the other brokers with a master, from the route, and caches it', async () => {
    let now = 0;
    const asked: string[] = [];
    const client = {
      invokeSync: async (addr: string, req: RemotingCommand): Promise<RemotingCommand> => {
        asked.push(`${addr} ${req.code} ${req.extFields?.topic}`);
        if (addr === 'down:9876') throw new Error('connect ECONNREFUSED');
        return createResponseCommand(req, ResponseCode.SUCCESS, null, null, Buffer.from(ROUTE));
      },
    };
    const routes = new ClusterRoutes({ client, namesrvAddrs: () => ['down:9876', 'ns:9876'], localBrokerName: 'broker-a', now: () => now, cacheMs: 1000, logger: silentLogger });
    const want = [{ brokerName: 'broker-b', host: '127.0.0.2', readQueueNums: 2, writeQueueNums: 3, perm: 4 }];
    assert.deepEqual(await routes.otherBrokers('T'), want);
    assert.deepEqual(asked, ['down:9876 105 T', 'ns:9876 105 T']);
    now = 999;
    assert.deepEqual(await routes.otherBrokers('T'), want);
    assert.equal(asked.length, 2, 'cached');
    now = 1000;
    await routes.otherBrokers('T');
    assert.equal(asked.length, 4, 'asked again after cacheMs');
  });

  it('an unknown topic (17 TOPIC_NOT_EXIST): the other brokers of TBW102 with min(4, write queues) and perm without inherit; none without a TBW102 route', async () => {
    const TBW102 = `{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"broker-a"},{"brokerAddrs":{0:"127.0.0.2:10921"},"brokerName":"broker-b"}],` +
      `"queueDatas":[{"brokerName":"broker-a","perm":7,"readQueueNums":8,"writeQueueNums":8},{"brokerName":"broker-b","perm":7,"readQueueNums":8,"writeQueueNums":8}]}`;
    const asked: string[] = [];
    const withTemplate = {
      invokeSync: async (_addr: string, req: RemotingCommand) => {
        asked.push(String(req.extFields?.topic));
        return req.extFields?.topic === 'TBW102' ? createResponseCommand(req, ResponseCode.SUCCESS, null, null, Buffer.from(TBW102)) : createResponseCommand(req, ResponseCode.TOPIC_NOT_EXIST, 'No topic route info in name server for the topic: X');
      },
    };
    assert.deepEqual(await new ClusterRoutes({ client: withTemplate, namesrvAddrs: () => ['ns:1'], localBrokerName: 'broker-a', now: () => 0, logger: silentLogger }).otherBrokers('X'), [
      { brokerName: 'broker-b', host: '127.0.0.2', readQueueNums: 4, writeQueueNums: 4, perm: 6 },
    ]);
    assert.deepEqual(asked, ['X', 'TBW102']);
    const notFound = { invokeSync: async (_addr: string, req: RemotingCommand) => createResponseCommand(req, ResponseCode.TOPIC_NOT_EXIST, 'No topic route info in name server for the topic: X') };
    assert.deepEqual(await new ClusterRoutes({ client: notFound, namesrvAddrs: () => ['ns:1'], localBrokerName: 'a', now: () => 0, logger: silentLogger }).otherBrokers('X'), []);
    const down = { invokeSync: async (): Promise<RemotingCommand> => { throw new Error('timeout'); } };
    assert.deepEqual(await new ClusterRoutes({ client: down, namesrvAddrs: () => ['ns:1'], localBrokerName: 'a', now: () => 0, logger: silentLogger }).otherBrokers('X'), []);
  });
});
