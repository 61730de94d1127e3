/**
 * gRPC SendMessage with several messages for one topic is one atomic batch (the Apache proxy
 * sends such a request as one SEND_BATCH_MESSAGE): concurrent requests of 10 NORMAL messages
 * land as contiguous blocks — consecutive queue offsets (the entries' offsets), records back to
 * back in the CommitLog, one store time per request — in one queue. A request with one invalid
 * message or mixed topics keeps the message-by-message path. The contiguity check runs under
 * ASYNC_FLUSH and SYNC_FLUSH (a slave attached is covered over remoting: test/integration/ha/batch-atomic.test.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoIncludeDir } from '../../../src/grpc/proto/messaging-service.js';
import { startHarness, type Harness } from './grpc-harness.js';

type Client = grpc.Client & Record<string, (...args: unknown[]) => unknown>;
interface Entry {
  status: { code: string; message: string };
  message_id: string;
  offset: number;
}
interface Reply {
  status: { code: string; message: string };
  entries: Entry[];
}

function newClient(endpoints: string): Client {
  const def = protoLoader.loadSync('apache/rocketmq/v2/service.proto', { includeDirs: [protoIncludeDir()], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { apache: { rocketmq: { v2: { MessagingService: new (a: string, c: grpc.ChannelCredentials) => Client } } } };
  return new pkg.apache.rocketmq.v2.MessagingService(endpoints, grpc.credentials.createInsecure());
}

function send(c: Client, messages: object[]): Promise<Reply> {
  const md = new grpc.Metadata();
  md.set('x-mq-client-id', 'batch-client@1');
  return new Promise((resolve, reject) => (c.SendMessage as (r: object, m: grpc.Metadata, cb: (e: Error | null, r: Reply) => void) => void).call(c, { messages }, md, (e, r) => (e ? reject(e) : resolve(r))));
}

const message = (topic: string, id: string, extra: Record<string, unknown> = {}) => ({
  topic: { name: topic },
  user_properties: {},
  body: Buffer.alloc(300, id),
  system_properties: { keys: [id], message_id: id, body_encoding: 'IDENTITY', message_type: 'NORMAL', born_host: 'h', ...extra },
});

/** 30 concurrent requests of 10 messages each: every request one contiguous block of one queue. */
async function checkContiguous(h: Harness, client: Client): Promise<void> {
  const topic = 'GRPC_BATCH_T';
  const requests = Array.from({ length: 30 }, (_, r) => Array.from({ length: 10 }, (_, i) => message(topic, `R${r}M${i}`)));
  const replies = await Promise.all(requests.map((msgs) => send(client, msgs)));
  const store = h.broker.ctx.store;
  for (const [r, reply] of replies.entries()) {
    assert.equal(reply.status.code, 'OK', reply.status.message);
    assert.deepEqual(reply.entries.map((e) => e.message_id), requests[r]!.map((m) => m.system_properties.message_id));
    const first = reply.entries[0]!.offset;
    assert.deepEqual(reply.entries.map((e) => e.offset), Array.from({ length: 10 }, (_, i) => first + i), `request ${r}: consecutive queue offsets`);
    // find the queue: the first entry's record names it
    const queueIds = [0, 1, 2, 3, 4, 5, 6, 7].filter((q) => store.getMaxOffsetInQueue(topic, q) > first);
    let located = false;
    for (const q of queueIds) {
      const phy = store.getCommitLogOffsetInQueue(topic, q, first);
      const m0 = await store.lookMessageByOffset(phy);
      if (m0?.properties.get('UNIQ_KEY') !== `R${r}M0`) continue;
      located = true;
      let at = phy;
      for (let i = 0; i < 10; i++) {
        const m = await store.lookMessageByOffset(at);
        assert.ok(m, `record ${i} of request ${r} at ${at}`);
        assert.equal(m.properties.get('UNIQ_KEY'), `R${r}M${i}`, `request ${r}: record ${i} directly follows record ${i - 1}`);
        assert.equal(m.queueOffset, first + i);
        assert.equal(m.queueId, q);
        assert.equal(m.storeTimestamp, m0.storeTimestamp, 'one store time per request');
        assert.equal(store.getCommitLogOffsetInQueue(topic, q, first + i), at);
        at += m.storeSize;
      }
    }
    assert.ok(located, `request ${r} found in its queue`);
  }
}

describe('gRPC SendMessage with several messages', { timeout: 60_000 }, () => {
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

  it('concurrent 10-message requests are stored as contiguous blocks in one queue', () => checkContiguous(h, client));

  it('one invalid message or mixed topics: message by message, with per-message statuses', async () => {
    const bad = await send(client, [message('GRPC_BATCH_U', 'U0'), message('GRPC_BATCH_U', 'U1', { keys: ['has space'] })]);
    assert.deepEqual(bad.entries.map((e) => e.status.code), ['OK', 'ILLEGAL_MESSAGE_KEY']);
    assert.equal(bad.status.code, 'INTERNAL_SERVER_ERROR');
    const mixed = await send(client, [message('GRPC_BATCH_V', 'V0', { queue_id: 0 }), message('GRPC_BATCH_W', 'W0', { queue_id: 0 })]);
    assert.equal(mixed.status.code, 'OK');
    assert.deepEqual(mixed.entries.map((e) => e.offset), [0, 0]);
  });
});

describe('gRPC SendMessage with several messages, SYNC_FLUSH', { timeout: 60_000 }, () => {
  let h: Harness;
  let client: Client;

  before(async () => {
    h = await startHarness({ flushDiskType: 'SYNC_FLUSH', warmMapedFileEnable: 'false' });
    client = newClient(h.endpoints);
  });

  after(async () => {
    client?.close();
    await h?.stop();
  });

  it('concurrent 10-message requests are stored as contiguous blocks in one queue (group commit)', async () => {
    assert.equal((h.broker.ctx.store as unknown as { config: { flushDiskType: string } }).config.flushDiskType, 'SYNC_FLUSH');
    await checkContiguous(h, client);
  });
});
