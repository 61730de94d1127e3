/**
 * Store-thread CPU per message of the IndexFile: building it in the thread (IndexService.buildIndex)
 * vs handing the record to the index worker (IndexWorkerClient.dispatch + the per-turn batch post).
 * Main-thread CPU is read from /proc/<pid>/task/<pid>/stat, so time the OS gives to other
 * processes on a loaded machine is not counted. Records: 1 KiB-message shapes with UNIQ_KEY and
 * two KEYS words (3 index entries each), 1000 per event-loop turn (as under load).
 *
 * Usage: npx tsx bench/store/index-offload.ts [--records 300000] [--rounds 3]
 * Output: one `INDEX_OFFLOAD {json}` line per round, then medians.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeFileSystem } from '../../src/common/fs/node-file-system.js';
import { silentLogger } from '../../src/common/logging/logger.js';
import { systemClock } from '../../src/common/time/clock.js';
import { IndexService, type IndexCheckpoint } from '../../src/store/index/index-service.js';
import { IndexWorkerClient } from '../../src/store/index/index-worker-client.js';
import type { IndexRecord } from '../../src/store/index/index-record-batch.js';

const args = process.argv.slice(2);
const opt = (k: string, d: number): number => {
  const i = args.indexOf(k);
  return i >= 0 ? Number(args[i + 1]) : d;
};
const RECORDS = opt('--records', 300_000);
const ROUNDS = opt('--rounds', 3);
const PER_TURN = 1000;

function mainThreadCpuMs(): number {
  const stat = readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

const checkpoint: IndexCheckpoint = { indexMsgTimestamp: 0, setIndexMsgTimestamp() {}, flush: async () => {} };
const geometry = { maxHashSlotNum: 5_000_000, maxIndexNum: 20_000_000, messageIndexEnable: true };
const uniq = (n: number): string => (0x20000000 + n).toString(16).toUpperCase().padStart(32, '0');
const recs: IndexRecord[] = Array.from({ length: RECORDS }, (_, n) => ({
  commitLogOffset: n * 1200,
  storeTimestamp: 1_700_000_000_000 + Math.floor(n / 50),
  sysFlag: 0,
  topic: `Topic${n % 4}`,
  keys: `order-${n} user-${n % 1000}`,
  uniqKey: uniq(n),
}));
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

async function inThread(dir: string): Promise<number> {
  const s = new IndexService(nodeFileSystem, { indexDir: dir, ...geometry }, systemClock, checkpoint, silentLogger);
  s.load(true, 0);
  const t0 = mainThreadCpuMs();
  for (let i = 0; i < recs.length; i += PER_TURN) {
    for (let k = i; k < Math.min(i + PER_TURN, recs.length); k++) s.buildIndex(recs[k]!);
    await turn();
  }
  const ms = mainThreadCpuMs() - t0;
  await s.shutdown();
  return (ms * 1000) / recs.length;
}

async function inWorker(dir: string): Promise<{ mainUs: number; wallMsToIndexed: number }> {
  const c = await IndexWorkerClient.start({ indexDir: dir, ...geometry, indexMsgTimestamp: 0, flushIntervalMs: 60_000 }, silentLogger, checkpoint);
  const w0 = performance.now();
  const t0 = mainThreadCpuMs();
  for (let i = 0; i < recs.length; i += PER_TURN) {
    for (let k = i; k < Math.min(i + PER_TURN, recs.length); k++) c.dispatch(recs[k]!);
    await turn();
  }
  const ms = mainThreadCpuMs() - t0;
  const st = await c.stats();
  const wall = performance.now() - w0;
  if (st.recordsApplied !== recs.length) throw new Error(`worker applied ${st.recordsApplied} of ${recs.length}`);
  await c.shutdown();
  return { mainUs: (ms * 1000) / recs.length, wallMsToIndexed: Math.round(wall) };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const res: Array<{ threadUs: number; workerMainUs: number; workerWallMs: number }> = [];
  for (let r = 0; r < ROUNDS; r++) {
    const d = mkdtempSync(join(tmpdir(), 'tsmq-index-offload-'));
    try {
      const threadUs = await inThread(join(d, 'a'));
      const w = await inWorker(join(d, 'b'));
      const line = { round: r + 1, records: RECORDS, threadUs: Math.round(threadUs * 100) / 100, workerMainUs: Math.round(w.mainUs * 100) / 100, workerWallMs: w.wallMsToIndexed };
      console.log(`INDEX_OFFLOAD ${JSON.stringify(line)}`);
      res.push(line);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  }
  console.log(`median store-thread µs/record: in thread ${median(res.map((x) => x.threadUs))}, handed to the worker ${median(res.map((x) => x.workerMainUs))}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
