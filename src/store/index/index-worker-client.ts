/**
 * The store thread's side of the index worker (`indexBuildInWorker=true`): hands each
 * dispatched record's index fields (index-record-batch.ts) to the worker in CommitLog order,
 * one transferable batch per event-loop turn (or per 1 MiB), and forwards queries, deletions
 * and flushes on the same port, so they are answered after every record dispatched before them.
 *
 * Failures are never silent:
 * - a record the worker could not index is logged and counted: the next `dispatch` throws once
 *   per report, so the dispatcher chain's `pluginFailures.index` shows it, as for the in-thread index;
 * - when the worker dies (uncaught error, exit), every later `dispatch` and call throws
 *   IndexWorkerFailedError; the records it had not committed are indexed again at the next start
 *   (the plugin re-dispatches from the end the index files record).
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../common/logging/logger.js';
import type { IndexQueryResult, IndexCheckpoint } from './index-service.js';
import { IndexRecordBatchWriter, type IndexRecord } from './index-record-batch.js';
import type { FromWorker, IndexWorkerCall, IndexWorkerInit, IndexWorkerStats, ToWorker } from './index-worker-protocol.js';
import { SyncFailedError } from '../mapped-file/sync-failed-error.js';

/** A batch this large is posted at once instead of at the end of the event-loop turn, bytes. */
const POST_AT_BYTES = 1024 * 1024;

/**
 * The worker's entry. Built: index-worker.js next to this file. From TypeScript sources (tsx):
 * module hooks are per thread, so a small ESM bootstrap registers tsx in the worker first.
 */
function workerEntry(): URL {
  if (!import.meta.url.endsWith('.ts')) return new URL('./index-worker.js', import.meta.url);
  const entry = new URL('./index-worker.ts', import.meta.url).href;
  const code = `import { register } from ${JSON.stringify(import.meta.resolve('tsx/esm/api'))}; register(); await import(${JSON.stringify(entry)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}

export class IndexWorkerFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IndexWorkerFailedError';
  }
}

export class IndexWorkerClient {
  private readonly batch = new IndexRecordBatchWriter();
  private postScheduled = false;
  private nextId = 1;
  private readonly calls = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  /** Set once the worker is gone (crash or exit not asked for). */
  private failure: IndexWorkerFailedError | null = null;
  /** Failure reports of the worker not yet thrown to the dispatcher chain. */
  private readonly unreportedFailures: string[] = [];
  private stopping = false;

  private constructor(
    private readonly worker: Worker,
    private readonly logger: Logger,
    private readonly checkpoint: IndexCheckpoint,
    private readonly onSyncFailed: ((e: SyncFailedError) => void) | undefined,
  ) {
    worker.on('message', (m: FromWorker) => this.onMessage(m));
    worker.on('error', (e) => this.fail(`index worker failed: ${String(e)}`));
    worker.on('exit', (code) => {
      if (!this.stopping) this.fail(`index worker exited (code ${code})`);
    });
    worker.unref();
  }

  /**
   * Starts the worker on the index files in `init.indexDir` (closed by the caller) and resolves
   * once it has opened them. @throws (rejects) IndexWorkerFailedError when it cannot start.
   */
  static async start(init: IndexWorkerInit, logger: Logger, checkpoint: IndexCheckpoint, onSyncFailed?: (e: SyncFailedError) => void): Promise<IndexWorkerClient> {
    const worker = new Worker(workerEntry(), { workerData: init, name: 'tsmq-index' });
    const ready = new Promise<void>((resolve, reject) => {
      const onMessage = (m: FromWorker): void => {
        if (m.t === 'ready') resolve();
        else if (m.t === 'initError') reject(new IndexWorkerFailedError(`index worker could not open ${init.indexDir}: ${m.error}`));
        else return;
        worker.off('message', onMessage);
      };
      worker.on('message', onMessage);
      worker.once('error', (e) => reject(new IndexWorkerFailedError(`index worker failed to start: ${String(e)}`)));
      worker.once('exit', (code) => reject(new IndexWorkerFailedError(`index worker exited (code ${code}) before it was ready`)));
    });
    const client = new IndexWorkerClient(worker, logger, checkpoint, onSyncFailed);
    worker.ref();
    try {
      await ready;
    } catch (e) {
      client.stopping = true;
      await worker.terminate();
      throw e;
    } finally {
      worker.unref();
    }
    return client;
  }

  /** Queues one record for the worker. @throws IndexWorkerFailedError (worker gone, or a report of records it could not index). */
  dispatch(r: IndexRecord): void {
    if (this.failure) throw this.failure;
    this.batch.append(r);
    if (this.batch.sizeBytes >= POST_AT_BYTES) this.postBatch();
    else if (!this.postScheduled) {
      this.postScheduled = true;
      setImmediate(() => this.postBatch());
    }
    const report = this.unreportedFailures.shift();
    if (report !== undefined) throw new IndexWorkerFailedError(report);
  }

  queryOffset(topic: string, key: string, maxNum: number, beginMs: number, endMs: number): Promise<IndexQueryResult> {
    return this.call({ op: 'query', topic, key, maxNum, beginMs, endMs }) as Promise<IndexQueryResult>;
  }

  deleteExpiredFiles(minPhyOffset: number): Promise<number> {
    return this.call({ op: 'deleteExpiredFiles', minPhyOffset }) as Promise<number>;
  }

  /** Every record dispatched so far is indexed, and the files and checkpoint are durable. */
  async flush(): Promise<void> {
    await this.call({ op: 'flush' });
  }

  stats(): Promise<IndexWorkerStats> {
    return this.call({ op: 'stats' }) as Promise<IndexWorkerStats>;
  }

  /** Indexes what is queued, flushes, closes the files and ends the worker. */
  async shutdown(): Promise<void> {
    try {
      await this.call({ op: 'shutdown' });
    } finally {
      this.stopping = true;
      await this.worker.terminate();
    }
  }

  /**
   * Crash simulation: drops what is not handed over yet and stops the worker without committing
   * (what it has not written is lost, as in a process crash). Resolves when the thread is gone.
   */
  closeAbruptly(): Promise<void> {
    this.stopping = true;
    this.batch.take();
    for (const c of this.calls.values()) c.reject(new IndexWorkerFailedError('index worker closed'));
    this.calls.clear();
    return this.worker.terminate().then(() => undefined);
  }

  private call(call: IndexWorkerCall): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    this.postBatch();
    const id = this.nextId++;
    const p = new Promise<unknown>((resolve, reject) => this.calls.set(id, { resolve, reject }));
    this.worker.ref(); // an answer is awaited: keep the process alive for it
    this.post({ t: 'call', id, call });
    return p;
  }

  private postBatch(): void {
    this.postScheduled = false;
    const b = this.batch.take();
    if (b && !this.failure) this.post({ t: 'records', batch: b }, [b]);
  }

  private post(m: ToWorker, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(m, transfer);
  }

  private settle(id: number, error: string | null, result: unknown): void {
    const c = this.calls.get(id);
    this.calls.delete(id);
    if (this.calls.size === 0) this.worker.unref();
    if (!c) return;
    if (error === null) c.resolve(result);
    else c.reject(new Error(error));
  }

  private onMessage(m: FromWorker): void {
    switch (m.t) {
      case 'reply':
        this.settle(m.id, m.error, m.result);
        break;
      case 'log':
        this.logger[m.level](m.obj, m.msg);
        break;
      case 'checkpoint':
        if (m.indexMsgTimestamp > this.checkpoint.indexMsgTimestamp) this.checkpoint.setIndexMsgTimestamp(m.indexMsgTimestamp);
        this.checkpoint.flush().then(
          () => this.post({ t: 'checkpointDone', id: m.id, error: null }),
          (e: unknown) => this.post({ t: 'checkpointDone', id: m.id, error: String(e) }),
        );
        break;
      case 'syncFailed':
        this.onSyncFailed?.(new SyncFailedError(m.path, 0, 0, Object.assign(new Error(m.message), { code: m.code })));
        break;
      case 'recordsFailed': {
        const text = `index worker could not index ${m.count} record(s) at CommitLog offsets ${m.firstOffset}..${m.lastOffset}: ${m.error}`;
        this.logger.error({ count: m.count, firstOffset: m.firstOffset, lastOffset: m.lastOffset, err: m.error }, 'index worker could not index records');
        this.unreportedFailures.push(text);
        break;
      }
      default:
        break;
    }
  }

  private fail(reason: string): void {
    if (this.failure) return;
    this.failure = new IndexWorkerFailedError(`${reason}; keys of records dispatched since the index's last commit are indexed again at the next start`);
    this.logger.error({ err: reason }, 'index worker is gone: dispatch to the index refused until restart');
    for (const c of this.calls.values()) c.reject(this.failure);
    this.calls.clear();
  }
}
