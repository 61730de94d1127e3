/**
 * Deleting CommitLog segments (RocketMQ `MappedFileQueue.deleteExpiredFileByTime` and
 * `retryDeleteFirstFile`, spec §6.1 step 4–5, §5.1), with three extra guarantees:
 *
 * - Never the last file (the one being written), never a file holding records the dispatcher
 *   has not fed to the ConsumeQueues yet (`keepFromOffset`), never from the middle: the pass
 *   walks from the oldest file and stops at the first file it must keep or cannot delete.
 * - B30: before the first deletion of a pass the newest file is forced to disk and the directory
 *   is fsynced, so a crash right after a deletion still finds the high-water mark on disk
 *   (the store never ends up with zero files and a lost max offset).
 * - Forced deletion (unexpired files, disk above diskSpaceCleanForciblyRatio) re-asks
 *   `forced()` after every file, so it stops as soon as usage is back under the threshold.
 *
 * A file still held by a reader is marked unavailable (`destroy` = shutdown + delete when
 * released); it stays first in the list and `retryHangedFirstFile` deletes it on a later pass
 * once released, or forcibly after destroyMapedFileIntervalForcibly (B31).
 */
import * as path from 'node:path';
import type { FileSystem } from '../../common/fs/file-system.js';
import type { Logger } from '../../common/logging/logger.js';
import type { MappedFile } from '../mapped-file/mapped-file.js';
import type { MappedFileQueue } from '../mapped-file/mapped-file-queue.js';

export interface CommitLogCleanRequest {
  nowMs: number;
  /** fileReservedTime in ms: a file whose last write is older is expired. */
  fileReservedMs: number;
  /** True while unexpired files may be deleted too; asked again after every forced deletion. */
  forced: () => boolean;
  deleteIntervalMs: number;
  destroyIntervalForciblyMs: number;
  batchMax: number;
  /** Files ending above this CommitLog offset are kept (not dispatched yet). */
  keepFromOffset: number;
  /** Waits `ms`; resolves false when the pass must stop (store shutting down). */
  sleep: (ms: number) => Promise<boolean>;
  /**
   * Called synchronously right after each deletion (and after a file was left hanged), before any
   * wait: the ConsumeQueue min offsets are corrected there, so no pull ever reads a deleted file.
   */
  onMinMoved: () => void;
}

export interface CommitLogCleanResult {
  /** Paths of the files deleted, oldest first. */
  deleted: string[];
  /** How many of them were not expired (deleted because the disk was above the forcibly ratio). */
  forcedCount: number;
  /** A file a reader still holds: now unavailable, deleted by a later pass. */
  hanged: string | null;
  /** Why the pass stopped. */
  stopReason: string;
}

export type DestroyOutcome = 'deleted' | 'held' | 'failed';

/** `mf.destroy(intervalForciblyMs)` that reports an unlink error instead of throwing. */
export function destroyFile(mf: MappedFile, intervalForciblyMs: number, logger: Logger): DestroyOutcome {
  try {
    return mf.destroy(intervalForciblyMs) ? 'deleted' : 'held';
  } catch (e) {
    logger.error({ err: e, filePath: mf.filePath }, 'deleting a segment failed');
    return 'failed';
  }
}

/** Last modification time of a segment in ms (0 when it cannot be read, i.e. treated as old). */
function lastModifiedMs(fs: FileSystem, mf: MappedFile): number {
  try {
    return fs.stat(mf.filePath)?.mtimeMs ?? 0;
  } catch {
    return 0;
  }
}

/**
 * B30: forces the newest file (content and size) and the directory entry to disk. When buffered
 * bytes cannot be written (disk full) the deletion goes on: the file itself exists at full size
 * since its creation, and those bytes would be lost by a crash whether or not old files go.
 */
export async function persistHighWaterMark(mfq: MappedFileQueue, fs: FileSystem, logger: Logger): Promise<void> {
  const last = mfq.getLastMappedFile();
  if (last) {
    try {
      await last.force();
    } catch (e) {
      logger.warn({ err: e, filePath: last.filePath }, 'could not force the newest CommitLog file before deleting old ones');
    }
  }
  await fsyncDirectory(fs, mfq.dir, logger);
}

export async function fsyncDirectory(fs: FileSystem, dir: string, logger: Logger): Promise<void> {
  let fd: number;
  try {
    fd = fs.open(dir, 'r');
  } catch {
    return; // platforms (or test file systems) that cannot open directories
  }
  try {
    await fs.fsync(fd);
  } catch (e) {
    logger.warn({ err: e, dir }, 'fsync of a directory failed');
  } finally {
    fs.close(fd);
  }
}

/** Deletes expired (or, when forced, the oldest) CommitLog files; see the module comment. */
export async function deleteCommitLogFiles(
  mfq: MappedFileQueue,
  fs: FileSystem,
  req: CommitLogCleanRequest,
  logger: Logger,
): Promise<CommitLogCleanResult> {
  const result: CommitLogCleanResult = { deleted: [], forcedCount: 0, hanged: null, stopReason: 'no file to delete' };
  let persisted = false;
  for (;;) {
    const files = mfq.getFiles();
    if (files.length <= 1) {
      result.stopReason = files.length === 1 ? 'only the file being written is left' : 'no files';
      break;
    }
    if (result.deleted.length >= req.batchMax) {
      result.stopReason = `deleteFileBatchMax (${req.batchMax}) files deleted`;
      break;
    }
    const mf = files[0]!;
    if (mf.fileFromOffset + mf.fileSize > req.keepFromOffset) {
      result.stopReason = `file ${path.basename(mf.filePath)} holds records not dispatched yet`;
      break;
    }
    const expired = req.nowMs >= lastModifiedMs(fs, mf) + req.fileReservedMs;
    const forced = !expired && req.forced();
    if (!expired && !forced) {
      result.stopReason = `oldest file ${path.basename(mf.filePath)} is not expired`;
      break;
    }
    if (!persisted) {
      await persistHighWaterMark(mfq, fs, logger);
      persisted = true;
      if (mfq.getFirstMappedFile() !== mf) continue; // the list changed meanwhile: look again
    }
    const outcome = destroyFile(mf, req.destroyIntervalForciblyMs, logger);
    if (outcome !== 'deleted') {
      if (outcome === 'held') {
        result.hanged = mf.filePath;
        req.onMinMoved(); // unavailable now: the CommitLog min already moved past it
      }
      result.stopReason = outcome === 'held' ? `file ${path.basename(mf.filePath)} is still held by a reader` : 'delete failed';
      break;
    }
    mfq.removeFiles([mf]);
    req.onMinMoved();
    result.deleted.push(mf.filePath);
    if (forced) result.forcedCount++;
    logger.info({ filePath: mf.filePath, expired, forced }, 'CommitLog file deleted');
    if (req.deleteIntervalMs > 0 && !(await req.sleep(req.deleteIntervalMs))) {
      result.stopReason = 'store shutting down';
      break;
    }
  }
  if (result.deleted.length > 0) await fsyncDirectory(fs, mfq.dir, logger);
  return result;
}

export interface HangedRetryResult {
  deleted: string | null;
  stillHeld: string | null;
}

/**
 * A first file left unavailable by an earlier deletion (a reader held it) is deleted now when it
 * has been released. While it is still held and `mayForce` (the redeleteHangedFileInterval
 * cadence), it is released forcibly once `intervalForciblyMs` passed since it was first shut
 * down (RocketMQ `retryDeleteFirstFile`). Never touches the last file.
 */
export function retryHangedFirstFile(mfq: MappedFileQueue, intervalForciblyMs: number, mayForce: boolean, logger: Logger): HangedRetryResult {
  const files = mfq.getFiles();
  const first = files[0];
  if (!first || first.isAvailable() || files.length < 2) return { deleted: null, stillHeld: null };
  if (!mayForce && first.getRefCount() > 0) return { deleted: null, stillHeld: first.filePath };
  const outcome = destroyFile(first, intervalForciblyMs, logger);
  if (outcome !== 'deleted') return { deleted: null, stillHeld: first.filePath };
  mfq.removeFiles([first]);
  logger.info({ filePath: first.filePath }, 'hanged CommitLog file deleted on retry');
  return { deleted: first.filePath, stillHeld: null };
}
