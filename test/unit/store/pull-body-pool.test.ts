import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { PULL_BODY_MAX_CLASS_BYTES, PULL_BODY_MIN_CLASS_BYTES, PullBodyPool } from '../../../src/store/get-message/pull-body-pool.js';

describe('PullBodyPool', () => {
  it('hands out buffers of the size class, takes back views of them once, and lends a released buffer again', () => {
    const pool = new PullBodyPool();
    const a = pool.acquire(38_000);
    assert.equal(a.length, PULL_BODY_MIN_CLASS_BYTES);
    const big = pool.acquire(PULL_BODY_MIN_CLASS_BYTES + 1);
    assert.equal(big.length, 2 * PULL_BODY_MIN_CLASS_BYTES);
    assert.equal(pool.allocated, 2);
    // the body a pull returns is a view of its first bytes
    assert.equal(pool.release(a.subarray(0, 1000)), true);
    assert.equal(pool.release(a), false, 'a second release is ignored');
    assert.equal(pool.release(Buffer.alloc(PULL_BODY_MIN_CLASS_BYTES)), false, 'a foreign buffer is ignored');
    assert.equal(pool.freeByteCount, PULL_BODY_MIN_CLASS_BYTES);
    const again = pool.acquire(1);
    assert.equal(again.buffer, a.buffer, 'the released buffer is lent again');
    assert.equal(pool.reused, 1);
    assert.equal(pool.freeByteCount, 0);
    // and it is lent once: a release of the old view now returns the new loan, once
    assert.equal(pool.release(again), true);
    assert.equal(pool.release(a), false);
    // a different class is not served from the 64 KiB list
    const other = pool.acquire(PULL_BODY_MIN_CLASS_BYTES * 2);
    assert.notEqual(other.buffer, a.buffer);
    assert.equal(pool.release(big), true);
  });

  it('bodies above the largest class are plain buffers, never pooled; free bytes stay within the bound', () => {
    const pool = new PullBodyPool(2 * PULL_BODY_MIN_CLASS_BYTES);
    const huge = pool.acquire(PULL_BODY_MAX_CLASS_BYTES + 1);
    assert.equal(huge.length, PULL_BODY_MAX_CLASS_BYTES + 1);
    assert.equal(pool.release(huge), false);
    const bufs = [pool.acquire(1), pool.acquire(1), pool.acquire(1)];
    for (const b of bufs) assert.equal(pool.release(b), true);
    assert.equal(pool.freeByteCount, 2 * PULL_BODY_MIN_CLASS_BYTES, 'the third release was dropped');
    assert.equal(pool.released, 3);
  });
});

test('pull body pool: a release with the lend id of an earlier lending is ignored once the buffer was lent again', () => {
  const pool = new PullBodyPool();
  const a = pool.acquire(1000);
  const id = pool.lendIdOf(a);
  assert.ok(id > 0);
  assert.equal(pool.lendIdOf(Buffer.alloc(10)), 0, 'not lent by this pool');
  assert.equal(pool.release(a.subarray(0, 10)), true);
  const b = pool.acquire(1000);
  assert.equal(b.buffer, a.buffer, 'the same memory lent again');
  assert.equal(pool.release(b, id), false, 'the holder of the first lending cannot hand back the second');
  assert.equal(pool.release(b, pool.lendIdOf(b)), true);
  assert.equal(pool.release(b), false, 'a second release is ignored');
});
