/**
 * A half message re-put by Apache RocketMQ's TransactionalMessageCheckService carries its check
 * count in the TRANSACTION_CHECK_TIMES property (Apache putBackHalfMsgQueue; needDiscard compares
 * it with transactionCheckMax). A store taken over from Apache keeps that count: such a half
 * message is discarded into TRANS_CHECK_MAX_TIME_TOPIC once the count has reached
 * transactionCheckMax, instead of being checked back transactionCheckMax more times.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerController } from '../../../src/broker/broker-controller.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { socketAddressOf } from '../../../src/common/message/msgid.js';

const HALF = 'RMQ_SYS_TRANS_HALF_TOPIC';
const MAX_TIME = 'TRANS_CHECK_MAX_TIME_TOPIC';

describe('TRANSACTION_CHECK_TIMES of a half message re-put by Apache', { timeout: 30_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'tsmq-tx-check-times-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const config = { storePathRootDir: dir, listenPort: '0', namesrvAddr: '', transactionTimeOut: '0', transactionCheckInterval: '600000', transactionCheckMax: '3' };

  it('counts the checks Apache made: at transactionCheckMax the half message is discarded, below it is checked', async () => {
    let broker = await BrokerController.create({ brokerConfig: config, logger: silentLogger });
    await broker.start();
    const host = socketAddressOf('127.0.0.1', 10911);
    for (const [key, times] of [['worn', '3'], ['fresh', '1']] as const) {
      // what Apache's putBackHalfMsgQueue leaves: the half message again, its check count raised
      const r = await broker.ctx.store.putMessage({
        topic: HALF, queueId: 0, flag: 0, body: Buffer.from(key),
        properties: new Map([['KEYS', key], ['UNIQ_KEY', `U-${key}`], ['TRAN_MSG', 'true'], ['PGROUP', 'PID_NOBODY'], ['REAL_TOPIC', 'TxT'], ['REAL_QID', '0'], ['TRANSACTION_CHECK_TIMES', times]]),
        sysFlag: 0, bornTimestamp: Date.now(), bornHost: host, storeHost: host, reconsumeTimes: 0, preparedTransactionOffset: 0,
      });
      assert.equal(r.status, 'PUT_OK');
    }
    while (broker.ctx.store.getMaxOffsetInQueue(HALF, 0) < 2) await new Promise((r) => setTimeout(r, 10));
    await broker.shutdown();
    // Apache's check progress (group CID_RMQ_SYS_TRANS) points at the first copy not processed yet
    const offsetsFile = join(dir, 'config', 'consumerOffset.json');
    const offsets = JSON.parse(readFileSync(offsetsFile, 'utf8')) as { offsetTable: Record<string, Record<string, number>> };
    offsets.offsetTable[`${HALF}@CID_RMQ_SYS_TRANS`] = { 0: 0 };
    writeFileSync(offsetsFile, JSON.stringify(offsets));
    broker = await BrokerController.create({ brokerConfig: config, logger: silentLogger });
    await broker.start();
    try {
      const service = broker.transactionService;
      assert.deepEqual(service.pendingHalves().map((p) => [p.uniqKey, p.checkTimes]), [['U-worn', 3], ['U-fresh', 1]]);
      await service.check();
      assert.deepEqual(service.pendingHalves().map((p) => [p.uniqKey, p.checkTimes]), [['U-fresh', 2]]);
      assert.equal(broker.ctx.store.getMaxOffsetInQueue(MAX_TIME, 0), 1);
      const got = await broker.ctx.store.getMessage('t', MAX_TIME, 0, 0, 1, null);
      assert.equal(got.messages.length, 1);
    } finally {
      await broker.shutdown();
    }
  });
});
