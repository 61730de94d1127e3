/**
 * Pop state durability across a broker restart (clean shutdown and reopen of broker + gRPC front
 * on the same store, same port): acked messages are never delivered again, messages in flight at
 * the restart stay invisible until their time and then come back with attempt 2, handles issued
 * before the restart still ack, and every message is accounted for by key.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MessageView, Producer, SimpleConsumer } from 'rocketmq-client-nodejs';
import { startHarness, type Harness } from './grpc-harness.js';
import { startProducer, startSimpleConsumer } from './grpc-clients.js';

const N = 30;

describe('gRPC pop state across a broker restart', { timeout: 60_000 }, () => {
  let h: Harness;
  let producer: Producer;
  let consumer: SimpleConsumer;

  before(async () => {
    h = await startHarness();
    producer = await startProducer(h, ['RS_T']);
    consumer = await startSimpleConsumer(h, 'RS_G', 'RS_T', 500);
  });

  after(async () => {
    await consumer?.shutdown().catch(() => {});
    await producer?.shutdown().catch(() => {});
    await h?.stop();
  });

  it('loses no ack and redelivers only what was not acked', async () => {
    for (let i = 0; i < N; i++) await producer.send({ topic: 'RS_T', keys: [`r-${i}`], body: Buffer.from(`r${i}`) } as never);
    const deliveries = new Map<string, number[]>();
    const note = (m: MessageView): void => {
      const list = deliveries.get(m.keys[0]!) ?? [];
      list.push(m.deliveryAttempt ?? 0);
      deliveries.set(m.keys[0]!, list);
    };
    const held: MessageView[] = [];
    const acked = new Set<string>();
    while (deliveries.size < N) {
      for (const m of await consumer.receive(8, 4000)) {
        note(m);
        const i = Number(m.keys[0]!.slice(2));
        if (i % 3 === 0) held.push(m);
        else if (i % 3 === 1) {
          await consumer.ack(m);
          acked.add(m.keys[0]!);
        }
        // i % 3 === 2: neither acked nor held: comes back after 4 s
      }
    }
    await h.restart();
    // Handles issued before the restart still work. The client's channel may still be
    // reconnecting right after the restart: a call that fails with UNAVAILABLE (14) before it
    // reached the broker is retried, as an application would.
    const ackRetryingUnavailable = async (m: MessageView): Promise<void> => {
      for (let attempt = 0; ; attempt++) {
        try {
          await consumer.ack(m);
          return;
        } catch (e) {
          const code = (e as { code?: number }).code;
          if (code !== 14 || attempt >= 50) throw e;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    };
    for (const m of held) {
      await ackRetryingUnavailable(m);
      acked.add(m.keys[0]!);
    }
    const deadline = Date.now() + 20_000;
    while (acked.size < N && Date.now() < deadline) {
      for (const m of await consumer.receive(16, 4000)) {
        note(m);
        await consumer.ack(m);
        acked.add(m.keys[0]!);
      }
    }
    assert.equal(acked.size, N, 'every key acked');
    for (let i = 0; i < N; i++) {
      const d = deliveries.get(`r-${i}`);
      assert.deepEqual(d, i % 3 === 2 ? [1, 2] : [1], `r-${i}`);
    }
    assert.deepEqual(await consumer.receive(16, 4000), []);
  });
});
