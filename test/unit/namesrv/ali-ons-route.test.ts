/**
 * End to end: a real ali-ons 3.12.0 Producer (in a child process, see
 * test/fixtures/remoting/ali-ons-route-client.cjs) fetches routes from our nameserver.
 * The nameserver port also answers HEART_BEAT (34) / UNREGISTER_CLIENT (35) with SUCCESS so the
 * client can start and close cleanly (ali-ons may use one port as nameserver and broker).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { NamesrvController } from '../../../src/namesrv/namesrv-controller.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand, createResponseCommand } from '../../../src/remoting/protocol/commands.js';
import type { RequestHandler } from '../../../src/remoting/processor/request-processor.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';

const CLIENT_SCRIPT = fileURLToPath(new URL('../../fixtures/remoting/ali-ons-route-client.cjs', import.meta.url));

function registerBody(topics: Record<string, [number, number]>): Buffer {
  const table: Record<string, unknown> = {};
  for (const [name, [nums, perm]] of Object.entries(topics)) {
    table[name] = { topicName: name, readQueueNums: nums, writeQueueNums: nums, perm, topicFilterType: 'SINGLE_TAG', topicSysFlag: 0, order: false };
  }
  return Buffer.from(JSON.stringify({
    topicConfigSerializeWrapper: { topicConfigTable: table, dataVersion: { stateVersion: 0, timestamp: 1, counter: 1 } },
    filterServerList: [],
  }));
}

function runClient(args: string[]): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLIENT_SCRIPT, ...args], { timeout: 15_000 }, (err, stdout) => {
      const line = stdout.trim().split('\n').pop() ?? '';
      if (err && !line) return reject(err);
      try {
        resolve(JSON.parse(line));
      } catch {
        reject(new Error(`unexpected client output: ${stdout}`));
      }
    });
  });
}

test('ali-ons Producer gets routes (known topic and TBW102 auto-create) from our nameserver', async (t) => {
  const ns = new NamesrvController({ listenPort: 0, host: '127.0.0.1' });
  await ns.start();
  const addr = `127.0.0.1:${ns.port}`;
  const seen: number[] = [];
  const ok: RequestHandler = ({ request }) => {
    seen.push(request.code);
    return createResponseCommand(request, 0);
  };
  ns.server.registerProcessor(RequestCode.HEART_BEAT, ok);
  ns.server.registerProcessor(RequestCode.UNREGISTER_CLIENT, ok);
  const routeRequests: string[] = [];
  const brokerSide = new RemotingClient();
  t.after(async () => {
    await brokerSide.close();
    await ns.shutdown();
  });
  // count the 105 exchanges while keeping the real processor
  const { getRouteInfoByTopicProcessor } = await import('../../../src/namesrv/processors/get-route-info-by-topic.js');
  const real = getRouteInfoByTopicProcessor({ routes: ns.routes, kv: ns.kv, logger: { info() {}, warn() {}, error() {}, debug() {}, child() { return this; } } });
  ns.server.registerProcessor(RequestCode.GET_ROUTEINFO_BY_TOPIC, (ctx) => {
    routeRequests.push(String(ctx.request.extFields?.topic));
    return real(ctx);
  });

  // the "broker" lives at the nameserver's own address
  const reg = await brokerSide.invokeSync(addr, createRequestCommand(RequestCode.REGISTER_BROKER, {
    brokerName: 'broker-a', brokerAddr: addr, clusterName: 'DefaultCluster', haServerAddr: '127.0.0.1:1', brokerId: 0,
  }, registerBody({ TopicKnown: [2, 6], TBW102: [8, 7] })), 3000);
  assert.equal(reg.code, 0);

  const out = await runClient([addr, 'TopicKnown', 'TopicBrandNew']);
  assert.equal(out.error, undefined, out.error);
  assert.deepEqual(out.queues, {
    TopicKnown: ['broker-a/0', 'broker-a/1'],
    TopicBrandNew: ['broker-a/0', 'broker-a/1', 'broker-a/2', 'broker-a/3'],
  });
  assert.deepEqual(out.routes.TopicKnown, {
    brokerDatas: [{ brokerAddrs: { 0: addr }, brokerName: 'broker-a', cluster: 'DefaultCluster', enableActingMaster: false }],
    filterServerTable: {},
    queueDatas: [{ brokerName: 'broker-a', perm: 6, readQueueNums: 2, topicSysFlag: 0, writeQueueNums: 2 }],
  });
  assert.deepEqual(routeRequests, ['TopicKnown', 'TopicBrandNew']);
  assert.ok(seen.includes(RequestCode.UNREGISTER_CLIENT));
});
