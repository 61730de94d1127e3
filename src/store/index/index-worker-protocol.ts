/**
 * Messages between the store thread (IndexWorkerClient) and the index worker thread
 * (index-worker.ts). Process-internal; structured-clone values only.
 */
import type { IndexQueryResult } from './index-service.js';

export interface IndexWorkerInit {
  indexDir: string;
  maxHashSlotNum: number;
  maxIndexNum: number;
  messageIndexEnable: boolean;
  /** The checkpoint's indexMsgTimestamp when the worker starts. */
  indexMsgTimestamp: number;
  /** Period of the writable file's flush in the worker, ms. */
  flushIntervalMs: number;
}

/** Operations the store thread asks for; answered in order after every batch posted before them. */
export type IndexWorkerCall =
  | { op: 'query'; topic: string; key: string; maxNum: number; beginMs: number; endMs: number }
  | { op: 'deleteExpiredFiles'; minPhyOffset: number }
  | { op: 'flush' }
  | { op: 'shutdown' }
  | { op: 'stats' };

export interface IndexWorkerStats {
  /** Records applied since the worker started (keys or not). */
  recordsApplied: number;
  /** CommitLog offset of the last applied record (-1: none yet). */
  lastAppliedOffset: number;
  fileCount: number;
}

export type ToWorker =
  | { t: 'records'; batch: ArrayBuffer }
  | { t: 'call'; id: number; call: IndexWorkerCall }
  | { t: 'checkpointDone'; id: number; error: string | null };

export type FromWorker =
  | { t: 'ready'; fileCount: number }
  | { t: 'initError'; error: string }
  | { t: 'reply'; id: number; result: IndexQueryResult | number | IndexWorkerStats | null; error: string | null }
  | { t: 'log'; level: 'info' | 'warn' | 'error' | 'debug'; obj: Record<string, unknown>; msg: string | undefined }
  /** Set the checkpoint's indexMsgTimestamp (when larger) and flush the checkpoint; answer checkpointDone. */
  | { t: 'checkpoint'; id: number; indexMsgTimestamp: number }
  | { t: 'syncFailed'; path: string; code: string; message: string }
  /** Records of the batch that could not be indexed (the in-thread dispatcher chain would have counted them). */
  | { t: 'recordsFailed'; count: number; firstOffset: number; lastOffset: number; error: string };
