/**
 * rocketmq-client-nodejs 1.0.8 Producer → SimpleConsumer against the in-process gRPC front:
 * receive + ack with every message accounted for by key, MD5 body digest, per-group delivery,
 * change invisible duration, redelivery after the invisible time with attempt 2, stale receipt
 * handles rejected with INVALID_RECEIPT_HANDLE (40013), empty receive.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { Producer, SimpleConsumer } from 'rocketmq-client-nodejs';
import { startHarness, type Harness } from './grpc-harness.js';
import { receiveUntil, sleep, startProducer, startSimpleConsumer } from './grpc-clients.js';

describe('gRPC producer → SimpleConsumer', { timeout: 60_000 }, () => {
  let h: Harness;
  let producer: Producer;
  const consumers: SimpleConsumer[] = [];

  before(async () => {
    h = await startHarness();
    producer = await startProducer(h, ['SC_T', 'SC_INV']);
  });

  after(async () => {
    for (const c of consumers) await c.shutdown().catch(() => {});
    await producer?.shutdown().catch(() => {});
    await h?.stop();
  });

  it('delivers every message once per group, keys and bodies intact, digest MD5', async () => {
    const keys = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const r = await producer.send({ topic: 'SC_T', tag: i % 2 ? 'odd' : 'even', keys: [`sc-${i}`], body: Buffer.from(`body-${i}`), properties: new Map([['n', String(i)]]) } as never);
      assert.match(r.messageId, /^[0-9A-F]{34}$/);
      keys.add(`sc-${i}`);
    }
    for (const group of ['SC_G1', 'SC_G2']) {
      const c = await startSimpleConsumer(h, group, 'SC_T');
      consumers.push(c);
      const got = await receiveUntil(c, 40, 15_000);
      assert.deepEqual(new Set(got.map((m) => m.keys[0])), keys, group);
      assert.equal(got.length, 40, `${group}: no duplicates`);
      for (const m of got) {
        const i = Number(m.keys[0]!.slice(3));
        assert.equal(m.body.toString(), `body-${i}`);
        assert.equal(m.tag, i % 2 ? 'odd' : 'even');
        assert.equal(m.properties.get('n'), String(i));
        assert.equal(m.deliveryAttempt, 1);
        assert.notEqual(m.corrupted, true, "digest matches");
        assert.ok(m.receiptHandle.length > 0);
      }
      assert.deepEqual(await c.receive(10, 10_000), [], `${group}: nothing left`);
    }
  });

  it('redelivers after the invisible time, honours change invisible duration, rejects stale handles', async () => {
    const c = await startSimpleConsumer(h, 'SC_INV_G', 'SC_INV');
    consumers.push(c);
    await producer.send({ topic: 'SC_INV', keys: ['inv-a'], body: Buffer.from('a') } as never);
    await producer.send({ topic: 'SC_INV', keys: ['inv-b'], body: Buffer.from('b') } as never);
    const first = await receiveUntil(c, 2, 10_000, 1500, false);
    assert.deepEqual(first.map((m) => m.keys[0]).sort(), ['inv-a', 'inv-b']);
    const a = first.find((m) => m.keys[0] === 'inv-a')!;
    const b = first.find((m) => m.keys[0] === 'inv-b')!;
    const oldHandleB = b.receiptHandle;
    await c.changeInvisibleDuration(b, 20_000);
    assert.notEqual(b.receiptHandle, oldHandleB);
    await sleep(1800);
    const again = await receiveUntil(c, 1, 5000, 10_000, false);
    assert.deepEqual(again.map((m) => m.keys[0]), ['inv-a'], 'only a comes back; b stays invisible');
    assert.equal(again[0]!.deliveryAttempt, 2);
    assert.equal(again[0]!.body.toString(), 'a');
    await assert.rejects(c.ack(a), (e: Error & { code?: number }) => e.code === 40013, 'first handle of a is stale');
    await c.ack(again[0]!);
    const staleB = { ...b, receiptHandle: oldHandleB };
    await assert.rejects(c.ack(staleB as never), (e: Error & { code?: number }) => e.code === 40013, 'pre-change handle of b is stale');
    await c.ack(b);
    assert.deepEqual(await c.receive(10, 1000), []);
  });

  it('answers an empty receive with no messages after the long poll', async () => {
    const c = await startSimpleConsumer(h, 'SC_EMPTY_G', 'SC_T', 500);
    consumers.push(c);
    await receiveUntil(c, 40, 10_000);
    const t0 = Date.now();
    assert.deepEqual(await c.receive(10, 5000), []);
    assert.ok(Date.now() - t0 >= 300, 'the server held the request');
  });

  it('the digest is the uppercase MD5 of the body', () => {
    assert.equal(createHash('md5').update('x').digest('hex').toUpperCase(), '9DD4E461268C8034F5C8564E155C67A6');
  });
});
