/**
 * REGISTER_BROKER bounds on a real nameserver: too many topics (default cap) and a body above
 * registerBrokerMaxBodyBytes are refused with a clear remark and leave the routes untouched; a
 * normal registration and route query work afterwards.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { NamesrvController } from '../../../src/namesrv/namesrv-controller.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { resolveRegistrationLimits } from '../../../src/namesrv/route/registration-limits.js';

function registrationBody(topics: string[], padding = 0): Buffer {
  const table: Record<string, unknown> = {};
  for (const t of topics) table[t] = { topicName: t, readQueueNums: 1, writeQueueNums: 1, perm: 6 };
  return Buffer.from(JSON.stringify({ topicConfigSerializeWrapper: { topicConfigTable: table, dataVersion: { stateVersion: 0, timestamp: 1, counter: 1 } }, filterServerList: [], pad: 'p'.repeat(padding) }));
}

describe('nameserver registration bounds', { timeout: 60_000 }, () => {
  const servers: NamesrvController[] = [];
  const client = new RemotingClient({ logger: silentLogger });

  const start = async (raw: Record<string, string>): Promise<string> => {
    const n = new NamesrvController({ listenPort: 0, host: '127.0.0.1', logger: silentLogger, registrationLimits: resolveRegistrationLimits(raw) });
    await n.start();
    servers.push(n);
    return `127.0.0.1:${n.port}`;
  };
  const register = (addr: string, brokerName: string, body: Buffer) => client.invokeSync(addr,
    createRequestCommand(RequestCode.REGISTER_BROKER, { brokerName, brokerAddr: '127.0.0.1:10911', clusterName: 'C', haServerAddr: '127.0.0.1:10912', brokerId: 0 }, body), 10_000);
  const route = (addr: string, topic: string) => client.invokeSync(addr, createRequestCommand(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic }), 5000);

  before(async () => {});
  after(async () => {
    await client.close();
    for (const s of servers) await s.shutdown();
  });

  it('120,000 topics in one registration exceed the default registerBrokerMaxTopicNums', async () => {
    const addr = await start({});
    const body = registrationBody(Array.from({ length: 120_000 }, (_, i) => `T${i}`));
    assert.ok(body.length < 16 * 1024 * 1024);
    const r = await register(addr, 'fake', body);
    assert.equal(r.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(r.remark, 'register broker body carries 120000 topics, more than registerBrokerMaxTopicNums=100000');
    assert.equal((await route(addr, 'T1')).code, ResponseCode.TOPIC_NOT_EXIST);
    const ok = await register(addr, 'real', registrationBody(['RealTopic', 'TBW102']));
    assert.equal(ok.code, ResponseCode.SUCCESS);
    assert.equal((await route(addr, 'RealTopic')).code, ResponseCode.SUCCESS);
  });

  it('a body above registerBrokerMaxBodyBytes is refused before it is parsed', async () => {
    const addr = await start({ registerBrokerMaxBodyBytes: String(1024 * 1024) });
    const body = registrationBody(['PaddedTopic'], 2 * 1024 * 1024);
    const r = await register(addr, 'fake', body);
    assert.equal(r.code, ResponseCode.SYSTEM_ERROR);
    assert.equal(r.remark, `register broker body of ${body.length} bytes exceeds registerBrokerMaxBodyBytes=1048576`);
    assert.equal((await route(addr, 'PaddedTopic')).code, ResponseCode.TOPIC_NOT_EXIST);
    assert.equal((await register(addr, 'real', registrationBody(['RealTopic', 'TBW102']))).code, ResponseCode.SUCCESS);
    assert.equal((await route(addr, 'RealTopic')).code, ResponseCode.SUCCESS);
  });
});
