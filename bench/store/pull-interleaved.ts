/**
 * Embedded-store pull cost for one topic whose queues interleave in the CommitLog (what single
 * sends round robin over the queues leave, e.g. the vs-apache consume preload), from any source
 * tree: the store and its load helpers are imported from `<root>`, so an exported older commit
 * can be measured beside this one (run the trees alternately, A B A B, on a shared machine).
 *
 * One process per run: `messages` puts of 1 KiB round robin over `queues` queues (putWindowed,
 * 1024 in flight), then `passes` passes that each pull every queue from offset 0 to its end, 32
 * per getMessage, round robin over the queues (the consumers of one region of the CommitLog keep
 * together, as the pulls of one push consumer do). Per pass: process CPU µs per pulled message
 * (user + system, `process.cpuUsage`) and msgs/s; the median pass is the figure.
 *
 * Mode `lend` (trees with getMessage's lend mode): records come as views of the CommitLog read
 * cache's chunks (`{ minViewBytes: 0, maxParts: ∞ }`, the bench's store-pull figure), or
 * `lend:<minViewBytes>:<maxParts>` (the broker's choice); `copy` (default): one body per pull.
 *
 * Usage: (cd <root> && npx tsx /path/to/bench/store/pull-interleaved.ts <root> [queues 8] [messages 200000] [passes 5] [copy|lend[:min:max]])
 * Output: one line per pass on stderr, then `{"root","queues","median","all"}` (µs/msg) on stdout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const [rootArg, q = '8', m = '200000', p = '5', mode = 'copy'] = process.argv.slice(2);
if (!rootArg) throw new Error('usage: pull-interleaved.ts <root> [queues] [messages] [passes]');
const root = resolve(rootArg);
const queues = Number(q);
const messages = Number(m);
const passes = Number(p);
const [modeName, minView = '0', maxParts = 'Infinity'] = mode.split(':');
const lend = modeName === 'lend' ? { minViewBytes: Number(minView), maxParts: Number(maxParts) } : null;
const load = (await import(join(root, 'bench/lib/store-load.ts'))) as typeof import('../lib/store-load.js');
const dir = mkdtempSync(join(tmpdir(), 'tsmq-pull-interleaved-'));
try {
  const store = await load.openBenchStore(join(dir, 'store'), { flushDiskType: 'ASYNC_FLUSH' });
  await load.putWindowed(store, load.messagePool({ topics: 1, queuesPerTopic: queues, bodyBytes: 1024 }, 4096), messages, 1024);
  await load.waitDispatched(store);
  const topic = load.topicName(0);
  const usPerMsg: number[] = [];
  for (let pass = 0; pass < passes; pass++) {
    const next = new Array<number>(queues).fill(0);
    let pulled = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let live = queues; live > 0; ) {
      live = 0;
      for (let queueId = 0; queueId < queues; queueId++) {
        const r = await (lend ? (store.getMessage as (...a: unknown[]) => ReturnType<typeof store.getMessage>)('G', topic, queueId, next[queueId]!, 32, null, lend) : store.getMessage('G', topic, queueId, next[queueId]!, 32, null));
        if (r.status !== 'FOUND') continue;
        pulled += r.messageQueueOffsets.length;
        // the body (and lent chunks) back for reuse, as the broker does after the write (trees
        // without it: no-op)
        const done = r as { release?: () => void };
        if (done.release) done.release();
        else {
          const release = (store as { releaseMessageBody?: (b: Buffer) => void }).releaseMessageBody;
          if (r.body && release) release.call(store, r.body);
        }
        next[queueId] = r.nextBeginOffset;
        live++;
      }
    }
    const cpu = process.cpuUsage(cpu0);
    usPerMsg.push((cpu.user + cpu.system) / pulled);
    console.error(`pass ${pass}: ${pulled} msgs, ${usPerMsg[pass]!.toFixed(3)} µs CPU/msg, ${Math.round(pulled / ((performance.now() - t0) / 1000))} msgs/s`);
  }
  await store.shutdown();
  const sorted = [...usPerMsg].sort((a, b) => a - b);
  console.log(JSON.stringify({ root, queues, mode, median: Math.round(sorted[sorted.length >> 1]! * 1000) / 1000, all: usPerMsg.map((x) => Math.round(x * 1000) / 1000) }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
