import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, systemClock } from '../../../src/common/time/clock.js';
import { TsmqError } from '../../../src/common/errors.js';
import {
  clearCommitOffsetFlag,
  getTransactionValue,
  hasClassFilterFlag,
  hasCommitOffsetFlag,
  hasLitePullFlag,
  hasSubscriptionFlag,
  hasSuspendFlag,
  MessageSysFlag,
  resetTransactionValue,
} from '../../../src/common/message/sysflag.js';
import { MessageConst, NAME_VALUE_SEPARATOR, PROPERTY_SEPARATOR, KEY_SEPARATOR } from '../../../src/common/message/message-const.js';

test('ManualClock advances and sets; systemClock reads Date.now', () => {
  const c = new ManualClock(1000);
  assert.equal(c.nowMs(), 1000);
  assert.equal(c.advance(500), 1500);
  c.set(10);
  assert.equal(c.nowMs(), 10);
  assert.throws(() => c.advance(-1), RangeError);
  assert.throws(() => new ManualClock(Number.NaN), RangeError);
  assert.equal(typeof systemClock.nowMs(), 'number');
});

test('TsmqError carries a stable code and a cause', () => {
  const cause = new Error('disk');
  const e = new TsmqError('FLUSH_FAILED', 'flush failed', { cause });
  assert.ok(e instanceof Error);
  assert.equal(e.code, 'FLUSH_FAILED');
  assert.equal(e.cause, cause);
  assert.equal(e.name, 'TsmqError');
});

test('transaction field helpers', () => {
  const f = MessageSysFlag.COMPRESSED_FLAG | MessageSysFlag.TRANSACTION_PREPARED_TYPE | MessageSysFlag.BORNHOST_V6_FLAG;
  assert.equal(getTransactionValue(f), MessageSysFlag.TRANSACTION_PREPARED_TYPE);
  const c = resetTransactionValue(f, MessageSysFlag.TRANSACTION_COMMIT_TYPE);
  assert.equal(getTransactionValue(c), 0x8);
  assert.equal(c & ~0xc, f & ~0xc);
  assert.equal(getTransactionValue(resetTransactionValue(0xff, MessageSysFlag.TRANSACTION_NOT_TYPE)), 0);
  assert.equal(MessageSysFlag.TRANSACTION_ROLLBACK_TYPE, 0xc);
});

test('pull sysflag helpers', () => {
  assert.ok(hasCommitOffsetFlag(0x1) && hasSuspendFlag(0x2) && hasSubscriptionFlag(0x4) && hasClassFilterFlag(0x8) && hasLitePullFlag(0x10));
  assert.ok(!hasSuspendFlag(0x1d));
  assert.equal(clearCommitOffsetFlag(0x7), 0x6);
});

test('MessageConst keys and separators', () => {
  assert.equal(MessageConst.TRANSACTION_ID, '__transactionId__');
  assert.equal(MessageConst.CRC32, '__CRC32#');
  assert.equal(MessageConst.UNIQ_KEY, 'UNIQ_KEY');
  assert.equal(MessageConst.DELAY, 'DELAY');
  assert.equal(KEY_SEPARATOR, ' ');
  assert.equal(NAME_VALUE_SEPARATOR, '\u0001');
  assert.equal(PROPERTY_SEPARATOR, '\u0002');
});
