/**
 * Disk usage of the partition holding a directory, behind a small interface so tests can
 * simulate any usage (B29: 82 %, 86 %, 91 %, 40 %).
 *
 * The ratio mirrors RocketMQ `UtilAll.getDiskPartitionSpaceUsedPercent`:
 *   used   = (blocks − bfree) × bsize
 *   usable = bavail × bsize            (space an unprivileged writer may still use)
 *   ratio  = ceil(used × 100 / (used + usable)) / 100      e.g. 0.91
 * −1 when the partition cannot be examined (no such path, statfs failure).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface DiskUsageProbe {
  /** Used fraction 0..1 (two decimals) of the partition holding `dir`, or −1 on error. */
  usedRatio(dir: string): number;
  /**
   * Optional: used and usable bytes of the partition holding `dir` (null when unknown). Segment
   * pre-writing uses it to never fill the disk (prewrite-space-gate.ts); without it only the
   * ratio is checked.
   */
  space?(dir: string): DiskSpace | null;
}

/** Bytes of a partition, as `usedRatio` computes them. */
export interface DiskSpace {
  /** (blocks − bfree) × bsize */
  usedBytes: number;
  /** bavail × bsize: what an unprivileged writer may still use. */
  usableBytes: number;
}

/** ceil(used × 100 / (used + usable)) / 100, or −1 when total is 0 or inputs are not finite. */
export function usedRatioOf(usedBytes: number, usableBytes: number): number {
  const total = usedBytes + usableBytes;
  if (!Number.isFinite(total) || total <= 0 || usedBytes < 0 || usableBytes < 0) return -1;
  return Math.ceil((usedBytes * 100) / total) / 100;
}

/** The real probe: `statfs` of `dir`, or of its nearest existing ancestor when it does not exist yet. */
export class StatfsDiskUsageProbe implements DiskUsageProbe {
  usedRatio(dir: string): number {
    const s = this.space(dir);
    return s ? usedRatioOf(s.usedBytes, s.usableBytes) : -1;
  }

  space(dir: string): DiskSpace | null {
    try {
      let p = path.resolve(dir);
      while (!fs.existsSync(p)) {
        const parent = path.dirname(p);
        if (parent === p) return null;
        p = parent;
      }
      const s = fs.statfsSync(p);
      return { usedBytes: (s.blocks - s.bfree) * s.bsize, usableBytes: s.bavail * s.bsize };
    } catch {
      return null;
    }
  }
}

/**
 * A probe whose answer the caller sets (tests, simulations): a fixed ratio, or a function of
 * the directory (e.g. usage that drops as files are deleted).
 */
export class ManualDiskUsageProbe implements DiskUsageProbe {
  private source: number | ((dir: string) => number);
  private spaceSource: DiskSpace | ((dir: string) => DiskSpace | null) | null = null;

  constructor(initial: number | ((dir: string) => number) = 0.1) {
    this.source = initial;
  }

  /**
   * Sets the byte answer of `space` (null: unknown). While set, `usedRatio` is computed from it
   * (usedRatioOf), so the two answers agree.
   */
  setSpace(space: DiskSpace | ((dir: string) => DiskSpace | null) | null): void {
    this.spaceSource = space;
  }

  space(dir: string): DiskSpace | null {
    const s = this.spaceSource;
    return s === null ? null : typeof s === 'function' ? s(dir) : s;
  }

  /** Sets the answer: a fraction 0..1 (or −1 for "probe failed"), or a function computing it. */
  set(value: number | ((dir: string) => number)): void {
    this.source = value;
    this.spaceSource = null;
  }

  /** Sets the answer as a percentage, e.g. 91 ⇒ 0.91. */
  setPercent(percent: number): void {
    this.set(percent / 100);
  }

  usedRatio(dir: string): number {
    if (this.spaceSource !== null) {
      const s = this.space(dir);
      return s ? usedRatioOf(s.usedBytes, s.usableBytes) : -1;
    }
    return typeof this.source === 'function' ? this.source(dir) : this.source;
  }
}
