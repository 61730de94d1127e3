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
});
