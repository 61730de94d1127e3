/**
 * What forgetting a deleted topic's pop state costs (session 10): the FORGET record written now
 * (`PopStateStore.forget`) against the compaction that made a deletion durable before (snapshot
 * of the whole table: JSON, tmp file, fsync, rename). Tables of N queue states (N/4 topics × 2
 * groups × 2 queues, 4 entries each), one topic (4 states) forgotten per round; rounds of the two
 * interleaved (A/B) on one table per size. CPU ms of this process (process.cpuUsage) and wall
 * ms, medians. Run: `npx tsx bench/store/pop-forget-cost.ts [sizes…]`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeFileSystem } from '../../src/common/fs/node-file-system.js';
import { ManualClock } from '../../src/common/time/clock.js';
import { PopStateStore } from '../../src/broker/pop/pop-state-store.js';

const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
const ROUNDS = 7;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

async function measure(run: () => Promise<unknown>): Promise<{ cpuMs: number; wallMs: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await run();
  const c = process.cpuUsage(c0);
  return { cpuMs: (c.user + c.system) / 1000, wallMs: performance.now() - t0 };
}

for (const n of sizes.length ? sizes : [1_000, 10_000, 100_000]) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-pop-forget-bench-'));
  const s = PopStateStore.open({ dir, fs: new NodeFileSystem(), clock: new ManualClock(1), flushIntervalMs: 60_000, syncFlush: false, compactLogBytes: 1 << 30 });
  const topics = n / 4;
  let v = 1;
  for (let t = 0; t < topics; t++) {
    for (const group of ['GA', 'GB']) {
      for (let q = 0; q < 2; q++) {
        const ref = { group, topic: `T${t}`, queueId: q };
        await s.record({ type: 'MOVE', ...ref, offset: 100 });
        for (let o = 100; o < 104; o++) await s.record({ type: 'POP', ...ref, offset: o, attempts: 1, invisibleUntilMs: 9e12, version: v++ });
      }
    }
  }
  await s.compact();
  const record: Array<{ cpuMs: number; wallMs: number }> = [];
  const compaction: Array<{ cpuMs: number; wallMs: number }> = [];
  let next = 0;
  for (let r = 0; r < ROUNDS; r++) {
    // A: the FORGET record (one topic); B: a compaction of the table (what a deletion awaited before)
    record.push(await measure(() => s.forget({ topic: `T${next++}` })));
    compaction.push(await measure(() => s.compact()));
  }
  const row = (name: string, xs: typeof record) => `| ${n} | ${name} | ${median(xs.map((x) => x.cpuMs)).toFixed(3)} | ${median(xs.map((x) => x.wallMs)).toFixed(3)} |`;
  console.log(row('FORGET record', record));
  console.log(row('compaction', compaction));
  await s.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
