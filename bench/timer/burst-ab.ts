/**
 * Interleaved A/B runs of the timer burst (bench/timer/timer-child.ts, role "burst"), one run at a
 * time: each side is a tree (`--side label=/path/to/tree`, its own bench/timer/timer-child.ts and
 * src/), rounds alternate the order (A B, B A, ...). `--fill on|off|alt` fills the page cache
 * (bench/lib/page-cache.ts) before each broker start, never, or in every other round (each side gets
 * both). One JSON line per run is appended to `--out` (default bench/results/timer-burst-ab.jsonl):
 * side, fill, load average (1 min) at start and end, and the child's RESULT.
 *
 *   npx tsx bench/timer/burst-ab.ts --side base=/tmp/base --side new=. --rounds 3 --count 1000000 \
 *     [--lead-ms 60000] [--fill on] [--child '{"profileDueWindow":"/tmp/p.cpuprofile"}']
 */
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BenchChild } from '../lib/child.js';
import { fillPageCache } from '../lib/page-cache.js';

const { values } = parseArgs({
  options: {
    side: { type: 'string', multiple: true },
    rounds: { type: 'string', default: '3' },
    count: { type: 'string', default: '1000000' },
    'lead-ms': { type: 'string', default: '60000' },
    fill: { type: 'string', default: 'on' },
    child: { type: 'string', default: '{}' },
    out: { type: 'string', default: 'bench/results/timer-burst-ab.jsonl' },
  },
});
const sides = (values.side ?? []).map((s) => {
  const eq = s.indexOf('=');
  if (eq < 1) throw new Error(`--side label=/path/to/tree, got ${s}`);
  return { label: s.slice(0, eq), tree: resolve(s.slice(eq + 1)) };
});
if (sides.length === 0) throw new Error('at least one --side label=/path/to/tree');
if (!['on', 'off', 'alt'].includes(values.fill!)) throw new Error(`--fill on|off|alt, got ${values.fill}`);
const rounds = Number(values.rounds);
const load1 = (): number => Math.round(loadavg()[0]! * 100) / 100;

for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? sides : [...sides].reverse();
  const fill = values.fill === 'alt' ? r % 2 === 0 : values.fill === 'on';
  for (const side of order) {
    const dir = mkdtempSync(join(tmpdir(), 'timer-ab-'));
    try {
      const f = fill ? await fillPageCache(dir) : null;
      const start = { at: new Date().toISOString(), load: load1() };
      const args = { role: 'burst', root: join(dir, 'store'), count: Number(values.count), bodyBytes: 1024, precisionMs: 1000, leadMs: Number(values['lead-ms']), ...JSON.parse(values.child!) };
      const c = BenchChild.start(side.tree, join(side.tree, 'bench/timer/timer-child.ts'), [JSON.stringify(args)], { label: side.label, nodeArgs: ['--expose-gc', '--max-old-space-size=3072'] });
      let result: unknown;
      try {
        result = await c.waitLine('RESULT', 3_600_000);
        await c.exited;
      } finally {
        await c.kill();
      }
      const line = { round: r, side: side.label, fill: f ? { bytes: f.bytes, seconds: f.seconds } : null, start, end: { at: new Date().toISOString(), load: load1() }, result };
      appendFileSync(values.out!, JSON.stringify(line) + '\n');
      const b = result as { latenessP50Ms: number; latenessP99Ms: number; latenessMaxMs: number; deliveredPerSec: number; deliveryMainThreadCpuMs: number | null; deliveryCpuMs: number };
      console.log(`${start.at} r${r} ${side.label} fill=${fill ? 'on' : 'off'} load ${start.load}→${line.end.load}: p50 ${b.latenessP50Ms} p99 ${b.latenessP99Ms} max ${b.latenessMaxMs} ms, ${b.deliveredPerSec}/s, main CPU ${b.deliveryMainThreadCpuMs} ms, process CPU ${b.deliveryCpuMs} ms`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
