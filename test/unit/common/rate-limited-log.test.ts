import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RateLimitedLog } from '../../../src/common/logging/rate-limited-log.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { CaptureLogger } from '../../support/capture-logger.js';

test('rate-limited log: one line per kind and interval; the next line counts the suppressed ones', () => {
  const clock = new ManualClock(0);
  const logger = new CaptureLogger();
  const log = new RateLimitedLog(logger, 1000, clock);
  assert.equal(log.warn('bad-frame', 'bad frame from a'), true);
  for (let i = 0; i < 9_999; i++) log.warn('bad-frame', `bad frame ${i}`);
  assert.equal(log.warn('connection-limit', 'refused b'), true, 'kinds are independent');
  clock.advance(1000);
  assert.equal(log.warn('bad-frame', 'bad frame from c'), true);
  assert.deepEqual(logger.lines.map((l) => `${l.level} ${l.text}`), [
    'warn bad frame from a',
    'warn refused b',
    'warn bad frame from c (+9999 similar suppressed)',
  ]);
});
