/**
 * Timer store byte compatibility with Apache RocketMQ 5.3.3 (rocketmq-store's TimerMessageStore,
 * Java peer test/interop/java/store5 ApacheTimer5Peer), both directions, default file layout
 * (7-day timerwheel, 100 MiB timerlog segments, config/timercheck), timerPrecisionMs 1000:
 *   - timers accepted by tsmq and left pending in its wheel are delivered by Apache;
 *   - timers Apache put in its wheel are delivered by tsmq from Apache's files (without
 *     re-reading rmq_sys_wheel_timer: nothing enqueued again).
 * Skips when `java` or `mvn` is not installed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerController } from '../../src/broker/broker-controller.js';
import { silentLogger } from '../../src/common/logging/logger.js';
import { decodeRecord } from '../../src/common/message/record-codec.js';
import { assertRanOk, buildPeer, javaSkipReason, runJava, type BuiltPeer } from './support/java-peers.js';

const CL = 1024 * 1024;
const CQ = 20 * 1000;
const N = 20;
const QUEUES = 4;
const host = { ip: Buffer.from([127, 0, 0, 1]), port: 10911 };
const propertyNames = (s: string): string => s.split('\u0002').filter((kv) => kv.length > 0).map((kv) => kv.split('\u0001')[0]!).sort().join(',');
/** Property names of what Apache delivered (test 1), compared with tsmq's deliveries (test 2). */
const apacheDeliveredKeys: string[] = [];

describe('timer store compatibility with Apache RocketMQ 5.3.3 TimerMessageStore', { skip: javaSkipReason(), timeout: 300_000 }, () => {
  let peer: BuiltPeer;
  const dirs: string[] = [];
  before(async () => {
    peer = await buildPeer('rocketmq5-store');
  });
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const brokerConfig = (dir: string) => ({ storePathRootDir: dir, listenPort: '0', namesrvAddr: '', mappedFileSizeCommitLog: String(CL), mappedFileSizeConsumeQueue: String(CQ) });

  it('Apache delivers timers that tsmq accepted (tsmq timerwheel/timerlog/timercheck)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsmq-timer-compat-a-'));
    dirs.push(dir);
    const broker = await BrokerController.create({ brokerConfig: brokerConfig(dir), logger: silentLogger });
    await broker.start();
    const deliverMs = Date.now() + 9000;
    for (let i = 0; i < N; i++) {
      const r = await broker.ctx.putMessage({
        topic: 'TimerCompatA', queueId: i % QUEUES, flag: 0, body: Buffer.from(`tsmq-${i}`),
        properties: new Map([['KEYS', `tsmq-${i}`], ['UNIQ_KEY', `TSMQ${i}`], ['TAGS', 'TagA'], ['TIMER_DELIVER_MS', String(deliverMs + i * 10)]]),
        sysFlag: 0, bornTimestamp: Date.now(), bornHost: host, storeHost: host, reconsumeTimes: 0, preparedTransactionOffset: 0,
      });
      assert.equal(r.status, 'PUT_OK');
    }
    const timer = broker.timerMessageService!;
    while (timer.stats.commitQueueOffset < N) await new Promise((r) => setTimeout(r, 20));
    assert.equal(timer.pendingCount(), N);
    await broker.shutdown();
    const run = await runJava(peer, 'tsmq.interop.store5.ApacheTimer5Peer', ['deliver', dir, `until=${deliverMs + N * 10 + 2500}`, 'topic=TimerCompatA', `queues=${QUEUES}`, '--cl', String(CL), '--cq', String(CQ)], { timeoutMs: 120_000 });
    assertRanOk(run, 'ApacheTimer5Peer deliver');
    const msgs = run.lines.filter((l) => l.type === 'msg');
    assert.deepEqual(msgs.map((m) => m.key as string).sort(), Array.from({ length: N }, (_, i) => `tsmq-${i}`).sort(), run.stderr.slice(-3000));
    for (const m of msgs) {
      const i = Number(String(m.key).split('-')[1]);
      assert.ok(Number(m.storeTimestamp) >= deliverMs + i * 10, `${m.key as string} delivered by Apache ${deliverMs + i * 10 - Number(m.storeTimestamp)} ms early`);
      assert.equal(Number(m.timerOutMs) % 1000, 0);
      assert.equal(m.realTopic, 'TimerCompatA');
      apacheDeliveredKeys.push(propertyNames(String(m.props)));
    }
  });

  it('tsmq delivers timers that Apache put in its wheel (Apache timerwheel/timerlog/timercheck)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsmq-timer-compat-b-'));
    dirs.push(dir);
    const run = await runJava(peer, 'tsmq.interop.store5.ApacheTimer5Peer', ['write', dir, `count=${N}`, 'delayMs=9000', 'topic=TimerCompatB', `queues=${QUEUES}`, '--cl', String(CL), '--cq', String(CQ)], { timeoutMs: 120_000 });
    assertRanOk(run, 'ApacheTimer5Peer write');
    const sent = run.lines.filter((l) => l.type === 'sent');
    assert.equal(sent.length, N, run.stderr.slice(-3000));
    assert.equal(run.lines.find((l) => l.type === 'enqueued')?.behind, 0);
    const broker = await BrokerController.create({ brokerConfig: brokerConfig(dir), logger: silentLogger });
    await broker.start();
    try {
      const timer = broker.timerMessageService!;
      assert.equal(timer.stats.commitQueueOffset, N, 'resumes after what Apache put in its wheel');
      assert.equal(timer.pendingCount(), N, 'Apache wheel slots read');
      const lastDue = Math.max(...sent.map((s) => Number(s.deliverMs)));
      while (Date.now() < lastDue + 2000) await new Promise((r) => setTimeout(r, 100));
      const got: Array<{ key: string; storeTimestamp: number }> = [];
      const tsmqDeliveredKeys: string[] = [];
      for (let q = 0; q < QUEUES; q++) {
        const r = await broker.ctx.store.getMessage('G', 'TimerCompatB', q, 0, 100, null);
        for (const rec of r.messages) {
          const m = decodeRecord(rec);
          got.push({ key: m.properties.get('KEYS')!, storeTimestamp: m.storeTimestamp });
          tsmqDeliveredKeys.push([...m.properties.keys()].sort().join(','));
        }
      }
      assert.deepEqual(got.map((g) => g.key).sort(), sent.map((s) => s.key as string).sort());
      const due = new Map(sent.map((s) => [s.key as string, Number(s.deliverMs)]));
      for (const g of got) assert.ok(g.storeTimestamp >= due.get(g.key)!, `${g.key} delivered ${due.get(g.key)! - g.storeTimestamp} ms early`);
      assert.equal(timer.stats.enqueued, 0, 'nothing re-read from rmq_sys_wheel_timer');
      // Same stored property names as Apache's own deliveries (test 1: same inputs but KEYS/TAGS order).
      assert.deepEqual(new Set(tsmqDeliveredKeys), new Set(apacheDeliveredKeys));
    } finally {
      await broker.shutdown();
    }
  });
});
