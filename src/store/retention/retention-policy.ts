/**
 * The decisions of CommitLog retention, as pure functions (spec §6.1, RocketMQ
 * `CleanCommitLogService.isTimeToDelete` / `isSpaceToDelete`):
 *
 * - time trigger: the current LOCAL hour is one of `deleteWhen` ("04" = 04:00–04:59);
 * - space trigger: usage above diskMaxUsedSpaceRatio (or the probe failed) ⇒ expired files may
 *   be deleted at any hour;
 * - clean immediately: usage above diskSpaceCleanForciblyRatio ⇒ files are deleted even when
 *   not expired (if cleanFileForciblyEnable);
 * - disk full: usage above diskSpaceWarningLevelRatio ⇒ puts are refused; cleared only once
 *   usage is back at or below diskSpaceCleanForciblyRatio (hysteresis, as RocketMQ).
 *
 * Ratios are configured in percent and clamped like RocketMQ: maxUsed 10..95, warning 35..90,
 * forcibly 30..85. Usage ratios are fractions (0.91) or −1 when unknown.
 */
import { parseDeleteWhenHours, type StoreConfig } from '../store-config.js';

export interface RetentionRatios {
  /** diskMaxUsedSpaceRatio as a fraction, clamped to [0.10, 0.95]. */
  maxUsed: number;
  /** diskSpaceWarningLevelRatio as a fraction, clamped to [0.35, 0.90]. */
  warning: number;
  /** diskSpaceCleanForciblyRatio as a fraction, clamped to [0.30, 0.85]. */
  forcibly: number;
}

const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v));

export function retentionRatios(
  c: Pick<StoreConfig, 'diskMaxUsedSpaceRatio' | 'diskSpaceWarningLevelRatio' | 'diskSpaceCleanForciblyRatio'>,
): RetentionRatios {
  return {
    maxUsed: clamp(c.diskMaxUsedSpaceRatio, 10, 95) / 100,
    warning: clamp(c.diskSpaceWarningLevelRatio, 35, 90) / 100,
    forcibly: clamp(c.diskSpaceCleanForciblyRatio, 30, 85) / 100,
  };
}

/** True when the local hour of `nowMs` is one of the `deleteWhen` hours (a bad value never matches). */
export function isTimeToDelete(deleteWhen: string, nowMs: number): boolean {
  const hours = parseDeleteWhenHours(deleteWhen);
  return hours !== null && hours.includes(new Date(nowMs).getHours());
}

export interface DiskSpaceInput {
  /** Usage of the CommitLog partition (fraction, −1 unknown). */
  commitLogRatio: number;
  /** Usage of the partition holding the ConsumeQueues (storePathRootDir). */
  logicsRatio: number;
  /** Whether the disk-full flag is currently set (for the hysteresis). */
  wasDiskFull: boolean;
}

export interface DiskSpaceDecision {
  /** Reason to refuse puts, or null when writable. */
  diskFullReason: string | null;
  /** Delete files even if not expired (before cleanFileForciblyEnable is applied). */
  cleanImmediately: boolean;
  /** Expired files may be deleted outside the deleteWhen hours. */
  spaceToDelete: boolean;
  /** Above the warning ratio (log a warning). */
  aboveWarning: boolean;
}

const pct = (r: number): string => `${Math.round(r * 100)}%`;

export function evaluateDiskSpace(input: DiskSpaceInput, ratios: RetentionRatios): DiskSpaceDecision {
  const { commitLogRatio: cl, logicsRatio: lq } = input;
  const worst = Math.max(cl, lq);
  const worstName = cl >= lq ? 'commitlog' : 'consumequeue';
  const aboveWarning = worst > ratios.warning;
  const aboveForcibly = worst > ratios.forcibly;
  let diskFullReason: string | null = null;
  if (aboveWarning) {
    diskFullReason = `disk full: usage ${pct(worst)} > diskSpaceWarningLevelRatio ${pct(ratios.warning)} (${worstName} partition)`;
  } else if (input.wasDiskFull && aboveForcibly) {
    diskFullReason =
      `disk full: usage ${pct(worst)} still > diskSpaceCleanForciblyRatio ${pct(ratios.forcibly)} ` +
      `after passing diskSpaceWarningLevelRatio ${pct(ratios.warning)} (${worstName} partition)`;
  }
  const probeFailed = cl < 0 || lq < 0;
  return {
    diskFullReason,
    cleanImmediately: aboveForcibly,
    spaceToDelete: aboveForcibly || probeFailed || worst > ratios.maxUsed,
    aboveWarning,
  };
}
