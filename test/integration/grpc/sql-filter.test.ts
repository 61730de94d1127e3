/**
 * SQL92 filtering over gRPC with rocketmq-client-nodejs 1.0.8 (FilterExpression type SQL):
 * SimpleConsumer (ReceiveMessage) and PushConsumer (QueryAssignment + ReceiveMessage) get exactly
 * the matching messages when the broker runs with enablePropertyFilter=true; a selector that does
 * not compile is refused with ILLEGAL_FILTER_EXPRESSION (40010) at ReceiveMessage and in the
 * Telemetry settings; with enablePropertyFilter=false ReceiveMessage refuses SQL (40010).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConsumeResult, FilterExpression, PushConsumer, SimpleConsumer, type MessageView, type Producer } from 'rocketmq-client-nodejs';
import { quietClientLogger, startHarness, type Harness } from './grpc-harness.js';
import { receiveUntil, sleep, startProducer, waitFor } from './grpc-clients.js';

/** `FilterType.SQL` of apache/rocketmq/v2/definition.proto. */
const FILTER_TYPE_SQL = 2;
const ILLEGAL_FILTER_EXPRESSION = 40010;
const SQL = "a BETWEEN 5 AND 9 AND TAGS IN ('T1')";
const EXPECTED = ['k5', 'k7', 'k8'];
const sqlFilter = (sql: string): FilterExpression => new FilterExpression(sql, FILTER_TYPE_SQL as never);

function simpleConsumer(h: Harness, group: string, topic: string, filter: FilterExpression): SimpleConsumer {
  return new SimpleConsumer({
    endpoints: h.endpoints,
    consumerGroup: group,
    subscriptions: new Map([[topic, filter]]),
    awaitDuration: 1000,
    logger: quietClientLogger,
    requestTimeout: 3000,
  } as never);
}

/** 20 messages, property a = 0..19, tag T2 when a % 3 == 0 else T1, key k<a>. */
async function produce(producer: Producer, topic: string): Promise<void> {
  for (let i = 0; i < 20; i++) {
    await producer.send({ topic, tag: i % 3 === 0 ? 'T2' : 'T1', keys: [`k${i}`], body: Buffer.from(`b${i}`), properties: new Map([['a', String(i)]]) } as never);
  }
}

describe('gRPC SQL92 filter (enablePropertyFilter=true)', { timeout: 90_000 }, () => {
  let h: Harness;
  let producer: Producer;
  const closers: Array<() => Promise<unknown>> = [];

  before(async () => {
    h = await startHarness({ enablePropertyFilter: 'true' });
    producer = await startProducer(h, ['SQL_SC', 'SQL_PUSH']);
  });

  after(async () => {
    for (const c of closers) await c().catch(() => {});
    await producer?.shutdown().catch(() => {});
    await h?.stop();
  });

  it(`SimpleConsumer with "${SQL}" receives exactly k5, k7, k8`, async () => {
    await produce(producer, 'SQL_SC');
    const c = simpleConsumer(h, 'SQL_SC_G', 'SQL_SC', sqlFilter(SQL));
    await c.startup();
    closers.push(() => c.shutdown());
    const got = await receiveUntil(c, EXPECTED.length, 15_000);
    assert.deepEqual(got.map((m) => m.keys[0]).sort(), EXPECTED);
    for (const m of got) {
      assert.equal(m.body.toString(), `b${m.keys[0]!.slice(1)}`);
      assert.equal(m.tag, 'T1');
    }
    assert.deepEqual(await c.receive(16, 10_000), [], 'nothing else matches');
    // a later matching message is delivered, a non-matching one is not
    await producer.send({ topic: 'SQL_SC', tag: 'T1', keys: ['late-no'], body: Buffer.from('x'), properties: new Map([['a', '100']]) } as never);
    await producer.send({ topic: 'SQL_SC', tag: 'T1', keys: ['late-yes'], body: Buffer.from('y'), properties: new Map([['a', '6']]) } as never);
    const late = await receiveUntil(c, 1, 10_000);
    assert.deepEqual(late.map((m) => m.keys[0]), ['late-yes']);
  });

  it(`PushConsumer with "${SQL}" consumes exactly k5, k7, k8`, async () => {
    await produce(producer, 'SQL_PUSH');
    const seen: string[] = [];
    const c = new PushConsumer({
      endpoints: h.endpoints,
      consumerGroup: 'SQL_PUSH_G',
      subscriptions: new Map([['SQL_PUSH', sqlFilter(SQL)]]),
      messageListener: {
        consume: async (m: MessageView) => {
          seen.push(`${m.keys[0]!}#${m.deliveryAttempt}`);
          return ConsumeResult.SUCCESS;
        },
      },
      logger: quietClientLogger,
      requestTimeout: 3000,
    } as never);
    await c.startup();
    closers.push(() => c.shutdown());
    await waitFor(() => seen.length >= EXPECTED.length, 20_000, () => `consumed ${JSON.stringify(seen)}`);
    await sleep(1500);
    assert.deepEqual([...seen].sort(), EXPECTED.map((k) => `${k}#1`));
  });

  it('a selector that does not compile: ReceiveMessage and the Telemetry settings answer ILLEGAL_FILTER_EXPRESSION (40010)', async () => {
    const c = simpleConsumer(h, 'SQL_BAD_G', 'SQL_SC', sqlFilter('a = 1'));
    await c.startup();
    closers.push(() => c.shutdown());
    await c.subscribe('SQL_SC', sqlFilter("a BETWEEN 9 AND 5"));
    await assert.rejects(c.receive(16, 10_000), (e: Error & { code?: number }) => {
      assert.equal(e.code, ILLEGAL_FILTER_EXPRESSION, e.message);
      assert.match(e.message, /BETWEEN lower bound 9 is greater than the upper bound 5/);
      return true;
    });
    const bad = simpleConsumer(h, 'SQL_BAD_G2', 'SQL_SC', sqlFilter('a >'));
    // the client wraps the settings status in a startup error
    await assert.rejects(bad.startup(), (e: Error) => {
      assert.match(e.message, /response-code=40010\] topic SQL_SC: Invalid SQL92 expression: expected a value, a property or '\(' but found end of expression at line 1, column 4/);
      return true;
    });
    await bad.shutdown().catch(() => {});
  });
});

describe('gRPC SQL92 filter (enablePropertyFilter=false)', { timeout: 60_000 }, () => {
  let h: Harness;

  before(async () => {
    h = await startHarness();
  });

  after(async () => {
    await h?.stop();
  });

  it('ReceiveMessage with a SQL filter expression → ILLEGAL_FILTER_EXPRESSION (40010)', async () => {
    const p = await startProducer(h, ['SQL_OFF']);
    await p.send({ topic: 'SQL_OFF', keys: ['k'], body: Buffer.from('x'), properties: new Map([['a', '1']]) } as never);
    await p.shutdown();
    const c = simpleConsumer(h, 'SQL_OFF_G', 'SQL_OFF', sqlFilter('a = 1'));
    await c.startup();
    try {
      await assert.rejects(c.receive(16, 10_000), (e: Error & { code?: number }) => {
        assert.equal(e.code, ILLEGAL_FILTER_EXPRESSION, e.message);
        assert.match(e.message, /SQL92 filter expressions are not supported \(enablePropertyFilter=false\)/);
        return true;
      });
    } finally {
      await c.shutdown().catch(() => {});
    }
  });
});
