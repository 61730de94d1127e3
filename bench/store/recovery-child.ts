/**
 * Child process of the recovery benchmark (bench/store/recovery.ts). One JSON argument:
 *
 *   { "role": "write", "root", "config", "bulkBytes", "tailBytes", "shape"? }
 *     opens the store, appends `bulkBytes` of 1 KiB messages, then trickles one message per
 *     50 ms until the on-disk checkpoint covers the bulk (min(physic, logics) − 3 s past its last
 *     store time), appends `tailBytes` more (the unchecked tail), prints `READY {json}` and waits
 *     to be SIGKILLed (a crash: what was handed to the OS survives in the page cache).
 *
 *   { "role": "open", "root", "config", "then": "hang" | "close" }
 *     times DefaultMessageStore.open (abnormal recovery, the abort file is present), prints
 *     `RESULT {json}`; then waits to be killed ("hang", leaving the store crashed) or shuts down.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StoreConfig } from '../../src/store/store-config.js';
import { rssBreakdown, rssOf, sleep } from '../lib/os.js';
import { nowMs } from '../lib/stats.js';
import { messagePool, openBenchStore, putWindowed, type LoadShape } from '../lib/store-load.js';

interface WriteArgs {
  role: 'write';
  root: string;
  config: Partial<StoreConfig>;
  bulkBytes: number;
  tailBytes: number;
  /** Topics × queues of the load (default 4 × 4, 1 KiB bodies). */
  shape?: LoadShape;
}
interface OpenArgs {
  role: 'open';
  root: string;
  config: Partial<StoreConfig>;
  then: 'hang' | 'close';
}

/** min(physicMsgTimestamp, logicsMsgTimestamp) − 3000 as stored on disk (spec §3.1), 0 if unreadable. */
function checkpointMinTimestamp(root: string): number {
  try {
    const b = readFileSync(join(root, 'checkpoint'));
    return Math.max(0, Math.min(Number(b.readBigInt64BE(0)), Number(b.readBigInt64BE(8))) - 3000);
  } catch {
    return 0;
  }
}

async function appendBytes(store: Awaited<ReturnType<typeof openBenchStore>>, pool: ReturnType<typeof messagePool>, bytes: number): Promise<number> {
  let written = 0;
  let i = 0;
  while (written < bytes) {
    const n = Math.max(1, Math.min(100_000, Math.ceil((bytes - written) / 1100)));
    const r = await putWindowed(store, pool, n, 1024, i);
    if (r.ok !== n) throw new Error(`put failed: ${JSON.stringify(Object.fromEntries(r.notOk))}`);
    written += r.recordBytes;
    i += n;
  }
  return written;
}

async function write(a: WriteArgs): Promise<void> {
  const store = await openBenchStore(a.root, a.config);
  const lanes = a.shape ? a.shape.topics * a.shape.queuesPerTopic : 16;
  const pool = a.shape ? messagePool(a.shape, Math.max(4096, lanes)) : messagePool();
  const t0 = nowMs();
  const bulk = await appendBytes(store, pool, a.bulkBytes);
  const bulkMs = nowMs() - t0;
  const lastBulkTs = Date.now();
  const w0 = nowMs();
  while (checkpointMinTimestamp(a.root) <= lastBulkTs) {
    if (nowMs() - w0 > 60_000) throw new Error('checkpoint did not advance within 60 s');
    await putWindowed(store, pool, 1, 1);
    await sleep(50);
  }
  const checkpointWaitMs = nowMs() - w0;
  const tail = await appendBytes(store, pool, a.tailBytes);
  await sleep(300); // let the write buffer reach the OS (commit on setImmediate) and dispatch settle
  const ready = { maxPhyOffset: store.getMaxPhyOffset(), flushedPhyOffset: store.getFlushedPhyOffset(), bulk, tail, bulkMs, checkpointWaitMs };
  process.stdout.write(`READY ${JSON.stringify(ready)}\n`);
  await new Promise(() => {}); // wait for SIGKILL
}

async function open(a: OpenArgs): Promise<void> {
  const t0 = nowMs();
  const store = await openBenchStore(a.root, a.config);
  const openMs = nowMs() - t0;
  const r = store.recoveryReport;
  const result = {
    openMs,
    report: r,
    maxPhyOffset: store.getMaxPhyOffset(),
    rssBytes: rssOf(process.pid),
    rss: rssBreakdown(process.pid),
  };
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  if (a.then === 'close') {
    await store.shutdown();
    process.exit(0);
  }
  await new Promise(() => {});
}

const args = JSON.parse(process.argv[2] ?? '{}') as WriteArgs | OpenArgs;
(args.role === 'write' ? write(args) : open(args)).catch((e: unknown) => {
  process.stderr.write(`recovery-child: ${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
});
