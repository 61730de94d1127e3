/**
 * A consumer of CommitLog records in CommitLog order (RocketMQ `CommitLogDispatcher`): the
 * ConsumeQueue builder and the index builder each implement it and are registered with the
 * ReputMessageService. Recovery may hand the same record again, so `dispatch` must be
 * idempotent (ConsumeQueue writes skip what they already hold).
 *
 * Failures (see dispatcher-chain.ts): a `required` dispatcher (the ConsumeQueue builder) that
 * throws stops dispatch at that record; it is retried and nothing after it is dispatched until
 * it succeeds, while the store refuses puts (LOGICS_QUEUE_ERROR). Any other dispatcher (index,
 * plugins) that throws is counted and logged, rate-limited, and dispatch goes on.
 */
import type { Clock } from '../../common/time/clock.js';
import type { FileSystem } from '../../common/fs/file-system.js';
import type { Logger } from '../../common/logging/logger.js';
import type { DispatchRequest } from '../../common/message/record-codec.js';
import type { PreparedDispatchBlock } from './prepared-dispatch-block.js';
import type { StoreCheckpoint } from '../recovery/store-checkpoint.js';
import type { SyncFailedError } from '../mapped-file/sync-failed-error.js';
import type { StoreConfig } from '../store-config.js';

export interface CommitLogDispatcher {
  /** Short name for logs, e.g. 'consume-queue', 'index'. */
  readonly name: string;
  /** True: a failure blocks dispatch until this dispatcher accepts the record (default false). */
  readonly required?: boolean;
  /** @throws on failure (see the file comment for what happens then). */
  dispatch(request: DispatchRequest): void;
  /**
   * Optional: the same as `dispatch` for each of `requests` in order (the contiguous records of
   * one prepared block, MessageStore.putPreparedMessages), done in fewer steps. When it throws,
   * part of the block may be done: the chain then hands the records one by one again, so doing
   * one twice must be harmless (as for recovery).
   */
  dispatchBlock?(requests: readonly DispatchRequest[]): void;
  /**
   * Optional: the same as `dispatch` for each record of a prepared block (its columns, in
   * CommitLog order; no DispatchRequest per record). A record that fails is reported with
   * `failed(k, error)` (record k of the block); the dispatcher goes on with the next one unless
   * `failed` throws (the chain makes it throw for required dispatchers: the chain then hands the
   * records one by one, so doing one twice must be harmless, as for `dispatchBlock`).
   */
  dispatchPrepared?(block: PreparedDispatchBlock, failed: (k: number, error: unknown) => void): void;
  /**
   * Optional hint: `requests[from, to)` are dispatched next, in this order (the records of a batch
   * just appended). The dispatcher may load what their `dispatch` calls will need (the index reads
   * its hash slots); it must not change what `dispatch` does or writes. Errors are ignored.
   */
  willDispatch?(requests: readonly DispatchRequest[], from: number, to: number): void;
}

/**
 * A dispatcher with its own files and lifecycle (e.g. the IndexService), plugged into the store.
 * Order at start-up: factory → `load(lastExitOK)` → recovery (records from
 * min(CQ max physical offset, rebuildFromPhyOffset) on are dispatched again) →
 * `recovered(commitLogMaxOffset)` → running.
 * Clean shutdown: `flush()` then `shutdown()` before the checkpoint is forced.
 */
export interface StorePlugin extends CommitLogDispatcher {
  /**
   * Loads the plugin's files; returns the CommitLog offset from which it needs records again (null: none).
   * `pageCacheIntact`: the last exit was a crash of a process on this boot (not a power loss or OS
   * crash), so every write it handed to the OS survived, in order.
   */
  load?(lastExitOK: boolean, startup?: { pageCacheIntact: boolean }): { rebuildFromPhyOffset: number | null };
  /**
   * After recovery: the CommitLog ends at `commitLogMaxOffset` (bytes). A plugin whose files got
   * to the device ahead of the CommitLog (ASYNC_FLUSH, power loss) must not treat anything at or
   * beyond it as already seen: new records will be stored there. What the plugin changes for that
   * must be durable when the returned promise resolves (before the store takes puts): new records
   * at those offsets may reach the device, and a later power loss must not bring back the old
   * state. @throws (rejects) when it cannot be made durable; the start then fails.
   */
  recovered?(commitLogMaxOffset: number): void | Promise<void>;
  flush?(): Promise<void>;
  shutdown?(): Promise<void>;
  /** Crash simulation: close files without flushing. */
  closeAbruptly?(): void;
}

export interface StorePluginContext {
  config: StoreConfig;
  fs: FileSystem;
  clock: Clock;
  logger: Logger;
  /** Shared checkpoint (indexMsgTimestamp lives at byte 16). */
  checkpoint: StoreCheckpoint;
  /** Report a failed fdatasync of a plugin file (fsyncgate: puts refused until restart, abort file kept). */
  onSyncFailed?: (e: SyncFailedError) => void;
}

export type StorePluginFactory = (ctx: StorePluginContext) => StorePlugin;
