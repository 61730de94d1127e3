/**
 * Plugs the IndexService into the store's dispatch pipeline (StorePlugin): it receives every
 * dispatched record in CommitLog order, also during recovery, and tells recovery where it needs
 * records again (the end of what it has indexed, or the start of a file destroyed after a crash).
 * Every 10 s the writable file is made durable and the checkpoint's indexMsgTimestamp follows it,
 * so crash recovery re-indexes only what came after the last index flush.
 *
 * `indexBuildInWorker=true`: load and recovery run on the store thread as always; once recovered,
 * the index is made durable and closed, and a worker thread (index-worker.ts) opens the same files
 * and builds the index from the records handed to it (index-worker-client.ts), like RocketMQ's
 * reput thread builds the index apart from the put path. Same files, same bytes, same crash
 * recovery; queries are answered after every record dispatched before them. When the worker cannot
 * start the index stays on the store thread (logged); when it dies later, dispatch to the index
 * fails loudly (IndexWorkerFailedError, counted in pluginFailures.index) and the next start
 * re-indexes what it had not committed. Needs the real file system: with another FileSystem
 * (fault-injection tests) the index stays on the store thread.
 */
import * as path from 'node:path';
import type { DispatchRequest } from '../../common/message/record-codec.js';
import type { StorePlugin, StorePluginContext } from '../dispatch/commit-log-dispatcher.js';
import { IndexService, fillIndexRecord, type IndexQueryResult } from './index-service.js';
import type { IndexRecord } from './index-record-batch.js';
import type { PreparedDispatchBlock } from '../dispatch/prepared-dispatch-block.js';
import { NodeFileSystem } from '../../common/fs/node-file-system.js';
import { IndexWorkerClient } from './index-worker-client.js';

/** Writable-index flush period (RocketMQ only flushes index files when full or at shutdown). */
const FLUSH_INTERVAL_MS = 10_000;

/** What queries and retention need of the index, on the store thread or in the worker. */
export interface IndexLookup {
  queryOffset(topic: string, key: string, maxNum: number, beginMs: number, endMs: number): IndexQueryResult | Promise<IndexQueryResult>;
  /** Deletes every file but the newest whose last message is below `minPhyOffset`; resolves how many. */
  deleteExpiredFiles(minPhyOffset: number): number | Promise<number>;
}

export class IndexPlugin implements StorePlugin, IndexLookup {
  readonly name = 'index';
  /** The store-thread index (load, recovery; everything when the worker is off). */
  service: IndexService;
  /** Set once the worker builds the index (after `recovered`). */
  private worker: IndexWorkerClient | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly ctx: StorePluginContext) {
    this.service = this.newService();
  }

  /** True while the index is built by the worker thread. */
  get inWorker(): boolean {
    return this.worker !== null;
  }

  /** The worker's side, for stats and tests (null when the index is on the store thread). */
  get workerClient(): IndexWorkerClient | null {
    return this.worker;
  }

  private newService(): IndexService {
    const ctx = this.ctx;
    return new IndexService(
      ctx.fs,
      {
        indexDir: path.join(ctx.config.storePathRootDir, 'index'),
        maxHashSlotNum: ctx.config.maxHashSlotNum,
        maxIndexNum: ctx.config.maxIndexNum,
        messageIndexEnable: ctx.config.messageIndexEnable,
      },
      ctx.clock,
      ctx.checkpoint,
      ctx.logger.child({ component: 'index' }),
      ctx.onSyncFailed,
    );
  }

  private get indexDir(): string {
    return path.join(this.ctx.config.storePathRootDir, 'index');
  }

  load(lastExitOK: boolean, startup?: { pageCacheIntact: boolean }): { rebuildFromPhyOffset: number | null } {
    const { rebuildFromPhyOffset } = this.service.load(lastExitOK, this.ctx.checkpoint.indexMsgTimestamp, startup?.pageCacheIntact ?? false);
    this.startTimer();
    // Records beyond the newest indexed offset (or everything when no index file is left) are
    // indexed again; re-dispatched records already indexed are skipped by the service.
    const indexedUpTo = this.service.fileCount === 0 ? 0 : this.service.indexedUpToPhyOffset;
    return { rebuildFromPhyOffset: rebuildFromPhyOffset === null ? indexedUpTo : Math.min(rebuildFromPhyOffset, indexedUpTo) };
  }

  async recovered(commitLogMaxOffset: number): Promise<void> {
    await this.service.clampEnd(commitLogMaxOffset);
    if (this.ctx.config.indexBuildInWorker) await this.moveToWorker();
  }

  /**
   * Hands the index to the worker: the recovered files are made durable and closed (the
   * checkpoint then covers them, as after a clean shutdown), the worker opens them. When the
   * worker cannot start, the files are opened again here. @throws (rejects) when the flush fails.
   */
  private async moveToWorker(): Promise<void> {
    const logger = this.ctx.logger.child({ component: 'index' });
    if (!(this.ctx.fs instanceof NodeFileSystem)) {
      logger.info({}, 'indexBuildInWorker ignored: the store does not use the real file system; the index is built on the store thread');
      return;
    }
    await this.service.shutdown();
    this.stopTimer();
    try {
      this.worker = await IndexWorkerClient.start(
        {
          indexDir: this.indexDir,
          maxHashSlotNum: this.ctx.config.maxHashSlotNum,
          maxIndexNum: this.ctx.config.maxIndexNum,
          messageIndexEnable: this.ctx.config.messageIndexEnable,
          indexMsgTimestamp: this.ctx.checkpoint.indexMsgTimestamp,
          flushIntervalMs: FLUSH_INTERVAL_MS,
        },
        logger,
        this.ctx.checkpoint,
        this.ctx.onSyncFailed,
      );
      logger.info({}, 'index built by a worker thread (indexBuildInWorker=true)');
    } catch (e) {
      logger.error({ err: String(e) }, 'index worker could not start; the index is built on the store thread');
      this.service = this.newService();
      this.service.load(true, this.ctx.checkpoint.indexMsgTimestamp);
      this.startTimer();
    }
  }

  dispatch(request: DispatchRequest): void {
    if (this.worker) this.worker.dispatch(request);
    else this.service.buildIndex(request);
  }

  /** `dispatch` for each record of a prepared block (its columns: IndexService.buildIndexPrepared, or the worker's batch). */
  dispatchPrepared(block: PreparedDispatchBlock, failed: (k: number, error: unknown) => void): void {
    const worker = this.worker;
    if (!worker) {
      this.service.buildIndexPrepared(block, failed);
      return;
    }
    const r = this.workerRecord;
    for (let k = 0; k < block.count; k++) {
      fillIndexRecord(r, block, k);
      try {
        worker.dispatch(r);
      } catch (e) {
        failed(k, e);
      }
    }
  }

  /** The one IndexRecord dispatchPrepared fills with each record in turn for the worker (which copies it). */
  private readonly workerRecord: IndexRecord = { commitLogOffset: 0, storeTimestamp: 0, sysFlag: 0, topic: '', keys: '', uniqKey: null };

  /** The records about to be dispatched: their hash slots are read ahead (IndexService.warmSlots; not with the worker). */
  willDispatch(requests: readonly DispatchRequest[], from: number, to: number): void {
    if (!this.worker) this.service.warmSlots(requests, from, to);
  }

  queryOffset(topic: string, key: string, maxNum: number, beginMs: number, endMs: number): IndexQueryResult | Promise<IndexQueryResult> {
    return this.worker ? this.worker.queryOffset(topic, key, maxNum, beginMs, endMs) : this.service.queryOffset(topic, key, maxNum, beginMs, endMs);
  }

  deleteExpiredFiles(minPhyOffset: number): number | Promise<number> {
    return this.worker ? this.worker.deleteExpiredFiles(minPhyOffset) : this.service.deleteExpiredFiles(minPhyOffset);
  }

  async flush(): Promise<void> {
    if (this.worker) await this.worker.flush();
    else await this.service.flush();
  }

  async shutdown(): Promise<void> {
    this.stopTimer();
    if (this.worker) await this.worker.shutdown();
    else await this.service.shutdown();
  }

  /** Crash simulation. With the worker, the thread is terminated (resolves when it is gone). */
  closeAbruptly(): void {
    this.stopTimer();
    if (this.worker) this.workerClosed = this.worker.closeAbruptly();
    else this.service.closeAbruptly();
  }

  /** Resolves when a worker stopped by closeAbruptly has ended (tests reopen the store after it). */
  workerClosed: Promise<void> = Promise.resolve();

  private startTimer(): void {
    this.timer = setInterval(() => void this.service.flushWritable(), FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
