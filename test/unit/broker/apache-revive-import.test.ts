/**
 * Taking over Apache RocketMQ 5.x pops in flight (src/broker/pop/apache-revive-import.ts): the
 * checkpoint / ack / batch-ack messages are written into a real CommitLog (DefaultMessageStore) as
 * Apache 5.3.3 writes them — JSON bodies with its short field names, tags ck / ack / bAck, in
 * rmq_sys_REVIVE_LOG_<cluster> or still pending in the timer topic rmq_sys_wheel_timer
 * (REAL_TOPIC) — and tsmq's PopService then redelivers exactly the un-acked ones after their
 * invisible time, once.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import type { Logger } from '../../../src/common/logging/logger.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { NodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { socketAddressOf } from '../../../src/common/message/msgid.js';
import type { MessageInner } from '../../../src/common/message/message.js';
import { PopStateStore } from '../../../src/broker/pop/pop-state-store.js';
import { PopService } from '../../../src/broker/pop/pop-service.js';
import type { PopBroker } from '../../../src/broker/pop/pop-broker.js';
import { commitApacheReviveOffsets, importApacheRevive, type ApacheReviveImportOptions } from '../../../src/broker/pop/apache-revive-import.js';
import { APACHE_REVIVE_GROUP, decodeApacheReviveRecord } from '../../../src/broker/pop/apache-revive-records.js';

const T0 = 1_700_000_000_000;
const REVIVE = 'rmq_sys_REVIVE_LOG_MigCluster';
const TIMER = 'rmq_sys_wheel_timer';
const host = socketAddressOf('127.0.0.1', 10911);

function msg(topic: string, queueId: number, body: string | Buffer, props: Record<string, string>): MessageInner {
  return {
    topic, queueId, flag: 0, body: Buffer.isBuffer(body) ? body : Buffer.from(body), properties: new Map(Object.entries(props)),
    sysFlag: 0, bornTimestamp: T0, bornHost: host, storeHost: host, reconsumeTimes: 0, preparedTransactionOffset: 0,
  };
}

/** A PopCheckPoint as Apache's fastjson writes it. */
const ck = (t: string, q: number, so: number, diffs: number[], pt: number, it: number, bm = 0, c = 'G') =>
  JSON.stringify({ so, pt, it, bm, n: diffs.length, q, t, c, ro: 0, d: diffs, bn: 'broker-a' });
const ack = (t: string, q: number, so: number, ao: number, pt: number, c = 'G') => JSON.stringify({ ao, so, c, t, q, pt, bn: 'broker-a' });
const bAck = (t: string, q: number, so: number, aol: number[], pt: number, c = 'G') => JSON.stringify({ aol, so, c, t, q, pt, bn: 'broker-a' });

describe('taking over Apache pops in flight (revive topic import)', () => {
  it('decodes Apache checkpoint / ack / batch ack bodies, old checkpoints without d, and rejects bad ones', () => {
    const c = decodeApacheReviveRecord('ck', Buffer.from(ck('T', 2, 10, [0, 3, 7], 5, 60_000, 0b010)));
    assert.equal(c?.kind, 'ck');
    if (c?.kind === 'ck') {
      assert.deepEqual(c.ck.offsets, [10, 13, 17]);
      assert.deepEqual([...c.ck.acked], [13]);
      assert.equal(c.ck.popTimeMs + c.ck.invisibleTimeMs, 60_005);
    }
    const old = decodeApacheReviveRecord('ck', Buffer.from(JSON.stringify({ so: 4, pt: 1, it: 2, bm: 0, n: 3, q: 0, t: 'T', c: 'G' })));
    assert.deepEqual(old?.kind === 'ck' && old.ck.offsets, [4, 5, 6]);
    const a = decodeApacheReviveRecord('ack', Buffer.from(JSON.stringify({ ackOffset: 9, startOffset: 8, consumerGroup: 'G', topic: 'T', queueId: 1, popTime: 77 })));
    assert.deepEqual(a, { kind: 'ack', ack: { group: 'G', topic: 'T', queueId: 1, startOffset: 8, popTimeMs: 77, offsets: [9] } });
    const b = decodeApacheReviveRecord('bAck', Buffer.from(bAck('T', 1, 8, [8, 9], 77)));
    assert.deepEqual(b?.kind === 'ack' && b.ack.offsets, [8, 9]);
    assert.equal(decodeApacheReviveRecord('other', Buffer.from('{}')), null);
    assert.throws(() => decodeApacheReviveRecord('ck', Buffer.from('nope')), /not JSON/);
    assert.throws(() => decodeApacheReviveRecord('ack', Buffer.from(JSON.stringify({ so: 1, c: 'G', t: 'T', q: 0, pt: 1 }))), /field ao \(ackOffset\)/);
  });

  it('imports the un-acked offsets of checkpoints from the revive topic and the timer topic; tsmq redelivers them after their invisible time, once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsmq-revive-'));
    const clock = new ManualClock(T0);
    const warnings: string[] = [];
    const logger: Logger = Object.assign(Object.create(silentLogger) as Logger, { warn: (m: object | string) => void warnings.push(String(m)) });
    const store = await DefaultMessageStore.open({ storePathRootDir: dir, mappedFileSizeCommitLog: 4 * 1024 * 1024, mappedFileSizeConsumeQueue: 600 }, { clock, logger: silentLogger });
    const openState = () => PopStateStore.open({ dir: join(dir, 'pop'), fs: new NodeFileSystem(), clock, flushIntervalMs: 1000, syncFlush: false, compactLogBytes: 1 << 20 });
    let state = openState();
    try {
      for (let i = 0; i < 12; i++) await store.putMessage(msg('MigPop', 0, `m${i}`, { UNIQ_KEY: `U${i}` }));
      for (let i = 0; i < 2; i++) await store.putMessage(msg('MigPop', 1, `q1-${i}`, {}));
      await store.putMessage(msg('%RETRY%G_MigPop', 0, 'r0', {}));
      const committed = new Map<string, number>([
        ['G/MigPop/0', 11], // Apache moved the group past everything it popped (offset 11 never popped)
        ['G/MigPop/1', 2],
        ['G/%RETRY%G_MigPop/0', 1],
        [`${APACHE_REVIVE_GROUP}/${REVIVE}/3`, 1], // the revive service is past CK0
      ]);
      const putRevive = (tag: string, body: string) => store.putMessage(msg(REVIVE, 3, body, { TAGS: tag, WAIT: 'true' }));
      const putTimer = (tag: string, body: string, dueMs: number) =>
        store.putMessage(msg(TIMER, 0, body, { TAGS: tag, REAL_TOPIC: REVIVE, REAL_QID: '3', TIMER_OUT_MS: String(dueMs), TIMER_DELIVER_MS: String(dueMs) }));
      const ck0 = ck('MigPop', 1, 0, [0, 1], T0 - 120_000, 60_000);
      await putRevive('ck', ck0); // revive offset 0: already revived by Apache
      await putRevive('ck', ck('MigPop', 0, 0, [0, 1, 2, 3, 4, 5], T0 - 5000, 60_000, 0b10)); // CK1, offset 1 acked in its bit map
      await putRevive('ack', ack('MigPop', 0, 0, 0, T0 - 5000));
      await putRevive('ck', 'this is not a checkpoint'); // logged and skipped
      await putRevive('ck', ck('%RETRY%G_MigPop', 0, 0, [0], T0 - 4000, 20_000));
      // still in Apache's timer at the swap: CK0's original (already revived: must not come back),
      // CK2 and its acks, a batch ack of CK1, a ChangeInvisibleTime of offset 10
      await putTimer('ck', ck0, T0 - 61_000);
      await putTimer('ck', ck('MigPop', 0, 6, [0, 1, 2, 3], T0 - 2000, 60_000), T0 + 57_000);
      await putTimer('ack', ack('MigPop', 0, 6, 7, T0 - 2000), T0 + 58_000);
      await putTimer('bAck', bAck('MigPop', 0, 0, [3, 4], T0 - 5000), T0 + 55_000);
      await putTimer('ck', ck('MigPop', 0, 10, [0], T0 - 3000, 10_000), T0 + 6000);
      await putTimer('ck', ck('MigPop', 0, 10, [0], T0 - 1000, 30_000), T0 + 28_000);
      await putTimer('ack', ack('MigPop', 0, 10, 10, T0 - 3000), T0 + 7000);
      await store.putMessage(msg(TIMER, 0, 'a user timer', { REAL_TOPIC: 'MigPop', REAL_QID: '0', TIMER_OUT_MS: String(T0 + 1000) }));

      const opts = (): ApacheReviveImportOptions => ({
        store, state, clusterName: 'MigCluster', reviveTopicKnown: true, reviveQueueNum: 8, timerWindowMs: 3_600_000, clock, logger,
        committedOffset: (g, t, q) => committed.get(`${g}/${t}/${q}`) ?? -1,
        commitOffset: (g, t, q, off) => void committed.set(`${g}/${t}/${q}`, off),
      });
      const r = await importApacheRevive(opts());
      assert.deepEqual({ checkPoints: r.checkPoints, imported: r.imported, skipped: r.skipped }, { checkPoints: 5, imported: 7, skipped: 0 });
      assert.ok(warnings.some((w) => /offset 3: .*not JSON/.test(w)), warnings.join('\n'));
      const st = state.table.get('G', 'MigPop', 0)!;
      assert.equal(st.ackOffset, 2);
      const inFlight = [...st.entries].filter(([, e]) => !e.acked).map(([off, e]) => [off, e.invisibleUntilMs - T0, e.attempts]);
      assert.deepEqual(inFlight.sort((a, b) => a[0]! - b[0]!), [[2, 55_000, 1], [5, 55_000, 1], [6, 58_000, 1], [8, 58_000, 1], [9, 58_000, 1], [10, 29_000, 1]]);
      assert.equal(state.table.get('G', 'MigPop', 1), undefined, 'CK0 was revived by Apache already');
      assert.deepEqual([...state.table.get('G', '%RETRY%G_MigPop', 0)!.entries.keys()], [0]);
      assert.equal(committed.get('G/MigPop/0'), 2, 'the group offset mirrors the pop ack offset');
      assert.equal(committed.get(`${APACHE_REVIVE_GROUP}/${REVIVE}/3`), 5, 'revive offsets committed to the end');

      // a second start imports nothing, even though the timer copies are still there and tsmq's timer
      // will put them into the revive topic after the committed offset
      await state.close();
      state = openState();
      await putRevive('ck', ck('MigPop', 0, 6, [0, 1, 2, 3], T0 - 2000, 60_000));
      committed.set(`${APACHE_REVIVE_GROUP}/${REVIVE}/3`, 1);
      const again = await importApacheRevive(opts());
      assert.equal(again.imported, 0);
      assert.equal(committed.get(`${APACHE_REVIVE_GROUP}/${REVIVE}/3`), 6);
      // at stop: past what tsmq's timer put into the revive topic meanwhile (Apache must not revive it again)
      await putRevive('ack', ack('MigPop', 0, 6, 7, T0 - 2000));
      assert.equal(commitApacheReviveOffsets(opts()), 1);
      assert.equal(committed.get(`${APACHE_REVIVE_GROUP}/${REVIVE}/3`), 7);
      assert.equal(commitApacheReviveOffsets(opts()), 0);

      const broker: PopBroker = {
        brokerName: 'broker-a', storeHost: host, store,
        putMessage: (m) => store.putMessage(m),
        readQueueNums: (t) => (t === 'MigPop' ? 2 : undefined),
        ensureDlqTopic: (g) => `%DLQ%${g}`,
        maxDeliveryAttempts: () => 17,
        committedOffset: (g, t, q) => committed.get(`${g}/${t}/${q}`) ?? -1,
        commitOffset: (g, t, q, off) => void committed.set(`${g}/${t}/${q}`, off),
      };
      const pop = new PopService({ broker, state, config: { popInitFromMin: true, popMaxScanMessages: 2048 }, clock });
      // a 5.x client's ack with the extra info Apache gave it still matches
      assert.equal(pop.resolveDelivery('G', { topic: 'MigPop', queueId: 0, queueOffset: 10, invisibleUntilMs: T0 + 29_000 }).ok, true);
      const bodiesAt = async (ms: number): Promise<string[]> => {
        clock.advance(T0 + ms - clock.nowMs());
        const got = await pop.pop({ group: 'G', topic: 'MigPop', filter: null, batchSize: 32, invisibleMs: 600_000, fifo: false });
        return got.messages.map((m) => `${m.message.body.toString()}#${m.attempt}`).sort();
      };
      assert.deepEqual(await bodiesAt(0), ['m11#1'], 'only the message Apache never popped');
      assert.deepEqual(await bodiesAt(28_000), []);
      assert.deepEqual(await bodiesAt(29_000), ['m10#2']);
      assert.deepEqual(await bodiesAt(54_999), []);
      assert.deepEqual(await bodiesAt(55_000), ['m2#2', 'm5#2']);
      assert.deepEqual(await bodiesAt(58_000), ['m6#2', 'm8#2', 'm9#2']);
      assert.deepEqual(await bodiesAt(120_000), [], 'each once');
    } finally {
      await state.close();
      await store.shutdown();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a store no Apache broker ran on (no revive topic) does not scan its timer topic; later starts scan only what arrived after the last one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsmq-revive-'));
    const clock = new ManualClock(T0);
    const store = await DefaultMessageStore.open({ storePathRootDir: dir, mappedFileSizeCommitLog: 4 * 1024 * 1024, mappedFileSizeConsumeQueue: 600 }, { clock, logger: silentLogger });
    const state = PopStateStore.open({ dir: join(dir, 'pop'), fs: new NodeFileSystem(), clock, flushIntervalMs: 1000, syncFlush: false, compactLogBytes: 1 << 20 });
    try {
      for (let i = 0; i < 4; i++) await store.putMessage(msg('MigPop', 0, `m${i}`, {}));
      const committed = new Map<string, number>([['G/MigPop/0', 4]]);
      const putTimerCk = (so: number) =>
        store.putMessage(msg(TIMER, 0, ck('MigPop', 0, so, [0], T0 - 1000, 60_000), { TAGS: 'ck', REAL_TOPIC: REVIVE, REAL_QID: '0', TIMER_OUT_MS: String(T0 + 59_000) }));
      // 30 user timers and one record shaped like an Apache checkpoint in tsmq's own timer topic
      for (let i = 0; i < 30; i++) await store.putMessage(msg(TIMER, 0, `user timer ${i}`, { REAL_TOPIC: 'MigPop', REAL_QID: '0', TIMER_OUT_MS: String(T0 + 60_000) }));
      await putTimerCk(0);
      const opts = (reviveTopicKnown: boolean): ApacheReviveImportOptions => ({
        store, state, clusterName: 'MigCluster', reviveTopicKnown, reviveQueueNum: 8, timerWindowMs: 3_600_000, clock, logger: silentLogger,
        committedOffset: (g, t, q) => committed.get(`${g}/${t}/${q}`) ?? -1,
        commitOffset: (g, t, q, off) => void committed.set(`${g}/${t}/${q}`, off),
      });
      const first = await importApacheRevive(opts(false));
      assert.deepEqual({ read: first.recordsRead, imported: first.imported }, { read: 0, imported: 0 }, 'not scanned: no revive topic, nothing recorded');
      assert.equal(committed.get(`${APACHE_REVIVE_GROUP}/${TIMER}/0`), 31, 'the timer queue end is recorded');
      // a checkpoint written after that (e.g. by an Apache broker run in between) is found by the next start
      await putTimerCk(1);
      const second = await importApacheRevive(opts(false));
      assert.deepEqual({ read: second.recordsRead, imported: second.imported }, { read: 1, imported: 1 }, 'scanned from offset 31 only');
      assert.equal(committed.get(`${APACHE_REVIVE_GROUP}/${TIMER}/0`), 32);
      const third = await importApacheRevive(opts(true));
      assert.equal(third.recordsRead, 0, 'nothing new since the last start');
    } finally {
      await state.close();
      await store.shutdown();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
