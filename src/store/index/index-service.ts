/**
 * IndexService: the set of IndexFiles under `<storePathRootDir>/index`, named by creation
 * time (local `yyyyMMddHHmmssSSS`), newest last. Mirrors RocketMQ's `IndexService`:
 * builds keys `topic#UNIQ_KEY` and `topic#k` for every key in KEYS (space separated) for each
 * dispatched message except ROLLBACK records, rolls to a new file when the last one is full,
 * answers key lookups newest file first, and deletes files wholly below the CommitLog minimum.
 *
 * Crash handling: after an abnormal exit every file whose endTimestamp is newer than the
 * checkpoint's indexMsgTimestamp is destroyed (RocketMQ's rule); `load` returns the physical
 * offset from which the dispatcher must rebuild index entries (tsmq improvement: RocketMQ may
 * lose the keys of messages before its recovery start point; tsmq re-indexes from there).
 */
import { join } from 'node:path';
import type { FileSystem } from '../../common/fs/file-system.js';
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import type { IndexRecord } from './index-record-batch.js';
import type { PreparedDispatchBlock } from '../dispatch/prepared-dispatch-block.js';
import { MessageSysFlag, getTransactionValue } from '../../common/message/sysflag.js';
import { IndexFile, continueJavaHash, indexHashOf } from './index-file.js';
import { javaStringHashCode } from '../../common/message/java-hash.js';
import type { SyncFailedError } from '../mapped-file/sync-failed-error.js';

export interface IndexServiceConfig {
  /** `<storePathRootDir>/index` */
  indexDir: string;
  maxHashSlotNum: number;
  maxIndexNum: number;
  messageIndexEnable: boolean;
}

/** Narrow view of the checkpoint the service updates when a full file has been flushed. */
export interface IndexCheckpoint {
  /** End time of the newest index data known to be on disk (checkpoint byte 16). */
  readonly indexMsgTimestamp: number;
  setIndexMsgTimestamp(timestampMs: number): void;
  flush(): Promise<void>;
}

export interface IndexQueryResult {
  /** Physical offsets, newest first per file, possibly with duplicates and hash collisions. */
  phyOffsets: number[];
  indexLastUpdateTimestamp: number;
  indexLastUpdatePhyOffset: number;
}

/** Local-time `yyyyMMddHHmmssSSS`, RocketMQ's `UtilAll.timeMillisToHumanString`. */
export function indexFileName(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}${p(d.getMilliseconds(), 3)}`;
}

/** warmSlots looks at most this many records ahead. */
const WARM_MAX_RECORDS = 256;

/** Fills `r` with what the index reads of record `k` of a prepared block. */
export function fillIndexRecord(r: IndexRecord, block: PreparedDispatchBlock, k: number): void {
  r.commitLogOffset = block.commitLogOffset[k]!;
  r.storeTimestamp = block.storeTimestamp;
  r.sysFlag = block.sysFlag[k]!;
  r.topic = block.topic[k]!;
  r.keys = block.keys[k]!;
  r.uniqKey = block.uniqKey[k]!;
}

export class IndexService {
  private readonly files: IndexFile[] = [];
  /** Flushes of full files, chained so checkpoint updates happen in file order. */
  private flushChain: Promise<void> = Promise.resolve();
  /** Full files whose flush at the roll has not succeeded yet (the checkpoint may not pass them). */
  private readonly unflushedFull = new Set<IndexFile>();

  constructor(
    private readonly fs: FileSystem,
    private readonly config: IndexServiceConfig,
    private readonly clock: Clock,
    private readonly checkpoint: IndexCheckpoint,
    private readonly logger: Logger,
    /** Told when an index file's fdatasync fails (fsyncgate: the store refuses puts and keeps the abort file, so the next start rebuilds the files the checkpoint does not cover). */
    private readonly onSyncFailed?: (e: SyncFailedError) => void,
  ) {}

  /**
   * Opens existing files. After an abnormal exit, destroys files newer than
   * `indexMsgTimestamp` and returns the physical offset to re-index from (null when nothing
   * needs rebuilding).
   */
  load(lastExitOK: boolean, indexMsgTimestamp: number, pageCacheIntact = false): { rebuildFromPhyOffset: number | null } {
    this.fs.mkdirp(this.config.indexDir);
    const names = this.fs.readdir(this.config.indexDir).filter((n) => /^\d{17}$/.test(n)).sort();
    let rebuildFrom: number | null = null;
    for (let i = 0; i < names.length; i++) {
      const path = join(this.config.indexDir, names[i]!);
      const isLast = i === names.length - 1;
      let f: IndexFile;
      try {
        f = IndexFile.open(this.fs, path, this.config.maxHashSlotNum, this.config.maxIndexNum, isLast);
      } catch (err) {
        this.logger.warn({ path, err: String(err) }, 'index file unreadable; it is rebuilt from the CommitLog');
        this.fs.unlink(path);
        rebuildFrom = 0;
        continue;
      }
      if (!lastExitOK && f.writable && !f.slotsWithinCount()) {
        // a commit was cut between the slot-table writes and the header write: chains through
        // the newer slots would be lost, so the file is rebuilt
        this.logger.warn({ path, indexCount: f.header.indexCount }, 'abnormal exit: index file slots point past its header (torn commit); destroyed for rebuild');
        rebuildFrom = rebuildFrom === null ? f.header.beginPhyOffset : Math.min(rebuildFrom, f.header.beginPhyOffset);
        f.destroy();
        continue;
      }
      if (!lastExitOK && f.header.endTimestamp > indexMsgTimestamp && pageCacheIntact && f.writable) {
        // A process crash on this boot: the file holds exactly its last commit (entries, then
        // slots, then header, written in that order and kept by the page cache). Keep it and
        // index again from its end, instead of rebuilding the whole file from the CommitLog.
        this.logger.info({ path, endTimestamp: f.header.endTimestamp, indexMsgTimestamp }, 'abnormal exit on this boot: index file newer than checkpoint kept (page cache intact)');
      } else if (!lastExitOK && f.header.endTimestamp > indexMsgTimestamp) {
        this.logger.info({ path, endTimestamp: f.header.endTimestamp, indexMsgTimestamp }, 'abnormal exit: index file newer than checkpoint destroyed for rebuild');
        rebuildFrom = rebuildFrom === null ? f.header.beginPhyOffset : Math.min(rebuildFrom, f.header.beginPhyOffset);
        f.destroy();
        continue;
      }
      f.onSyncFailed = this.onSyncFailed;
      this.files.push(f);
    }
    // Only the newest surviving file stays writable.
    for (let i = 0; i < this.files.length - 1; i++) if (this.files[i]!.writable) this.files[i]!.makeReadOnly();
    return { rebuildFromPhyOffset: rebuildFrom };
  }

  /**
   * After recovery: no file may claim messages at or beyond the recovered CommitLog end
   * (`maxPhyOffset`, bytes). Under ASYNC_FLUSH an index file can reach the device before the
   * CommitLog records it indexed; after a power loss those records are gone and new ones are
   * stored at their offsets, which buildIndex would skip as already indexed. Entries beyond the
   * end stay in the file: they point at offsets whose new records lookups check by topic and key.
   * The moved-back end is made durable (commit + fdatasync) before this resolves: the new records
   * stored at those offsets may reach the device, and a later power loss that brought the old end
   * back would skip them for good (the CommitLog then reaches past it, so nothing clamps again).
   * @throws (rejects) when the fdatasync fails; the store start then fails.
   */
  async clampEnd(maxPhyOffset: number): Promise<void> {
    if (maxPhyOffset === 0 && this.files.some((f) => f.header.indexCount > 1)) {
      // an empty CommitLog: every entry is stale, and no end offset lets a record at 0 in (the
      // end names the last indexed message's start, a message there counts as indexed)
      this.logger.warn({ files: this.files.length }, 'index files hold entries but the recovered CommitLog is empty; they are deleted');
      this.destroyAll();
      return;
    }
    // endPhyOffset is the START of the last indexed message, and a message starting there is
    // skipped: one byte below the CommitLog end lets the next record (stored at the end) in
    const end = Math.max(0, maxPhyOffset - 1);
    for (const f of this.files) {
      if (f.header.endPhyOffset > end) {
        this.logger.warn({ path: f.path, endPhyOffset: f.header.endPhyOffset, maxPhyOffset }, 'index file ahead of the recovered CommitLog; its end is moved back');
        await f.clampEndDurably(end); // neither a process crash nor a power loss may bring the old end back
      }
    }
  }

  /** Physical offset below which every message is already indexed. */
  get indexedUpToPhyOffset(): number {
    const last = this.files[this.files.length - 1];
    return last ? last.header.endPhyOffset : 0;
  }

  /** Indexes one dispatched message (RocketMQ IndexService.buildIndex). */
  buildIndex(req: IndexRecord): void {
    if (!this.config.messageIndexEnable) return;
    if (getTransactionValue(req.sysFlag) === MessageSysFlag.TRANSACTION_ROLLBACK_TYPE) return;
    let file = this.lastWritableFile();
    const end = file.header.endPhyOffset;
    // Already indexed (a re-dispatch after recovery). Unlike RocketMQ, an offset equal to the
    // end offset is skipped too once this file holds entries: re-indexing it duplicated keys
    // (B14). Not in a file without entries (just rolled, end inherited from the full file): the
    // message at that end may have had keys that did not fit the full file and went to a newer
    // file that recovery destroyed; its keys are indexed again (queries drop duplicate offsets).
    if (req.commitLogOffset < end || (req.commitLogOffset === end && file.header.indexCount > 1)) return;
    // distinct keys in order: UNIQ_KEY, then each KEYS word (RocketMQ indexes each once)
    const uniqKey = req.uniqKey;
    const words = req.keys;
    if (!uniqKey && !words) {
      file.advanceEnd(req.commitLogOffset, req.storeTimestamp);
      return;
    }
    const prefixHash = this.prefixHashOf(req.topic);
    if (uniqKey) {
      const w = this.warmNext;
      if (w < this.warmCount && this.warmRecords[w] === req && this.warmOffsets[w] === req.commitLogOffset) {
        // hashed (and its slot read) by warmSlots
        this.warmRecords[w] = null;
        this.warmNext = w + 1;
        this.warmHashesUsed++;
        file = this.putKeyHashed(file, this.warmHashes[w]!, req);
      } else {
        file = this.putKey(file, prefixHash, uniqKey, req);
      }
    }
    if (!words) return;
    if (words.indexOf(' ') < 0) {
      if (words !== uniqKey) this.putKey(file, prefixHash, words, req);
      return;
    }
    const keys = this.keyScratch;
    keys.length = 0;
    if (uniqKey) keys.push(uniqKey);
    for (const k of words.split(' ')) {
      if (k.length > 0 && !keys.includes(k)) {
        keys.push(k);
        file = this.putKey(file, prefixHash, k, req);
      }
    }
    if (keys.length === 0) file.advanceEnd(req.commitLogOffset, req.storeTimestamp); // KEYS held only spaces
  }

  /**
   * A hint before `records` are indexed in this order with buildIndex (the records of one batch,
   * from the dispatch queue): computes the index hash of each one's UNIQ_KEY (kept for its
   * buildIndex call) and reads their slots in one pass (IndexFile.touchSlots), so the misses in
   * the 20 MB slot table overlap instead of stalling each buildIndex in turn (~8 % of the batch
   * put path's CPU before). Writes nothing: the files get the same bytes as without the hint.
   * A record indexed without a hint, or out of this order, is hashed as usual.
   */
  warmSlots(records: readonly IndexRecord[], from: number, to: number): void {
    if (!this.config.messageIndexEnable) return;
    const n = Math.min(to - from, WARM_MAX_RECORDS);
    if (n < 2) return;
    let k = 0;
    for (let i = 0; i < n; i++) {
      const r = records[from + i]!;
      k = this.warmOne(k, r, r.commitLogOffset, r.topic, r.uniqKey, r.sysFlag);
    }
    this.touchWarmed(k);
  }

  /**
   * buildIndex for each record of a prepared block (its columns; no DispatchRequest per record),
   * WARM_MAX_RECORDS at a time with their slots read ahead as warmSlots does. A record that fails
   * is reported with `failed(k, error)` and the next one goes on.
   */
  buildIndexPrepared(block: PreparedDispatchBlock, failed: (k: number, error: unknown) => void): void {
    const r = this.preparedRecord;
    for (let from = 0; from < block.count; from += WARM_MAX_RECORDS) {
      const to = Math.min(block.count, from + WARM_MAX_RECORDS);
      if (this.config.messageIndexEnable && to - from > 1) {
        let k = 0;
        // buildIndex gets `r` filled with record i (matched by its offset)
        for (let i = from; i < to; i++) k = this.warmOne(k, r, block.commitLogOffset[i]!, block.topic[i]!, block.uniqKey[i]!, block.sysFlag[i]!);
        this.touchWarmed(k);
      }
      for (let i = from; i < to; i++) {
        fillIndexRecord(r, block, i);
        try {
          this.buildIndex(r);
        } catch (e) {
          failed(i, e);
        }
      }
    }
  }

  /** The one IndexRecord buildIndexPrepared fills with each record in turn. */
  private readonly preparedRecord: IndexRecord = { commitLogOffset: 0, storeTimestamp: 0, sysFlag: 0, topic: '', keys: '', uniqKey: null };

  /**
   * Warm-up entry `k` for record `r` at `commitLogOffset` when it has a UNIQ_KEY to index (not a
   * rolled-back half): its index hash, computed once for its buildIndex. Returns the next entry.
   */
  private warmOne(k: number, r: IndexRecord, commitLogOffset: number, topic: string, uniqKey: string | null, sysFlag: number): number {
    if (!uniqKey || getTransactionValue(sysFlag) === MessageSysFlag.TRANSACTION_ROLLBACK_TYPE) return k;
    this.warmRecords[k] = r;
    this.warmOffsets[k] = commitLogOffset;
    this.warmHashes[k] = indexHashOf(continueJavaHash(this.prefixHashOf(topic), uniqKey));
    return k + 1;
  }

  /** Ends a warm-up: `warmRecords[0, k)` hashed; the rest forgotten, their slots read (IndexFile.touchSlots). */
  private touchWarmed(k: number): void {
    for (let i = k; i < this.warmCount; i++) this.warmRecords[i] = null;
    this.warmCount = k;
    this.warmNext = 0;
    const last = this.files[this.files.length - 1];
    // a full file is rolled by buildIndex: the new file's slots are all empty (nothing to read)
    if (last && last.writable && !last.isFull()) this.warmSink = last.touchSlots(this.warmHashes, k);
  }

  /** javaStringHashCode(`${topic}#`), cached: the hash of `topic#key` continues from it (no string built). */
  private prefixHashOf(topic: string): number {
    let prefixHash = this.topicPrefixHash.get(topic);
    if (prefixHash === undefined) {
      prefixHash = javaStringHashCode(`${topic}#`);
      if (this.topicPrefixHash.size >= 4096) this.topicPrefixHash.clear();
      this.topicPrefixHash.set(topic, prefixHash);
    }
    return prefixHash;
  }

  /** Adds one key's entry to `file`, or to a new file when it is full; returns the file used. */
  private putKey(file: IndexFile, prefixHash: number, key: string, req: IndexRecord): IndexFile {
    return this.putKeyHashed(file, indexHashOf(continueJavaHash(prefixHash, key)), req);
  }

  /** putKey with the key's index hash computed. */
  private putKeyHashed(file: IndexFile, keyHash: number, req: IndexRecord): IndexFile {
    if (file.putKeyHash(keyHash, req.commitLogOffset, req.storeTimestamp)) return file;
    const next = this.roll(file);
    if (!next.putKeyHash(keyHash, req.commitLogOffset, req.storeTimestamp)) throw new Error('a fresh index file refused a key');
    return next;
  }

  /** warmSlots' records (null once indexed), their CommitLog offsets and UNIQ_KEY index hashes; buildIndex takes them in order. */
  private readonly warmRecords: (IndexRecord | null)[] = [];
  private readonly warmOffsets: number[] = [];
  private readonly warmHashes = new Int32Array(WARM_MAX_RECORDS);
  private warmCount = 0;
  private warmNext = 0;
  /** UNIQ_KEY hashes buildIndex took from warmSlots (for tests and stats). */
  warmHashesUsed = 0;
  /** What the last touchSlots read (kept so the reads stay). */
  warmSink = 0;
  /** Reused by buildIndex for KEYS with several words (dispatch is synchronous). */
  private readonly keyScratch: string[] = [];
  /** javaStringHashCode(`${topic}#`) per topic (bounded). */
  private readonly topicPrefixHash = new Map<string, number>();

  /**
   * Looks `topic#key` up in every file whose time range matches, newest first, collecting at
   * most maxNum physical offsets (RocketMQ IndexService.queryOffset).
   */
  queryOffset(topic: string, key: string, maxNum: number, beginMs: number, endMs: number): IndexQueryResult {
    const out: number[] = [];
    const last = this.files[this.files.length - 1];
    const result: IndexQueryResult = {
      phyOffsets: out,
      indexLastUpdateTimestamp: last?.header.endTimestamp ?? 0,
      indexLastUpdatePhyOffset: last?.header.endPhyOffset ?? 0,
    };
    const full = `${topic}#${key}`;
    for (let i = this.files.length - 1; i >= 0; i--) {
      const f = this.files[i]!;
      if (f.isTimeMatched(beginMs, endMs)) f.selectPhyOffsets(out, full, maxNum, beginMs, endMs);
      if (f.header.beginTimestamp < beginMs || out.length >= maxNum) break;
    }
    return result;
  }

  /** Deletes every file but the last whose endPhyOffset is below the CommitLog min offset. */
  deleteExpiredFiles(minPhyOffset: number): number {
    let deleted = 0;
    while (this.files.length > 1 && this.files[0]!.header.endPhyOffset < minPhyOffset) {
      const f = this.files.shift()!;
      this.unflushedFull.delete(f);
      f.destroy();
      deleted++;
    }
    return deleted;
  }

  /** Hands the writable file's state to the page cache. */
  commit(): void {
    this.files[this.files.length - 1]?.commit();
  }

  /**
   * Makes the writable file durable (entries, slots, header, fdatasync) and then moves the
   * checkpoint's indexMsgTimestamp to its end time, so after a crash this file is kept and
   * only messages after it are indexed again — crash recovery then depends on the time since
   * the last flush, not on how much the current index file holds. (RocketMQ only moves the
   * checkpoint for full files, so it drops the whole writable file after a crash.)
   */
  flushWritable(): Promise<void> {
    const last = this.files[this.files.length - 1];
    if (!last || !last.writable || (!last.isDirty && this.unflushedFull.size === 0)) return this.flushChain;
    this.flushChain = this.flushChain
      .then(async () => {
        // full files whose flush at the roll failed first: the checkpoint must not pass them
        await this.flushFullFiles();
        // the end time the flushed header holds: keys indexed after the commit (while this chain
        // waited or the fdatasync ran) are not on disk yet, and a checkpoint beyond them would
        // make crash recovery destroy and rebuild the whole writable file
        const endTimestamp = await last.flush();
        if (endTimestamp > this.checkpoint.indexMsgTimestamp) this.checkpoint.setIndexMsgTimestamp(endTimestamp);
        await this.checkpoint.flush();
      })
      .catch((err: unknown) => this.logger.error({ err: String(err), path: last.path }, 'flushing the writable index file failed'));
    return this.flushChain;
  }

  /** Flushes every file; the checkpoint's indexMsgTimestamp then covers the writable file too. */
  async flush(): Promise<void> {
    await this.flushChain;
    let end = 0;
    for (const f of this.files) end = await f.flush(); // the last file's committed end time
    this.unflushedFull.clear();
    if (end > this.checkpoint.indexMsgTimestamp) {
      this.checkpoint.setIndexMsgTimestamp(end);
      await this.checkpoint.flush();
    }
  }

  /** flush, then closes every file (also when the flush failed). @throws the flush error. */
  async shutdown(): Promise<void> {
    try {
      await this.flush();
    } finally {
      for (const f of this.files.splice(0)) f.close();
    }
  }

  /** Crash simulation: closes files without writing pending state. */
  closeAbruptly(): void {
    this.unflushedFull.clear();
    for (const f of this.files.splice(0)) f.closeWithoutCommit();
  }

  /** Destroys every file (used when the whole store is reset). */
  destroyAll(): void {
    for (const f of this.files.splice(0)) f.destroy();
  }

  get fileCount(): number {
    return this.files.length;
  }

  private lastWritableFile(): IndexFile {
    const last = this.files[this.files.length - 1];
    if (last && last.writable && !last.isFull()) return last;
    if (last && last.isFull()) return this.roll(last);
    return this.createFile({ endPhyOffset: 0, endTimestamp: 0 });
  }

  /**
   * Flushes the full files not on disk yet (oldest first) and makes them read-only. @throws the
   * first failure (the file stays in the set, retried by the next flushWritable).
   */
  private async flushFullFiles(): Promise<void> {
    for (const f of [...this.unflushedFull]) {
      await f.flush();
      f.makeReadOnly();
      this.unflushedFull.delete(f);
    }
  }

  private roll(full: IndexFile): IndexFile {
    const next = this.createFile({ endPhyOffset: full.header.endPhyOffset, endTimestamp: full.header.endTimestamp });
    const endTimestamp = full.header.endTimestamp;
    this.unflushedFull.add(full);
    this.flushChain = this.flushChain
      .then(async () => {
        await this.flushFullFiles();
        if (endTimestamp > this.checkpoint.indexMsgTimestamp) this.checkpoint.setIndexMsgTimestamp(endTimestamp);
        await this.checkpoint.flush();
      })
      .catch((err: unknown) => this.logger.error({ err: String(err), path: full.path }, 'flushing a full index file failed'));
    return next;
  }

  private createFile(prevEnd: { endPhyOffset: number; endTimestamp: number }): IndexFile {
    let now = this.clock.nowMs();
    let path = join(this.config.indexDir, indexFileName(now));
    while (this.fs.exists(path)) path = join(this.config.indexDir, indexFileName(++now));
    const f = IndexFile.create(this.fs, path, this.config.maxHashSlotNum, this.config.maxIndexNum, prevEnd);
    f.onSyncFailed = this.onSyncFailed;
    this.files.push(f);
    return f;
  }
}
