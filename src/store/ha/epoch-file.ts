/**
 * The epoch file of a controller-mode replica (RocketMQ 5 `EpochFileCache`, file
 * `<storePathRootDir>/epochFileCheckpoint`; docs/failover.md).
 *
 * Every time a replica becomes master it records `epoch → startOffset`: the CommitLog offset
 * where data written in that epoch begins. An epoch's data ends where the next epoch starts (or
 * at the CommitLog max offset for the last one). Two replicas agree on a byte range exactly when
 * they hold the same (epoch, startOffset) entry covering it, so comparing the lists finds where a
 * diverged replica must be truncated (`findConsistentPoint`).
 *
 * On disk: one line per entry, `epoch-startOffset` (decimal), ascending; written to a temp file,
 * fsynced, renamed over the file, directory fsynced. A missing file = no entries. A malformed
 * file is an error naming the line (never silently emptied: that would lose the fencing history).
 *
 * Data written before the first epoch (classic mode, or a master elected on an empty file) is
 * treated as epoch 0 starting at offset 0 on both sides.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const EPOCH_FILE_NAME = 'epochFileCheckpoint';

export interface EpochEntry {
  /** Monotonic election epoch (tsmq: the etcd revision of the winning campaign). */
  epoch: number;
  /** CommitLog byte offset where the epoch's data starts. */
  startOffset: number;
}

export class EpochFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EpochFileError';
  }
}

export class EpochFile {
  private list: EpochEntry[];

  private constructor(
    readonly filePath: string,
    entries: EpochEntry[],
  ) {
    this.list = entries;
  }

  /** Reads `<dir>/epochFileCheckpoint` (missing = empty). @throws EpochFileError on a malformed file. */
  static load(dir: string): EpochFile {
    const file = path.join(dir, EPOCH_FILE_NAME);
    if (!fs.existsSync(file)) return new EpochFile(file, []);
    const entries: EpochEntry[] = [];
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines.forEach((raw, i) => {
      const line = raw.trim();
      if (line === '') return;
      const m = /^(\d+)-(\d+)$/.exec(line);
      if (!m) throw new EpochFileError(`${file} line ${i + 1}: expected "epoch-startOffset", got ${JSON.stringify(line)}`);
      entries.push({ epoch: Number(m[1]), startOffset: Number(m[2]) });
    });
    checkOrder(entries, file);
    return new EpochFile(file, entries);
  }

  /** A copy of the entries, ascending. */
  entries(): EpochEntry[] {
    return this.list.map((e) => ({ ...e }));
  }

  /** Highest epoch recorded, 0 when none. */
  lastEpoch(): number {
    return this.list.at(-1)?.epoch ?? 0;
  }

  /**
   * Records that `epoch` starts at `startOffset` (a replica becoming master at its max offset).
   * Entries starting after `startOffset` and an empty entry at it are dropped first.
   * @throws EpochFileError when `epoch` is not above every remaining epoch.
   */
  async append(epoch: number, startOffset: number): Promise<void> {
    const kept = this.list.filter((e) => e.startOffset < startOffset);
    const last = kept.at(-1);
    if (last && epoch <= last.epoch) throw new EpochFileError(`epoch ${epoch} is not above the last epoch ${last.epoch}`);
    await this.replace([...kept, { epoch, startOffset }]);
  }

  /** Replaces every entry (a replica adopting its master's history), then persists. @throws EpochFileError on a bad order. */
  async replace(entries: EpochEntry[]): Promise<void> {
    checkOrder(entries, this.filePath);
    await writeAtomically(this.filePath, entries.map((e) => `${e.epoch}-${e.startOffset}\n`).join(''));
    this.list = entries.map((e) => ({ ...e }));
  }
}

function checkOrder(entries: EpochEntry[], file: string): void {
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (!Number.isSafeInteger(e.epoch) || e.epoch <= 0 || !Number.isSafeInteger(e.startOffset) || e.startOffset < 0) {
      throw new EpochFileError(`${file}: bad entry ${JSON.stringify(e)}`);
    }
    const prev = entries[i - 1];
    if (prev && (e.epoch <= prev.epoch || e.startOffset < prev.startOffset)) {
      throw new EpochFileError(`${file}: entries out of order at ${e.epoch}-${e.startOffset} after ${prev.epoch}-${prev.startOffset}`);
    }
  }
}

async function writeAtomically(file: string, text: string): Promise<void> {
  const tmp = `${file}.tmp`;
  const fh = await fs.promises.open(tmp, 'w');
  try {
    await fh.writeFile(text);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fs.promises.rename(tmp, file);
  const dir = await fs.promises.open(path.dirname(file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/** The entries with the implicit epoch 0 at offset 0 in front (see the file comment). */
function withEpochZero(entries: readonly EpochEntry[]): EpochEntry[] {
  return entries.length > 0 && entries[0]!.startOffset === 0 ? [...entries] : [{ epoch: 0, startOffset: 0 }, ...entries];
}

/**
 * The highest CommitLog offset up to which `local` (ending at `localMax`) and `remote` (ending
 * at `remoteMax`) hold the same data by their epoch histories: for the newest local epoch that
 * the remote also has with the same start offset, the smaller of the two ends of that epoch.
 * Everything the local replica holds at or after the result must be truncated. Result ≤ localMax.
 */
export function findConsistentPoint(local: readonly EpochEntry[], localMax: number, remote: readonly EpochEntry[], remoteMax: number): number {
  const l = withEpochZero(local);
  const r = withEpochZero(remote);
  for (let i = l.length - 1; i >= 0; i--) {
    const le = l[i]!;
    if (le.startOffset > localMax) continue;
    const j = r.findIndex((x) => x.epoch === le.epoch && x.startOffset === le.startOffset);
    if (j < 0) continue;
    const localEnd = Math.min(localMax, l[i + 1]?.startOffset ?? localMax);
    const remoteEnd = Math.min(remoteMax, r[j + 1]?.startOffset ?? remoteMax);
    return Math.max(le.startOffset, Math.min(localEnd, remoteEnd));
  }
  return 0;
}
