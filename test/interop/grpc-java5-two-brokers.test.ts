/**
 * rocketmq-client-java 5.0.8 on a 2-broker cluster (one nameserver, broker-a and broker-b, each
 * with its own gRPC front), as Apache's proxy in LOCAL mode routes it: QueryRoute / QueryAssignment
 * at broker-a's front list broker-b's queues too, with broker-b's endpoint = its brokerIP1 and the
 * SAME gRPC port (Apache's convention: every broker's proxy listens on one grpcServerPort). The two
 * brokers therefore listen on 127.0.0.1:P and 127.0.0.2:P. The client, given only broker-a's
 * address, sends to both brokers and a SimpleConsumer receives from both.
 * Skips when `java` or `mvn` is not installed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { silentLogger } from '../../src/common/logging/logger.js';
import { NamesrvController } from '../../src/namesrv/namesrv-controller.js';
import { BrokerController } from '../../src/broker/broker-controller.js';
import { DefaultMessageStore } from '../../src/store/default-message-store.js';
import { resolveStoreConfig } from '../../src/store/store-config.js';
import { GrpcFront } from '../../src/grpc/grpc-front.js';
import { RemotingClient } from '../../src/remoting/transport/remoting-client.js';
import { invokeInProcess } from '../../src/console/in-process-request.js';
import { createRequestCommand } from '../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../src/remoting/codes/response-code.js';
import { assertRanOk, buildPeer, javaSkipReason, runJava, type BuiltPeer } from './support/java-peers.js';

const MAIN = 'tsmq.interop.grpc5.Grpc5Peer';
const TOPIC = 'G5_TWO_BROKERS';
const N = 12;

interface Node {
  dir: string;
  broker: BrokerController;
  front: GrpcFront;
}

describe('rocketmq-client-java 5.0.8 on two tsmq brokers (gRPC routes across brokers, as Apache local mode)', { skip: javaSkipReason(), timeout: 120_000 }, () => {
  let namesrv: NamesrvController;
  const nodes: Node[] = [];
  let peer: BuiltPeer;
  let grpcPort = 0;

  async function startNode(name: string, ip: string, port: number): Promise<Node> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tsmq-2b-${name}-`));
    const raw: Record<string, string> = {
      storePathRootDir: dir,
      brokerName: name,
      brokerIP1: ip,
      listenPort: '0',
      namesrvAddr: `127.0.0.1:${namesrv.port}`,
      mappedFileSizeCommitLog: String(16 * 1024 * 1024),
      grpcListenHost: ip,
      grpcListenPort: String(port),
    };
    const store = await DefaultMessageStore.open(resolveStoreConfig(raw), { logger: silentLogger });
    const broker = await BrokerController.create({ brokerConfig: raw, store, logger: silentLogger });
    await broker.start();
    const front = (await GrpcFront.startBeside(broker, raw, silentLogger))!;
    return { dir, broker, front };
  }

  before(async () => {
    const built = buildPeer('grpc5');
    namesrv = new NamesrvController({ listenPort: 0, host: '127.0.0.1', logger: silentLogger });
    await namesrv.start();
    nodes.push(await startNode('broker-a', '127.0.0.1', 0));
    grpcPort = nodes[0]!.front.port;
    nodes.push(await startNode('broker-b', '127.0.0.2', grpcPort));
    for (const n of nodes) {
      const r = await invokeInProcess(n.broker, createRequestCommand(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: TOPIC, readQueueNums: '2', writeQueueNums: '2', perm: '6', topicFilterType: 'SINGLE_TAG', topicSysFlag: '0', order: 'false' }));
      assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    }
    // both brokers registered the topic with the nameserver (a topic change registers at once)
    const client = new RemotingClient({ logger: silentLogger });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = await client.invokeSync(`127.0.0.1:${namesrv.port}`, createRequestCommand(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: TOPIC }), 3000).catch(() => null);
      const body = r?.body?.toString('utf8') ?? '';
      if (body.includes('broker-a') && body.includes('broker-b')) break;
      if (Date.now() > deadline) throw new Error(`the nameserver route of ${TOPIC} never listed both brokers: ${body}`);
      await new Promise((res) => setTimeout(res, 200));
    }
    await client.close();
    peer = await built;
  });

  after(async () => {
    for (const n of nodes.reverse()) {
      await n.front.shutdown();
      await n.broker.shutdown();
      fs.rmSync(n.dir, { recursive: true, force: true });
    }
    await namesrv?.shutdown();
  });

  it(`a client given only broker-a's endpoint sends ${N} messages over both brokers and receives all of them from both`, async (t) => {
    const run = await runJava(peer, MAIN, [`127.0.0.1:${grpcPort}`, 'send-receive', `topic=${TOPIC}`, 'group=G5_TWO_BROKERS_G', `n=${N}`], { timeoutMs: 60_000 });
    assertRanOk(run, 'Grpc5Peer send-receive');
    const lines = run.lines;
    const errors = lines.filter((l) => l.type === 'error');
    const stored = nodes.map((n) => {
      let count = 0;
      for (let q = 0; q < 2; q++) count += n.broker.ctx.store.getMaxOffsetInQueue(TOPIC, q);
      return count;
    });
    t.diagnostic(`stored per broker: ${stored.join(' / ')}`);
    await t.test('every send succeeds, and both brokers stored some of them (sends reach broker-b at 127.0.0.2:<same port>)', () => {
      assert.deepEqual(errors, [], run.stderr.slice(-3000));
      assert.equal(lines.filter((l) => l.type === 'sent').length, N);
      assert.equal(stored[0]! + stored[1]!, N);
      assert.ok(stored[0]! > 0 && stored[1]! > 0, `stored ${stored.join(' / ')}`);
    });
    await t.test('the SimpleConsumer receives and acks every message exactly once, from both brokers', () => {
      const recv = lines.filter((l) => l.type === 'recv');
      assert.deepEqual(recv.map((l) => l.key as string).sort(), Array.from({ length: N }, (_, i) => `sr-${i}`).sort());
      assert.deepEqual([...new Set(recv.map((l) => l.attempt))], [1]);
      assert.equal(lines.filter((l) => l.type === 'acked').length, N);
    });
  });
});
