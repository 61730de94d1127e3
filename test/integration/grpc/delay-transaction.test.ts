/**
 * Delay (delivery_timestamp) and transactional messages with rocketmq-client-nodejs 1.0.8:
 *  - a delayed message is not received before its delivery time, then arrives with its
 *    delivery_timestamp; a delivery time already passed is delivered at once;
 *  - transactions: commit → delivered, rollback → never delivered, a half message is invisible
 *    until resolved; an unresolved one is checked back (RecoverOrphanedTransactionCommand over
 *    Telemetry) and the producer's checker decides (commit / rollback).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MessageView, Producer, SimpleConsumer } from 'rocketmq-client-nodejs';
import { startHarness, type Harness } from './grpc-harness.js';
import { receiveUntil, sleep, startProducer, startSimpleConsumer } from './grpc-clients.js';

const COMMIT = 1;
const ROLLBACK = 2;

describe('gRPC delay and transactional messages', { timeout: 60_000 }, () => {
  let h: Harness;
  let producer: Producer;
  let txProducer: Producer;
  const checked: string[] = [];
  const consumers: SimpleConsumer[] = [];

  before(async () => {
    h = await startHarness({ transactionTimeOut: '800', transactionCheckInterval: '300', timerPrecisionMs: '50', recallMessageEnable: 'true' });
    producer = await startProducer(h, ['DELAY_T']);
    txProducer = await startProducer(h, ['TX_T'], {
      checker: {
        async check(m: MessageView) {
          checked.push(m.keys[0]!);
          return m.keys[0] === 'tx-check-commit' ? COMMIT : ROLLBACK;
        },
      },
    });
  });

  after(async () => {
    for (const c of consumers) await c.shutdown().catch(() => {});
    await producer?.shutdown().catch(() => {});
    await txProducer?.shutdown().catch(() => {});
    await h?.stop();
  });

  it('delivers delayed messages not before their delivery time', async () => {
    const c = await startSimpleConsumer(h, 'DELAY_G', 'DELAY_T', 300);
    consumers.push(c);
    const sentAt = Date.now();
    const later = new Date(sentAt + 1500);
    await producer.send({ topic: 'DELAY_T', keys: ['d-1500'], body: Buffer.from('late'), deliveryTimestamp: later } as never);
    await producer.send({ topic: 'DELAY_T', keys: ['d-past'], body: Buffer.from('now'), deliveryTimestamp: new Date(sentAt - 1000) } as never);
    const first = await receiveUntil(c, 1, 3000);
    assert.deepEqual(first.map((m) => m.keys[0]), ['d-past']);
    const got: Array<{ m: MessageView; at: number }> = [];
    while (got.length === 0 && Date.now() - sentAt < 8000) {
      for (const m of await c.receive(10, 10_000)) {
        got.push({ m, at: Date.now() });
        await c.ack(m);
      }
    }
    assert.equal(got.length, 1);
    assert.equal(got[0]!.m.keys[0], 'd-1500');
    assert.ok(got[0]!.at >= later.getTime(), `received ${later.getTime() - got[0]!.at} ms early`);
    assert.equal(got[0]!.m.deliveryTimestamp?.getTime(), later.getTime());
    assert.equal(got[0]!.m.body.toString(), 'late');
  });

  it('recalls a delayed message with the recall handle of its send receipt (RecallMessage)', async () => {
    const c = await startSimpleConsumer(h, 'RECALL_G', 'DELAY_T', 300);
    consumers.push(c);
    const due = new Date(Date.now() + 1200);
    const keep = await producer.send({ topic: 'DELAY_T', keys: ['r-keep'], body: Buffer.from('keep'), deliveryTimestamp: due } as never);
    const drop = await producer.send({ topic: 'DELAY_T', keys: ['r-drop'], body: Buffer.from('drop'), deliveryTimestamp: due } as never);
    const handle = (drop as unknown as { recallHandle: string }).recallHandle;
    assert.ok(handle && handle.length > 0, 'the send receipt carries a recall handle');
    const receipt = await (producer as unknown as { recallMessage(t: string, h: string): Promise<{ messageId: string }> }).recallMessage('DELAY_T', handle);
    assert.equal(receipt.messageId, drop.messageId);
    await assert.rejects(
      (producer as unknown as { recallMessage(t: string, h: string): Promise<unknown> }).recallMessage('DELAY_T', 'bm90IGEgaGFuZGxl'),
      /recall handle is invalid/,
    );
    const seen: string[] = [];
    const end = Date.now() + 4000;
    while (Date.now() < end && !(seen.includes('r-keep') && Date.now() > due.getTime() + 600)) {
      for (const m of await c.receive(10, 10_000)) {
        if (m.keys[0]?.startsWith('r-')) seen.push(m.keys[0]);
        await c.ack(m);
      }
    }
    assert.deepEqual(seen, ['r-keep']);
    assert.equal(keep.messageId.length > 0, true);
  });

  it('commits, rolls back and checks back transactional messages', async () => {
    const c = await startSimpleConsumer(h, 'TX_G', 'TX_T', 300);
    consumers.push(c);
    const send = async (key: string): Promise<{ commit(): Promise<void>; rollback(): Promise<void> }> => {
      const tx = txProducer.beginTransaction();
      await txProducer.send({ topic: 'TX_T', keys: [key], body: Buffer.from(key) } as never, tx);
      return tx;
    };
    const committed = await send('tx-commit');
    const rolledBack = await send('tx-rollback');
    await send('tx-check-commit');
    await send('tx-check-rollback');
    assert.deepEqual(await c.receive(10, 5000), [], 'half messages are invisible');
    await committed.commit();
    await rolledBack.rollback();
    const got = await receiveUntil(c, 2, 10_000);
    await sleep(500);
    got.push(...(await receiveUntil(c, 1, 500)));
    assert.deepEqual(got.map((m) => m.keys[0]).sort(), ['tx-check-commit', 'tx-commit']);
    assert.deepEqual([...new Set(checked)].sort(), ['tx-check-commit', 'tx-check-rollback'], 'only unresolved ones are checked');
    assert.equal(h.front.transactions.pendingHalves().length, 0);
  });
});
