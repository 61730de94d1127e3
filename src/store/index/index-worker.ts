/**
 * Entry of the index worker thread (`indexBuildInWorker=true`): owns the IndexService (the
 * same files, the same code, the same byte formats as the in-thread index) and applies the
 * records the store thread hands over, in CommitLog order, like RocketMQ's asynchronous reput
 * thread builds the index apart from the put path. Queries, deletions and flushes arrive on
 * the same port after the batches posted before them, so a query sees every record dispatched
 * before it was asked (read-your-writes).
 *
 * The checkpoint stays with the store thread: after a file is durable the worker asks it to
 * move indexMsgTimestamp and flush (message `checkpoint`) and waits for the answer, so the
 * checkpoint never covers index data that is not on disk. Logs and fdatasync failures are
 * forwarded to the store thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { nodeFileSystem } from '../../common/fs/node-file-system.js';
import type { Logger } from '../../common/logging/logger.js';
import { systemClock } from '../../common/time/clock.js';
import { IndexService, type IndexCheckpoint, type IndexQueryResult } from './index-service.js';
import { forEachIndexRecord } from './index-record-batch.js';
import type { FromWorker, IndexWorkerCall, IndexWorkerInit, IndexWorkerStats, ToWorker } from './index-worker-protocol.js';

const port = parentPort;
if (!port) throw new Error('index-worker.ts must run as a worker thread');
const init = workerData as IndexWorkerInit;
const post = (m: FromWorker): void => port.postMessage(m);

function plain(obj: object | string): Record<string, unknown> {
  if (typeof obj === 'string') return { text: obj };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) out[k] = v instanceof Error ? String(v) : typeof v === 'object' && v !== null ? JSON.parse(JSON.stringify(v)) : v;
  return out;
}

/** Logger whose lines are written by the store thread's logger. */
function forwardingLogger(bindings: Record<string, unknown>): Logger {
  const log = (level: 'info' | 'warn' | 'error' | 'debug') => (obj: object | string, msg?: string): void => {
    post({ t: 'log', level, obj: { ...bindings, ...plain(obj) }, msg: typeof obj === 'string' && msg === undefined ? obj : msg });
  };
  return { info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug'), child: (b) => forwardingLogger({ ...bindings, ...b }) };
}

/** The store thread's checkpoint, seen from here: set, then flush through the store thread. */
class ForwardedCheckpoint implements IndexCheckpoint {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  constructor(public indexMsgTimestamp: number) {}
  setIndexMsgTimestamp(timestampMs: number): void {
    if (timestampMs > this.indexMsgTimestamp) this.indexMsgTimestamp = timestampMs;
  }
  flush(): Promise<void> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      post({ t: 'checkpoint', id, indexMsgTimestamp: this.indexMsgTimestamp });
    });
  }
  done(id: number, error: string | null): void {
    const w = this.waiting.get(id);
    this.waiting.delete(id);
    if (!w) return;
    if (error === null) w.resolve();
    else w.reject(new Error(`checkpoint flush failed: ${error}`));
  }
}

const checkpoint = new ForwardedCheckpoint(init.indexMsgTimestamp);
const service = new IndexService(
  nodeFileSystem,
  { indexDir: init.indexDir, maxHashSlotNum: init.maxHashSlotNum, maxIndexNum: init.maxIndexNum, messageIndexEnable: init.messageIndexEnable },
  systemClock,
  checkpoint,
  forwardingLogger({ component: 'index', thread: 'index-worker' }),
  (e) => post({ t: 'syncFailed', path: e.filePath, code: e.code, message: e.message }),
);
const stats: IndexWorkerStats = { recordsApplied: 0, lastAppliedOffset: -1, fileCount: 0 };

function applyBatch(batch: ArrayBuffer): void {
  let failed = 0;
  let firstOffset = -1;
  let lastOffset = -1;
  let firstError = '';
  forEachIndexRecord(batch, (r) => {
    try {
      service.buildIndex(r);
    } catch (e) {
      if (failed === 0) {
        firstOffset = r.commitLogOffset;
        firstError = String(e);
      }
      failed++;
      lastOffset = r.commitLogOffset;
    }
    stats.recordsApplied++;
    stats.lastAppliedOffset = r.commitLogOffset;
  });
  if (failed > 0) post({ t: 'recordsFailed', count: failed, firstOffset, lastOffset, error: firstError });
}

let flushTimer: NodeJS.Timeout | null = null;

async function answer(call: IndexWorkerCall): Promise<IndexQueryResult | number | IndexWorkerStats | null> {
  switch (call.op) {
    case 'query':
      return service.queryOffset(call.topic, call.key, call.maxNum, call.beginMs, call.endMs);
    case 'deleteExpiredFiles':
      return service.deleteExpiredFiles(call.minPhyOffset);
    case 'flush':
      await service.flush();
      return null;
    case 'shutdown':
      if (flushTimer) clearInterval(flushTimer);
      flushTimer = null;
      await service.shutdown();
      return null;
    case 'stats':
      return { ...stats, fileCount: service.fileCount };
  }
}

port.on('message', (m: ToWorker) => {
  if (m.t === 'records') applyBatch(m.batch);
  else if (m.t === 'checkpointDone') checkpoint.done(m.id, m.error);
  else {
    // answered asynchronously (flushes), but started now: later batches are applied after it began
    answer(m.call).then(
      (result) => post({ t: 'reply', id: m.id, result, error: null }),
      (e: unknown) => post({ t: 'reply', id: m.id, result: null, error: String(e) }),
    );
  }
});

try {
  // the store thread has recovered the index, made it durable and closed it: open as a clean start
  service.load(true, init.indexMsgTimestamp);
  flushTimer = setInterval(() => void service.flushWritable(), init.flushIntervalMs);
  flushTimer.unref();
  post({ t: 'ready', fileCount: service.fileCount });
} catch (e) {
  post({ t: 'initError', error: String(e) });
}
