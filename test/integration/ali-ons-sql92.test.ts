/**
 * The real `ali-ons` client subscribing with an SQL92 expression
 * (`subscribe(topic, { subString, expressionType: 'SQL92' }, handler)`) against an in-process
 * nameserver + broker started with enablePropertyFilter=true: exactly the matching messages are
 * delivered (ali-ons has no client-side SQL filter) and the group's offsets reach the end.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerController } from '../../src/broker/broker-controller.js';
import { NamesrvController } from '../../src/namesrv/namesrv-controller.js';
import { silentLogger } from '../../src/common/logging/logger.js';
import { createConsumer, newMessage, startProducer, waitUntil, type OnsConsumer, type OnsMessage, type OnsProducer } from '../support/ali-ons-client.js';

const TOPIC = 'OnsSqlTopic';
const SQL = "a BETWEEN 5 AND 9 AND TAGS IN ('T1')";

describe('ali-ons with an SQL92 subscription (enablePropertyFilter=true)', { timeout: 60_000 }, () => {
  let dir: string;
  let namesrv: NamesrvController;
  let broker: BrokerController;
  let producer: OnsProducer;
  let consumer: OnsConsumer | null = null;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsmq-ons-sql-'));
    namesrv = new NamesrvController({ listenPort: 0, logger: silentLogger });
    await namesrv.start();
    broker = await BrokerController.create({
      brokerConfig: {
        storePathRootDir: dir,
        listenPort: '0',
        namesrvAddr: `127.0.0.1:${namesrv.port}`,
        mappedFileSizeCommitLog: String(1024 * 1024),
        mappedFileSizeConsumeQueue: String(100 * 20),
        enablePropertyFilter: 'true',
      },
      logger: silentLogger,
    });
    await broker.start();
    producer = await startProducer(`127.0.0.1:${namesrv.port}`, 'PID_ONS_SQL');
  });

  after(async () => {
    await consumer?.close().catch(() => {});
    await producer?.close().catch(() => {});
    await broker?.shutdown();
    await namesrv?.shutdown();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`40 messages a = 0..19 (twice) with "${SQL}": exactly the six matches, offsets at the end`, async () => {
    const want: string[] = [];
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 20; i++) {
        const key = `ons-${round}-${i}`;
        const tag = i % 3 === 0 ? 'T2' : 'T1';
        const msg = newMessage(TOPIC, tag, Buffer.from(key), [key]) as { properties: Record<string, string> };
        msg.properties.a = String(i);
        await producer.send(msg);
        if (i >= 5 && i <= 9 && tag === 'T1') want.push(key);
      }
    }
    const got: string[] = [];
    // short long-poll: the client moves its offset past trailing filtered-out messages only when
    // a pull comes back empty (PULL_NOT_FOUND / PULL_RETRY_IMMEDIATELY), then persists it (every 5 s)
    consumer = createConsumer(`127.0.0.1:${namesrv.port}`, 'GID_ONS_SQL', { brokerSuspendMaxTimeMillis: 1000 });
    consumer.subscribe(TOPIC, { subString: SQL, expressionType: 'SQL92' }, async (m: OnsMessage) => {
      got.push(m.keys);
    });
    await consumer.ready();
    await waitUntil(() => got.length >= want.length, 20_000, () => `got ${JSON.stringify(got)}`);
    await new Promise((r) => setTimeout(r, 1000));
    assert.deepEqual([...got].sort(), [...want].sort());
    const offsets = broker.ctx.consumerOffsetManager;
    const store = broker.ctx.store;
    const atEnd = (q: number): boolean => offsets.queryOffset('GID_ONS_SQL', TOPIC, q) === store.getMaxOffsetInQueue(TOPIC, q);
    await waitUntil(() => [0, 1, 2, 3].every(atEnd), 15_000, () => [0, 1, 2, 3].map((q) => `${q}: ${offsets.queryOffset('GID_ONS_SQL', TOPIC, q)}/${store.getMaxOffsetInQueue(TOPIC, q)}`).join(', '));
    const total = [0, 1, 2, 3].reduce((n, q) => n + offsets.queryOffset('GID_ONS_SQL', TOPIC, q), 0);
    assert.equal(total, 40, 'every queue of the group committed up to its end');
  });
});
