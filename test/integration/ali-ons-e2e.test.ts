/**
 * End to end with the real, unmodified `ali-ons` client (npm) against `tsmq start` running as
 * a child process on loopback: produce, consume in a clustering group, tag filter, restart,
 * retry and DLQ, late group, bad input, and a byte-level check of the store afterwards.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess } from '../support/tsmq-process.js';
import {
  createConsumer,
  newMessage,
  startProducer,
  waitUntil,
  type OnsConsumer,
  type OnsMessage,
  type OnsProducer,
} from '../support/ali-ons-client.js';
import { rawInvoke, sendV2Frame } from '../support/raw-remoting.js';
import { verifyStoreOnDisk } from '../support/store-verifier.js';

/** ali-ons exposes KEYS as the raw space-separated string. */
function keyOf(msg: OnsMessage): string {
  return msg.keys.split(' ')[0]!;
}

const SHORT_DELAY_LEVELS = Array.from({ length: 18 }, () => '1s').join(' ');
const STORE_OPTIONS = {
  mappedFileSizeCommitLog: String(256 * 1024),
  mappedFileSizeConsumeQueue: String(100 * 20),
  messageDelayLevel: SHORT_DELAY_LEVELS,
  flushIntervalCommitLog: '100',
};
const TAGS = ['TagA', 'TagB', 'TagC', 'TagD'];
const N = 2000;
const BIG_INDEX = 1000;

function bodyFor(i: number): Buffer {
  if (i === BIG_INDEX) return Buffer.from(Array.from({ length: 10 * 1024 }, (_, j) => String.fromCharCode(97 + ((j * 7 + (j >> 5)) % 26))).join(''));
  return Buffer.from(`message-${i}-${'x'.repeat(i % 50)}`);
}

describe('ali-ons against tsmq start', { timeout: 300_000 }, () => {
  let storeDir: string;
  let broker: TsmqProcess;
  let producer: OnsProducer;
  const consumers: OnsConsumer[] = [];

  before(async () => {
    storeDir = mkdtempSync(join(tmpdir(), 'tsmq-e2e-'));
    broker = await TsmqProcess.start({ storeDir, options: STORE_OPTIONS });
    producer = await startProducer(broker.namesrvAddr, 'PID_E2E');
  });

  after(async () => {
    for (const c of consumers) await c.close().catch(() => {});
    await producer?.close().catch(() => {});
    await broker?.stop();
    rmSync(storeDir, { recursive: true, force: true });
  });

  it('delivers 2,000 keyed, tagged messages over 4 queues to a two-consumer group, bodies byte-identical', async () => {
    const queueIds = new Set<number>();
    const t0 = Date.now();
    for (let i = 0; i < N; i += 50) {
      const batch = [];
      for (let j = i; j < Math.min(N, i + 50); j++) {
        batch.push(producer.send(newMessage('E2E_MAIN', TAGS[j % 4]!, bodyFor(j), [`k${j}`])));
      }
      for (const r of await Promise.all(batch)) {
        assert.equal(r.sendStatus, 'SEND_OK');
        queueIds.add(Number(r.messageQueue.queueId));
      }
    }
    const produceMs = Date.now() - t0;
    assert.deepEqual([...queueIds].sort(), [0, 1, 2, 3]);

    const received = new Map<string, Buffer>();
    const t1 = Date.now();
    for (const name of ['c1', 'c2']) {
      const c = createConsumer(broker.namesrvAddr, 'GID_E2E', { instanceName: name });
      consumers.push(c);
      c.subscribe('E2E_MAIN', '*', async (msg: OnsMessage) => {
        received.set(keyOf(msg), msg.body);
      });
      await c.ready();
    }
    await waitUntil(() => received.size === N, 120_000, () => `received ${received.size}/${N}`);
    const consumeMs = Date.now() - t1;
    for (let i = 0; i < N; i++) assert.deepEqual(received.get(`k${i}`), bodyFor(i), `body of k${i}`);
    console.log(`# e2e rates: produce ${Math.round((N * 1000) / produceMs)} msgs/s, consume ${Math.round((N * 1000) / consumeMs)} msgs/s (informative)`);
  });

  it('a tag subscription "TagA || TagC" delivers exactly those messages', async () => {
    const got = new Map<string, string>();
    const c = createConsumer(broker.namesrvAddr, 'GID_TAGS', { instanceName: 'tags' });
    consumers.push(c);
    c.subscribe('E2E_MAIN', 'TagA || TagC', async (msg: OnsMessage) => {
      got.set(keyOf(msg), msg.tags);
    });
    await c.ready();
    await waitUntil(() => got.size >= N / 2, 60_000, () => `tag consumer got ${got.size}/${N / 2}`);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(got.size, N / 2);
    for (const [key, tag] of got) {
      const i = Number(key.slice(1));
      assert.equal(tag, TAGS[i % 4]);
      assert.ok(tag === 'TagA' || tag === 'TagC', `unexpected ${tag}`);
    }
  });

  it('a group started after production with CONSUME_FROM_FIRST_OFFSET reads everything', async () => {
    const keys = new Set<string>();
    const c = createConsumer(broker.namesrvAddr, 'GID_LATE', { instanceName: 'late' });
    consumers.push(c);
    c.subscribe('E2E_MAIN', '*', async (msg: OnsMessage) => {
      keys.add(keyOf(msg));
    });
    await c.ready();
    await waitUntil(() => keys.size === N, 60_000, () => `late group got ${keys.size}/${N}`);
  });

  it('a handler that fails once gets the message again with reconsumeTimes 1 and its original topic', async () => {
    const deliveries: Array<{ reconsumeTimes: number; topic: string }> = [];
    const c = createConsumer(broker.namesrvAddr, 'GID_RETRY', { instanceName: 'retry' });
    consumers.push(c);
    c.subscribe('E2E_RETRY', '*', async (msg: OnsMessage) => {
      if (keyOf(msg) !== 'once') return;
      deliveries.push({ reconsumeTimes: msg.reconsumeTimes, topic: msg.topic });
      if (deliveries.length === 1) throw new Error('fail once (expected by the test)');
    });
    await c.ready();
    await producer.send(newMessage('E2E_RETRY', 'TagR', Buffer.from('retry me'), ['once']));
    await waitUntil(() => deliveries.length >= 2, 60_000, () => `deliveries ${JSON.stringify(deliveries)}`);
    assert.deepEqual(deliveries[0], { reconsumeTimes: 0, topic: 'E2E_RETRY' });
    assert.deepEqual(deliveries[1], { reconsumeTimes: 1, topic: 'E2E_RETRY' });
  });

  it('a handler that always fails sends the message to %DLQ%<group> after maxReconsumeTimes', async () => {
    let attempts = 0;
    const c = createConsumer(broker.namesrvAddr, 'GID_DLQ', { instanceName: 'dlq', maxReconsumeTimes: 2 });
    consumers.push(c);
    c.subscribe('E2E_DLQ', '*', async (msg: OnsMessage) => {
      if (keyOf(msg) !== 'always') return;
      attempts++;
      throw new Error('always fails (expected by the test)');
    });
    await c.ready();
    const sent = await producer.send(newMessage('E2E_DLQ', 'TagX', Buffer.from('dead letter'), ['always']));
    await waitUntil(() => attempts >= 3, 60_000, () => `attempts ${attempts}`);

    const dlq: OnsMessage[] = [];
    const reader = createConsumer(broker.namesrvAddr, 'GID_DLQ_READER', { instanceName: 'dlqreader' });
    consumers.push(reader);
    reader.subscribe('%DLQ%GID_DLQ', '*', async (msg: OnsMessage) => {
      dlq.push(msg);
    });
    await reader.ready();
    await waitUntil(() => dlq.length >= 1, 60_000, () => 'no message in %DLQ%GID_DLQ');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(attempts, 3, 'original delivery + 2 retries');
    assert.equal(dlq.length, 1);
    assert.equal(dlq[0]!.body.toString(), 'dead letter');
    assert.equal(dlq[0]!.properties.RETRY_TOPIC, 'E2E_DLQ');
    assert.equal(dlq[0]!.properties.ORIGIN_MESSAGE_ID, sent.msgId);
    assert.equal(dlq[0]!.properties.DELAY, undefined);
    assert.equal(dlq[0]!.reconsumeTimes, 3);
  });

  it('bad input gets a clear error and the broker keeps serving', async () => {
    // Unknown request code.
    const unknown = await rawInvoke(broker.brokerAddr, { code: 9999, extFields: {} });
    assert.equal(unknown.header.code, 3);
    assert.match(String(unknown.header.remark), /not supported/);
    // Garbage header: the broker closes that connection only.
    const garbage = await rawInvoke(broker.brokerAddr, null, Buffer.from([0, 0, 0, 12, 0, 0, 0, 8, 0x7b, 0x7b, 0x7b, 0x7b, 1, 2, 3, 4]));
    assert.equal(garbage.closed, true);
    // Oversized body: 4 MiB + 1 byte.
    const big = await sendV2Frame(broker.brokerAddr, 'E2E_BAD', Buffer.alloc(4 * 1024 * 1024 + 1, 0x61));
    assert.equal(big.header.code, 13);
    assert.match(String(big.header.remark), /4194305/);
    // Illegal topic names.
    const dotted = await sendV2Frame(broker.brokerAddr, 'a.b', Buffer.from('x'));
    assert.equal(dotted.header.code, 13);
    assert.match(String(dotted.header.remark), /a\.b/);
    const tooLong = await sendV2Frame(broker.brokerAddr, 'T'.repeat(128), Buffer.from('x'));
    assert.equal(tooLong.header.code, 13);
    // Still serving.
    const ok = await producer.send(newMessage('E2E_MAIN', 'TagA', Buffer.from('after bad input'), ['after-bad']));
    assert.equal(ok.sendStatus, 'SEND_OK');
  });

  it('a graceful restart mid-stream loses nothing and queue offsets continue', async () => {
    const firstKeys: string[] = [];
    const seen = new Map<string, number>();
    const offsetsBefore = new Map<number, number>();
    for (let i = 0; i < 200; i++) {
      const r = await producer.send(newMessage('E2E_RESTART', 'T', Buffer.from(`r${i}`), [`r${i}`]));
      firstKeys.push(`r${i}`);
      const q = Number(r.messageQueue.queueId);
      offsetsBefore.set(q, Math.max(offsetsBefore.get(q) ?? -1, Number(r.queueOffset)));
    }
    let c = createConsumer(broker.namesrvAddr, 'GID_RESTART', { instanceName: 'restart1' });
    c.subscribe('E2E_RESTART', '*', async (msg: OnsMessage) => {
      seen.set(keyOf(msg), (seen.get(keyOf(msg)) ?? 0) + 1);
    });
    await c.ready();
    await waitUntil(() => seen.size === 200, 60_000, () => `before restart ${seen.size}/200`);
    await c.close();
    await producer.close();

    assert.equal(await broker.stop(), 0, broker.log);
    broker = await TsmqProcess.start({ storeDir, namesrvPort: broker.namesrvPort, listenPort: broker.listenPort, options: STORE_OPTIONS });
    producer = await startProducer(broker.namesrvAddr, 'PID_E2E');

    for (let i = 200; i < 400; i++) {
      const r = await producer.send(newMessage('E2E_RESTART', 'T', Buffer.from(`r${i}`), [`r${i}`]));
      const prev = offsetsBefore.get(Number(r.messageQueue.queueId))!;
      assert.ok(Number(r.queueOffset) > prev, `queue ${r.messageQueue.queueId} offset ${r.queueOffset} continues after ${prev}`);
    }
    c = createConsumer(broker.namesrvAddr, 'GID_RESTART', { instanceName: 'restart2' });
    consumers.push(c);
    c.subscribe('E2E_RESTART', '*', async (msg: OnsMessage) => {
      seen.set(keyOf(msg), (seen.get(keyOf(msg)) ?? 0) + 1);
    });
    await c.ready();
    await waitUntil(() => seen.size === 400, 60_000, () => `after restart ${seen.size}/400`);
    const redelivered = firstKeys.filter((k) => (seen.get(k) ?? 0) > 1);
    assert.deepEqual(redelivered, [], 'the group resumes from its committed offsets');
  });

  it('on disk: every CommitLog record is valid and every ConsumeQueue entry points at its record', async () => {
    for (const c of consumers.splice(0)) await c.close().catch(() => {});
    await producer.close();
    producer = null;
    assert.equal(await broker.stop(), 0, broker.log);
    const report = await verifyStoreOnDisk(storeDir, {
      mappedFileSizeCommitLog: 256 * 1024,
      mappedFileSizeConsumeQueue: 100 * 20,
      delayLevelTableMs: Array.from({ length: 18 }, () => 1000),
    });
    assert.ok(report.records >= N + 400, `records ${report.records}`);
    assert.ok(report.commitLogFiles >= 2, 'the CommitLog rolled over');
    assert.equal(report.queues.get('E2E_MAIN')?.reduce((a, b) => a + b, 0), N + 1);
    assert.equal(report.queues.get('E2E_RESTART')?.reduce((a, b) => a + b, 0), 400);
    assert.equal(report.abortFilePresent, false);
  });
});
