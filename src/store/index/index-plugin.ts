/**
 * Plugs the IndexService into the store's dispatch pipeline (StorePlugin): it receives every
 * dispatched record in CommitLog order, also during recovery, and tells recovery where it needs
 * records again (the end of what it has indexed, or the start of a file destroyed after a crash).
 * Every 10 s the writable file is made durable and the checkpoint's indexMsgTimestamp follows it,
 * so crash recovery re-indexes only what came after the last index flush.
 */
import * as path from 'node:path';
import type { DispatchRequest } from '../../common/message/record-codec.js';
import type { StorePlugin, StorePluginContext } from '../dispatch/commit-log-dispatcher.js';
import { IndexService } from './index-service.js';

/** Writable-index flush period (RocketMQ only flushes index files when full or at shutdown). */
const FLUSH_INTERVAL_MS = 10_000;

export class IndexPlugin implements StorePlugin {
  readonly name = 'index';
  readonly service: IndexService;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly ctx: StorePluginContext) {
    this.service = new IndexService(
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

  load(lastExitOK: boolean, startup?: { pageCacheIntact: boolean }): { rebuildFromPhyOffset: number | null } {
    const { rebuildFromPhyOffset } = this.service.load(lastExitOK, this.ctx.checkpoint.indexMsgTimestamp, startup?.pageCacheIntact ?? false);
    this.timer = setInterval(() => void this.service.flushWritable(), FLUSH_INTERVAL_MS);
    this.timer.unref();
    // Records beyond the newest indexed offset (or everything when no index file is left) are
    // indexed again; re-dispatched records already indexed are skipped by the service.
    const indexedUpTo = this.service.fileCount === 0 ? 0 : this.service.indexedUpToPhyOffset;
    return { rebuildFromPhyOffset: rebuildFromPhyOffset === null ? indexedUpTo : Math.min(rebuildFromPhyOffset, indexedUpTo) };
  }

  recovered(commitLogMaxOffset: number): Promise<void> {
    return this.service.clampEnd(commitLogMaxOffset);
  }

  dispatch(request: DispatchRequest): void {
    this.service.buildIndex(request);
  }

  async flush(): Promise<void> {
    await this.service.flush();
  }

  async shutdown(): Promise<void> {
    this.stopTimer();
    await this.service.shutdown();
  }

  closeAbruptly(): void {
    this.stopTimer();
    this.service.closeAbruptly();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
