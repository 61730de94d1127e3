/**
 * RPCs the Node client never calls, driven with a raw grpc-js client over the same protos:
 * QueryOffset / GetOffset / UpdateOffset / PullMessage (Java PullConsumer), plus error answers
 * (unknown topic, garbage receipt handle, bad invisible time), the Telemetry settings reply, and a
 * raw HTTP/2 Telemetry stream with the 60-year deadline rocketmq-client-java 5.0.x sends.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoIncludeDir } from '../../../src/grpc/proto/messaging-service.js';
import { startHarness, type Harness } from './grpc-harness.js';
import { rawInvoke } from '../../support/raw-remoting.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { decodeRecord } from '../../../src/common/message/record-codec.js';

type Client = grpc.Client & Record<string, (...args: unknown[]) => unknown>;

function newClient(endpoints: string): Client {
  const def = protoLoader.loadSync('apache/rocketmq/v2/service.proto', { includeDirs: [protoIncludeDir()], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { apache: { rocketmq: { v2: { MessagingService: new (a: string, c: grpc.ChannelCredentials) => Client } } } };
  return new pkg.apache.rocketmq.v2.MessagingService(endpoints, grpc.credentials.createInsecure());
}

/** Serializers of the Telemetry method (request TelemetryCommand, response TelemetryCommand). */
function telemetryCodec(): grpc.MethodDefinition<object, Record<string, unknown>> {
  const def = protoLoader.loadSync('apache/rocketmq/v2/service.proto', { includeDirs: [protoIncludeDir()], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { apache: { rocketmq: { v2: { MessagingService: { service: grpc.ServiceDefinition } } } } };
  return pkg.apache.rocketmq.v2.MessagingService.service.Telemetry as grpc.MethodDefinition<object, Record<string, unknown>>;
}

function call<T>(c: Client, rpc: string, req: object): Promise<T> {
  const md = new grpc.Metadata();
  md.set('x-mq-client-id', 'raw-client@1');
  return new Promise((resolve, reject) => (c[rpc] as (r: object, m: grpc.Metadata, cb: (e: Error | null, r: T) => void) => void).call(c, req, md, (e, r) => (e ? reject(e) : resolve(r))));
}

function stream<T>(c: Client, rpc: string, req: object): Promise<T[]> {
  const md = new grpc.Metadata();
  md.set('x-mq-client-id', 'raw-client@1');
  const s = (c[rpc] as (r: object, m: grpc.Metadata, o: grpc.CallOptions) => grpc.ClientReadableStream<T>).call(c, req, md, { deadline: Date.now() + 10_000 });
  const out: T[] = [];
  return new Promise((resolve, reject) => {
    s.on('data', (d: T) => out.push(d));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

const mq = (topic: string, id: number) => ({ topic: { name: topic }, id, permission: 'READ_WRITE', accept_message_types: [] });

describe('raw gRPC calls', { timeout: 30_000 }, () => {
  let h: Harness;
  let client: Client;

  before(async () => {
    h = await startHarness();
    client = newClient(h.endpoints);
  });

  after(async () => {
    client?.close();
    await h?.stop();
  });

  it('offsets and pull', async () => {
    const msg = (i: number) => ({
      topic: { name: 'RAW_T' },
      user_properties: {},
      body: Buffer.from(`raw-${i}`),
      system_properties: { keys: [`raw-${i}`], message_id: `RAW${i}`, body_encoding: 'IDENTITY', message_type: 'NORMAL', queue_id: 1, born_host: 'h' },
    });
    for (let i = 0; i < 3; i++) {
      const r = await call<{ status: { code: string }; entries: Array<{ offset: number }> }>(client, 'SendMessage', { messages: [msg(i)] });
      assert.equal(r.status.code, 'OK');
      assert.equal(r.entries[0]!.offset, i);
    }
    const end = await call<{ status: { code: string }; offset: number }>(client, 'QueryOffset', { message_queue: mq('RAW_T', 1), query_offset_policy: 'END' });
    assert.deepEqual([end.status.code, end.offset], ['OK', 3]);
    const begin = await call<{ offset: number }>(client, 'QueryOffset', { message_queue: mq('RAW_T', 1), query_offset_policy: 'BEGINNING' });
    assert.equal(begin.offset, 0);
    const none = await call<{ status: { code: string } }>(client, 'GetOffset', { group: { name: 'RAW_G' }, message_queue: mq('RAW_T', 1) });
    assert.equal(none.status.code, 'OFFSET_NOT_FOUND');
    assert.equal((await call<{ status: { code: string } }>(client, 'UpdateOffset', { group: { name: 'RAW_G' }, message_queue: mq('RAW_T', 1), offset: 2 })).status.code, 'OK');
    assert.equal((await call<{ status: { code: string } }>(client, 'UpdateOffset', { group: { name: 'RAW_G' }, message_queue: mq('RAW_T', 1), offset: 9 })).status.code, 'ILLEGAL_OFFSET');
    assert.equal((await call<{ offset: number }>(client, 'GetOffset', { group: { name: 'RAW_G' }, message_queue: mq('RAW_T', 1) })).offset, 2);
    const pulled = await stream<Record<string, unknown>>(client, 'PullMessage', { group: { name: 'RAW_G' }, message_queue: mq('RAW_T', 1), offset: 1, batch_size: 10, long_polling_timeout: { seconds: 0, nanos: 0 } });
    assert.deepEqual(pulled[0], { status: { code: 'OK', message: 'OK' }, content: 'status' });
    const bodies = pulled.filter((p) => p.content === 'message').map((p) => (p.message as { body: Buffer }).body.toString());
    assert.deepEqual(bodies, ['raw-1', 'raw-2']);
    assert.equal(pulled.at(-1)!.next_offset, 3);
    const t0 = Date.now();
    const empty = await stream<Record<string, unknown>>(client, 'PullMessage', { group: { name: 'RAW_G' }, message_queue: mq('RAW_T', 1), offset: 3, batch_size: 10, long_polling_timeout: { seconds: 1, nanos: 0 } });
    assert.equal((empty[0]!.status as { code: string }).code, 'MESSAGE_NOT_FOUND');
    assert.ok(Date.now() - t0 >= 900, 'long-polled');
  });

  it('error answers', async () => {
    const route = await call<{ status: { code: string } }>(client, 'QueryRoute', { topic: { name: 'bad topic!' } });
    assert.equal(route.status.code, 'ILLEGAL_TOPIC');
    const ack = await call<{ status: { code: string } }>(client, 'AckMessage', { group: { name: 'RAW_G' }, topic: { name: 'RAW_T' }, entries: [{ message_id: 'x', receipt_handle: 'garbage' }] });
    assert.equal(ack.status.code, 'INVALID_RECEIPT_HANDLE');
    const recv = await stream<Record<string, unknown>>(client, 'ReceiveMessage', { group: { name: 'RAW_G' }, message_queue: mq('RAW_T', 0), batch_size: 1, invisible_duration: { seconds: 100_000, nanos: 0 } });
    assert.deepEqual(recv[0]!.status, { code: 'ILLEGAL_INVISIBLE_TIME', message: 'the invisibleTime is too large. max is 43200000' }, 'Apache GrpcValidator text');
    const unknown = await stream<Record<string, unknown>>(client, 'ReceiveMessage', { group: { name: 'RAW_G' }, message_queue: mq('NO_SUCH_TOPIC', 0), batch_size: 1 });
    assert.equal((unknown[0]!.status as { code: string }).code, 'TOPIC_NOT_FOUND');
    const end = await call<{ status: { code: string } }>(client, 'EndTransaction', { topic: { name: 'RAW_T' }, message_id: 'x', transaction_id: 'nope', resolution: 'COMMIT', source: 'SOURCE_CLIENT' });
    assert.equal(end.status.code, 'INVALID_TRANSACTION_ID');
  });

  it('topic message.type (mqadmin updateTopic -a +message.type=FIFO): the route accepts FIFO only, a NORMAL send is refused, a FIFO send stored; an untyped topic accepts all four', async () => {
    const addr = `127.0.0.1:${h.broker.port}`;
    const create = (attributes: string) => rawInvoke(addr, { code: RequestCode.UPDATE_AND_CREATE_TOPIC, extFields: { topic: 'RAW_FIFO', readQueueNums: '2', writeQueueNums: '2', perm: '6', topicFilterType: 'SINGLE_TAG', topicSysFlag: '0', order: 'false', attributes } });
    assert.equal((await create('+message.type=FIFO')).header.code, 0);
    assert.deepEqual(h.broker.ctx.topicConfigManager.selectTopicConfig('RAW_FIFO')!.attributes, { 'message.type': 'FIFO' });
    const bad = await create('+message.type=SOMETIMES');
    assert.deepEqual([bad.header.code, bad.header.remark], [1, 'value is not in set: [UNSPECIFIED, NORMAL, FIFO, DELAY, TRANSACTION, MIXED]']);
    const route = await call<{ status: { code: string }; message_queues: Array<{ accept_message_types: string[] }> }>(client, 'QueryRoute', { topic: { name: 'RAW_FIFO' } });
    assert.deepEqual(route.message_queues.map((q) => q.accept_message_types), [['FIFO'], ['FIFO']]);
    const untyped = await call<{ message_queues: Array<{ accept_message_types: string[] }> }>(client, 'QueryRoute', { topic: { name: 'RAW_T' } });
    assert.deepEqual(untyped.message_queues[0]!.accept_message_types, ['NORMAL', 'FIFO', 'DELAY', 'TRANSACTION']);
    const msg = (type: string, group?: string) => ({
      topic: { name: 'RAW_FIFO' },
      user_properties: {},
      body: Buffer.from(type),
      system_properties: { message_id: `TYPED${type}`, body_encoding: 'IDENTITY', message_type: type, born_host: 'h', ...(group ? { message_group: group } : {}) },
    });
    const normal = await call<{ status: { code: string; message: string } }>(client, 'SendMessage', { messages: [msg('NORMAL')] });
    assert.deepEqual(normal.status, { code: 'MESSAGE_PROPERTY_CONFLICT_WITH_TYPE', message: 'TopicMessageType validate failed, the expected type is FIFO, but actual type is NORMAL' });
    const fifo = await call<{ status: { code: string } }>(client, 'SendMessage', { messages: [msg('FIFO', 'g1')] });
    assert.equal(fifo.status.code, 'OK');
    // Apache's proxy checks the topic's type (expected DELAY) before it decodes the recall handle
    const recall = await call<{ status: { code: string; message: string } }>(client, 'RecallMessage', { topic: { name: 'RAW_FIFO' }, recall_handle: 'eA' });
    assert.deepEqual(recall.status, { code: 'MESSAGE_PROPERTY_CONFLICT_WITH_TYPE', message: 'TopicMessageType validate failed, the expected type is FIFO, but actual type is DELAY' });
  });

  it("a TRANSACTION send as Apache's proxy stores it: PGROUP = topic, RECONSUME_TIME, BORN_TIMESTAMP; orphaned_transaction_recovery_duration is the half's check immunity", async () => {
    const send = await call<{ status: { code: string }; entries: Array<{ transaction_id: string; offset: number }> }>(client, 'SendMessage', {
      messages: [{
        topic: { name: 'RAW_TX' },
        user_properties: {},
        body: Buffer.from('tx'),
        system_properties: { message_id: 'RAWTX1', body_encoding: 'IDENTITY', message_type: 'TRANSACTION', born_host: 'h', born_timestamp: { seconds: 1_700_000_000, nanos: 7e6 }, delivery_attempt: 2, orphaned_transaction_recovery_duration: { seconds: 7, nanos: 0 } },
      }],
    });
    assert.equal(send.status.code, 'OK');
    const half = h.front.transactions.pendingHalves().find((p) => p.uniqKey === 'RAWTX1');
    assert.ok(half, 'the half message is pending');
    assert.equal(half.immunityMs, 7000, 'CHECK_IMMUNITY_TIME_IN_SECONDS 7 → first check-back after 7 s, not transactionTimeOut');
    assert.equal(half.producerGroup, 'RAW_TX', "the topic is the producer group (Apache's proxy)");
    const stored = await h.broker.ctx.store.lookMessageByOffset(half.commitLogOffset);
    assert.equal(stored!.properties.get('PGROUP'), 'RAW_TX');
    assert.equal(stored!.properties.get('RECONSUME_TIME'), '2');
    assert.equal(stored!.properties.get('BORN_TIMESTAMP'), '1700000000007');
    assert.equal(stored!.properties.get('CHECK_IMMUNITY_TIME_IN_SECONDS'), '7');
    const tooLong = await call<{ status: { code: string; message: string } }>(client, 'SendMessage', {
      messages: [{ topic: { name: 'RAW_TX' }, user_properties: {}, body: Buffer.from('tx'), system_properties: { message_id: 'RAWTX2', body_encoding: 'IDENTITY', message_type: 'TRANSACTION', born_host: 'h', orphaned_transaction_recovery_duration: { seconds: 3601, nanos: 0 } } }],
    });
    assert.deepEqual(tooLong.status, { code: 'BAD_REQUEST', message: 'the max transaction recovery time of message is too large, max is 3600' });
  });

  it('remoting POP_MESSAGE and gRPC ReceiveMessage share one pop state: no message is handed out twice', async () => {
    const topic = 'RAW_MIX';
    const group = 'RAW_MIX_G';
    for (const k of ['a', 'b']) {
      const msg = { topic: { name: topic }, user_properties: {}, body: Buffer.from(k), system_properties: { keys: [k], message_id: `MIX${k}`, body_encoding: 'IDENTITY', message_type: 'NORMAL', queue_id: 0, born_host: 'h' } };
      assert.equal((await call<{ status: { code: string } }>(client, 'SendMessage', { messages: [msg] })).status.code, 'OK');
    }
    const receive = () =>
      stream<Record<string, unknown>>(client, 'ReceiveMessage', {
        group: { name: group },
        message_queue: mq(topic, 0),
        filter_expression: { type: 'TAG', expression: '*' },
        batch_size: 1,
        invisible_duration: { seconds: 30, nanos: 0 },
        long_polling_timeout: { seconds: 0, nanos: 0 },
      });
    const got = (await receive()).filter((p) => p.content === 'message').map((p) => p.message as { body: Buffer; system_properties: { receipt_handle: string } });
    assert.equal(got.length, 1);
    const addr = `127.0.0.1:${h.broker.port}`;
    const pop = () =>
      rawInvoke(addr, {
        code: RequestCode.POP_MESSAGE,
        extFields: { consumerGroup: group, topic, queueId: '-1', maxMsgNums: '32', invisibleTime: '30000', pollTime: '0', bornTime: String(Date.now()), initMode: '0' },
      });
    const popped = await pop();
    assert.equal(popped.header.code, 0);
    const rec = decodeRecord(popped.body, 0);
    assert.equal(popped.body.length, rec.storeSize, 'one message');
    assert.deepEqual([got[0]!.body.toString(), rec.body.toString()].sort(), ['a', 'b']);
    assert.equal((await pop()).header.code, 210);
    assert.equal(((await receive())[0]!.status as { code: string }).code, 'MESSAGE_NOT_FOUND');
    const grpcAck = await call<{ status: { code: string } }>(client, 'AckMessage', { group: { name: group }, topic: { name: topic }, entries: [{ message_id: 'x', receipt_handle: got[0]!.system_properties.receipt_handle }] });
    assert.equal(grpcAck.status.code, 'OK');
    const x = popped.header.extFields!;
    const extraInfo = `${rec.queueOffset} ${x.popTime} ${x.invisibleTime} ${x.reviveQid} 0 ${h.broker.config.brokerName} ${rec.queueId} ${rec.queueOffset}`;
    const ack = await rawInvoke(addr, { code: RequestCode.ACK_MESSAGE, extFields: { consumerGroup: group, topic, queueId: String(rec.queueId), offset: String(rec.queueOffset), extraInfo } });
    assert.equal(ack.header.code, 0, ack.header.remark);
    const offset = await rawInvoke(addr, { code: RequestCode.QUERY_CONSUMER_OFFSET, extFields: { consumerGroup: group, topic, queueId: '0' } });
    assert.equal(offset.header.extFields!.offset, '2');
  });

  it('telemetry answers settings at once', async () => {
    const md = new grpc.Metadata();
    md.set('x-mq-client-id', 'raw-telemetry@1');
    const duplex = (client.Telemetry as (m: grpc.Metadata) => grpc.ClientDuplexStream<object, Record<string, unknown>>).call(client, md);
    const reply = new Promise<Record<string, unknown>>((resolve) => duplex.once('data', resolve));
    duplex.write({ settings: { client_type: 'PRODUCER', publishing: { topics: [{ name: 'RAW_T' }] }, user_agent: { language: 'JAVA', version: '5.0.0' } } });
    const r = await reply;
    assert.equal(r.command, 'settings');
    const settings = r.settings as { publishing: { max_body_size: number }; backoff_policy: { exponential_backoff: { initial: { seconds: number } } } };
    assert.equal(settings.publishing.max_body_size, 4 * 1024 * 1024);
    assert.equal(settings.backoff_policy.exponential_backoff.initial.seconds, 1);
    duplex.end();
  });

  it('telemetry with grpc-timeout 31536000M (rocketmq-client-java 5.0.x) over raw HTTP/2: the stream stays open and answers settings', async () => {
    const codec = telemetryCodec();
    const session = http2.connect(`http://${h.endpoints}`);
    try {
      const req = session.request({
        ':method': 'POST',
        ':path': '/apache.rocketmq.v2.MessagingService/Telemetry',
        'content-type': 'application/grpc',
        te: 'trailers',
        'grpc-timeout': '31536000M',
        'x-mq-client-id': 'raw-java5@1',
      });
      let status: string | undefined;
      req.on('trailers', (t) => (status = String(t['grpc-status'])));
      req.on('response', (hd) => hd['grpc-status'] !== undefined && (status = String(hd['grpc-status'])));
      const replies: Array<Record<string, unknown>> = [];
      let pending = Buffer.alloc(0);
      req.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        while (pending.length >= 5 && pending.length >= 5 + pending.readUInt32BE(1)) {
          const len = pending.readUInt32BE(1);
          replies.push(codec.responseDeserialize(pending.subarray(5, 5 + len)));
          pending = pending.subarray(5 + len);
        }
      });
      const sendSettings = (): void => {
        const body = codec.requestSerialize({ settings: { client_type: 'PRODUCER', publishing: { topics: [{ name: 'RAW_T' }] }, user_agent: { language: 'JAVA', version: '5.0.8' } } });
        const head = Buffer.alloc(5);
        head.writeUInt32BE(body.length, 1);
        req.write(Buffer.concat([head, body]));
      };
      const waitReplies = async (n: number): Promise<void> => {
        for (let i = 0; i < 200 && replies.length < n && status === undefined; i++) await new Promise((r) => setTimeout(r, 10));
      };
      sendSettings();
      await waitReplies(1);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(status, undefined, `Telemetry ended with grpc-status ${status}`);
      sendSettings();
      await waitReplies(2);
      assert.deepEqual(replies.map((r) => r.command), ['settings', 'settings']);
      assert.equal(status, undefined);
      req.end();
      await new Promise<void>((resolve) => req.on('close', () => resolve()));
      assert.equal(status, '0');
    } finally {
      session.close();
    }
  });
});
