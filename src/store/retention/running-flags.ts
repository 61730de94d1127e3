/**
 * Why the store refuses writes, one flag per cause (the idea of RocketMQ `RunningFlags`:
 * DISK_FULL bit 4, WRITE_ERROR for a failed CommitLog write).
 *
 * - diskFull:   disk usage above diskSpaceWarningLevelRatio; set and cleared by the disk check.
 * - writeError: a CommitLog write (pwrite) failed, e.g. ENOSPC or EIO; set by the put path,
 *               cleared by the disk check once buffered bytes could be written again.
 *
 * Every change of the combined state is pushed to `sink(writable, reason)` (the store's
 * `setWritable`). Only transitions are pushed, so a reason set on the store by someone else is
 * not overwritten while these flags do not change.
 */
export type WritableSink = (writable: boolean, reason: string) => void;

export class RunningFlags {
  private diskFullReason: string | null = null;
  private writeErrorReason: string | null = null;
  private lastPushed: string | null = null;

  constructor(private readonly sink: WritableSink) {}

  isDiskFull(): boolean {
    return this.diskFullReason !== null;
  }

  hasWriteError(): boolean {
    return this.writeErrorReason !== null;
  }

  /** True when neither flag is set. */
  isWritable(): boolean {
    return this.reason() === null;
  }

  /** The reason writes are refused (disk full first), or null. */
  reason(): string | null {
    return this.diskFullReason ?? this.writeErrorReason;
  }

  setDiskFull(reason: string | null): void {
    this.diskFullReason = reason;
    this.push();
  }

  setWriteError(reason: string | null): void {
    this.writeErrorReason = reason;
    this.push();
  }

  private push(): void {
    const now = this.reason();
    if (now === this.lastPushed) return;
    this.lastPushed = now;
    this.sink(now === null, now ?? '');
  }
}

/**
 * Text for a failed write, naming the cause: "disk full: write failed with ENOSPC (…)" for
 * ENOSPC/EDQUOT, else "write failed: <code> <message>".
 */
export function describeWriteError(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  if (code === 'ENOSPC' || code === 'EDQUOT') return `disk full: write failed with ${code} (${message})`;
  return `write failed: ${code ? `${code} ` : ''}${message}`;
}
