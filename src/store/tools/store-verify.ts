/**
 * Offline check of a stopped store (`tsmq store verify`): every CommitLog record (magic,
 * TOTALSIZE against its fields, BODYCRC, PHYSICALOFFSET = its position, properties), the file
 * chain (sizes, names = start offsets, blank end-of-file records), every ConsumeQueue entry
 * against the record it points to (topic, queue, size, queue offset, tags code), every index
 * file (header, slots, entries pointing at record starts) and the checkpoint against the data.
 * Each problem names the file (relative to the store root) and the byte offset in that file.
 *
 * Reads only; refuses a store whose `lock` names a live process (a running broker).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { checkRecord } from '../../common/message/record-check.js';
import { judgeLockRecord, parseLockRecord } from '../recovery/store-files.js';
import { procProbe } from '../recovery/process-identity.js';
import { INDEX_ENTRY_SIZE, INDEX_HEADER_SIZE, INDEX_SLOT_SIZE } from '../index/index-file.js';
import { parseDelayLevels, type StoreConfig } from '../store-config.js';

/** One problem found: `file` is relative to the store root, `offset` is a byte offset in it. */
export interface StoreProblem {
  file: string;
  offset: number;
  message: string;
}

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

/** @throws StoreInUseError when the store's lock names a live process. */
export function assertStoreStopped(root: string): void {
  const lockPath = join(root, 'lock');
  if (!existsSync(lockPath)) return;
  const verdict = judgeLockRecord(parseLockRecord(readFileSync(lockPath, 'utf8')), procProbe);
  if (verdict.held) throw new StoreInUseError(`store ${root} is in use by process ${verdict.pid} (lock file): stop that broker first; the store tools work on a stopped store only`);
}

interface RecordInfo {
  topic: string;
  queueId: number;
  size: number;
  queueOffset: number;
  tagsCode: number;
  storeTimestamp: number;
}

/** Size of the regular files of a directory's tree in bytes. */
function treeBytes(dir: string): number {
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    n += st.isDirectory() ? treeBytes(p) : st.size;
  }
  return n;
}

export function verifyStore(root: string, config: VerifyConfig, progress?: VerifyProgress): VerifyReport {
  assertStoreStopped(root);
  const problems: StoreProblem[] = [];
  const notes: string[] = [];
  const problem = (file: string, offset: number, message: string): void => {
    problems.push({ file, offset, message });
  };
  const total = treeBytes(join(root, 'commitlog')) + treeBytes(join(root, 'consumequeue')) + treeBytes(join(root, 'index'));
  let done = 0;
  const advance = (n: number): void => {
    done += n;
    progress?.(done, total);
  };
  const delayTable = parseDelayLevels(config.messageDelayLevel);
  if (existsSync(join(root, 'abort'))) notes.push('abort file present: the store was not shut down cleanly; the next start runs abnormal recovery');

  // --- CommitLog ---
  const clDir = join(root, 'commitlog');
  const names = existsSync(clDir) ? readdirSync(clDir).filter((f) => SEGMENT_NAME.test(f)).sort() : [];
  for (const other of existsSync(clDir) ? readdirSync(clDir).filter((f) => !SEGMENT_NAME.test(f)) : []) notes.push(`commitlog/${other}: not a segment file (name is not 20 digits), ignored`);
  const size = config.mappedFileSizeCommitLog;
  const records = new Map<number, RecordInfo>();
  const minPhy = names.length > 0 ? Number(names[0]) : 0;
  let maxPhy = minPhy;
  let ended = false;
  let maxStoreTimestamp = 0;
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const file = `commitlog/${name}`;
    const base = Number(name);
    if (base % size !== 0) problem(file, 0, `file name ${name} is not a multiple of mappedFileSizeCommitLog ${size}`);
    if (i > 0 && base !== Number(names[i - 1]) + size) problem(file, 0, `file starts at ${base} but the previous file ends at ${Number(names[i - 1]) + size} (missing or misnamed file)`);
    const data = readFileSync(join(clDir, name));
    if (data.length !== size) problem(file, 0, `file is ${data.length} bytes, expected mappedFileSizeCommitLog ${size}`);
    if (ended) {
      if (data.length >= 4 && data.readInt32BE(0) !== 0) problem(file, 0, 'data after the end of the CommitLog (a previous file ends without a blank record)');
      advance(data.length);
      continue;
    }
    let pos = 0;
    for (;;) {
      if (pos >= data.length) {
        maxPhy = base + data.length; // the file is full to its last byte
        break;
      }
      if (pos + 4 > data.length || data.readInt32BE(pos) === 0) {
        ended = true; // zeros: the end of the written data
        maxPhy = base + pos;
        break;
      }
      const r = checkRecord(data, pos, data.length - pos, { checkCrc: true, expectedPhysicalOffset: base + pos, delayLevelTableMs: delayTable });
      if (r.kind === 'blank') {
        maxPhy = base + data.length;
        break;
      }
      if (r.kind === 'invalid') {
        problem(file, pos, `invalid record: ${r.reason}; the rest of the file cannot be read (recovery would truncate here)`);
        ended = true;
        maxPhy = base + pos;
        break;
      }
      const d = r.dispatch;
      records.set(base + pos, { topic: d.topic, queueId: d.queueId, size: r.size, queueOffset: d.consumeQueueOffset, tagsCode: d.tagsCode, storeTimestamp: d.storeTimestamp });
      if (d.storeTimestamp > maxStoreTimestamp) maxStoreTimestamp = d.storeTimestamp;
      pos += r.size;
    }
    advance(data.length);
  }

  // --- ConsumeQueues ---
  let cqEntries = 0;
  const cqRoot = join(root, 'consumequeue');
  const cqFileSize = Math.ceil(config.mappedFileSizeConsumeQueue / 20) * 20;
  for (const topic of existsSync(cqRoot) ? readdirSync(cqRoot).sort() : []) {
    for (const qid of readdirSync(join(cqRoot, topic)).sort((a, b) => Number(a) - Number(b))) {
      const dir = join(cqRoot, topic, qid);
      if (!statSync(dir).isDirectory()) continue;
      const files = readdirSync(dir).filter((f) => SEGMENT_NAME.test(f)).sort();
      let queueEnded = false;
      for (let fi = 0; fi < files.length; fi++) {
        const f = files[fi]!;
        const file = `consumequeue/${topic}/${qid}/${f}`;
        const data = readFileSync(join(dir, f));
        if (data.length !== cqFileSize) problem(file, 0, `file is ${data.length} bytes, expected ${cqFileSize} (mappedFileSizeConsumeQueue)`);
        if (fi > 0 && Number(f) !== Number(files[fi - 1]) + cqFileSize) problem(file, 0, `file starts at ${Number(f)} but the previous file ends at ${Number(files[fi - 1]) + cqFileSize}`);
        for (let p = 0; p + 20 <= data.length; p += 20) {
          const phy = Number(data.readBigInt64BE(p));
          const sz = data.readInt32BE(p + 8);
          const tagsCode = Number(data.readBigInt64BE(p + 12));
          if (phy === 0 && sz === 0 && tagsCode === 0) {
            queueEnded = true; // zeros: the end of the queue
            continue;
          }
          const queueOffset = (Number(f) + p) / 20;
          if (queueEnded) {
            problem(file, p, `entry ${queueOffset} after the end of the queue (a zero entry before it)`);
            continue;
          }
          cqEntries++;
          if (phy < minPhy) continue; // its CommitLog file was deleted by retention
          const rec = records.get(phy);
          if (phy >= maxPhy) {
            problem(file, p, `entry ${queueOffset} points at physical offset ${phy}, past the end of the CommitLog data (${maxPhy})`);
            continue;
          }
          if (!rec) {
            problem(file, p, `entry ${queueOffset} points at physical offset ${phy}, where no record starts`);
            continue;
          }
          const wrong: string[] = [];
          if (rec.topic !== topic || rec.queueId !== Number(qid)) wrong.push(`the record is of ${rec.topic}/${rec.queueId}`);
          if (rec.size !== sz) wrong.push(`size ${sz} but the record is ${rec.size} bytes`);
          if (rec.queueOffset !== queueOffset) wrong.push(`the record's QUEUEOFFSET is ${rec.queueOffset}`);
          if (rec.tagsCode !== tagsCode) wrong.push(`tags code ${tagsCode} but the record's is ${rec.tagsCode}`);
          if (wrong.length > 0) problem(file, p, `entry ${queueOffset} (physical offset ${phy}): ${wrong.join('; ')}`);
        }
        advance(data.length);
      }
    }
  }

  // --- index files ---
  let indexFiles = 0;
  let indexEntries = 0;
  const indexDir = join(root, 'index');
  const expectedIndexSize = INDEX_HEADER_SIZE + config.maxHashSlotNum * INDEX_SLOT_SIZE + config.maxIndexNum * INDEX_ENTRY_SIZE;
  for (const name of existsSync(indexDir) ? readdirSync(indexDir).sort() : []) {
    const file = `index/${name}`;
    const data = readFileSync(join(indexDir, name));
    indexFiles++;
    if (data.length !== expectedIndexSize) {
      problem(file, 0, `file is ${data.length} bytes, expected ${expectedIndexSize} (maxHashSlotNum ${config.maxHashSlotNum}, maxIndexNum ${config.maxIndexNum})`);
      advance(data.length);
      continue;
    }
    const readLong = (at: number): number => Number(data.readBigInt64BE(at));
    const begin = readLong(0);
    const end = readLong(8);
    const indexCount = Math.max(1, data.readInt32BE(36));
    if (indexCount > config.maxIndexNum) problem(file, 36, `indexCount ${indexCount} exceeds maxIndexNum ${config.maxIndexNum}`);
    if (end < begin) problem(file, 8, `endTimestamp ${end} is before beginTimestamp ${begin}`);
    for (let s = 0; s < config.maxHashSlotNum; s++) {
      const v = data.readInt32BE(INDEX_HEADER_SIZE + s * INDEX_SLOT_SIZE);
      if (v < 0 || v >= indexCount) problem(file, INDEX_HEADER_SIZE + s * INDEX_SLOT_SIZE, `slot ${s} holds entry ${v}, outside 0..${indexCount - 1}`);
    }
    const entriesAt = INDEX_HEADER_SIZE + config.maxHashSlotNum * INDEX_SLOT_SIZE;
    for (let e = 1; e < Math.min(indexCount, config.maxIndexNum); e++) {
      const at = entriesAt + e * INDEX_ENTRY_SIZE;
      const phy = readLong(at + 4);
      const timeDiff = data.readInt32BE(at + 12);
      const prev = data.readInt32BE(at + 16);
      indexEntries++;
      if (prev < 0 || prev >= e) problem(file, at, `entry ${e}: previous entry ${prev} is not an earlier entry`);
      if (timeDiff < 0) problem(file, at, `entry ${e}: negative time difference ${timeDiff}`);
      if (phy >= minPhy && !records.has(phy)) problem(file, at, `entry ${e} points at physical offset ${phy}, where no record starts`);
    }
    advance(data.length);
  }

  // --- checkpoint ---
  const cpPath = join(root, 'checkpoint');
  if (existsSync(cpPath)) {
    const cp = readFileSync(cpPath);
    if (cp.length < 40) problem('checkpoint', 0, `file is ${cp.length} bytes, expected 4096`);
    else {
      const physic = Number(cp.readBigInt64BE(0));
      const logics = Number(cp.readBigInt64BE(8));
      const confirm = Number(cp.readBigInt64BE(32));
      if (records.size > 0 && physic > maxStoreTimestamp) problem('checkpoint', 0, `physicMsgTimestamp ${physic} is after the newest record's store time ${maxStoreTimestamp}: flushed data is missing from the CommitLog`);
      if (records.size > 0 && logics > maxStoreTimestamp) problem('checkpoint', 8, `logicsMsgTimestamp ${logics} is after the newest record's store time ${maxStoreTimestamp}`);
      if (confirm > maxPhy) problem('checkpoint', 32, `confirmPhyOffset ${confirm} is past the end of the CommitLog data (${maxPhy})`);
    }
  } else if (names.length > 0) notes.push('no checkpoint file');

  return {
    root,
    commitLogFiles: names.length,
    records: records.size,
    minPhysicalOffset: minPhy,
    maxPhysicalOffset: maxPhy,
    consumeQueueEntries: cqEntries,
    indexFiles,
    indexEntries,
    notes,
    problems,
  };
}
