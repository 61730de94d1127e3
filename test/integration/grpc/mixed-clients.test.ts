/**
 * Mixed clients over one broker: messages produced by ali-ons (remoting, spread over 4 queues,
 * one zlib-compressed body, one delay-level message) are consumed by the gRPC SimpleConsumer, and
 * messages produced by the gRPC Producer are consumed by an ali-ons push consumer; keys, tags,
 * user properties and bodies survive both ways.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import type { Producer, SimpleConsumer } from 'rocketmq-client-nodejs';
import { startHarness, type Harness } from './grpc-harness.js';
import { receiveUntil, startProducer, startSimpleConsumer, waitFor } from './grpc-clients.js';
import { createConsumer, newMessage, startProducer as startOnsProducer, type OnsConsumer, type OnsMessage, type OnsProducer } from '../../support/ali-ons-client.js';

const N = 24;
/** Short ali-ons timers: its scheduled tasks sleep a full interval before noticing a close. */
const ONS_TIMERS = { pollNameServerInteval: 1000, heartbeatBrokerInterval: 1000, persistConsumerOffsetInterval: 1000, rebalanceInterval: 1000 };

/**
 * ali-ons workaround: a push consumer starts a process-wide inner producer
 * (CLIENT_INNER_PRODUCER, MQProducer.defaultProducer) that nothing closes; its MQClient keeps
 * 30 s timers running forever, so the test process would never exit.
 */
async function closeOnsInnerProducer(): Promise<void> {
  const MQProducer = createRequire(import.meta.url)('ali-ons/lib/producer/mq_producer.js') as { defaultProducer?: { close(): Promise<void> } | null };
  await MQProducer.defaultProducer?.close().catch(() => {});
  MQProducer.defaultProducer = null;
}
const bigBody = (): Buffer => Buffer.from('0123456789abcdef'.repeat(600));

describe('ali-ons ⇄ rocketmq-client-nodejs on one broker', { timeout: 90_000 }, () => {
  let h: Harness;
  let onsProducer: OnsProducer;
  let onsConsumer: OnsConsumer | null = null;
  let grpcProducer: Producer;
  let grpcConsumer: SimpleConsumer | null = null;

  before(async () => {
    h = await startHarness({ messageDelayLevel: Array.from({ length: 18 }, () => '1s').join(' ') }, undefined, true);
    onsProducer = await startOnsProducer(h.namesrvAddr, 'PID_MIX', ONS_TIMERS);
    grpcProducer = await startProducer(h, ['MIX_FROM_GRPC']);
  });

  after(async () => {
    await onsConsumer?.close().catch(() => {});
    await grpcConsumer?.shutdown().catch(() => {});
    await onsProducer?.close().catch(() => {});
    await closeOnsInnerProducer();
    await grpcProducer?.shutdown().catch(() => {});
    await h?.stop();
  });

  it('gRPC consumer receives what ali-ons produced', async () => {
    const queues = new Set<number>();
    for (let i = 0; i < N; i++) {
      const body = i === 5 ? bigBody() : Buffer.from(`ons-${i}`);
      const msg = newMessage('MIX_FROM_ONS', `tag${i % 3}`, body, [`ons-key-${i}`]) as { delayTimeLevel: number };
      if (i === 7) msg.delayTimeLevel = 1;
      const r = await onsProducer.send(msg);
      assert.equal(r.sendStatus, 'SEND_OK');
      queues.add(r.messageQueue.queueId);
    }
    assert.ok(queues.size > 1, 'ali-ons spread the messages over several queues');
    grpcConsumer = await startSimpleConsumer(h, 'MIX_GRPC_G', 'MIX_FROM_ONS', 500);
    const got = await receiveUntil(grpcConsumer, N, 20_000);
    assert.equal(got.length, N);
    assert.deepEqual(new Set(got.map((m) => m.keys[0])), new Set(Array.from({ length: N }, (_, i) => `ons-key-${i}`)));
    for (const m of got) {
      const i = Number(m.keys[0]!.slice('ons-key-'.length));
      assert.equal(m.tag, `tag${i % 3}`);
      assert.ok(m.body.equals(i === 5 ? bigBody() : Buffer.from(`ons-${i}`)), `body of ${i}`);
      assert.notEqual(m.corrupted, true);
    }
  });

  it('ali-ons consumer receives what the gRPC producer produced', async () => {
    for (let i = 0; i < N; i++) {
      await grpcProducer.send({ topic: 'MIX_FROM_GRPC', tag: `g${i % 2}`, keys: [`grpc-key-${i}`], body: Buffer.from(`grpc-${i}`), properties: new Map([['idx', String(i)]]) } as never);
    }
    const received = new Map<string, OnsMessage>();
    onsConsumer = createConsumer(h.namesrvAddr, 'MIX_ONS_G', ONS_TIMERS);
    onsConsumer.subscribe('MIX_FROM_GRPC', '*', async (m: OnsMessage) => {
      received.set(String(m.keys), m); // ali-ons returns KEYS as the raw space-separated string
    });
    await onsConsumer.ready();
    await waitFor(() => received.size >= N, 30_000, () => `${received.size} of ${N}`);
    for (let i = 0; i < N; i++) {
      const m = received.get(`grpc-key-${i}`)!;
      assert.equal(m.body.toString(), `grpc-${i}`);
      assert.equal(m.tags, `g${i % 2}`);
      assert.equal(m.properties.idx, String(i));
    }
  });
});
