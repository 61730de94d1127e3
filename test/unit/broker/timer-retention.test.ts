/**
 * Timers count against retention: a CommitLog file holding the message of a pending timer is
 * kept by an expiry pass that deletes the files around it, and released once the timer fired.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import type { MessageInner } from '../../../src/common/message/message.js';
import { tempDir, removeDir } from '../../support/store-fixtures.js';

const host = { ip: Buffer.from([127, 0, 0, 1]), port: 10911 };
const msg = (topic: string, props: [string, string][], body: Buffer): MessageInner => ({
  topic, queueId: 0, flag: 0, body, properties: new Map(props), sysFlag: 0, bornTimestamp: Date.now(), bornHost: host, storeHost: host, reconsumeTimes: 0, preparedTransactionOffset: 0,
});

describe('timer retention hold', { timeout: 60_000 }, () => {
  const dir = tempDir('tsmq-timer-retention-');
  after(() => removeDir(dir));

  it('keeps the CommitLog file of a pending timer through an expiry pass, releases it after delivery', async () => {
    const broker = await BrokerController.create({
      brokerConfig: { storePathRootDir: dir, listenPort: '0', namesrvAddr: '', mappedFileSizeCommitLog: String(64 * 1024), fileReservedTime: '0.0001', timerPrecisionMs: '100', timerFlushIntervalMs: '100' },
      logger: silentLogger,
      timerSlotsTotal: 3600,
    });
    await broker.start();
    try {
      const filler = Buffer.alloc(4000, 'f');
      for (let i = 0; i < 20; i++) await broker.ctx.putMessage(msg('FILL', [], filler)); // file 0 and 1
      const due = Date.now() + 2500;
      const t = await broker.ctx.putMessage(msg('TR_T', [['TIMER_DELIVER_MS', String(due)], ['UNIQ_KEY', 'HOLD1']], Buffer.from('held')));
      const timerOffset = t.appendResult!.wroteOffset;
      for (let i = 0; i < 60; i++) await broker.ctx.putMessage(msg('FILL', [], filler)); // several files after it
      const timer = broker.timerMessageService!;
      while (timer.stats.commitQueueOffset < 1) await new Promise((r) => setTimeout(r, 10));
      assert.equal(timer.retentionHoldOffset(), timerOffset);
      await new Promise((r) => setTimeout(r, 600)); // every file older than fileReservedTime (0.36 s)
      await broker.ctx.store.executeDeleteFilesManually!();
      const min = broker.ctx.store.getMinPhyOffset();
      assert.ok(min > 0, 'files before the timer were deleted');
      assert.ok(min <= timerOffset, `the file of the pending timer (offset ${timerOffset}) was kept, min is now ${min}`);
      while (broker.ctx.store.getMaxOffsetInQueue('TR_T', 0) < 1) await new Promise((r) => setTimeout(r, 50));
      const delivered = await broker.ctx.store.getMessage('G', 'TR_T', 0, 0, 1, null);
      assert.equal(delivered.messages.length, 1, 'delivered from the kept file');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(timer.retentionHoldOffset(), Number.POSITIVE_INFINITY, 'nothing pending: no hold');
      await broker.ctx.store.executeDeleteFilesManually!();
      assert.ok(broker.ctx.store.getMinPhyOffset() > timerOffset, 'released after delivery');
    } finally {
      await broker.shutdown();
    }
  });
});
