/**
 * A small cache of CommitLog chunks for the pull path (CommitLog.readInto): records are copied
 * out of recently read chunks instead of being read with one positional read each.
 *
 * Why: consumers that keep up with many queues read the same region of the CommitLog one queue
 * after the other (a pull of 32 records of one queue among 16 spans ~600 KiB), so a chunk read
 * whole once serves the records of every queue in it; one 1 KiB pread costs about as much as one
 * of 16 KiB (syscall and page-cache lookup dominate, bench/results/pull-serving-2026-12-01.md).
 *
 * - Chunks are `chunkBytes`-aligned ranges of one segment (the last chunk of a segment may be
 *   shorter); a read crossing chunks is served from both. Reads longer than `maxCachedReadBytes`
 *   (8 KiB) go to the segment: a run of adjacent records (a batch, a single-queue topic) is read
 *   straight into the pull's body in one pread, which costs less than a chunk copy on top of the
 *   chunk's own read (measured: 0.50–0.67 µs per pulled message direct vs 0.59–0.93 through
 *   chunks); the cache pays where one syscall per record would be needed.
 * - Admission: a chunk is read whole only on its second miss among the last `ghostEntries`
 *   missed chunks, so scattered single reads (a lagging consumer of a sparse queue, lookups)
 *   cost what they did: the requested bytes only. `chunkAt` (the pull path's interleaved
 *   records: several records of a pull in one chunk, the other queues' pulls in the same region)
 *   reads a missing chunk at once.
 * - Only bytes below the segment's write position are cached (they never change except through
 *   truncation). Validity: an entry belongs to one MappedFile object (a segment deleted and
 *   created again is another object) and to its content epoch, which recovery and truncation
 *   (MappedFile.setPositions, truncateTo — crash recovery, HA truncation) move on; a segment that
 *   is shut down is not served.
 * - At most `capacityChunks` chunks (least recently used replaced); memory is taken on first use.
 */
import type { MappedFile } from '../mapped-file/mapped-file.js';

/** Default chunk size and count: 64 × 256 KiB = 16 MiB. */
export const READ_CACHE_CHUNK_BYTES = 256 * 1024;
export const READ_CACHE_CHUNKS = 64;
/** Longer reads bypass the cache (see the file comment). */
export const READ_CACHE_MAX_READ_BYTES = 8 * 1024;
/** Missed chunks remembered for admission (a chunk is cached on its second miss among these). */
export const READ_CACHE_GHOST_ENTRIES = 1024;

interface Chunk {
  /** CommitLog offset of the chunk's first byte (the cache key). */
  offset: number;
  mf: MappedFile;
  epoch: number;
  /** Valid bytes in `buf`. */
  length: number;
  buf: Buffer;
  lastUsed: number;
}

export interface CommitLogReadCacheOptions {
  chunkBytes?: number;
  /** Reads longer than this go to the segment (capped at half a chunk). */
  maxCachedReadBytes?: number;
  capacityChunks?: number;
  ghostEntries?: number;
}

export class CommitLogReadCache {
  readonly chunkBytes: number;
  private readonly maxReadBytes: number;
  private readonly capacity: number;
  private readonly ghostEntries: number;
  private readonly chunks = new Map<number, Chunk>();
  /** Chunk offsets that missed once recently (insertion order = age). */
  private readonly ghosts = new Set<number>();
  private tick = 0;
  /** Counters for tests and diagnostics. */
  hits = 0;
  fills = 0;
  bypasses = 0;

  constructor(opts: CommitLogReadCacheOptions = {}) {
    this.chunkBytes = opts.chunkBytes ?? READ_CACHE_CHUNK_BYTES;
    this.capacity = opts.capacityChunks ?? READ_CACHE_CHUNKS;
    this.ghostEntries = opts.ghostEntries ?? READ_CACHE_GHOST_ENTRIES;
    this.maxReadBytes = Math.min(opts.maxCachedReadBytes ?? READ_CACHE_MAX_READ_BYTES, this.chunkBytes >> 1);
    // two chunks: a read crossing a chunk boundary holds one while the other is filled
    if (!(this.chunkBytes >= 4096) || !(this.capacity >= 2)) throw new RangeError(`read cache needs chunkBytes >= 4096 and capacityChunks >= 2`);
  }

  /**
   * Copies segment `mf`'s bytes [position, position + len) into `dst` at `dstOffset`, from cached
   * chunks when it can, else from the file. Same result as `mf.readInto`: false when the range
   * is not readable (beyond the write position, segment closed).
   */
  readInto(mf: MappedFile, position: number, dst: Buffer, dstOffset: number, len: number): boolean {
    const c = this.chunkBytes;
    if (len <= 0 || len > this.maxReadBytes || position < 0 || position + len > mf.getWrotePosition()) return mf.readInto(position, dst, dstOffset, len);
    const first = Math.floor(position / c);
    const last = Math.floor((position + len - 1) / c);
    const a = this.chunk(mf, first);
    const b = last === first ? a : a && this.chunk(mf, last);
    if (!a || !b) {
      this.bypasses++;
      return mf.readInto(position, dst, dstOffset, len);
    }
    this.hits++;
    const inA = a === b ? len : a.length - (position - first * c);
    a.buf.copy(dst, dstOffset, position - first * c, position - first * c + inA);
    if (inA < len) b.buf.copy(dst, dstOffset + inA, 0, len - inA);
    return true;
  }

  /**
   * The cached chunk holding segment `mf`'s byte `position`, for a caller that copies several
   * records out of it itself (the pull path's interleaved records: one lookup for the records of
   * a chunk instead of one each). A missing chunk is read whole at once (no second-miss
   * admission: the caller has several records in it, and the other queues' pulls read the same
   * region); null when the chunk is not all written yet or not readable: read the file yourself.
   * `buf[0, length)` holds segment bytes
   * [start, start + length); valid until the next call into this cache (the chunk may then be
   * reused), so callers copy out before anything else reads.
   */
  chunkAt(mf: MappedFile, position: number): { buf: Buffer; start: number; length: number } | null {
    if (position < 0 || position >= mf.getWrotePosition()) return null;
    const index = Math.floor(position / this.chunkBytes);
    const ch = this.chunk(mf, index, true);
    if (ch === null) {
      this.bypasses++;
      return null;
    }
    this.hits++;
    return { buf: ch.buf, start: index * this.chunkBytes, length: ch.length };
  }

  /** Drops every chunk (tests; a store that wants the memory back). */
  clear(): void {
    this.chunks.clear();
    this.ghosts.clear();
  }

  /** Chunks held now. */
  get size(): number {
    return this.chunks.size;
  }

  /** The valid cached chunk `index` of `mf`, reading it when admitted; null when the caller should read the file. */
  private chunk(mf: MappedFile, index: number, admitNow = false): Chunk | null {
    const c = this.chunkBytes;
    const key = mf.fileFromOffset + index * c;
    const cached = this.chunks.get(key);
    if (cached !== undefined) {
      if (cached.mf === mf && cached.epoch === mf.getContentEpoch() && mf.isAvailable()) {
        cached.lastUsed = ++this.tick;
        return cached;
      }
      this.chunks.delete(key);
    }
    const start = index * c;
    const length = Math.min(c, mf.fileSize - start);
    if (start + length > mf.getWrotePosition()) return null; // not all written yet: may still grow
    if (!admitNow && !this.ghosts.has(key)) {
      this.ghosts.add(key);
      if (this.ghosts.size > this.ghostEntries) this.ghosts.delete(this.ghosts.values().next().value!);
      return null;
    }
    this.ghosts.delete(key);
    const slot = this.takeSlot();
    if (!mf.readInto(start, slot.buf, 0, length)) return null;
    slot.offset = key;
    slot.mf = mf;
    slot.epoch = mf.getContentEpoch();
    slot.length = length;
    slot.lastUsed = ++this.tick;
    this.chunks.set(key, slot);
    this.fills++;
    return slot;
  }

  /** A chunk object to fill: a new one while below capacity, else the least recently used one (removed). */
  private takeSlot(): Chunk {
    if (this.chunks.size < this.capacity) {
      return { offset: -1, mf: null as unknown as MappedFile, epoch: -1, length: 0, buf: Buffer.allocUnsafe(this.chunkBytes), lastUsed: 0 };
    }
    let victim: Chunk | null = null;
    for (const ch of this.chunks.values()) if (victim === null || ch.lastUsed < victim.lastUsed) victim = ch;
    this.chunks.delete(victim!.offset);
    return victim!;
  }
}
