/**
 * A store that cannot start for a reason the operator must fix (issue 19: a full or too small
 * disk). The message is one sentence: what failed, where, the cause, the free space of the
 * partition, and what to do — never a bare "ENOSPC".
 */
import { describeWriteError } from '../../common/fs/write-error.js';
import type { DiskUsageProbe } from '../retention/disk-usage-probe.js';
import { formatBytes } from '../retention/prewrite-space-gate.js';

export class StoreStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreStartError';
  }
}

/** True for the errors of a full disk or quota (ENOSPC, EDQUOT). */
export function isDiskFullError(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/**
 * "<what>: <describeWriteError(cause)>; the partition of <dir> has <free> free. <advice>"
 * (free from `probe.space`, "an unknown amount of space" without it).
 */
export function storeStartError(what: string, dir: string, probe: DiskUsageProbe, cause: unknown, advice: string): StoreStartError {
  const space = probe.space?.(dir) ?? null;
  return new StoreStartError(
    `${what}: ${describeWriteError(cause)}; the partition of ${dir} has ${space ? formatBytes(space.usableBytes) : 'an unknown amount of space'} free. ${advice}`,
    { cause },
  );
}
