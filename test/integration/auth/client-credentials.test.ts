/**
 * ACL 2.0 judged by the two Node clients tsmq supports, with their own signing code:
 *   - ali-ons 3.12 (remoting) with `accessKey`/`secretKey` (it signs AccessKey + OnsChannel + the
 *     header fields + body like AclClientRPCHook);
 *   - rocketmq-client-nodejs 1.0.8 (gRPC) with `sessionCredentials` (MQv2-HMAC-SHA1 metadata).
 * One nameserver, one broker with authenticationEnabled + authorizationEnabled, its gRPC front.
 * User alice may Pub/Sub topic CredT and Sub groups CredG*; each client sends and receives as alice,
 * and a client with a wrong secret is refused with Apache's remark.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Producer, SimpleConsumer } from 'rocketmq-client-nodejs';
import { NamesrvController } from '../../../src/namesrv/namesrv-controller.js';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { GrpcFront } from '../../../src/grpc/grpc-front.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { signRemotingCommand } from '../../../src/auth/acl-signature.js';
import { createConsumer, newMessage, startProducer, type OnsConsumer, type OnsMessage } from '../../support/ali-ons-client.js';
import { quietClientLogger } from '../grpc/grpc-harness.js';
import { waitUntil } from '../../support/ha-cluster.js';

const ROOT = { accessKey: 'root', secretKey: 'root-secret-1' };
const ALICE = { accessKey: 'alice', secretKey: 'alice-secret-1' };
const TOPIC = 'CredT';

describe('ACL 2.0 with the Node clients\' own credentials: ali-ons (remoting) and rocketmq-client-nodejs (gRPC)', { timeout: 120_000 }, () => {
  let dir = '';
  let namesrv: NamesrvController;
  let broker: BrokerController;
  let front: GrpcFront;
  let admin: RemotingClient;
  const closers: Array<() => Promise<unknown>> = [];

  async function adminCall(code: number, ext: Record<string, string>, body: object | null): Promise<void> {
    const cmd = createRequestCommand(code, ext, body ? Buffer.from(JSON.stringify(body)) : null);
    const r = await admin.invokeSync(broker.brokerAddr, signRemotingCommand(cmd, ROOT), 3000);
    assert.equal(r.code, ResponseCode.SUCCESS, `${code}: ${r.remark}`);
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsmq-cred-'));
    namesrv = new NamesrvController({ listenPort: 0, host: '127.0.0.1' });
    await namesrv.start();
    const raw: Record<string, string> = {
      storePathRootDir: dir,
      listenPort: '0',
      haListenPort: '0',
      bindAddress: '127.0.0.1',
      namesrvAddr: `127.0.0.1:${namesrv.port}`,
      mappedFileSizeCommitLog: String(4 * 1024 * 1024),
      grpcListenHost: '127.0.0.1',
      grpcListenPort: '0',
      authenticationEnabled: 'true',
      authorizationEnabled: 'true',
      initAuthenticationUser: JSON.stringify({ username: ROOT.accessKey, password: ROOT.secretKey }),
    };
    broker = await BrokerController.create({ brokerConfig: raw, logger: silentLogger });
    await broker.start();
    front = await GrpcFront.create({ ctx: broker.ctx, pop: broker.popService, rawConfig: raw, transactions: broker.transactionService, logger: silentLogger, auth: { config: broker.authConfig, metadata: broker.authMetadata } });
    await front.start();
    admin = new RemotingClient();
    await adminCall(RequestCode.UPDATE_AND_CREATE_TOPIC, { topic: TOPIC, defaultTopic: 'TBW102', readQueueNums: '2', writeQueueNums: '2', perm: '6', topicFilterType: 'SINGLE_TAG' }, null);
    await adminCall(RequestCode.AUTH_CREATE_USER, { username: ALICE.accessKey }, { username: ALICE.accessKey, password: ALICE.secretKey });
    await adminCall(RequestCode.AUTH_CREATE_ACL, { subject: `User:${ALICE.accessKey}` }, {
      subject: `User:${ALICE.accessKey}`,
      policies: [{ entries: [
        { resource: `Topic:${TOPIC}`, actions: ['Pub', 'Sub'], decision: 'Allow' },
        { resource: 'Group:CredG*', actions: ['Sub'], decision: 'Allow' },
      ] }],
    });
    // the route reaches the nameserver with the broker's next registration
    const route = new RemotingClient();
    try {
      await waitUntil(async () => (await route.invokeSync(`127.0.0.1:${namesrv.port}`, createRequestCommand(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: TOPIC }), 3000)).code === ResponseCode.SUCCESS, 40_000, () => 'route of CredT on the nameserver');
    } finally {
      await route.close();
    }
  });

  after(async () => {
    for (const c of closers.reverse()) await c().catch(() => {});
    await admin?.close();
    await front?.shutdown();
    await broker?.shutdown();
    await namesrv?.shutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ali-ons with accessKey/secretKey: alice sends and her push consumer receives; a wrong secret is refused', async () => {
    const nameSrv = `127.0.0.1:${namesrv.port}`;
    const producer = await startProducer(nameSrv, 'PID_CRED', { accessKey: ALICE.accessKey, secretKey: ALICE.secretKey });
    closers.push(() => producer.close());
    const sent = await producer.send(newMessage(TOPIC, 'TagA', Buffer.from('signed by ali-ons'), ['ons-1']));
    assert.equal(sent.sendStatus, 'SEND_OK');
    const got: string[] = [];
    const consumer: OnsConsumer = createConsumer(nameSrv, 'CredG_ons', { accessKey: ALICE.accessKey, secretKey: ALICE.secretKey });
    closers.push(() => consumer.close());
    consumer.subscribe(TOPIC, '*', async (msg: OnsMessage) => {
      got.push(msg.body.toString());
    });
    await consumer.ready();
    await waitUntil(() => got.includes('signed by ali-ons'), 30_000, () => `received ${JSON.stringify(got)}`);

    // ali-ons shares one client (and its credentials) per instanceName: the others need their own
    // ali-ons retries a NO_PERMISSION (16) reply and then reports only "still failed"; the store
    // shows that nothing was written
    const stored = (): number => [0, 1].reduce((n, q) => n + broker.ctx.store.getMaxOffsetInQueue(TOPIC, q), 0);
    const before = stored();
    const forger = await startProducer(nameSrv, 'PID_CRED_BAD', { accessKey: ALICE.accessKey, secretKey: 'not-her-secret', instanceName: 'forger' });
    closers.push(() => forger.close());
    await assert.rejects(forger.send(newMessage(TOPIC, 'TagA', Buffer.from('forged'), ['ons-2'])), /still failed/);
    const anonymous = await startProducer(nameSrv, 'PID_CRED_ANON', { instanceName: 'anonymous' });
    closers.push(() => anonymous.close());
    await assert.rejects(anonymous.send(newMessage(TOPIC, 'TagA', Buffer.from('unsigned'), ['ons-3'])), /still failed/);
    assert.equal(stored(), before, 'no refused message was stored');
    assert.deepEqual(got, ['signed by ali-ons']);
  });

  it('rocketmq-client-nodejs with sessionCredentials: alice sends and her SimpleConsumer receives; a wrong secret is refused', async () => {
    const endpoints = `127.0.0.1:${front.port}`;
    const producer = new Producer({ endpoints, topics: [TOPIC], logger: quietClientLogger, requestTimeout: 3000, sessionCredentials: { accessKey: ALICE.accessKey, accessSecret: ALICE.secretKey } } as never);
    await producer.startup();
    closers.push(() => producer.shutdown());
    const receipt = await producer.send({ topic: TOPIC, tag: 'TagG', body: Buffer.from('signed by grpc'), keys: ['grpc-1'] } as never);
    assert.ok(receipt.messageId);
    const consumer = new SimpleConsumer({ endpoints, consumerGroup: 'CredG_grpc', subscriptions: new Map([[TOPIC, 'TagG']]), awaitDuration: 1000, logger: quietClientLogger, requestTimeout: 3000, sessionCredentials: { accessKey: ALICE.accessKey, accessSecret: ALICE.secretKey } } as never);
    await consumer.startup();
    closers.push(() => consumer.shutdown());
    let body = '';
    await waitUntil(async () => {
      for (const m of await consumer.receive(4, 10_000)) {
        body = m.body.toString();
        await consumer.ack(m);
      }
      return body === 'signed by grpc';
    }, 30_000, () => `received ${body}`);

    const forger = new Producer({ endpoints, topics: [TOPIC], logger: quietClientLogger, requestTimeout: 3000, sessionCredentials: { accessKey: ALICE.accessKey, accessSecret: 'not-her-secret' } } as never);
    await assert.rejects(forger.startup(), (e: Error) => {
      // the client wraps the refusal: startup failed <- route fetch failed <- UnauthorizedException
      let chain = '';
      for (let c: unknown = e; c instanceof Error; c = c.cause) chain += ` <- ${c.message}`;
      assert.match(chain, /response-code=40100\] check signature failed/, chain);
      return true;
    });
    await forger.shutdown().catch(() => {});
  });
});
