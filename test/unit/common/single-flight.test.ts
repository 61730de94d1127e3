import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SingleFlight } from '../../../src/common/async/single-flight.js';

test('SingleFlight: callers during a run join it; the next call after it settles starts a new run; errors reach every joiner', async () => {
  const sf = new SingleFlight<number>();
  let starts = 0;
  let release!: (v: number) => void;
  const task = () => {
    starts++;
    return new Promise<number>((r) => (release = r));
  };
  const a = sf.run(task);
  const b = sf.run(task);
  assert.equal(a, b);
  assert.equal(sf.busy, true);
  release(7);
  assert.deepEqual(await Promise.all([a, b]), [7, 7]);
  assert.equal(sf.busy, false);
  const c = sf.run(task);
  assert.equal(starts, 2);
  release(8);
  assert.equal(await c, 8);

  const failing = sf.run(() => Promise.reject(new Error('boom')));
  const joined = sf.run(task);
  await assert.rejects(failing, /boom/);
  await assert.rejects(joined, /boom/);
  assert.equal(starts, 2, 'the joiner did not start its own task');
  await sf.whenIdle();
  const d = sf.run(() => Promise.reject(new Error('again')));
  await sf.whenIdle(); // never rejects
  await assert.rejects(d, /again/);
});
