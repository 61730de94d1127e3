/**
 * Offline repair of a stopped store (`tsmq store repair`): does to the files what RocketMQ's
 * abnormal recovery does at start-up (spec §3.4–3.6), as an explicit plan first.
 *
 * - CommitLog: the valid data ends at the first invalid record (or a zero TOTALSIZE, or the end
 *   of a short file); the bytes after it in that segment are zeroed, later segments deleted, a
 *   short end segment is extended to mappedFileSizeCommitLog with zeros.
 * - ConsumeQueues: each queue is cut at its first wrong unit (pointing past the CommitLog end, at
 *   no record, at another queue's record, wrong size/queue offset/tags code, after a zero unit,
 *   after a missing file): the unit bytes from there are zeroed and later files deleted. Then
 *   every queue gets the units of the CommitLog records it lacks (queue offsets from where it
 *   ends, contiguous; a file longer than mappedFileSizeConsumeQueue, which the broker refuses
 *   to load, is trimmed to that size and the queue continues from its end; a queue with no files starts at its first record, the first file's units
 *   before it filled with pre-blanks like RocketMQ's `fillPreBlank`).
 * - Index files: the first file with a problem and every later one are deleted; the broker
 *   rebuilds them from the CommitLog at its next start (IndexService load: no file ⇒ from 0,
 *   otherwise from the newest kept file's end).
 * - Checkpoint: physicMsgTimestamp, logicsMsgTimestamp and indexMsgTimestamp no later than the
 *   newest valid record, confirmPhyOffset no further than the CommitLog end (recovery's B05 clamp).
 *
 * `planRepair` only reads. `applyRepair` takes the store lock (refused while a broker holds it),
 * copies every byte it zeroes to `<store>/repair-backup-<yyyyMMdd-HHmmss>/<file>.at-<offset>`,
 * moves each deleted file to `<backup>/<file>`, copies the checkpoint to `<backup>/checkpoint`,
 * writes `<backup>/manifest.json` (the plan) and fsyncs what it wrote.
 */
import { closeSync, copyFileSync, existsSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { nodeFileSystem } from '../../common/fs/node-file-system.js';
import { writeCqEntry } from '../consumequeue/consume-queue-entry.js';
import { isConsumeQueueRecord } from '../dispatch/consume-queue-dispatcher.js';
import { procProbe } from '../recovery/process-identity.js';
import { StoreLock } from '../recovery/store-files.js';
import { parseDelayLevels } from '../store-config.js';
import { firstNonZero, walkCommitLog, type CommitLogWalk } from './commit-log-walk.js';
import { checkQueue, cqPosition } from './consume-queue-check.js';
import { checkIndexFile, listIndexFiles } from './index-check.js';
import { RecordProbe } from './record-probe.js';
import { assertStoreStopped, type VerifyConfig } from './store-verify.js';
import { cqFileBytes, listNames, listQueues, SEGMENT_NAME, WindowReader } from './store-file-reader.js';

/** One step of a repair; `file` is relative to the store root, `offset` a byte offset in it. */
export type RepairAction =
  /** Zero `lengthBytes` bytes from `offset` (the cut bytes are backed up). */
  | { kind: 'cut'; file: string; offset: number; lengthBytes: number; reason: string }
  /** Delete the file (moved into the backup). */
  | { kind: 'delete'; file: string; offset: 0; lengthBytes: number; reason: string }
  /** Extend a short file with zeros to `toBytes`. */
  | { kind: 'extend'; file: string; offset: number; lengthBytes: number; reason: string }
  /** Truncate an over-long file to `offset` bytes (its segment size); the removed tail is backed up. */
  | { kind: 'trim'; file: string; offset: number; lengthBytes: number; reason: string }
  /** Write ConsumeQueue units for queue offsets [fromQueueOffset, toQueueOffset) from CommitLog records. */
  | { kind: 'rebuild'; file: string; offset: number; topic: string; queueId: number; fromQueueOffset: number; toQueueOffset: number; preBlanks: number; reason: string }
  /** Set a checkpoint field (a big-endian long at `offset`). */
  | { kind: 'checkpoint'; file: 'checkpoint'; offset: number; field: string; from: number; to: number; reason: string };

export interface RepairPlan {
  root: string;
  /** End of the valid CommitLog data (the next write position after the repair). */
  commitLogEnd: number;
  actions: RepairAction[];
  /** What the repair leaves to the broker or cannot do (index rebuild, queue gaps, bad names). */
  notes: string[];
  /** Set by applyRepair. */
  backupDir?: string;
}

interface RebuildTarget {
  topic: string;
  queueId: number;
  /** Next queue offset to write; null: the queue has no files, start at its first record. */
  next: number | null;
  from: number | null;
  preBlanks: number;
  gap: string | null;
}

const qkey = (topic: string, queueId: number): string => `${topic}\u0000${queueId}`;

/** Last non-zero byte of [from, end) of a file + 1, or `from` when all zero. */
function dirtyEnd(path: string, from: number): number {
  const r = new WindowReader(path, 1024 * 1024);
  try {
    let end = from;
    const step = 1024 * 1024;
    for (let pos = firstNonZero(r, from); pos >= 0 && pos < r.sizeBytes; pos += step) {
      const v = r.view(pos, step);
      const chunk = r.buf.subarray(v.at, v.at + Math.min(step, v.available));
      if (chunk.equals(Buffer.alloc(chunk.length))) continue;
      for (let i = chunk.length - 1; i >= 0; i--) {
        if (chunk[i] !== 0) {
          end = pos + i + 1;
          break;
        }
      }
      if (v.available === 0) break;
    }
    return end;
  } finally {
    r.close();
  }
}

/** Plans the repair of a stopped store; reads only. @throws StoreInUseError when a live process holds the store. */
export function planRepair(root: string, config: VerifyConfig): RepairPlan {
  assertStoreStopped(root);
  const delayTable = parseDelayLevels(config.messageDelayLevel);
  const segmentBytes = config.mappedFileSizeCommitLog;
  const actions: RepairAction[] = [];
  const notes: string[] = [];
  const walk = walkCommitLog(root, { segmentBytes, checkCrc: true, delayLevelTableMs: delayTable });
  const end = walk.maxPhysicalOffset;
  planCommitLog(root, walk, segmentBytes, actions, notes);

  const probe = new RecordProbe(root, segmentBytes, walk.minPhysicalOffset, end, delayTable);
  const targets = new Map<string, RebuildTarget>();
  const cqBytes = cqFileBytes(config.mappedFileSizeConsumeQueue);
  try {
    for (const q of listQueues(root)) {
      const c = checkQueue(q, { root, cqFileBytes: cqBytes, minPhysicalOffset: walk.minPhysicalOffset, probe, problem: () => {} });
      let keep = c.maxOffset;
      if (c.firstBad) {
        keep = c.firstBad.queueOffset;
        const cutFile = c.firstBad.file;
        const cutStart = Number(cutFile.slice(cutFile.lastIndexOf('/') + 1));
        const abs = join(root, cutFile);
        if (existsSync(abs)) {
          const dirty = dirtyEnd(abs, c.firstBad.offset);
          if (dirty > c.firstBad.offset) actions.push({ kind: 'cut', file: cutFile, offset: c.firstBad.offset, lengthBytes: dirty - c.firstBad.offset, reason: `queue ${q.topic}/${q.queueId} from entry ${keep}: ${c.firstBad.reason}` });
        }
        for (const f of c.files) {
          const start = Number(f.slice(f.lastIndexOf('/') + 1));
          if (start > cutStart) actions.push({ kind: 'delete', file: f, offset: 0, lengthBytes: fileSize(join(root, f)), reason: `queue ${q.topic}/${q.queueId} is cut at entry ${keep}` });
        }
      }
      for (const f of c.files) {
        const start = Number(f.slice(f.lastIndexOf('/') + 1));
        const size = fileSize(join(root, f));
        const deleted = c.firstBad !== null && start > Number(c.firstBad.file.slice(c.firstBad.file.lastIndexOf('/') + 1));
        if (!deleted && size < cqBytes) actions.push({ kind: 'extend', file: f, offset: size, lengthBytes: cqBytes - size, reason: `file is ${size} bytes, expected ${cqBytes}` });
        if (!deleted && size > cqBytes) {
          // the broker refuses to load it; units past the segment end are dropped and rebuilt from the CommitLog
          actions.push({ kind: 'trim', file: f, offset: cqBytes, lengthBytes: size - cqBytes, reason: `file is ${size} bytes, expected ${cqBytes} (mappedFileSizeConsumeQueue)` });
          if (f === c.files[c.files.length - 1]) keep = Math.min(keep, (start + cqBytes) / 20);
        }
      }
      targets.set(qkey(q.topic, q.queueId), { topic: q.topic, queueId: q.queueId, next: c.files.length === 0 ? null : keep, from: null, preBlanks: 0, gap: null });
    }
    planIndex(root, config, walk.minPhysicalOffset, probe, actions, notes);
  } finally {
    probe.close();
  }

  // Units the queues lack: one more CommitLog pass, counting (applyRepair writes them).
  rebuildQueues(root, config, targets, cqBytes, null);
  for (const t of targets.values()) {
    if (t.gap) notes.push(t.gap);
    if (t.from === null || t.next === null || t.next <= t.from) continue;
    const at = cqPosition(t.topic, t.queueId, t.from, cqBytes);
    actions.push({ kind: 'rebuild', file: at.file, offset: at.offset, topic: t.topic, queueId: t.queueId, fromQueueOffset: t.from, toQueueOffset: t.next, preBlanks: t.preBlanks, reason: `${t.next - t.from} CommitLog record(s) missing from the queue` });
  }
  planCheckpoint(root, walk, actions);
  return { root, commitLogEnd: end, actions, notes };
}

function fileSize(path: string): number {
  const r = new WindowReader(path, 64);
  const n = r.sizeBytes;
  r.close();
  return n;
}

function planCommitLog(root: string, walk: CommitLogWalk, segmentBytes: number, actions: RepairAction[], notes: string[]): void {
  const end = walk.maxPhysicalOffset;
  const endBase = Math.floor(end / segmentBytes) * segmentBytes;
  const why = walk.invalidAt ? `invalid record at physical offset ${walk.invalidAt.physicalOffset}: ${walk.invalidAt.reason}` : `data after the end of the CommitLog (${end})`;
  for (const s of walk.segments) {
    if (s.base % segmentBytes !== 0) notes.push(`${s.file}: name is not a multiple of mappedFileSizeCommitLog ${segmentBytes}; not repaired (move it away by hand)`);
    if (s.base > endBase) {
      actions.push({ kind: 'delete', file: s.file, offset: 0, lengthBytes: s.sizeBytes, reason: `after the end of the CommitLog data (${end}): ${why}` });
      continue;
    }
    if (s.base !== endBase) continue;
    const from = end - s.base;
    const dirty = from < s.sizeBytes ? dirtyEnd(join(root, s.file), from) : from;
    if (dirty > from) actions.push({ kind: 'cut', file: s.file, offset: from, lengthBytes: dirty - from, reason: why });
    if (s.sizeBytes < segmentBytes) actions.push({ kind: 'extend', file: s.file, offset: s.sizeBytes, lengthBytes: segmentBytes - s.sizeBytes, reason: `file is ${s.sizeBytes} bytes, expected mappedFileSizeCommitLog ${segmentBytes}` });
  }
}

function planIndex(root: string, config: VerifyConfig, minPhy: number, probe: RecordProbe, actions: RepairAction[], notes: string[]): void {
  const names = listIndexFiles(root);
  let rebuildFrom: number | null = null;
  for (let i = 0; i < names.length; i++) {
    let first: string | null = null;
    const c = checkIndexFile(root, names[i]!, { maxHashSlotNum: config.maxHashSlotNum, maxIndexNum: config.maxIndexNum, minPhysicalOffset: minPhy, probe, problem: (p) => void (first ??= `${p.message} (at ${p.offset})`) });
    if (c.problems === 0) {
      rebuildFrom = c.header?.endPhysicalOffset ?? rebuildFrom;
      continue;
    }
    for (let j = i; j < names.length; j++) {
      actions.push({ kind: 'delete', file: `index/${names[j]}`, offset: 0, lengthBytes: fileSize(join(root, 'index', names[j]!)), reason: j === i ? `index file with problems: ${first}` : 'later than a deleted index file' });
    }
    notes.push(`index: the broker rebuilds the deleted index files from the CommitLog at its next start (from physical offset ${rebuildFrom ?? 0})`);
    return;
  }
}

function planCheckpoint(root: string, walk: CommitLogWalk, actions: RepairAction[]): void {
  const path = join(root, 'checkpoint');
  if (!existsSync(path)) return;
  const cp = Buffer.alloc(40);
  const fd = openSync(path, 'r');
  const n = readSync(fd, cp, 0, 40, 0);
  closeSync(fd);
  if (n < 40) return;
  const last = walk.lastStoreTimestampMs;
  const fields: Array<[string, number]> = [
    ['physicMsgTimestamp', 0],
    ['logicsMsgTimestamp', 8],
    ['indexMsgTimestamp', 16],
  ];
  for (const [field, at] of fields) {
    const v = Number(cp.readBigInt64BE(at));
    if (walk.records > 0 && v > last) actions.push({ kind: 'checkpoint', file: 'checkpoint', offset: at, field, from: v, to: last, reason: `after the newest valid record's store time ${last}` });
  }
  const confirm = Number(cp.readBigInt64BE(32));
  if (confirm > walk.maxPhysicalOffset) actions.push({ kind: 'checkpoint', file: 'checkpoint', offset: 32, field: 'confirmPhyOffset', from: confirm, to: walk.maxPhysicalOffset, reason: 'past the end of the CommitLog data' });
}

/** Where rebuilt ConsumeQueue units go. */
interface UnitSink {
  write(topic: string, queueId: number, queueOffset: number, phy: number, size: number, tagsCode: number): void;
  close(): void;
}

/** Writes ConsumeQueue units at their positions (files created at full size), one open file at a time. */
class UnitWriter implements UnitSink {
  private fd = -1;
  private fdFile = '';
  constructor(
    private readonly root: string,
    private readonly cqBytes: number,
  ) {}

  write(topic: string, queueId: number, queueOffset: number, phy: number, size: number, tagsCode: number): void {
    const at = cqPosition(topic, queueId, queueOffset, this.cqBytes);
    if (at.file !== this.fdFile) {
      this.close();
      const abs = join(this.root, at.file);
      mkdirSync(dirname(abs), { recursive: true });
      const exists = existsSync(abs);
      this.fd = openSync(abs, exists ? 'r+' : 'w+');
      if (!exists) ftruncateSync(this.fd, this.cqBytes);
      this.fdFile = at.file;
    }
    const b = Buffer.alloc(20);
    writeCqEntry(b, 0, phy, size, tagsCode);
    writeSync(this.fd, b, 0, 20, at.offset);
  }

  close(): void {
    if (this.fd >= 0) {
      fsyncSync(this.fd);
      closeSync(this.fd);
    }
    this.fd = -1;
    this.fdFile = '';
  }
}

/**
 * One CommitLog pass giving each queue the records it lacks, contiguously from `next` (counts
 * only when `writer` is null). Records of queues without a ConsumeQueue directory get one.
 */
function rebuildQueues(root: string, config: VerifyConfig, targets: Map<string, RebuildTarget>, cqBytes: number, writer: UnitSink | null): void {
  walkCommitLog(root, {
    segmentBytes: config.mappedFileSizeCommitLog,
    checkCrc: true,
    delayLevelTableMs: parseDelayLevels(config.messageDelayLevel),
    onRecord: (d, size) => {
      if (!isConsumeQueueRecord(d.sysFlag)) return; // PREPARED / ROLLBACK transaction records own no unit (RocketMQ's dispatcher)
      const key = qkey(d.topic, d.queueId);
      let t = targets.get(key);
      if (!t) {
        t = { topic: d.topic, queueId: d.queueId, next: null, from: null, preBlanks: 0, gap: null };
        targets.set(key, t);
      }
      if (t.gap) return;
      const q = d.consumeQueueOffset;
      if (t.next === null) {
        t.next = q;
        const fileFirst = q - cqPosition(d.topic, d.queueId, q, cqBytes).offset / 20;
        t.preBlanks = q - fileFirst;
        if (writer) for (let p = fileFirst; p < q; p++) writer.write(d.topic, d.queueId, p, 0, 0x7fffffff, 0);
      }
      if (q < t.next) return; // already in the queue
      if (q > t.next) {
        t.gap = `queue ${d.topic}/${d.queueId}: the record at physical offset ${d.commitLogOffset} has queue offset ${q} but the queue ends at ${t.next}; records from there are not added (a gap in the CommitLog)`;
        return;
      }
      t.from ??= q;
      writer?.write(d.topic, d.queueId, q, d.commitLogOffset, size, d.tagsCode);
      t.next = q + 1;
    },
  });
  writer?.close();
}

function backupName(now: Date): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  return `repair-backup-${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}`;
}

/** Copies [offset, offset+length) of a file to `dest`, then zeroes it in place; both fsynced. */
function cutRange(src: string, offset: number, length: number, dest: string): void {
  mkdirSync(dirname(dest), { recursive: true });
  const fd = openSync(src, 'r+');
  const out = openSync(dest, 'wx');
  try {
    const step = 1024 * 1024;
    const buf = Buffer.alloc(Math.min(step, length));
    for (let done = 0; done < length; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, length - done), offset + done);
      if (n === 0) break;
      writeSync(out, buf, 0, n);
      done += n;
    }
    fsyncSync(out);
    const zeros = Buffer.alloc(Math.min(step, length));
    for (let done = 0; done < length; ) {
      const n = Math.min(zeros.length, length - done);
      writeSync(fd, zeros, 0, n, offset + done);
      done += n;
    }
    fsyncSync(fd);
  } finally {
    closeSync(out);
    closeSync(fd);
  }
}

/** Copies [offset, offset+length) of a file to `dest`, then truncates the file to `offset`; both fsynced. */
function trimTail(src: string, offset: number, length: number, dest: string): void {
  cutRange(src, offset, length, dest);
  const fd = openSync(src, 'r+');
  try {
    ftruncateSync(fd, offset);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Plans and applies the repair (see the module doc). Returns the plan that was applied, with
 * `backupDir`. Nothing is changed when the plan is empty (no backup directory either).
 * @throws StoreLockedError / StoreInUseError when a broker holds the store.
 */
export function applyRepair(root: string, config: VerifyConfig, now = new Date()): RepairPlan {
  const lock = StoreLock.acquire(nodeFileSystem, root, join(root, 'lock'), procProbe);
  try {
    const plan = planRepair(root, config);
    if (plan.actions.length === 0) return plan;
    const backupDir = join(root, backupName(now));
    mkdirSync(backupDir, { recursive: false });
    plan.backupDir = backupDir;
    writeFileSync(join(backupDir, 'manifest.json'), JSON.stringify({ appliedAt: now.toISOString(), ...plan }, null, 2));
    const cqBytes = cqFileBytes(config.mappedFileSizeConsumeQueue);
    const targets = new Map<string, RebuildTarget>();
    for (const a of plan.actions) {
      const abs = join(root, a.file);
      if (a.kind === 'cut') cutRange(abs, a.offset, a.lengthBytes, join(backupDir, `${a.file}.at-${a.offset}`));
      else if (a.kind === 'delete') {
        mkdirSync(dirname(join(backupDir, a.file)), { recursive: true });
        renameSync(abs, join(backupDir, a.file));
      } else if (a.kind === 'trim') {
        trimTail(abs, a.offset, a.lengthBytes, join(backupDir, `${a.file}.at-${a.offset}`));
      } else if (a.kind === 'extend') {
        const fd = openSync(abs, 'r+');
        ftruncateSync(fd, a.offset + a.lengthBytes);
        fsyncSync(fd);
        closeSync(fd);
      } else if (a.kind === 'rebuild') {
        targets.set(qkey(a.topic, a.queueId), { topic: a.topic, queueId: a.queueId, next: a.preBlanks > 0 || !queueHasFiles(root, a.topic, a.queueId) ? null : a.fromQueueOffset, from: null, preBlanks: 0, gap: null });
      }
    }
    const checkpointActions = plan.actions.filter((a) => a.kind === 'checkpoint');
    if (checkpointActions.length > 0) {
      const cpPath = join(root, 'checkpoint');
      copyFileSync(cpPath, join(backupDir, 'checkpoint'));
      const fd = openSync(cpPath, 'r+');
      for (const a of checkpointActions) {
        const b = Buffer.alloc(8);
        b.writeBigInt64BE(BigInt(a.to));
        writeSync(fd, b, 0, 8, a.offset);
      }
      fsyncSync(fd);
      closeSync(fd);
    }
    if (targets.size > 0) {
      const writer = new UnitWriter(root, cqBytes);
      // only the planned queues are written: rebuildQueues adds the others to its map as it meets them
      const planned = new Set(targets.keys());
      rebuildQueues(root, config, new Map(targets), cqBytes, {
        write: (topic, queueId, q, phy, size, tagsCode) => {
          if (planned.has(qkey(topic, queueId))) writer.write(topic, queueId, q, phy, size, tagsCode);
        },
        close: () => writer.close(),
      });
    }
    return plan;
  } finally {
    lock.release();
  }
}

function queueHasFiles(root: string, topic: string, queueId: number): boolean {
  return listNames(join(root, 'consumequeue', topic, String(queueId)), SEGMENT_NAME).length > 0;
}
