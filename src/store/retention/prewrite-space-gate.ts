/**
 * May a CommitLog segment be pre-written (warmMapedFileEnable) without endangering the disk?
 * (issue 19: on a small disk the 1 GiB pre-write filled it and the broker died with a bare
 * ENOSPC; with forced cleaning off, the next segment's pre-write took back freed space, 90.6 % →
 * 98 %, and puts stayed refused.) RocketMQ pre-writes unconditionally; tsmq pre-writes only when,
 * afterwards,
 *
 *   - disk usage stays at or below min(diskSpaceCleanForciblyRatio, diskSpaceWarningLevelRatio)
 *     (so also never while the disk is already above either), and
 *   - at least PREWRITE_MIN_FREE_SEGMENTS more segments would still fit in the usable space.
 *
 * Without byte counts from the probe (DiskUsageProbe.space) only the first rule is checked on
 * the current ratio; when usage is unknown (probe failed) nothing is pre-written. The answer is
 * null (go ahead) or a sentence saying why not, used in the allocator's warning.
 */
import * as path from 'node:path';
import type { PrewriteSpaceGate } from '../mapped-file/segment-prewriter.js';
import { usedRatioOf, type DiskUsageProbe, type DiskSpace } from './disk-usage-probe.js';
import type { RetentionRatios } from './retention-policy.js';

/** Free space that must remain after a pre-write, in segments of the size being pre-written. */
export const PREWRITE_MIN_FREE_SEGMENTS = 2;

/** 1536 → "1.5 KiB", 1073741824 → "1.0 GiB". */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${bytes} B` : `${v.toFixed(1)} ${units[u]}`;
}

const pct = (r: number): string => `${Math.round(r * 100)}%`;

/** The gate for segments of the partition that `probe` examines; see the file comment. */
export function prewriteSpaceGate(probe: DiskUsageProbe, ratios: Pick<RetentionRatios, 'warning' | 'forcibly'>): PrewriteSpaceGate {
  const limit = Math.min(ratios.warning, ratios.forcibly);
  const limitName = ratios.forcibly <= ratios.warning ? 'diskSpaceCleanForciblyRatio' : 'diskSpaceWarningLevelRatio';
  return (filePath, fileSizeBytes) => {
    const dir = path.dirname(filePath);
    const space: DiskSpace | null = probe.space?.(dir) ?? null;
    if (space === null) {
      const ratio = probe.usedRatio(dir);
      if (ratio < 0) return `the disk usage of ${dir} is unknown (statfs failed)`;
      return ratio > limit ? `disk usage of ${dir} is ${pct(ratio)}, above ${limitName} ${pct(limit)}` : null;
    }
    const { usedBytes, usableBytes } = space;
    const now = usedRatioOf(usedBytes, usableBytes);
    if (now > limit) return `disk usage of ${dir} is ${pct(now)}, above ${limitName} ${pct(limit)}`;
    const needBytes = fileSizeBytes * (1 + PREWRITE_MIN_FREE_SEGMENTS);
    if (usableBytes < needBytes) {
      return (
        `only ${formatBytes(usableBytes)} free on the partition of ${dir}; pre-writing ${formatBytes(fileSizeBytes)} would leave ` +
        `less than ${PREWRITE_MIN_FREE_SEGMENTS} more segments (${formatBytes(needBytes - fileSizeBytes)}) free`
      );
    }
    const after = usedRatioOf(usedBytes + fileSizeBytes, usableBytes - fileSizeBytes);
    if (after > limit) {
      return `pre-writing ${formatBytes(fileSizeBytes)} would take disk usage of ${dir} from ${pct(now)} to ${pct(after)}, above ${limitName} ${pct(limit)}`;
    }
    return null;
  };
}
