/**
 * The first CommitLog segment of a store that has none, created at start (before puts are
 * accepted) rather than by the first put, so that a disk that cannot hold even one segment stops
 * the start with a sentence instead of a bare ENOSPC later (issue 19). With warmMapedFileEnable
 * the segment is also pre-written if the space gate allows (retention/prewrite-space-gate.ts),
 * otherwise it stays sparse (one warning). A failed creation leaves no file behind
 * (MappedFile.create unlinks it).
 */
import * as path from 'node:path';
import { offsetToFileName } from '../mapped-file/file-names.js';
import { formatBytes } from '../retention/prewrite-space-gate.js';
import type { StoreComponents } from './store-components.js';
import { isDiskFullError, storeStartError } from './store-start-error.js';

export { StoreStartError } from './store-start-error.js';

/** Smallest segment size suggested in the message, bytes. */
const MIN_SUGGESTED_SEGMENT_BYTES = 1024 * 1024;

/**
 * Creates (and maybe pre-writes) the first CommitLog segment when there is none; no-op otherwise.
 * @throws StoreStartError naming the file, its size, the error, the free space and the fix, e.g.
 *   "cannot create the first CommitLog segment /store/commitlog/00000000000000000000 (1.0 GiB,
 *   mappedFileSizeCommitLog=1073741824): disk full: write failed with ENOSPC (...); the partition
 *   of /store/commitlog has 200.0 MiB free. Free disk space, or lower mappedFileSizeCommitLog
 *   (e.g. mappedFileSizeCommitLog=50331648), and start again."
 */
export async function prepareFirstSegment(c: Pick<StoreComponents, 'config' | 'commitLog' | 'diskUsageProbe'>): Promise<void> {
  const mfq = c.commitLog.mfq;
  if (mfq.getLastMappedFile()) return;
  const startOffset = c.commitLog.getMaxOffset();
  try {
    await mfq.prepareFirstFile(startOffset);
  } catch (e) {
    const size = mfq.fileSize;
    const filePath = path.join(mfq.dir, offsetToFileName(startOffset - (startOffset % size)));
    const space = c.diskUsageProbe.space?.(mfq.dir) ?? null;
    let advice = 'Fix the cause and start again.';
    if (isDiskFullError(e)) {
      const suggested = space ? Math.floor(space.usableBytes / 4 / MIN_SUGGESTED_SEGMENT_BYTES) * MIN_SUGGESTED_SEGMENT_BYTES : 0;
      const example = suggested >= MIN_SUGGESTED_SEGMENT_BYTES && suggested < size ? ` (e.g. mappedFileSizeCommitLog=${suggested})` : '';
      advice = `Free disk space, or lower mappedFileSizeCommitLog${example}, and start again.`;
    }
    throw storeStartError(`cannot create the first CommitLog segment ${filePath} (${formatBytes(size)}, mappedFileSizeCommitLog=${size})`, mfq.dir, c.diskUsageProbe, e, advice);
  }
}
