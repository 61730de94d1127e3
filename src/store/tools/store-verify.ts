/**
 * Offline check of a stopped store (`tsmq store verify`): every CommitLog record (magic,
 * TOTALSIZE against its fields, BODYCRC, PHYSICALOFFSET = its position, properties), the file
 * chain (sizes, names = start offsets, blank end-of-file records), every ConsumeQueue entry
 * against the record it points to (topic, queue, size, queue offset, tags code), every index
 * file (header, slots, entries pointing at record starts) and the checkpoint against the data.
 * Each problem names the file (relative to the store root) and the byte offset in that file.
 *
 * Also: every record in the CommitLog is in its ConsumeQueue (a queue that ends before the
 * CommitLog's last record of that queue was not dispatched; see MAY_STAY_MISSING).
 *
 * Reads only; refuses a store whose `lock` names a live process (a running broker). Memory is
 * bounded whatever the store size: files are read through fixed windows (store-file-reader.ts),
 * entries are checked by reading the record they point to (record-probe.ts), and the only
 * per-store state is one counter per queue. At most `MAX_PROBLEMS_PER_FILE` problems are listed
 * per file, then one line counting the rest.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { judgeLockRecord, parseLockRecord } from '../recovery/store-files.js';
import { procProbe } from '../recovery/process-identity.js';
import { isConsumeQueueRecord } from '../dispatch/consume-queue-dispatcher.js';
import { parseDelayLevels, type StoreConfig } from '../store-config.js';
import { walkCommitLog, type StoreProblem } from './commit-log-walk.js';
import { checkQueue, cqPosition } from './consume-queue-check.js';
import { checkIndexFile, listIndexFiles } from './index-check.js';
import { RecordProbe } from './record-probe.js';

/**
 * Why a queue that lacks CommitLog records may stay so: a start re-dispatches only from the
 * checkpoint's CommitLog file (after a crash) or from the highest position any queue reached (a
 * clean start), so records before that are not put back by the broker; `repair` scans them all.
 */
const MAY_STAY_MISSING = 'the broker re-dispatches only from the checkpoint\'s CommitLog file (after a crash) or from the highest position any queue reached (clean start), so they may stay missing; `tsmq store repair --apply` rebuilds them';
import { cqFileBytes, listQueues, treeBytes } from './store-file-reader.js';

export type { StoreProblem } from './commit-log-walk.js';

export interface VerifyReport {
  root: string;
  commitLogFiles: number;
  records: number;
  minPhysicalOffset: number;
  /** End of the valid data (next write position). */
  maxPhysicalOffset: number;
  consumeQueueEntries: number;
  indexFiles: number;
  indexEntries: number;
  /** Facts that are not corruption (abort file present: next start runs abnormal recovery). */
  notes: string[];
  problems: StoreProblem[];
}

/** Progress callback: bytes checked so far and total bytes to check. */
export type VerifyProgress = (doneBytes: number, totalBytes: number) => void;

/** Thrown when a live process holds the store. */
export class StoreInUseError extends Error {}

export type VerifyConfig = Pick<StoreConfig, 'mappedFileSizeCommitLog' | 'mappedFileSizeConsumeQueue' | 'maxHashSlotNum' | 'maxIndexNum' | 'messageDelayLevel'>;

const SEGMENT_NAME = /^\d{20}$/;

/**
 * @throws StoreInUseError when the store's lock names a live process; Error when `root` is not a
 * directory (a mistyped --store must not read as an empty, clean store).
 */
export function assertStoreStopped(root: string): void {
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new Error(`no store at ${root}: not a directory (give the storePathRootDir with --store)`);
  const lockPath = join(root, 'lock');
  if (!existsSync(lockPath)) return;
  const verdict = judgeLockRecord(parseLockRecord(readFileSync(lockPath, 'utf8')), procProbe);
  if (verdict.held) throw new StoreInUseError(`store ${root} is in use by process ${verdict.pid} (lock file): stop that broker first; the store tools work on a stopped store only`);
}

/** Problems listed per file before the rest are only counted. */
export const MAX_PROBLEMS_PER_FILE = 20;

/** Collects problems, at most MAX_PROBLEMS_PER_FILE per file, plus one "N more" line per file. */
export class ProblemList {
  readonly problems: StoreProblem[] = [];
  private readonly perFile = new Map<string, { listed: number; more: number; firstMoreAt: number }>();

  add(p: StoreProblem): void {
    const c = this.perFile.get(p.file) ?? { listed: 0, more: 0, firstMoreAt: -1 };
    this.perFile.set(p.file, c);
    if (c.listed < MAX_PROBLEMS_PER_FILE) {
      c.listed++;
      this.problems.push(p);
    } else {
      if (c.more === 0) c.firstMoreAt = p.offset;
      c.more++;
    }
  }

  /** The listed problems, then one line per file with unlisted ones. */
  finish(): StoreProblem[] {
    for (const [file, c] of this.perFile) if (c.more > 0) this.problems.push({ file, offset: c.firstMoreAt, message: `${c.more} more problem(s) in this file (first at ${c.firstMoreAt}), not listed` });
    return this.problems;
  }
}

export function verifyStore(root: string, config: VerifyConfig, progress?: VerifyProgress): VerifyReport {
  assertStoreStopped(root);
  const list = new ProblemList();
  const problem = (file: string, offset: number, message: string): void => list.add({ file, offset, message });
  const notes: string[] = [];
  const total = treeBytes(join(root, 'commitlog')) + treeBytes(join(root, 'consumequeue')) + treeBytes(join(root, 'index'));
  let done = 0;
  const advance = (n: number): void => {
    done += n;
    progress?.(done, total);
  };
  const delayTable = parseDelayLevels(config.messageDelayLevel);
  if (existsSync(join(root, 'abort'))) notes.push('abort file present: the store was not shut down cleanly; the next start runs abnormal recovery');

  // --- CommitLog: one pass; per queue only the highest queue offset seen ---
  const clQueueMax = new Map<string, { topic: string; queueId: number; next: number; physicalOffset: number }>();
  const walk = walkCommitLog(root, {
    segmentBytes: config.mappedFileSizeCommitLog,
    checkCrc: true,
    delayLevelTableMs: delayTable,
    onBytes: advance,
    onRecord: (d) => {
      if (!isConsumeQueueRecord(d.sysFlag)) return; // PREPARED / ROLLBACK transaction records own no unit
      const key = `${d.topic}\u0000${d.queueId}`;
      const q = clQueueMax.get(key);
      if (!q) clQueueMax.set(key, { topic: d.topic, queueId: d.queueId, next: d.consumeQueueOffset + 1, physicalOffset: d.commitLogOffset });
      else if (d.consumeQueueOffset + 1 > q.next) {
        q.next = d.consumeQueueOffset + 1;
        q.physicalOffset = d.commitLogOffset;
      }
    },
  });
  for (const p of walk.problems) list.add(p);
  for (const other of walk.ignored) notes.push(`commitlog/${other}: not a segment file (name is not 20 digits), ignored`);
  const minPhy = walk.minPhysicalOffset;
  const maxPhy = walk.maxPhysicalOffset;
  const probe = new RecordProbe(root, config.mappedFileSizeCommitLog, minPhy, maxPhy, delayTable);
  try {
    // --- ConsumeQueues ---
    let cqEntries = 0;
    const cqBytes = cqFileBytes(config.mappedFileSizeConsumeQueue);
    const seen = new Set<string>();
    for (const q of listQueues(root)) {
      const c = checkQueue(q, { root, cqFileBytes: cqBytes, minPhysicalOffset: minPhy, probe, problem: (p) => list.add(p), onBytes: advance });
      cqEntries += c.entries;
      const key = `${q.topic}\u0000${q.queueId}`;
      seen.add(key);
      const cl = clQueueMax.get(key);
      const end = c.firstBad ? c.firstBad.queueOffset : c.maxOffset;
      if (cl && cl.next > end && !c.firstBad) {
        const at = cqPosition(q.topic, q.queueId, end, cqBytes);
        problem(at.file, at.offset, `the queue ends at ${end} but the CommitLog holds its records up to queue offset ${cl.next - 1} (physical offset ${cl.physicalOffset}): not dispatched; ${MAY_STAY_MISSING}`);
      }
    }
    for (const [key, cl] of clQueueMax) {
      if (seen.has(key)) continue;
      const at = cqPosition(cl.topic, cl.queueId, 0, cqBytes);
      problem(at.file, at.offset, `no ConsumeQueue for ${cl.topic}/${cl.queueId} but the CommitLog holds its records up to queue offset ${cl.next - 1}; ${MAY_STAY_MISSING}`);
    }

    // --- index files ---
    let indexEntries = 0;
    const indexNames = listIndexFiles(root);
    for (const name of indexNames) {
      const c = checkIndexFile(root, name, { maxHashSlotNum: config.maxHashSlotNum, maxIndexNum: config.maxIndexNum, minPhysicalOffset: minPhy, probe, problem: (p) => list.add(p), onBytes: advance });
      indexEntries += c.entries;
    }

    // --- checkpoint ---
    checkCheckpoint(root, walk.records, walk.lastStoreTimestampMs, maxPhy, problem, notes, walk.segments.length > 0);

    return {
      root,
      commitLogFiles: walk.segments.length,
      records: walk.records,
      minPhysicalOffset: minPhy,
      maxPhysicalOffset: maxPhy,
      consumeQueueEntries: cqEntries,
      indexFiles: indexNames.length,
      indexEntries,
      notes,
      problems: list.finish(),
    };
  } finally {
    probe.close();
  }
}

function checkCheckpoint(root: string, records: number, maxStoreTimestamp: number, maxPhy: number, problem: (file: string, offset: number, message: string) => void, notes: string[], hasData: boolean): void {
  const cpPath = join(root, 'checkpoint');
  if (!existsSync(cpPath)) {
    if (hasData) notes.push('no checkpoint file');
    return;
  }
  const cp = readFileSync(cpPath);
  if (cp.length < 40) {
    problem('checkpoint', 0, `file is ${cp.length} bytes, expected 4096`);
    return;
  }
  const physic = Number(cp.readBigInt64BE(0));
  const logics = Number(cp.readBigInt64BE(8));
  const confirm = Number(cp.readBigInt64BE(32));
  if (records > 0 && physic > maxStoreTimestamp) problem('checkpoint', 0, `physicMsgTimestamp ${physic} is after the newest record's store time ${maxStoreTimestamp}: flushed data is missing from the CommitLog`);
  if (records > 0 && logics > maxStoreTimestamp) problem('checkpoint', 8, `logicsMsgTimestamp ${logics} is after the newest record's store time ${maxStoreTimestamp}`);
  if (confirm > maxPhy) problem('checkpoint', 32, `confirmPhyOffset ${confirm} is past the end of the CommitLog data (${maxPhy})`);
}
