/**
 * CI run of the seeded store simulation (docs/internals/simulation.md). Runs a fixed list of
 * seeds (TSMQ_SIM_SEEDS=n changes the count, TSMQ_SIM_SEED=s runs just that seed, TSMQ_SIM_OPS the
 * operations per seed) and prints seeds and op counts; a failure prints the command that
 * replays its seed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runStoreSimulation, type SimulationStats } from './store-simulator.js';
import type { FsyncFailureSemantics } from './crash-file-system.js';

const single = process.env.TSMQ_SIM_SEED;
const seedCount = Number(process.env.TSMQ_SIM_SEEDS ?? 24);
const opsPerSeed = Number(process.env.TSMQ_SIM_OPS ?? 400);
const fsyncFailure = process.env.TSMQ_SIM_FSYNC as FsyncFailureSemantics | undefined;
const seeds = single !== undefined ? [Number(single)] : Array.from({ length: seedCount }, (_, i) => i + 1);

test(`store simulation: ${seeds.length} seed(s) x ${opsPerSeed} operations`, async () => {
  const totals: SimulationStats[] = [];
  const started = Date.now();
  for (const seed of seeds) {
    const s = await runStoreSimulation({ seed, ops: opsPerSeed, fsyncFailure });
    totals.push(s);
    console.log(
      `seed ${seed}: ${s.ops} ops (${s.flushDiskType}), ${s.puts} puts (${s.putOk} PUT_OK, ${s.refused} refused), ${s.pulls} pulls, ${s.queries} queries, ` +
        `${s.cleanRestarts} clean restarts, ${s.processCrashes} process crashes, ${s.powerLosses} power losses (${s.crashesDuringRecovery} during recovery), ` +
        `${s.recoveriesChecked} recoveries checked, ${s.injectedFaults} injected faults + ${s.enospc} ENOSPC, ${s.ioOps} I/O ops, ` +
        `${s.lostUnacked} unacked lost, ${s.expiredByRetention} expired, ${(s.virtualMs / 3_600_000).toFixed(1)} h virtual`,
    );
  }
  const ops = totals.reduce((a, s) => a + s.ops, 0);
  const recoveries = totals.reduce((a, s) => a + s.recoveriesChecked, 0);
  console.log(`store simulation: ${totals.length} seeds, ${ops} operations, ${recoveries} recoveries checked in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  assert.equal(totals.length, seeds.length);
  assert.ok(recoveries >= seeds.length, 'every seed checks at least one recovery');
});
