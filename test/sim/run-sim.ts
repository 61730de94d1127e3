/**
 * Long runs of the store simulation from the command line:
 *
 *   npm run sim -- --seeds 1000 [--from 1] [--ops 400] [--fsync dropped] [--stop-on-failure]
 *   npm run sim -- --seed 123            (one seed, full failure report)
 *
 * Prints one line per failing seed (and a summary); exit code 1 when any seed failed.
 */
import { runStoreSimulation, SimulationFailure } from './store-simulator.js';
import type { FsyncFailureSemantics } from './crash-file-system.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const one = arg('seed');
  const from = Number(arg('from') ?? 1);
  const count = Number(arg('seeds') ?? 100);
  const ops = Number(arg('ops') ?? 400);
  const fsyncFailure = arg('fsync') as FsyncFailureSemantics | undefined;
  const stopOnFailure = process.argv.includes('--stop-on-failure');
  const seeds = one !== undefined ? [Number(one)] : Array.from({ length: count }, (_, i) => from + i);
  const started = Date.now();
  let totalOps = 0;
  const failed: number[] = [];
  for (const seed of seeds) {
    try {
      const s = await runStoreSimulation({ seed, ops, fsyncFailure });
      totalOps += s.ops;
      if (one !== undefined) console.log(JSON.stringify(s, null, 2));
    } catch (e) {
      failed.push(seed);
      if (e instanceof SimulationFailure && one === undefined) console.log(`FAIL seed ${seed}: ${String((e.cause as Error)?.message ?? e.cause).split('\n')[0]}`);
      else {
        console.log(e instanceof Error ? e.message : e);
        if (e instanceof SimulationFailure && process.argv.includes('--stack')) console.log((e.cause as Error)?.stack);
      }
      if (stopOnFailure) break;
    }
  }
  const secs = (Date.now() - started) / 1000;
  console.log(`${seeds.length} seeds, ${totalOps} operations, ${failed.length} failed${failed.length ? ` (${failed.join(' ')})` : ''}, ${secs.toFixed(1)} s`);
  process.exitCode = failed.length > 0 ? 1 : 0;
}

void main();
