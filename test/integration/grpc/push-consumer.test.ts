/**
 * rocketmq-client-nodejs 1.0.8 PushConsumer against the in-process gRPC front: successful
 * messages are consumed once; a handler that keeps failing gets the message again with attempts
 * 1..maxAttempts (group retryMaxTimes 2 ⇒ 3 deliveries), spaced by the advertised exponential
 * backoff, then the message lands in %DLQ%<group> (read back with a SimpleConsumer), keys intact.
 * A handler slower than the invisible time does not cause a second delivery (auto-renewal).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConsumeResult, type MessageView, type Producer, type PushConsumer, type SimpleConsumer } from 'rocketmq-client-nodejs';
import { startHarness, type Harness } from './grpc-harness.js';
import { configureGroup, receiveUntil, startProducer, startPushConsumer, startSimpleConsumer, waitFor } from './grpc-clients.js';

const BACKOFF = {
  grpcBackoffInitialMs: '300',
  grpcBackoffMultiplier: '2',
  grpcBackoffMaxMs: '2000',
  grpcPushLongPollingTimeoutMs: '2000',
  grpcDefaultInvisibleTimeMs: '1500',
  grpcRenewIntervalMs: '300',
};

describe('gRPC PushConsumer: retry with backoff, then DLQ', { timeout: 60_000 }, () => {
  let h: Harness;
  let producer: Producer;
  let push: PushConsumer | null = null;
  let slowPush: PushConsumer | null = null;
  let dlqReader: SimpleConsumer | null = null;

  before(async () => {
    h = await startHarness(BACKOFF);
    configureGroup(h, 'PUSH_G', { retryMaxTimes: 2 });
    producer = await startProducer(h, ['PUSH_T', 'PUSH_SLOW_T']);
  });

  after(async () => {
    await push?.shutdown().catch(() => {});
    await slowPush?.shutdown().catch(() => {});
    await dlqReader?.shutdown().catch(() => {});
    await producer?.shutdown().catch(() => {});
    await h?.stop();
  });

  it('consumes good messages once and dead-letters failing ones after 3 spaced attempts', async () => {
    const deliveries = new Map<string, Array<{ attempt: number; at: number }>>();
    push = await startPushConsumer(h, 'PUSH_G', 'PUSH_T', async (m: MessageView) => {
      const key = m.keys[0]!;
      const list = deliveries.get(key) ?? [];
      list.push({ attempt: m.deliveryAttempt ?? 0, at: Date.now() });
      deliveries.set(key, list);
      return key.startsWith('bad') ? ConsumeResult.FAILURE : ConsumeResult.SUCCESS;
    });
    const keys = ['good-1', 'bad-1', 'good-2', 'bad-2', 'good-3'];
    for (const k of keys) await producer.send({ topic: 'PUSH_T', keys: [k], body: Buffer.from(`body of ${k}`) } as never);

    await waitFor(() => (deliveries.get('bad-1')?.length ?? 0) >= 3 && (deliveries.get('bad-2')?.length ?? 0) >= 3, 20_000, () => JSON.stringify([...deliveries]));
    dlqReader = await startSimpleConsumer(h, 'PUSH_DLQ_READER', '%DLQ%PUSH_G');
    const dead = await receiveUntil(dlqReader, 2, 15_000);
    assert.deepEqual(dead.map((m) => m.keys[0]).sort(), ['bad-1', 'bad-2']);
    for (const m of dead) assert.equal(m.body.toString(), `body of ${m.keys[0]}`);

    for (const k of ['good-1', 'good-2', 'good-3']) assert.deepEqual(deliveries.get(k)!.map((d) => d.attempt), [1], k);
    for (const k of ['bad-1', 'bad-2']) {
      const d = deliveries.get(k)!;
      assert.deepEqual(d.map((x) => x.attempt), [1, 2, 3], `${k}: three deliveries, then the DLQ`);
      assert.ok(d[1]!.at - d[0]!.at >= 280, `${k}: first retry waited the 300 ms backoff (${d[1]!.at - d[0]!.at} ms)`);
      assert.ok(d[2]!.at - d[1]!.at >= 580, `${k}: second retry waited the 600 ms backoff (${d[2]!.at - d[1]!.at} ms)`);
    }
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(deliveries.get('bad-1')!.length, 3, 'no fourth delivery');
  });

  it('renews the invisibility of a message whose handler outlasts it', async () => {
    const attempts: number[] = [];
    let finished = false;
    slowPush = await startPushConsumer(h, 'PUSH_SLOW_G', 'PUSH_SLOW_T', async (m: MessageView) => {
      attempts.push(m.deliveryAttempt ?? 0);
      await new Promise((r) => setTimeout(r, 4000));
      finished = true;
      return ConsumeResult.SUCCESS;
    });
    await producer.send({ topic: 'PUSH_SLOW_T', keys: ['slow'], body: Buffer.from('slow') } as never);
    await waitFor(() => finished, 15_000, () => `attempts ${attempts}`);
    await new Promise((r) => setTimeout(r, 2500));
    assert.deepEqual(attempts, [1], 'one delivery although the handler took 4 s with a 1.5 s invisible time');
  });
});
