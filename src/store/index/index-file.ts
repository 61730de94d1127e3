/**
 * IndexFile: one hash-index file for lookups by message key (store-format.md §2.5).
 * Mirrors RocketMQ's `IndexFile` / `IndexHeader` byte for byte.
 *
 * Layout (big-endian), size = 40 + hashSlotNum×4 + indexNum×20 (420,000,040 with defaults):
 *
 *   header (40 bytes)
 *     0 beginTimestamp long | 8 endTimestamp long | 16 beginPhyOffset long | 24 endPhyOffset long
 *     32 hashSlotCount int (slots ever used) | 36 indexCount int (next entry number, starts at 1)
 *   slot table: hashSlotNum ints at byte 40; slot = entry number of the newest entry (0 = empty)
 *   entries: entry n at 40 + hashSlotNum×4 + n×20
 *     0 keyHash int (abs(String.hashCode), MIN_VALUE → 0) | 4 phyOffset long
 *     12 timeDiff int (seconds since beginTimestamp, clamped to [0, Integer.MAX_VALUE])
 *     16 prevIndex int (previous entry in the same slot chain, 0 = end)
 *
 * I/O: the writable (newest) file keeps its slot table and header in memory and appends
 * entries to a small write buffer; `commit()` hands entries, then the slot table, then the
 * header to the page cache (positional writes), `flush()` also fdatasyncs. A process crash can
 * therefore leave the file behind the CommitLog; after an abnormal exit the IndexService
 * destroys and rebuilds every file newer than the checkpoint's indexMsgTimestamp (RocketMQ's rule),
 * which always includes the writable file. Full (read-only) files are read with pread.
 */
import type { FileSystem } from '../../common/fs/file-system.js';
import { javaStringHashCode } from '../../common/message/java-hash.js';
import { SyncFailedError } from '../mapped-file/sync-failed-error.js';

export const INDEX_HEADER_SIZE = 40;
export const INDEX_SLOT_SIZE = 4;
export const INDEX_ENTRY_SIZE = 20;
const INT_MAX = 2147483647;
const INT_MIN = -2147483648;
const SLOTS_PER_PAGE = 1024;
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
/** Entries buffered before they are written (about 64 KiB). */
const PENDING_ENTRIES = 3276;

export interface IndexHeader {
  beginTimestamp: number;
  endTimestamp: number;
  beginPhyOffset: number;
  endPhyOffset: number;
  hashSlotCount: number;
  indexCount: number;
}

/** Size in bytes of an index file with the given geometry. */
export function indexFileSizeBytes(hashSlotNum: number, indexNum: number): number {
  return INDEX_HEADER_SIZE + hashSlotNum * INDEX_SLOT_SIZE + indexNum * INDEX_ENTRY_SIZE;
}

/** RocketMQ's index key hash: abs(String.hashCode), with Integer.MIN_VALUE mapped to 0. */
export function indexKeyHash(key: string): number {
  return indexHashOf(javaStringHashCode(key));
}

/** abs of a Java String.hashCode value, Integer.MIN_VALUE mapped to 0 (RocketMQ IndexService). */
export function indexHashOf(javaHash: number): number {
  return javaHash === INT_MIN ? 0 : Math.abs(javaHash);
}

/**
 * `String.hashCode` of `prefix + key` from the hash of `prefix` alone (the polynomial continues
 * over the key's UTF-16 code units), so `topic#key` needs no concatenated string.
 */
export function continueJavaHash(prefixHash: number, key: string): number {
  let h = prefixHash;
  for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  return h;
}

function writeLong(buf: Buffer, at: number, v: number): void {
  buf.writeInt32BE(Math.floor(v / 0x100000000) | 0, at);
  buf.writeUInt32BE(v >>> 0, at + 4);
}

function readLong(buf: Buffer, at: number): number {
  return buf.readInt32BE(at) * 0x100000000 + buf.readUInt32BE(at + 4);
}

export class IndexFile {
  readonly header: IndexHeader;
  private slots: Int32Array | null;
  private pendingEntries: Buffer;
  private pendingCount = 0;
  /** Entry number of the first entry held in `pendingEntries`. */
  private pendingFirst = 0;
  private dirty = false;
  private closed = false;
  /** One flag per 4 KiB page (1024 slots) of the slot table changed since the last commit. */
  private dirtySlotPages: Uint8Array;

  private constructor(
    private readonly fs: FileSystem,
    readonly path: string,
    private readonly fd: number,
    readonly hashSlotNum: number,
    readonly indexNum: number,
    header: IndexHeader,
    slots: Int32Array | null,
  ) {
    this.header = header;
    this.slots = slots;
    this.pendingEntries = Buffer.alloc(PENDING_ENTRIES * INDEX_ENTRY_SIZE);
    this.pendingFirst = header.indexCount;
    this.dirtySlotPages = new Uint8Array(Math.ceil(hashSlotNum / SLOTS_PER_PAGE));
  }

  /**
   * Creates a new, empty, writable index file. The header's begin/end fields start at the
   * previous file's end values (RocketMQ's roll-over behaviour), so the first entry's time
   * difference is computed against them.
   */
  static create(
    fs: FileSystem,
    path: string,
    hashSlotNum: number,
    indexNum: number,
    prevEnd: { endPhyOffset: number; endTimestamp: number } = { endPhyOffset: 0, endTimestamp: 0 },
  ): IndexFile {
    const fd = fs.open(path, 'w+');
    fs.ftruncate(fd, indexFileSizeBytes(hashSlotNum, indexNum));
    const header: IndexHeader = {
      beginTimestamp: prevEnd.endTimestamp > 0 ? prevEnd.endTimestamp : 0,
      endTimestamp: prevEnd.endTimestamp > 0 ? prevEnd.endTimestamp : 0,
      beginPhyOffset: prevEnd.endPhyOffset > 0 ? prevEnd.endPhyOffset : 0,
      endPhyOffset: prevEnd.endPhyOffset > 0 ? prevEnd.endPhyOffset : 0,
      hashSlotCount: 0,
      indexCount: 1,
    };
    const f = new IndexFile(fs, path, fd, hashSlotNum, indexNum, header, new Int32Array(hashSlotNum));
    f.dirty = true;
    f.commit();
    return f;
  }

  /**
   * Opens an existing index file. `writable` loads the slot table into memory so more keys can
   * be added. Throws if the file size does not match the geometry.
   */
  static open(fs: FileSystem, path: string, hashSlotNum: number, indexNum: number, writable: boolean): IndexFile {
    const fd = fs.open(path, writable ? 'r+' : 'r');
    const size = fs.fstatSize(fd);
    const expected = indexFileSizeBytes(hashSlotNum, indexNum);
    if (size !== expected) {
      fs.close(fd);
      throw new Error(`index file ${path} has ${size} bytes, expected ${expected} (maxHashSlotNum ${hashSlotNum}, maxIndexNum ${indexNum})`);
    }
    const hb = Buffer.alloc(INDEX_HEADER_SIZE);
    fs.pread(fd, hb, 0, INDEX_HEADER_SIZE, 0);
    const header: IndexHeader = {
      beginTimestamp: readLong(hb, 0),
      endTimestamp: readLong(hb, 8),
      beginPhyOffset: readLong(hb, 16),
      endPhyOffset: readLong(hb, 24),
      hashSlotCount: hb.readInt32BE(32),
      indexCount: Math.max(1, hb.readInt32BE(36)),
    };
    let slots: Int32Array | null = null;
    if (writable) {
      const sb = Buffer.alloc(hashSlotNum * INDEX_SLOT_SIZE);
      fs.pread(fd, sb, 0, sb.length, INDEX_HEADER_SIZE);
      slots = new Int32Array(hashSlotNum);
      for (let i = 0; i < hashSlotNum; i++) slots[i] = sb.readInt32BE(i * 4);
    }
    return new IndexFile(fs, path, fd, hashSlotNum, indexNum, header, slots);
  }

  get writable(): boolean {
    return this.slots !== null;
  }

  /** True when no more entries fit (a file holds indexNum − 1 entries; entry 0 is unused). */
  isFull(): boolean {
    return this.header.indexCount >= this.indexNum;
  }

  /**
   * Adds `key` → `phyOffset`. Returns false (and changes nothing) when the file is full.
   * @throws if the file was opened read-only.
   */
  putKey(key: string, phyOffset: number, storeTimestampMs: number): boolean {
    return this.putKeyHash(indexKeyHash(key), phyOffset, storeTimestampMs);
  }

  /**
   * Reads the slots of `keyHashes[0, n)` (index hashes, as putKeyHash takes) and changes nothing:
   * the reads do not depend on each other, so the CPU overlaps their cache misses (the slot table
   * is hashSlotNum × 4 bytes, 20 MB by default, read at random), and the putKeyHash calls that
   * follow find the slots in cache instead of waiting for one miss after the other. Returns a
   * value derived from the slots (for the caller to keep, so the reads are not optimised away).
   */
  touchSlots(keyHashes: Int32Array, n: number): number {
    const slots = this.slots;
    if (!slots) return 0;
    const m = this.hashSlotNum;
    let acc = 0;
    for (let i = 0; i < n; i++) acc |= slots[keyHashes[i]! % m]!;
    return acc;
  }

  /** putKey with the key's index hash (`indexKeyHash`) already computed. */
  putKeyHash(keyHash: number, phyOffset: number, storeTimestampMs: number): boolean {
    const slots = this.slots;
    if (!slots) throw new Error(`index file ${this.path} is read-only`);
    const h = this.header;
    if (h.indexCount >= this.indexNum) return false;
    const slot = keyHash % this.hashSlotNum;
    let slotValue = slots[slot]!;
    if (slotValue <= 0 || slotValue > h.indexCount) slotValue = 0;
    let timeDiff = 0;
    if (h.beginTimestamp > 0) {
      timeDiff = Math.trunc((storeTimestampMs - h.beginTimestamp) / 1000);
      if (timeDiff > INT_MAX) timeDiff = INT_MAX;
      else if (timeDiff < 0) timeDiff = 0;
    }
    if ((this.pendingCount + 1) * INDEX_ENTRY_SIZE > this.pendingEntries.length) this.writePendingEntries();
    const at = this.pendingCount * INDEX_ENTRY_SIZE;
    const e = this.pendingEntries;
    e.writeInt32BE(keyHash, at);
    writeLong(e, at + 4, phyOffset);
    e.writeInt32BE(timeDiff, at + 12);
    e.writeInt32BE(slotValue, at + 16);
    this.pendingCount++;
    slots[slot] = h.indexCount;
    this.dirtySlotPages[(slot / SLOTS_PER_PAGE) | 0] = 1;
    if (h.indexCount <= 1) {
      h.beginPhyOffset = phyOffset;
      h.beginTimestamp = storeTimestampMs;
    }
    if (slotValue === 0) h.hashSlotCount++;
    h.indexCount++;
    h.endPhyOffset = phyOffset;
    h.endTimestamp = storeTimestampMs;
    this.dirty = true;
    return true;
  }

  /**
   * Moves the header's end offset back to `phyOffset` (recovery: the CommitLog ends there) and
   * makes the header durable (write + fdatasync) before resolving. A read-only (full) file gets
   * its header written through a separate read-write descriptor.
   * @throws (rejects) on a failed write or fdatasync.
   */
  async clampEndDurably(phyOffset: number): Promise<void> {
    if (phyOffset >= this.header.endPhyOffset || this.closed) return;
    this.header.endPhyOffset = phyOffset;
    this.dirty = true;
    if (this.writable) {
      await this.flush();
      return;
    }
    const fd = this.fs.open(this.path, 'r+');
    try {
      this.fs.pwrite(fd, this.headerBytes(), 0, INDEX_HEADER_SIZE, 0);
      this.dirty = false;
      await this.fs.fdatasync(fd);
    } finally {
      this.fs.close(fd);
    }
  }

  /**
   * Records that every message up to `phyOffset` has been seen although it had no key (tsmq:
   * keeps recovery from re-reading keyless messages; RocketMQ moves the end only on a key).
   */
  advanceEnd(phyOffset: number, storeTimestampMs: number): void {
    if (phyOffset <= this.header.endPhyOffset) return;
    this.header.endPhyOffset = phyOffset;
    if (storeTimestampMs > this.header.endTimestamp) this.header.endTimestamp = storeTimestampMs;
    this.dirty = true;
  }

  /**
   * Hands pending entries, the slot table and the header to the page cache, in that order, so
   * an on-disk header never counts entries that are not written.
   */
  commit(): void {
    if (!this.dirty || this.closed) return;
    this.writePendingEntries();
    if (this.slots) this.writeDirtySlotPages(this.slots);
    this.fs.pwrite(this.fd, this.headerBytes(), 0, INDEX_HEADER_SIZE, 0);
    this.dirty = false;
  }

  private headerBytes(): Buffer {
    const hb = Buffer.alloc(INDEX_HEADER_SIZE);
    const h = this.header;
    writeLong(hb, 0, h.beginTimestamp);
    writeLong(hb, 8, h.endTimestamp);
    writeLong(hb, 16, h.beginPhyOffset);
    writeLong(hb, 24, h.endPhyOffset);
    hb.writeInt32BE(h.hashSlotCount, 32);
    hb.writeInt32BE(h.indexCount, 36);
    return hb;
  }

  private writePendingEntries(): void {
    if (this.pendingCount === 0 || this.closed) return;
    const base = INDEX_HEADER_SIZE + this.hashSlotNum * INDEX_SLOT_SIZE;
    this.fs.pwrite(this.fd, this.pendingEntries, 0, this.pendingCount * INDEX_ENTRY_SIZE, base + this.pendingFirst * INDEX_ENTRY_SIZE);
    this.pendingFirst += this.pendingCount;
    this.pendingCount = 0;
  }

  /** Writes runs of changed slot pages (big-endian ints) at their place in the file. */
  private writeDirtySlotPages(slots: Int32Array): void {
    const pages = this.dirtySlotPages;
    for (let p = 0; p < pages.length; ) {
      if (!pages[p]) {
        p++;
        continue;
      }
      let q = p;
      while (q < pages.length && pages[q]) q++;
      const first = p * SLOTS_PER_PAGE;
      const last = Math.min(q * SLOTS_PER_PAGE, this.hashSlotNum);
      // Copy the native-endian ints, then swap to big-endian in one native call.
      const b = Buffer.from(new Uint8Array(slots.buffer, slots.byteOffset + first * INDEX_SLOT_SIZE, (last - first) * INDEX_SLOT_SIZE));
      if (LITTLE_ENDIAN) b.swap32();
      this.fs.pwrite(this.fd, b, 0, b.length, INDEX_HEADER_SIZE + first * INDEX_SLOT_SIZE);
      pages.fill(0, p, q); // clean only once written: a failed write is retried by the next commit
      p = q;
    }
  }

  /**
   * For a writable file: true when no slot points past the header's indexCount. False means a
   * commit was cut between the slot-table writes and the header write (slots newer than the
   * header), so chains through those slots would be lost: the file must be rebuilt.
   */
  slotsWithinCount(): boolean {
    const slots = this.slots;
    if (!slots) return true;
    const count = this.header.indexCount;
    for (let i = 0; i < slots.length; i++) if (slots[i]! >= count || slots[i]! < 0) return false;
    return true;
  }

  /** True when changes are waiting for commit(). */
  get isDirty(): boolean {
    return this.dirty;
  }

  /**
   * commit() then fdatasync (off the event loop). Resolves with the header's endTimestamp as
   * committed, i.e. what the file on disk now covers: keys added while the fdatasync runs are
   * newer and not included (a checkpoint must be moved to this value, not to a later one).
   */
  async flush(): Promise<number> {
    if (this.syncFailure) throw this.syncFailure;
    this.commit();
    const committedEndTimestamp = this.header.endTimestamp;
    if (!this.closed) {
      try {
        await this.fs.fdatasync(this.fd);
      } catch (e) {
        if (this.closed) throw e; // closed under us: not a device failure
        // fsyncgate: the kernel may have dropped the unwritten pages, so a later "successful"
        // fdatasync proves nothing; the file never counts as flushed again in this process
        this.syncFailure = new SyncFailedError(this.path, 0, 0, e);
        this.onSyncFailed?.(this.syncFailure);
        throw this.syncFailure;
      }
    }
    return committedEndTimestamp;
  }

  /** The first failed fdatasync of this file (sticky, fsyncgate), or null. */
  private syncFailure: SyncFailedError | null = null;
  /** Told once when this file's fdatasync fails (the store's SyncFailureReporter: puts refused, abort file kept). */
  onSyncFailed: ((e: SyncFailedError) => void) | undefined;

  /** RocketMQ's IndexFile.isTimeMatched. */
  isTimeMatched(beginMs: number, endMs: number): boolean {
    const fb = this.header.beginTimestamp;
    const fe = this.header.endTimestamp;
    return (beginMs < fb && endMs > fe) || (beginMs >= fb && beginMs <= fe) || (endMs >= fb && endMs <= fe);
  }

  /**
   * Appends to `out` the physical offsets of entries whose hash equals the key's and whose time
   * lies in [beginMs, endMs], newest first, until `out` holds maxNum offsets. Only hashes are
   * compared: callers must check the actual topic and key of each record.
   */
  selectPhyOffsets(out: number[], key: string, maxNum: number, beginMs: number, endMs: number): void {
    if (this.closed) return;
    const h = this.header;
    const keyHash = indexKeyHash(key);
    const slot = keyHash % this.hashSlotNum;
    let slotValue: number;
    if (this.slots) slotValue = this.slots[slot]!;
    else {
      const b = Buffer.alloc(4);
      this.fs.pread(this.fd, b, 0, 4, INDEX_HEADER_SIZE + slot * INDEX_SLOT_SIZE);
      slotValue = b.readInt32BE(0);
    }
    if (slotValue <= 0 || slotValue > h.indexCount || h.indexCount <= 1) return;
    const base = INDEX_HEADER_SIZE + this.hashSlotNum * INDEX_SLOT_SIZE;
    const e = Buffer.alloc(INDEX_ENTRY_SIZE);
    let next = slotValue;
    for (let steps = 0; steps < this.indexNum; steps++) {
      if (out.length >= maxNum) break;
      this.readEntry(e, next, base);
      const hashRead = e.readInt32BE(0);
      const phyRead = readLong(e, 4);
      const timeDiff = e.readInt32BE(12);
      const prev = e.readInt32BE(16);
      if (timeDiff < 0) break;
      const timeRead = h.beginTimestamp + timeDiff * 1000;
      if (hashRead === keyHash && timeRead >= beginMs && timeRead <= endMs) out.push(phyRead);
      if (prev <= 0 || prev > h.indexCount || prev === next || timeRead < beginMs) break;
      next = prev;
    }
  }

  private readEntry(into: Buffer, entry: number, base: number): void {
    if (entry >= this.pendingFirst && entry < this.pendingFirst + this.pendingCount) {
      const at = (entry - this.pendingFirst) * INDEX_ENTRY_SIZE;
      this.pendingEntries.copy(into, 0, at, at + INDEX_ENTRY_SIZE);
    } else {
      this.fs.pread(this.fd, into, 0, INDEX_ENTRY_SIZE, base + entry * INDEX_ENTRY_SIZE);
    }
  }

  /** Drops the in-memory slot table after the file is full and flushed. */
  makeReadOnly(): void {
    this.commit();
    this.slots = null;
  }

  close(): void {
    if (this.closed) return;
    this.commit();
    this.closed = true;
    this.fs.close(this.fd);
  }

  /** Closes the descriptor without writing pending entries, slots or header (crash simulation). */
  closeWithoutCommit(): void {
    if (this.closed) return;
    this.closed = true;
    this.fs.close(this.fd);
  }

  /** Closes and deletes the file. */
  destroy(): void {
    if (!this.closed) {
      this.closed = true;
      this.fs.close(this.fd);
    }
    this.fs.unlink(this.path);
  }
}
