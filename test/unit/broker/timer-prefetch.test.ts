/**
 * Timer prefetch (timer-prefetch.ts) through a real broker: a slot due soon is read and encoded
 * ahead; at due time its deliveries are appended as prepared records. Timers added to the slot
 * after the prefetch walked it are still delivered, a recall that arrives after the walk still
 * wins, nothing is delivered early or twice, TIMER_DEQUEUE_MS is the delivery time (not the
 * prefetch time), and beyond timerPrefetchMaxBytes the rest is read and prepared at due time.
 * Records prepared ahead and at due time are byte-equal apart from queue/physical offsets, store
 * time and TIMER_DEQUEUE_MS.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import type { MessageExt, MessageInner } from '../../../src/common/message/message.js';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { tempDir, removeDir } from '../../support/store-fixtures.js';

const PRECISION_MS = 100;
const host = { ip: Buffer.from([127, 0, 0, 1]), port: 10911 };
const timer = (topic: string, dueMs: number, uniq: string, extra: [string, string][] = []): MessageInner => ({
  topic,
  queueId: 1,
  flag: 0,
  body: Buffer.from(`body-${uniq}`),
  properties: new Map([['TIMER_DELIVER_MS', String(dueMs)], ['UNIQ_KEY', uniq], ['TAGS', 'tg'], ['KEYS', `k-${uniq}`], ...extra]),
  sysFlag: 0,
  bornTimestamp: 1_700_000_000_000,
  bornHost: host,
  storeHost: host,
  reconsumeTimes: 0,
  preparedTransactionOffset: 0,
});
const recall = (topic: string, dueMs: number, uniq: string): MessageInner => ({
  ...timer(topic, dueMs, `${uniq}-recall`),
  queueId: 0,
  body: Buffer.from('0'),
  properties: new Map([['TAGS', '_RECALL_TAG_'], ['TIMER_DEL_UNIQKEY', `${topic}+${uniq}`], ['UNIQ_KEY', uniq], ['TIMER_DELIVER_MS', String(dueMs)]]),
});

async function until(cond: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function delivered(broker: BrokerController, topic: string): Promise<MessageExt[]> {
  const out: MessageExt[] = [];
  for (let offset = 0; offset < broker.ctx.store.getMaxOffsetInQueue(topic, 1); ) {
    const got = await broker.ctx.store.getMessage('G', topic, 1, offset, 32, null);
    for (const b of got.messages) out.push(decodeRecord(b));
    offset = got.nextBeginOffset;
  }
  return out;
}

/** A record with the fields that differ between two deliveries of the same timer zeroed. */
function normalised(m: MessageExt): string {
  const props = new Map(m.properties);
  props.set('TIMER_DEQUEUE_MS', 'x');
  return JSON.stringify({ ...m, queueOffset: 0, commitLogOffset: 0, storeTimestamp: 0, msgId: '', properties: [...props], body: m.body.toString('hex'), bornHost: 0, storeHost: 0, storeSize: m.storeSize });
}

describe('timer prefetch', { timeout: 60_000 }, () => {
  const dir = tempDir('tsmq-timer-prefetch-');
  after(() => removeDir(dir));

  const open = async (root: string, extra: Record<string, string> = {}) => {
    const broker = await BrokerController.create({
      brokerConfig: { storePathRootDir: root, listenPort: '0', namesrvAddr: '', mappedFileSizeCommitLog: String(1024 * 1024), timerPrecisionMs: String(PRECISION_MS), timerFlushIntervalMs: '100', timerPrefetchWindowMs: '4000', ...extra },
      logger: silentLogger,
      timerSlotsTotal: 3600,
    });
    await broker.start();
    broker.ctx.topicConfigManager.createTopicInSendMessageBackMethod('PF_T', 4, 6, 0);
    return broker;
  };

  const lateArrivals = async (name: string, stopPrefetchAfterWalk: boolean) => {
    const broker = await open(`${dir}/${name}`);
    try {
      const due = Math.ceil((Date.now() + 2500) / PRECISION_MS) * PRECISION_MS;
      for (let i = 0; i < 40; i++) assert.ok((await broker.ctx.putMessage(timer('PF_T', due, `P${i}`))).appendResult);
      const svc = broker.timerMessageService!;
      await until(() => (svc.prefetchStats?.prepared ?? 0) >= 40, 'the slot prepared');
      // stopped: the late ones are only seen at due time (take + units above the walked lastPos);
      // running: the prefetch extends the slot with them before due
      const prefetch = (svc as unknown as { prefetch: { round: () => Promise<number> } }).prefetch;
      if (stopPrefetchAfterWalk) prefetch.round = async () => 1000;
      const preparedAt = Date.now();
      assert.ok(preparedAt < due - 300, `prepared ${due - preparedAt} ms before due`);
      // after the walk: 5 more timers for the same slot and a recall of P7
      for (let i = 0; i < 5; i++) assert.ok((await broker.ctx.putMessage(timer('PF_T', due, `L${i}`))).appendResult);
      assert.ok((await broker.ctx.putMessage(recall('PF_T', due, 'P7'))).appendResult);
      await until(() => broker.ctx.store.getMaxOffsetInQueue('PF_T', 1) >= 44, 'every delivery');
      await new Promise((r) => setTimeout(r, 300)); // nothing more comes (no duplicate, no recalled one)
      const got = await delivered(broker, 'PF_T');
      const keys = got.map((m) => m.properties.get('UNIQ_KEY')!);
      assert.equal(got.length, 44);
      assert.equal(new Set(keys).size, 44, 'each delivered once');
      assert.ok(!keys.includes('P7'), 'the late recall won');
      for (let i = 0; i < 5; i++) assert.ok(keys.includes(`L${i}`), `late timer L${i} delivered`);
      for (const m of got) {
        assert.ok(m.storeTimestamp >= due, `never early: stored ${m.storeTimestamp - due} ms after due`);
        const dq = Number(m.properties.get('TIMER_DEQUEUE_MS'));
        assert.ok(dq >= due && dq <= m.storeTimestamp, `TIMER_DEQUEUE_MS ${dq} is the delivery time (due ${due}, stored ${m.storeTimestamp})`);
        assert.equal(m.properties.get('REAL_TOPIC'), 'PF_T');
        assert.equal(m.properties.get('REAL_QID'), '1');
        assert.match(m.properties.get('TIMER_ENQUEUE_MS') ?? '', /^\d+$/);
      }
      // prepared ahead (P0) and at due time (L0, with the prefetch stopped) write the same record
      const late = got.find((m) => m.properties.get('UNIQ_KEY') === 'L0')!;
      const early = got.find((m) => m.properties.get('UNIQ_KEY') === 'P0')!;
      const asIf = normalised({ ...late, body: early.body, properties: new Map([...late.properties].map(([k, v]) => [k, k === 'UNIQ_KEY' ? 'P0' : k === 'KEYS' ? 'k-P0' : k === 'TIMER_ENQUEUE_MS' ? early.properties.get(k)! : v])), bodyCrc: early.bodyCrc, storeSize: early.storeSize });
      assert.equal(normalised(early), asIf);
      assert.equal(svc.stats.recalled, 1);
      assert.equal(svc.stats.deliveredPrepared, 44, 'every delivery appended as a prepared record');
      // stopped: the 5 late ones were read and prepared at due time; running: ahead with the rest
      assert.equal(svc.prefetchStats!.prepared, stopPrefetchAfterWalk ? 40 : 45, 'prepared ahead');
      assert.equal(svc.prefetchStats!.preparedAtDue, stopPrefetchAfterWalk ? 5 : 0, 'prepared at due time');
      // the index and the ConsumeQueue tags code see delivered messages as any put
      const q = await broker.ctx.store.queryMessage('PF_T', 'k-P3', 8, 0, Number.MAX_SAFE_INTEGER);
      assert.equal(q.messages.length, 1);
    } finally {
      await broker.shutdown();
    }
  };

  it('delivers a prefetched slot at due time; timers and a recall added after the walk are taken at due time', () => lateArrivals('late-at-due', true));
  it('a running prefetch extends the slot with timers and recalls added before due', () => lateArrivals('late-extend', false));

  it('a slot too large for the window starts before it (its units × the time per unit); a small slot waits for the window', async () => {
    const broker = await open(`${dir}/early`); // window 4000 ms
    try {
      const svc = broker.timerMessageService!;
      const prefetch = (svc as unknown as { prefetch: { defaultUnitMs: number } }).prefetch;
      prefetch.defaultUnitMs = 15; // 80 units × 2 × 15 ms: starts 2.4 s before the window
      const big = Math.ceil((Date.now() + 6000) / PRECISION_MS) * PRECISION_MS;
      const small = big + 300;
      for (let i = 0; i < 3; i++) assert.ok((await broker.ctx.putMessage(timer('PF_T', small, `S${i}`))).appendResult); // 3 × 2 × 15 ms: 90 ms early at most
      for (let i = 0; i < 80; i++) assert.ok((await broker.ctx.putMessage(timer('PF_T', big, `E${i}`))).appendResult);
      await until(() => (svc.prefetchStats?.prepared ?? 0) >= 80, 'the large slot prepared');
      const left = big + PRECISION_MS - Date.now();
      assert.ok(left > 4000 + 200, `prepared ${left} ms before due: before the 4000 ms window`);
      assert.equal(svc.prefetchStats!.startedEarly, 1);
      assert.equal(svc.prefetchStats!.slots, 1, 'the small slot is not walked before its window');
      await until(() => broker.ctx.store.getMaxOffsetInQueue('PF_T', 1) >= 83 && svc.stats.delivered >= 83, 'every delivery'); // counted once its block is stored
      const got = await delivered(broker, 'PF_T');
      assert.equal(got.length, 83);
      for (const m of got) assert.ok(m.storeTimestamp >= (m.properties.get('UNIQ_KEY')!.startsWith('S') ? small : big), 'never early');
      assert.equal(svc.stats.deliveredPrepared, 83, JSON.stringify({ stats: svc.stats, prefetch: svc.prefetchStats, small: got.filter((m) => m.properties.get('UNIQ_KEY')!.startsWith('S')).map((m) => m.storeTimestamp - small) }));
    } finally {
      await broker.shutdown();
    }
  });

  it('a large slot beyond the window is probed (one chunk prepared ahead measures the time per unit); the rest waits for its start', async () => {
    const broker = await open(`${dir}/probe`); // window 4000 ms
    try {
      const svc = broker.timerMessageService!;
      const prefetch = (svc as unknown as { prefetch: { defaultUnitMs: number; probeMinUnits: number } }).prefetch;
      prefetch.defaultUnitMs = 0.0001; // unmeasured, the slot would never start before its window
      prefetch.probeMinUnits = 300;
      const due = Math.ceil((Date.now() + 12_000) / PRECISION_MS) * PRECISION_MS;
      for (let i = 0; i < 600; i++) assert.ok((await broker.ctx.putMessage(timer('PF_T', due, `P${i}`))).appendResult);
      await until(() => (svc.prefetchStats?.probes ?? 0) >= 1 && (svc.prefetchStats?.prepared ?? 0) >= 256, 'the probe');
      const left = due + PRECISION_MS - Date.now();
      assert.ok(left > 4000, `probed ${left} ms before due: before the 4000 ms window`);
      assert.ok(svc.prefetchStats!.unitUs > 0, 'the probe measured the time per unit');
      assert.equal(svc.prefetchStats!.startedEarly, 0, 'measured, the slot is small enough for its window');
      await until(() => broker.ctx.store.getMaxOffsetInQueue('PF_T', 1) >= 600 && svc.stats.delivered >= 600, 'every delivery');
      const got = await delivered(broker, 'PF_T');
      assert.equal(got.length, 600);
      assert.equal(new Set(got.map((m) => m.properties.get('UNIQ_KEY'))).size, 600, 'each timer once');
      for (const m of got) assert.ok(m.storeTimestamp >= due, 'never early');
      assert.equal(svc.stats.deliveredPrepared, 600);
      assert.equal(svc.prefetchStats!.prepared + svc.prefetchStats!.preparedAtDue, 600);
    } finally {
      await broker.shutdown();
    }
  });

  it('beyond timerPrefetchMaxBytes the rest is prepared at due time; windowMs 0 prepares nothing ahead', async () => {
    for (const [name, extra, preparedMax] of [
      ['budget', { timerPrefetchMaxBytes: '6000' }, 15], // ~0.5 KB held per prepared 100-byte timer (record + row): about a dozen fit
      ['off', { timerPrefetchWindowMs: '0' }, 0],
    ] as const) {
      const broker = await open(`${dir}/${name}`, extra);
      try {
        const due = Math.ceil((Date.now() + 1500) / PRECISION_MS) * PRECISION_MS;
        for (let i = 0; i < 30; i++) assert.ok((await broker.ctx.putMessage(timer('PF_T', due, `B${i}`))).appendResult);
        await until(() => broker.ctx.store.getMaxOffsetInQueue('PF_T', 1) >= 30, 'every delivery');
        await new Promise((r) => setTimeout(r, 200));
        const got = await delivered(broker, 'PF_T');
        assert.equal(got.length, 30);
        assert.deepEqual(got.map((m) => m.properties.get('UNIQ_KEY')).sort(), Array.from({ length: 30 }, (_, i) => `B${i}`).sort());
        for (const m of got) assert.ok(m.storeTimestamp >= due);
        const svc = broker.timerMessageService!;
        assert.ok(svc.prefetchStats!.prepared <= preparedMax, `${name}: ${svc.prefetchStats!.prepared} prepared ahead`);
        if (name === 'budget') {
          assert.ok(svc.prefetchStats!.prepared > 0, 'some were prepared within the budget');
          assert.ok(svc.prefetchStats!.overBudget > 0, 'the rest was left to due time');
        }
        // what was not prepared ahead is read and prepared at due time, in blocks
        assert.equal(svc.prefetchStats!.prepared + svc.prefetchStats!.preparedAtDue, 30);
        assert.equal(svc.stats.deliveredPrepared, 30);
        assert.equal(svc.stats.delivered, 30);
      } finally {
        await broker.shutdown();
      }
    }
  });
});
