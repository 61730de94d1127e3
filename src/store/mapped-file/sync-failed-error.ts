/**
 * A failed fdatasync/fsync of a segment file ("fsyncgate"). After Linux reports EIO from
 * fdatasync it may already have marked the dirty pages clean (and may drop them), so a retry can
 * succeed without the bytes ever reaching the device. A MappedFile therefore keeps the first
 * failure for good: every later flush or force of that file throws this same error and its
 * flushedPosition never moves past the failure. Only a restart (abnormal recovery, which
 * CRC-checks from the checkpoint) can tell what really is on disk. See
 * docs/internals/io-engine.md, "fsyncgate".
 */
export class SyncFailedError extends Error {
  /** The fs error code of the failed sync (e.g. 'EIO'), '' when it had none. */
  readonly code: string;

  constructor(
    /** Path of the segment whose sync failed. */
    readonly filePath: string,
    /** Flushed position of the file when it failed (bytes below are known durable), bytes. */
    readonly flushedPosition: number,
    /** Committed position the failed sync was meant to make durable, bytes. */
    readonly targetPosition: number,
    cause: unknown,
  ) {
    const c = (cause as { code?: unknown } | null)?.code;
    const code = typeof c === 'string' ? c : '';
    const m = (cause as { message?: unknown } | null)?.message;
    const message = typeof m === 'string' ? m : String(cause);
    super(`fdatasync of ${filePath} failed${code ? ` with ${code}` : ''} (${message})`, { cause });
    this.name = 'SyncFailedError';
    this.code = code;
  }
}

/** The SyncFailedError in `err` or its cause chain, or null. */
export function findSyncFailure(err: unknown): SyncFailedError | null {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof SyncFailedError) return e;
  }
  return null;
}
