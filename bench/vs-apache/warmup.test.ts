// The warm-up's steady-throughput rule (warmup.ts `steadiness`).
// Run: node scripts/run-tests.mjs bench/vs-apache/warmup.test.ts
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compactTrace, steadiness } from './warmup.js';

const rule = { windows: 3, tolerance: 0.05 };

test('flat or slightly noisy throughput is steady', () => {
  assert.equal(steadiness([100, 100, 100], rule)?.steady, true);
  assert.equal(steadiness([50, 80, 100, 102, 99], rule)?.steady, true); // only the last 3 count
  const r = steadiness([100, 102, 99], rule)!;
  assert.ok(Math.abs(r.maxDeviation - 0.0167) < 0.001, String(r.maxDeviation));
});

test('a window outside ±tolerance of the mean is not steady', () => {
  const r = steadiness([90, 100, 110], rule)!;
  assert.equal(r.steady, false);
  assert.ok(Math.abs(r.maxDeviation - 0.1) < 1e-9);
});

test('an upward trend inside the tolerance band is not steady; a downward one is', () => {
  // each within ±3 %, but +6 % across the three windows (least-squares rise >= tolerance / 2)
  const up = steadiness([97, 100, 103], rule)!;
  assert.equal(up.steady, false);
  assert.ok(Math.abs(up.rise - 0.06) < 1e-9, String(up.rise));
  assert.equal(steadiness([103, 100, 97], rule)?.steady, true);
  // +2 % across them: below tolerance / 2, steady
  assert.equal(steadiness([99, 100, 101], rule)?.steady, true);
});

test('the 60 s → 180 s doubling of issue 13 never reads as steady while it climbs', () => {
  // msgs/s per 10 s, rising from 119k to 247k over 120 s
  const climb = Array.from({ length: 13 }, (_, i) => 118_922 + ((247_306 - 118_922) * i) / 12);
  for (let n = 3; n <= climb.length; n++) assert.equal(steadiness(climb.slice(0, n), rule)?.steady, false, `after ${n} windows`);
  assert.equal(steadiness([...climb, 247_000, 248_000, 246_500], rule)?.steady, true);
});

test('too few windows, zero or NaN throughput', () => {
  assert.equal(steadiness([100, 100], rule), null);
  assert.equal(steadiness([0, 0, 0], rule)?.steady, false);
  assert.equal(steadiness([100, Number.NaN, 100], rule)?.steady, false);
  assert.equal(steadiness([100, 100, 100, 100], { windows: 4, tolerance: 0.05 })?.steady, true);
});

test('compactTrace prints k msgs/s per row, with the consumer kind when kinds alternate', () => {
  assert.equal(compactTrace([[10, 'produce', 118_922], [20, 'produce', 9_400]]), '119k 9.4k');
  assert.equal(compactTrace([[3, 'push', 80_000], [6, 'lite', 95_500]]), 'push 80k lite 96k');
});
