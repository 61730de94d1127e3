import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LogRateLimiter } from '../../../src/common/logging/log-rate-limiter.js';
import { ManualClock } from '../../../src/common/time/clock.js';

test('log rate limiter: one line per key and interval, reporting how many were suppressed', () => {
  const clock = new ManualClock(1000);
  const l = new LogRateLimiter(clock, 100);
  assert.equal(l.take('a'), 0);
  assert.equal(l.take('a'), null);
  assert.equal(l.take('b'), 0, 'keys are independent');
  clock.advance(99);
  assert.equal(l.take('a'), null);
  clock.advance(1);
  assert.equal(l.take('a'), 2);
  l.reset('a');
  assert.equal(l.take('a'), 0);
  clock.set(0); // a clock jump backwards never silences a key for good
  assert.equal(l.take('a'), 0);
});
