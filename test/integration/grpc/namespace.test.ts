/**
 * Namespaces of RocketMQ 5 clients on the gRPC front (rocketmq-client-java
 * `ClientConfiguration.setNamespace`, rocketmq-client-nodejs `namespace`): resources with a
 * `resource_namespace` address the wrapped topic and group `<ns>%<name>` — the names a 4.x remoting
 * client with `setNamespace` uses — and answers split them again, as Apache's proxy does.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoIncludeDir } from '../../../src/grpc/proto/messaging-service.js';
import { startHarness, type Harness } from './grpc-harness.js';
import { startProducer } from './grpc-clients.js';
import { rawInvoke } from '../../support/raw-remoting.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';

type Client = grpc.Client & Record<string, (...args: unknown[]) => unknown>;

function newClient(endpoints: string): Client {
  const def = protoLoader.loadSync('apache/rocketmq/v2/service.proto', { includeDirs: [protoIncludeDir()], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { apache: { rocketmq: { v2: { MessagingService: new (a: string, c: grpc.ChannelCredentials) => Client } } } };
  return new pkg.apache.rocketmq.v2.MessagingService(endpoints, grpc.credentials.createInsecure());
}

const metadata = (): grpc.Metadata => {
  const md = new grpc.Metadata();
  md.set('x-mq-client-id', 'ns-client@1');
  return md;
};

function call<T>(c: Client, rpc: string, req: object): Promise<T> {
  return new Promise((resolve, reject) => (c[rpc] as (r: object, m: grpc.Metadata, cb: (e: Error | null, r: T) => void) => void).call(c, req, metadata(), (e, r) => (e ? reject(e) : resolve(r))));
}

function stream<T>(c: Client, rpc: string, req: object): Promise<T[]> {
  const s = (c[rpc] as (r: object, m: grpc.Metadata, o: grpc.CallOptions) => grpc.ClientReadableStream<T>).call(c, req, metadata(), { deadline: Date.now() + 10_000 });
  const out: T[] = [];
  return new Promise((resolve, reject) => {
    s.on('data', (d: T) => out.push(d));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

describe('gRPC resource namespaces', { timeout: 30_000 }, () => {
  let h: Harness;
  let client: Client;
  const topic = { name: 'NS_T', resource_namespace: 'ns1' };

  before(async () => {
    h = await startHarness();
    client = newClient(h.endpoints);
    const created = await rawInvoke(`127.0.0.1:${h.broker.port}`, { code: RequestCode.UPDATE_AND_CREATE_TOPIC, extFields: { topic: 'ns1%NS_T', readQueueNums: '2', writeQueueNums: '2', perm: '6', topicFilterType: 'SINGLE_TAG', topicSysFlag: '0', order: 'false' } });
    assert.equal(created.header.code, 0);
  });

  after(async () => {
    client?.close();
    await h?.stop();
  });

  it('QueryRoute of {NS_T, ns1} finds topic ns1%NS_T and answers its queues as {name NS_T, resource_namespace ns1}', async () => {
    const r = await call<{ status: { code: string }; message_queues: Array<{ topic: { name: string; resource_namespace: string } }> }>(client, 'QueryRoute', { topic, endpoints: { scheme: 'IPv4', addresses: [{ host: '127.0.0.1', port: 1 }] } });
    assert.equal(r.status.code, 'OK');
    assert.equal(r.message_queues.length, 2);
    for (const q of r.message_queues) assert.deepEqual(q.topic, { name: 'NS_T', resource_namespace: 'ns1' });
  });

  it('rocketmq-client-nodejs Producer with namespace ns1 stores in ns1%NS_T, nothing under NS_T; ReceiveMessage/AckMessage with group {G, ns1} read them back named {NS_T, ns1}', async () => {
    const p = await startProducer(h, ['NS_T'], { namespace: 'ns1' });
    try {
      for (let i = 0; i < 3; i++) await p.send({ topic: 'NS_T', tag: 'T', keys: [`nk-${i}`], body: Buffer.from(`ns-${i}`) } as never);
    } finally {
      await p.shutdown();
    }
    const store = h.broker.ctx.store;
    assert.equal(store.getMaxOffsetInQueue('ns1%NS_T', 0) + store.getMaxOffsetInQueue('ns1%NS_T', 1), 3);
    // (rocketmq-client-nodejs 1.0.8 asks its start-up QueryRoute without the namespace, so a bare
    // NS_T may be auto-created beside it; its sends carry the namespace.)
    assert.equal(store.getMaxOffsetInQueue('NS_T', 0) + store.getMaxOffsetInQueue('NS_T', 1), 0, 'nothing stored under the bare name');

    const bodies: string[] = [];
    for (const id of [0, 1]) {
      const got = await stream<Record<string, unknown>>(client, 'ReceiveMessage', {
        group: { name: 'G', resource_namespace: 'ns1' },
        message_queue: { topic, id, permission: 'READ_WRITE', accept_message_types: [] },
        filter_expression: { type: 'TAG', expression: '*' },
        batch_size: 32,
        invisible_duration: { seconds: 30, nanos: 0 },
        long_polling_timeout: { seconds: 0, nanos: 0 },
      });
      for (const part of got.filter((x) => x.content === 'message')) {
        const m = part.message as { topic: { name: string; resource_namespace: string }; body: Buffer; system_properties: { receipt_handle: string; message_id: string } };
        assert.deepEqual(m.topic, { name: 'NS_T', resource_namespace: 'ns1' });
        bodies.push(m.body.toString());
        const ack = await call<{ status: { code: string } }>(client, 'AckMessage', { group: { name: 'G', resource_namespace: 'ns1' }, topic, entries: [{ message_id: m.system_properties.message_id, receipt_handle: m.system_properties.receipt_handle }] });
        assert.equal(ack.status.code, 'OK');
      }
    }
    assert.deepEqual(bodies.sort(), ['ns-0', 'ns-1', 'ns-2']);
    // counted as consumption of the wrapped names (GROUP_GET_NUMS → rocketmq_messages_out_total)
    assert.equal(h.broker.ctx.brokerStats.getStatsItem('GROUP_GET_NUMS', 'ns1%NS_T@ns1%G')?.value, 3);
  });
});
