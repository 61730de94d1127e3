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
 *   Fewer are kept while the readers keep together (`activeChunks`, from minActiveChunks = 8 up,
 *   doubled whenever a chunk evicted recently is read again, halved after a quiet stretch), so the
 *   buffers refilled stay in the CPU's cache.
 * - Leases (zero-copy pulls, GetMessageService lend mode): `lease(chunk)` lends views of a
 *   chunk's bytes to a reader (a pull reply until its socket write is done). A leased chunk's
 *   buffer is never refilled: when it is evicted (or invalidated, or the cache cleared) it leaves
 *   the cache ("retired") and a fresh buffer takes its slot; the retired buffer is reused (free
 *   list, at most `capacityChunks / 4`) only once its last lease is released. A chunk's bytes are
 *   a copy in process memory, so a segment deleted by retention while views are lent frees no
 *   memory under a reader (as Apache's reference-counted mapped files guarantee for its views).
 */
import type { MappedFile } from '../mapped-file/mapped-file.js';

/** Default chunk size and count: 64 × 256 KiB = 16 MiB. */
export const READ_CACHE_CHUNK_BYTES = 256 * 1024;
export const READ_CACHE_CHUNKS = 64;
/**
 * Chunks the cache keeps while nothing it evicted is asked for again (8 × 256 KiB = 2 MiB): the
 * buffers it refills then stay in the CPU's cache (a 256 KiB pread into a buffer last written
 * 16 MiB of reads ago runs at about half the speed of one into a buffer written 2 MiB ago,
 * bench/results/store-pull-2026-12-02-pull9.md).
 */
export const READ_CACHE_MIN_ACTIVE_CHUNKS = 8;
/** Longer reads bypass the cache (see the file comment). */
export const READ_CACHE_MAX_READ_BYTES = 8 * 1024;
/** Missed chunks remembered for admission (a chunk is cached on its second miss among these). */
export const READ_CACHE_GHOST_ENTRIES = 1024;

/** A cached chunk as lent to the pull path: `buf[0, length)` holds segment bytes [start, start + length). */
export interface ReadCacheChunk {
  readonly buf: Buffer;
  /** Position of `buf[0]` in its segment. */
  readonly start: number;
  readonly length: number;
}

interface Chunk extends ReadCacheChunk {
  /** CommitLog offset of the chunk's first byte (the cache key). */
  offset: number;
  start: number;
  mf: MappedFile;
  epoch: number;
  /** Valid bytes in `buf`. */
  length: number;
  buf: Buffer;
  lastUsed: number;
  /** Views lent out (lease() minus unlease()); the buffer is not refilled while > 0. */
  leases: number;
  /** Out of the cache (evicted, invalidated or cleared) while leased: its buffer is freed on the last unlease. */
  retired: boolean;
}

export interface CommitLogReadCacheOptions {
  chunkBytes?: number;
  /** Reads longer than this go to the segment (capped at half a chunk). */
  maxCachedReadBytes?: number;
  capacityChunks?: number;
  /** Chunks kept while no evicted chunk is asked for again (see activeChunks); at most capacityChunks. */
  minActiveChunks?: number;
  ghostEntries?: number;
}

export class CommitLogReadCache {
  readonly chunkBytes: number;
  private readonly maxReadBytes: number;
  private readonly capacity: number;
  private readonly ghostEntries: number;
  private readonly minActive: number;
  /**
   * Chunks kept now, between minActiveChunks and capacityChunks: doubled when a chunk evicted
   * recently (among the last `capacity` evictions) is filled again — the readers' working set is
   * larger than what is kept — and halved after 4 × capacity fills without that. Readers that
   * keep together (consumers of one region) get a small set of buffers that stay in the CPU's
   * cache; readers spread over many regions get up to capacityChunks.
   */
  private active: number;
  /** Keys of recently evicted chunks (insertion order = age), at most `capacity`. */
  private readonly evicted = new Set<number>();
  /** Fills since the active count last grew (or shrank). */
  private fillsSinceResize = 0;
  private readonly chunks = new Map<number, Chunk>();
  /** Chunk offsets that missed once recently (insertion order = age). */
  private readonly ghosts = new Set<number>();
  private tick = 0;
  /** Buffers of retired chunks whose last lease was released, for the next fills. */
  private readonly freeBufs: Buffer[] = [];
  /** Counters for tests and diagnostics. */
  hits = 0;
  fills = 0;
  bypasses = 0;
  /** Chunks taken out of the cache while leased (their buffer was not reused). */
  retiredLeased = 0;
  /** Leases held now (all chunks). */
  leasesHeld = 0;
  /** Leases granted since creation. */
  leasesGranted = 0;

  constructor(opts: CommitLogReadCacheOptions = {}) {
    this.chunkBytes = opts.chunkBytes ?? READ_CACHE_CHUNK_BYTES;
    this.capacity = opts.capacityChunks ?? READ_CACHE_CHUNKS;
    this.minActive = Math.max(2, Math.min(this.capacity, opts.minActiveChunks ?? READ_CACHE_MIN_ACTIVE_CHUNKS));
    this.active = this.minActive;
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
   * region), or with `admitNow` false only on its second miss (a run of adjacent records lent
   * from the chunk: a consumer that comes back to the same chunk reads on in it, while scattered
   * lagging consumers do not read 256 KiB per pull); null when the chunk is not all written yet,
   * not admitted or not readable: read the file yourself.
   * `buf[0, length)` holds segment bytes
   * [start, start + length); valid until the next call into this cache (the chunk may then be
   * reused), so callers copy out before anything else reads.
   */
  chunkAt(mf: MappedFile, position: number, admitNow = true): ReadCacheChunk | null {
    if (position < 0 || position >= mf.getWrotePosition()) return null;
    const index = Math.floor(position / this.chunkBytes);
    const ch = this.chunk(mf, index, admitNow);
    if (ch === null) {
      this.bypasses++;
      return null;
    }
    this.hits++;
    return ch;
  }

  /**
   * Lends views of `chunk` (one returned by chunkAt of this cache): its
   * buffer is not refilled until a matching unlease. Each lease must be released exactly once.
   */
  lease(chunk: ReadCacheChunk): void {
    (chunk as Chunk).leases++;
    this.leasesHeld++;
    this.leasesGranted++;
  }

  /**
   * Ends one lease of `chunk`; the last one of a retired chunk frees its buffer for reuse. A
   * chunk without leases (a second release) or not of this cache is ignored.
   */
  unlease(chunk: ReadCacheChunk): void {
    const ch = chunk as Chunk;
    if (!(ch.leases > 0)) return;
    ch.leases--;
    this.leasesHeld--;
    if (ch.leases === 0 && ch.retired) {
      ch.retired = false;
      this.recycle(ch);
    }
  }

  /** Drops every chunk (tests; a store that wants the memory back); leased ones are retired. */
  clear(): void {
    for (const ch of this.chunks.values()) this.retire(ch);
    this.chunks.clear();
    this.ghosts.clear();
    this.evicted.clear();
    this.freeBufs.length = 0;
  }

  /** Chunks held now. */
  get size(): number {
    return this.chunks.size;
  }

  /** Chunks the cache keeps now (grows towards capacityChunks while evicted chunks are asked for again). */
  get activeChunks(): number {
    return this.active;
  }

  /** A fill of chunk `key`: grows the active count when it was evicted recently, shrinks it after a long quiet stretch. */
  private resizeOnFill(key: number): void {
    if (this.evicted.delete(key)) {
      if (this.active < this.capacity) {
        this.active = Math.min(this.capacity, this.active * 2);
        this.fillsSinceResize = 0;
      }
      return;
    }
    if (++this.fillsSinceResize >= 4 * this.capacity && this.active > this.minActive) {
      this.active = Math.max(this.minActive, this.active >> 1);
      this.fillsSinceResize = 0;
    }
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
      this.retire(cached);
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
    this.resizeOnFill(key);
    const slot = this.takeSlot();
    if (!mf.readInto(start, slot.buf, 0, length)) return null;
    slot.offset = key;
    slot.start = start;
    slot.mf = mf;
    slot.epoch = mf.getContentEpoch();
    slot.length = length;
    slot.lastUsed = ++this.tick;
    this.chunks.set(key, slot);
    this.fills++;
    return slot;
  }

  /**
   * A chunk object to fill: a new one while below the active count, else the least recently used one
   * without leases (removed); when every chunk is leased, the least recently used is retired and
   * a new chunk takes its place. A leased buffer is never handed out here.
   */
  private takeSlot(): Chunk {
    // after the active count shrank: the least recently used chunks beyond it leave first
    while (this.chunks.size > this.active) {
      const extra = this.evictOne();
      if (extra.leases === 0) this.recycle(extra);
    }
    if (this.chunks.size < this.active) return this.newChunk();
    const victim = this.evictOne();
    return victim.leases === 0 ? victim : this.newChunk();
  }

  /**
   * Takes the least recently used chunk without leases out of the cache (returned for refilling),
   * or, when every chunk is leased, retires the least recently used one (returned retired: its
   * buffer must not be used). Remembers the key among the recently evicted.
   */
  private evictOne(): Chunk {
    let victim: Chunk | null = null;
    let leased: Chunk | null = null;
    for (const ch of this.chunks.values()) {
      if (ch.leases > 0) {
        if (leased === null || ch.lastUsed < leased.lastUsed) leased = ch;
      } else if (victim === null || ch.lastUsed < victim.lastUsed) victim = ch;
    }
    const out = victim ?? leased!;
    this.chunks.delete(out.offset);
    this.evicted.add(out.offset);
    if (this.evicted.size > this.capacity) this.evicted.delete(this.evicted.values().next().value!);
    if (out.leases > 0) this.retire(out);
    return out;
  }

  private newChunk(): Chunk {
    const buf = this.freeBufs.pop() ?? Buffer.allocUnsafe(this.chunkBytes);
    return { offset: -1, start: 0, mf: null as unknown as MappedFile, epoch: -1, length: 0, buf, lastUsed: 0, leases: 0, retired: false };
  }

  /** A chunk leaving the cache: kept whole while leased (freed on the last unlease), else its buffer is recycled. */
  private retire(ch: Chunk): void {
    if (ch.leases > 0) {
      ch.retired = true;
      this.retiredLeased++;
    } else this.recycle(ch);
  }

  private recycle(ch: Chunk): void {
    if (this.freeBufs.length < Math.max(1, this.capacity >> 2) && ch.buf.length === this.chunkBytes) this.freeBufs.push(ch.buf);
  }
}
