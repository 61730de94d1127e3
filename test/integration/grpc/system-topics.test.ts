/**
 * System topics and illegal names at the gRPC front (a user's report: SendMessage to
 * SCHEDULE_TOPIC_XXXX, the transaction topics, SELF_TEST_TOPIC and OFFSET_MOVED_EVENT answered OK
 * and stored a forged message the schedule service then skipped).
 *
 * Now every RPC naming a topic refuses system topics and illegal names with ILLEGAL_TOPIC (40002),
 * and illegal or CID_RMQ_SYS_ groups with ILLEGAL_CONSUMER_GROUP (40003), as Apache's proxy does;
 * nothing reaches the CommitLog. The remoting side refuses sends to the same not-allowed list
 * (topic-validator.ts) with 16 NO_PERMISSION. Driven with raw grpc-js calls (exact status) and with
 * the real rocketmq-client-nodejs Producer / SimpleConsumer (the error they raise).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { SimpleConsumer } from 'rocketmq-client-nodejs';
import { protoIncludeDir } from '../../../src/grpc/proto/messaging-service.js';
import { notAllowedSendTopicNames, systemTopicNames } from '../../../src/common/message/topic-validator.js';
import { sendV2Frame } from '../../support/raw-remoting.js';
import { startHarness, quietClientLogger, type Harness } from './grpc-harness.js';
import { startProducer } from './grpc-clients.js';

type Client = grpc.Client & Record<string, (...args: unknown[]) => unknown>;
type St = { code: string; message: string };

function newClient(endpoints: string): Client {
  const def = protoLoader.loadSync('apache/rocketmq/v2/service.proto', { includeDirs: [protoIncludeDir()], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { apache: { rocketmq: { v2: { MessagingService: new (a: string, c: grpc.ChannelCredentials) => Client } } } };
  return new pkg.apache.rocketmq.v2.MessagingService(endpoints, grpc.credentials.createInsecure());
}

function metadata(): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set('x-mq-client-id', 'sys-topic-client@1');
  return md;
}

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

const mq = (topic: string, id = 0) => ({ topic: { name: topic }, id, permission: 'READ_WRITE', accept_message_types: [] });

const message = (topic: string, i = 0) => ({
  topic: { name: topic },
  user_properties: {},
  body: Buffer.from(`forged-${i}`),
  system_properties: { keys: [], message_id: `SYS${i}`, body_encoding: 'IDENTITY', message_type: 'NORMAL', queue_id: 0, born_host: 'h' },
});

const systemTopicStatus = (topic: string): St => ({ code: 'ILLEGAL_TOPIC', message: `topic ${topic} is a system topic and cannot be accessed by clients` });

/** The six topics of the report: the ones remoting refuses too. */
const REPORTED = ['SCHEDULE_TOPIC_XXXX', 'RMQ_SYS_TRANS_HALF_TOPIC', 'RMQ_SYS_TRANS_OP_HALF_TOPIC', 'TRANS_CHECK_MAX_TIME_TOPIC', 'SELF_TEST_TOPIC', 'OFFSET_MOVED_EVENT'];

describe('system topics and illegal names at the gRPC front', { timeout: 60_000 }, () => {
  let h: Harness;
  let client: Client;

  before(async () => {
    h = await startHarness();
    client = newClient(h.endpoints);
    // A legal topic with one message, so later checks can tell "refused" from "nothing there".
    const ok = await call<{ status: St }>(client, 'SendMessage', { messages: [message('SYS_OK_T')] });
    assert.equal(ok.status.code, 'OK');
  });

  after(async () => {
    client?.close();
    await h?.stop();
  });

  it('the reported topics are exactly the not-allowed-send list both fronts share', () => {
    assert.deepEqual([...notAllowedSendTopicNames()].sort(), [...REPORTED].sort());
    for (const t of REPORTED) assert.ok(systemTopicNames().includes(t), t);
  });

  it('SendMessage to every system topic → ILLEGAL_TOPIC, no entry, CommitLog and queues unchanged', async () => {
    const store = h.broker.ctx.store;
    const before = store.getMaxPhyOffset();
    const scheduleQueues = Array.from({ length: 18 }, (_, q) => store.getMaxOffsetInQueue('SCHEDULE_TOPIC_XXXX', q));
    for (const topic of [...systemTopicNames(), 'rmq_sys_anything']) {
      const r = await call<{ status: St; entries: unknown[] }>(client, 'SendMessage', { messages: [message(topic)] });
      assert.deepEqual(r.status, systemTopicStatus(topic), topic);
      assert.deepEqual(r.entries, [], topic);
    }
    // A batch whose second message names a system topic stores nothing, not even the first one.
    const mixed = await call<{ status: St; entries: unknown[] }>(client, 'SendMessage', { messages: [message('SYS_OK_T', 1), message('SCHEDULE_TOPIC_XXXX', 2)] });
    assert.deepEqual(mixed.status, systemTopicStatus('SCHEDULE_TOPIC_XXXX'));
    assert.equal(store.getMaxPhyOffset(), before, 'nothing appended to the CommitLog');
    assert.deepEqual(Array.from({ length: 18 }, (_, q) => store.getMaxOffsetInQueue('SCHEDULE_TOPIC_XXXX', q)), scheduleQueues);
    assert.equal(store.getMaxOffsetInQueue('SYS_OK_T', 0), 1);
    for (const topic of REPORTED) assert.equal(store.getMaxOffsetInQueue(topic, 0), 0, topic);
  });

  it('illegal topic names → ILLEGAL_TOPIC with the remoting rule as message; nothing stored or created', async () => {
    const store = h.broker.ctx.store;
    const before = store.getMaxPhyOffset();
    const cases: Array<[string, string]> = [
      ['bad topic!', 'topic "bad topic!" contains characters other than [%|a-zA-Z0-9_-]'],
      ['T'.repeat(128), `topic "${'T'.repeat(37)}..." is too long: 128 characters, the limit is 127`],
      ['', 'topic is empty or blank'],
    ];
    for (const [topic, text] of cases) {
      const r = await call<{ status: St; entries: unknown[] }>(client, 'SendMessage', { messages: [message(topic)] });
      assert.deepEqual(r.status, { code: 'ILLEGAL_TOPIC', message: text });
      const route = await call<{ status: St; message_queues: unknown[] }>(client, 'QueryRoute', { topic: { name: topic } });
      assert.deepEqual([route.status, route.message_queues], [{ code: 'ILLEGAL_TOPIC', message: text }, []]);
    }
    assert.equal(store.getMaxPhyOffset(), before);
    assert.equal(h.broker.ctx.topicConfigManager.selectTopicConfig('T'.repeat(128)), undefined);
  });

  it('remoting refuses the same six with 16 NO_PERMISSION (one list), and stores nothing either', async () => {
    const store = h.broker.ctx.store;
    const before = store.getMaxPhyOffset();
    for (const topic of notAllowedSendTopicNames()) {
      const r = await sendV2Frame(`127.0.0.1:${h.broker.port}`, topic, Buffer.from('forged'));
      assert.equal(r.header.code, 16, topic);
      assert.equal(r.header.remark, `Sending message to topic[${topic}] is forbidden.`);
    }
    assert.equal(store.getMaxPhyOffset(), before);
  });

  it('QueryRoute, QueryAssignment and the consumer RPCs refuse system topics', async () => {
    for (const topic of REPORTED) {
      const want = systemTopicStatus(topic);
      const route = await call<{ status: St; message_queues: unknown[] }>(client, 'QueryRoute', { topic: { name: topic } });
      assert.deepEqual([route.status, route.message_queues], [want, []], topic);
      const assignment = await call<{ status: St }>(client, 'QueryAssignment', { topic: { name: topic }, group: { name: 'SYS_G' } });
      assert.deepEqual(assignment.status, want);
      const recv = await stream<{ status?: St }>(client, 'ReceiveMessage', { group: { name: 'SYS_G' }, message_queue: mq(topic), batch_size: 1, long_polling_timeout: { seconds: 1, nanos: 0 } });
      assert.deepEqual(recv.map((r) => r.status), [want]);
      const ack = await call<{ status: St }>(client, 'AckMessage', { group: { name: 'SYS_G' }, topic: { name: topic }, entries: [{ message_id: 'x', receipt_handle: 'garbage' }] });
      assert.deepEqual(ack.status, want);
      const change = await call<{ status: St }>(client, 'ChangeInvisibleDuration', { group: { name: 'SYS_G' }, topic: { name: topic }, receipt_handle: 'garbage', invisible_duration: { seconds: 10, nanos: 0 } });
      assert.deepEqual(change.status, want);
      const dlq = await call<{ status: St }>(client, 'ForwardMessageToDeadLetterQueue', { group: { name: 'SYS_G' }, topic: { name: topic }, receipt_handle: 'garbage' });
      assert.deepEqual(dlq.status, want);
      const end = await call<{ status: St }>(client, 'EndTransaction', { topic: { name: topic }, message_id: 'x', transaction_id: 'nope', resolution: 'COMMIT', source: 'SOURCE_CLIENT' });
      assert.deepEqual(end.status, want);
      const offset = await call<{ status: St }>(client, 'QueryOffset', { message_queue: mq(topic), query_offset_policy: 'END' });
      assert.deepEqual(offset.status, want);
    }
  });

  it('illegal and system consumer groups → ILLEGAL_CONSUMER_GROUP; no group is auto-created', async () => {
    const cases: Array<[string, string]> = [
      ['bad group', 'group "bad group" contains characters other than [%|a-zA-Z0-9_-]'],
      ['G'.repeat(121), `group "${'G'.repeat(37)}..." is too long: 121 characters, the limit is 120`],
      ['', 'group is empty or blank'],
      ['CID_RMQ_SYS_TRANS', 'group CID_RMQ_SYS_TRANS is a system group and cannot be used by clients'],
    ];
    for (const [group, text] of cases) {
      const want = { code: 'ILLEGAL_CONSUMER_GROUP', message: text };
      const assignment = await call<{ status: St }>(client, 'QueryAssignment', { topic: { name: 'SYS_OK_T' }, group: { name: group } });
      assert.deepEqual(assignment.status, want, group);
      const recv = await stream<{ status?: St }>(client, 'ReceiveMessage', { group: { name: group }, message_queue: mq('SYS_OK_T'), batch_size: 1 });
      assert.deepEqual(recv.map((r) => r.status), [want]);
      const ack = await call<{ status: St }>(client, 'AckMessage', { group: { name: group }, topic: { name: 'SYS_OK_T' }, entries: [] });
      assert.deepEqual(ack.status, want);
      const commit = await call<{ status: St }>(client, 'UpdateOffset', { group: { name: group }, message_queue: mq('SYS_OK_T'), offset: 1 });
      assert.deepEqual(commit.status, want);
      if (group !== '') {
        const beat = await call<{ status: St }>(client, 'Heartbeat', { group: { name: group }, client_type: 'SIMPLE_CONSUMER' });
        assert.deepEqual(beat.status, want);
      }
    }
    const sgm = h.broker.ctx.subscriptionGroupManager;
    assert.equal(sgm.get('bad group'), undefined);
    assert.equal(sgm.findSubscriptionGroupConfig('bad group'), undefined, 'the broker never auto-creates an illegal group');
    assert.equal(sgm.findSubscriptionGroupConfig('G'.repeat(121)), undefined);
  });

  it('Telemetry settings with a system publishing topic or a system group get a status-only command', async () => {
    const ask = async (settings: object): Promise<Record<string, unknown>> => {
      const duplex = (client.Telemetry as (m: grpc.Metadata) => grpc.ClientDuplexStream<object, Record<string, unknown>>).call(client, metadata());
      const reply = new Promise<Record<string, unknown>>((resolve) => duplex.once('data', resolve));
      duplex.write({ settings });
      const r = await reply;
      duplex.end();
      return r;
    };
    const producer = await ask({ client_type: 'PRODUCER', publishing: { topics: [{ name: 'SYS_OK_T' }, { name: 'SCHEDULE_TOPIC_XXXX' }] } });
    assert.equal(producer.command, undefined);
    assert.deepEqual(producer.status, systemTopicStatus('SCHEDULE_TOPIC_XXXX'));
    const consumer = await ask({ client_type: 'SIMPLE_CONSUMER', subscription: { group: { name: 'CID_RMQ_SYS_TRANS' }, subscriptions: [] } });
    assert.deepEqual(consumer.status, { code: 'ILLEGAL_CONSUMER_GROUP', message: 'group CID_RMQ_SYS_TRANS is a system group and cannot be used by clients' });
    const fine = await ask({ client_type: 'PRODUCER', publishing: { topics: [{ name: 'SYS_OK_T' }] } });
    assert.equal(fine.command, 'settings');
  });

  it('rocketmq-client-nodejs: send to each reported topic fails with code 40002 and the message; nothing stored', async () => {
    const producer = await startProducer(h, ['SYS_OK_T']);
    try {
      const store = h.broker.ctx.store;
      const before = store.getMaxPhyOffset();
      for (const topic of REPORTED) {
        await assert.rejects(
          producer.send({ topic, tag: 'forged', body: Buffer.from('forged') } as never),
          (e: Error & { code?: number }) => {
            assert.equal(e.code, 40002, `${topic}: ${e.message}`);
            assert.match(e.message, new RegExp(`response-code=40002\\] topic ${topic} is a system topic and cannot be accessed by clients$`));
            return true;
          },
        );
      }
      assert.equal(store.getMaxPhyOffset(), before, 'nothing appended to the CommitLog');
      const ok = await producer.send({ topic: 'SYS_OK_T', body: Buffer.from('legal') } as never);
      assert.ok(ok.messageId);
      assert.ok(store.getMaxPhyOffset() > before);
    } finally {
      await producer.shutdown();
    }
  });

  it('rocketmq-client-nodejs: a SimpleConsumer in a system group fails to start with code 40003', async () => {
    const c = new SimpleConsumer({
      endpoints: h.endpoints,
      consumerGroup: 'CID_RMQ_SYS_TRANS',
      subscriptions: new Map([['SYS_OK_T', '*']]),
      awaitDuration: 1000,
      logger: quietClientLogger,
      requestTimeout: 3000,
    } as never);
    try {
      await assert.rejects(c.startup(), (e: Error & { cause?: Error & { code?: number } }) => {
        assert.equal(e.cause?.code, 40003, e.message);
        assert.match(e.cause!.message, /group CID_RMQ_SYS_TRANS is a system group and cannot be used by clients$/);
        return true;
      });
    } finally {
      await c.shutdown().catch(() => {});
    }
  });
});
