/**
 * FIFO message groups with rocketmq-client-nodejs 1.0.8: a group with consumeMessageOrderly gets
 * `fifo: true` in its settings; messages of one message group are handed to the PushConsumer in
 * send order, a failed message is retried in place (the next one waits), and a message that keeps
 * failing is forwarded to %DLQ%<group> (ForwardMessageToDeadLetterQueue) before the group moves on.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConsumeResult, type MessageView, type Producer, type PushConsumer, type SimpleConsumer } from 'rocketmq-client-nodejs';
import { startHarness, type Harness } from './grpc-harness.js';
import { configureGroup, receiveUntil, startProducer, startPushConsumer, startSimpleConsumer, waitFor } from './grpc-clients.js';

const GROUPS = ['A', 'B', 'C'];
const PER_GROUP = 10;

describe('gRPC FIFO message groups', { timeout: 60_000 }, () => {
  let h: Harness;
  let producer: Producer;
  let push: PushConsumer | null = null;
  let dlq: SimpleConsumer | null = null;

  before(async () => {
    h = await startHarness({ grpcBackoffInitialMs: '100', grpcBackoffMultiplier: '1', grpcBackoffMaxMs: '100', grpcPushLongPollingTimeoutMs: '2000' });
    configureGroup(h, 'FIFO_G', { consumeMessageOrderly: true, retryMaxTimes: 2 });
    producer = await startProducer(h, ['FIFO_T']);
  });

  after(async () => {
    await push?.shutdown().catch(() => {});
    await dlq?.shutdown().catch(() => {});
    await producer?.shutdown().catch(() => {});
    await h?.stop();
  });

  it('delivers each message group in order, retries in place, dead-letters a poison message', async () => {
    for (let i = 0; i < PER_GROUP; i++) {
      for (const g of GROUPS) {
        await producer.send({ topic: 'FIFO_T', messageGroup: g, keys: [`${g}-${i}`], body: Buffer.from(`${g}${i}`) } as never);
      }
    }
    const seen = new Map<string, string[]>(GROUPS.map((g) => [g, []]));
    let failedOnce = false;
    push = await startPushConsumer(h, 'FIFO_G', 'FIFO_T', async (m: MessageView) => {
      const key = m.keys[0]!;
      seen.get(m.messageGroup!)!.push(`${key}#${m.deliveryAttempt}`);
      await new Promise((r) => setTimeout(r, 5));
      if (key === 'B-3' && !failedOnce) {
        failedOnce = true;
        return ConsumeResult.FAILURE;
      }
      if (key === 'C-5') return ConsumeResult.FAILURE;
      return ConsumeResult.SUCCESS;
    });
    const done = (): boolean => GROUPS.every((g) => seen.get(g)!.some((e) => e.startsWith(`${g}-${PER_GROUP - 1}#`)));
    await waitFor(done, 30_000, () => JSON.stringify([...seen]));

    const expectA = Array.from({ length: PER_GROUP }, (_, i) => `A-${i}#1`);
    assert.deepEqual(seen.get('A'), expectA);
    const b = seen.get('B')!;
    assert.deepEqual(b.slice(0, 5), ['B-0#1', 'B-1#1', 'B-2#1', 'B-3#1', 'B-3#2'], 'B-3 is retried before B-4');
    assert.deepEqual(b.slice(5), Array.from({ length: PER_GROUP - 4 }, (_, i) => `B-${i + 4}#1`));
    const c = seen.get('C')!;
    assert.deepEqual(c.slice(0, 8), ['C-0#1', 'C-1#1', 'C-2#1', 'C-3#1', 'C-4#1', 'C-5#1', 'C-5#2', 'C-5#3'], 'C-5 gets max attempts (3)');
    assert.deepEqual(c.slice(8), ['C-6#1', 'C-7#1', 'C-8#1', 'C-9#1']);

    dlq = await startSimpleConsumer(h, 'FIFO_DLQ_READER', '%DLQ%FIFO_G');
    const dead = await receiveUntil(dlq, 1, 10_000);
    assert.deepEqual(dead.map((m) => m.keys[0]), ['C-5']);
    assert.equal(dead[0]!.body.toString(), 'C5');
  });
});
