/**
 * Progress of the start-up CommitLog scan: bytes scanned of the bytes to scan (from the segment
 * the scan starts in to the end of the last segment, an upper bound: the last segment is rarely
 * full), the rate since the scan began and the time left at that rate.
 *
 * The scan calls `tick(scannedBytes)` per record; every `intervalMs` (default 2 s) of wall time it
 * logs one line, hands the figures to `onProgress` and yields to the event loop once (so an HTTP
 * console can answer while a big store recovers). A scan shorter than the interval logs nothing
 * and never yields.
 */
import type { Logger } from '../../common/logging/logger.js';

export interface RecoveryProgress {
  phase: string;
  scannedBytes: number;
  totalBytes: number;
  bytesPerSecond: number;
  /** ms left at the current rate; null before a rate is known. */
  etaMs: number | null;
}

export type RecoveryProgressListener = (p: RecoveryProgress) => void;

const CHECK_EVERY_RECORDS = 4096;

export class RecoveryProgressReporter {
  private readonly startedMs = Date.now();
  private lastReportMs = this.startedMs;
  private records = 0;

  constructor(
    private readonly phase: string,
    private readonly totalBytes: number,
    private readonly logger: Logger,
    private readonly onProgress: RecoveryProgressListener | null,
    private readonly intervalMs = 2000,
  ) {}

  /** Returns a promise to await (a yield) when a report was due, else null (the common case). */
  tick(scannedBytes: number): Promise<void> | null {
    if (++this.records % CHECK_EVERY_RECORDS !== 0) return null;
    const now = Date.now();
    if (now - this.lastReportMs < this.intervalMs) return null;
    this.lastReportMs = now;
    this.report(scannedBytes, now);
    return new Promise((resolve) => setImmediate(resolve));
  }

  private report(scannedBytes: number, now: number): void {
    const elapsedS = Math.max(0.001, (now - this.startedMs) / 1000);
    const rate = scannedBytes / elapsedS;
    const left = Math.max(0, this.totalBytes - scannedBytes);
    const p: RecoveryProgress = { phase: this.phase, scannedBytes, totalBytes: this.totalBytes, bytesPerSecond: rate, etaMs: rate > 0 ? (left / rate) * 1000 : null };
    const mib = (b: number): string => (b / 1048576).toFixed(1);
    this.logger.info(
      { recoveryProgress: p },
      `${this.phase}: ${mib(scannedBytes)} of ${mib(this.totalBytes)} MiB (${((100 * scannedBytes) / Math.max(1, this.totalBytes)).toFixed(1)} %), ${mib(rate)} MiB/s, ETA ${p.etaMs === null ? '?' : `${Math.ceil(p.etaMs / 1000)} s`}`,
    );
    this.onProgress?.(p);
  }
}
