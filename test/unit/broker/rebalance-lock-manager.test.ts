import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/common/time/clock.js';
import { RebalanceLockManager, REBALANCE_LOCK_MAX_LIVE_TIME_MS } from '../../../src/broker/client/rebalance-lock-manager.js';

const q = (queueId: number, topic = 'T', brokerName = 'broker-a') => ({ topic, brokerName, queueId });
const ids = (mqs: Array<{ queueId: number }>) => mqs.map((m) => m.queueId);

describe('RebalanceLockManager (Apache RebalanceLockManager semantics)', () => {
  it('grants free queues, refuses queues held by another client, regrants to the holder', () => {
    const clock = new ManualClock(1_000);
    const m = new RebalanceLockManager(clock);
    assert.equal(m.lockMaxLiveTimeMs, REBALANCE_LOCK_MAX_LIVE_TIME_MS);
    assert.equal(REBALANCE_LOCK_MAX_LIVE_TIME_MS, 60_000);
    assert.deepEqual(ids(m.tryLockBatch('G', [q(0), q(1)], 'A')), [0, 1]);
    assert.deepEqual(ids(m.tryLockBatch('G', [q(1), q(2)], 'B')), [2]);
    assert.deepEqual(ids(m.tryLockBatch('G', [q(0), q(1), q(2)], 'A')), [0, 1]);
    assert.equal(m.lockHolder('G', q(2)), 'B');
    assert.equal(m.isLocked('G', q(0), 'A'), true);
    assert.equal(m.isLocked('G', q(0), 'B'), false);
  });

  it('duplicates in one request are granted once', () => {
    const m = new RebalanceLockManager(new ManualClock(0));
    assert.deepEqual(ids(m.tryLockBatch('G', [q(3), q(3), q(4)], 'A')), [3, 4]);
  });

  it('a lock expires 60 s after its last refresh (strictly more than lockMaxLiveTime), then another client takes it', () => {
    const clock = new ManualClock(0);
    const m = new RebalanceLockManager(clock);
    m.tryLockBatch('G', [q(0)], 'A');
    clock.advance(30_000);
    assert.deepEqual(ids(m.tryLockBatch('G', [q(0)], 'A')), [0], 'refresh at 30 s');
    clock.advance(60_000);
    assert.deepEqual(ids(m.tryLockBatch('G', [q(0)], 'B')), [], 'exactly 60 s after the refresh: still held');
    assert.equal(m.lockHolder('G', q(0)), 'A');
    clock.advance(1);
    assert.equal(m.lockHolder('G', q(0)), null);
    assert.equal(m.isLocked('G', q(0), 'A'), false);
    assert.deepEqual(ids(m.tryLockBatch('G', [q(0)], 'B')), [0]);
    assert.deepEqual(ids(m.tryLockBatch('G', [q(0)], 'A')), []);
  });

  it('the holder re-locks its own expired lock', () => {
    const clock = new ManualClock(0);
    const m = new RebalanceLockManager(clock, 10_000);
    m.tryLockBatch('G', [q(0)], 'A');
    clock.advance(50_000);
    assert.deepEqual(ids(m.tryLockBatch('G', [q(0)], 'A')), [0]);
    assert.equal(m.lockHolder('G', q(0)), 'A');
  });

  it('only the holder unlocks; unlocked queues are free for others', () => {
    const m = new RebalanceLockManager(new ManualClock(0));
    m.tryLockBatch('G', [q(0), q(1)], 'A');
    m.unlockBatch('G', [q(0), q(1)], 'B');
    assert.equal(m.lockHolder('G', q(0)), 'A');
    m.unlockBatch('G', [q(0)], 'A');
    assert.equal(m.lockHolder('G', q(0)), null);
    assert.deepEqual(ids(m.tryLockBatch('G', [q(0), q(1)], 'B')), [0]);
    m.unlockBatch('NOGROUP', [q(0)], 'B');
  });

  it('groups, topics and broker names are separate locks', () => {
    const m = new RebalanceLockManager(new ManualClock(0));
    m.tryLockBatch('G1', [q(0)], 'A');
    assert.deepEqual(ids(m.tryLockBatch('G2', [q(0)], 'B')), [0]);
    assert.deepEqual(ids(m.tryLockBatch('G1', [q(0, 'T2')], 'B')), [0]);
    assert.deepEqual(ids(m.tryLockBatch('G1', [q(0, 'T', 'broker-b')], 'B')), [0]);
    assert.deepEqual(ids(m.tryLockBatch('G1', [q(0)], 'B')), []);
  });

  it('rejects a non-positive live time', () => {
    assert.throws(() => new RebalanceLockManager(new ManualClock(0), 0), RangeError);
  });

  it('locks any queue, topic known or not (as Apache); expired entries are swept, so ever new names do not grow the table (Apache keeps them)', () => {
    const clock = new ManualClock(0);
    const m = new RebalanceLockManager(clock);
    const junk = Array.from({ length: 1000 }, (_, i) => q(i % 7, `NoSuchTopic-${i}`));
    assert.equal(m.tryLockBatch('G', junk, 'A').length, 1000, 'every queue granted, as Apache answers');
    assert.equal(m.size, 1000);
    clock.advance(30_000);
    m.tryLockBatch('G2', [q(0, 'Kept')], 'B');
    assert.equal(m.size, 1001, 'nothing expired yet');
    clock.advance(31_000); // junk last refreshed 61 s ago, Kept 31 s ago
    assert.deepEqual(ids(m.tryLockBatch('G3', [q(1, 'Other')], 'C')), [1]);
    assert.equal(m.size, 2, 'the 1000 expired locks are gone; Kept and Other stay');
    assert.equal(m.lockHolder('G2', q(0, 'Kept')), 'B');
    assert.deepEqual(ids(m.tryLockBatch('G', [q(0, 'NoSuchTopic-0')], 'Z')), [0], 'a swept queue is free, as an expired one was');
  });
});
