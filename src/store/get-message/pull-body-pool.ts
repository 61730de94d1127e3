/**
 * Body buffers of pulls (GetMessageResult.body), recycled once their reply was written.
 *
 * Why: every pull used to allocate a fresh body (~38 KB for 32 × 1 KiB records), which is
 * external memory: a steady stream of them drives V8's garbage collector (6–20 % of the broker's
 * busy time when serving consumers, bench/results/consume-2026-12-01.md). A pull whose reply has
 * been handed to the kernel no longer needs its body, so the next pull can fill the same memory.
 *
 * - `acquire(minBytes)` hands out a buffer of at least `minBytes`: a pooled one of the size class
 *   (powers of two from MIN_CLASS_BYTES to MAX_CLASS_BYTES), or a new one of that class; larger
 *   requests get a plain new buffer that is never pooled. Each pooled buffer owns its
 *   ArrayBuffer (byteOffset 0), so a view of it (the body is `buf.subarray(0, used)`) finds it.
 * - `release(view)` takes back a buffer this pool handed out and has not got back yet (a lent
 *   set of ArrayBuffers, weakly held: a body nobody releases is collected as before); anything
 *   else (a foreign buffer, a second release) is ignored, so a buffer is never lent twice.
 *   The caller promises that nothing reads the buffer or any view of it any more — for a
 *   pull reply, after the socket's write callback (the kernel has the bytes), never before.
 * - At most `maxFreeBytes` are kept; more released buffers are dropped to the collector.
 *
 * Apache RocketMQ has no such pool: it sends mapped-file regions (its pull replies reference the
 * page cache and are released after the transfer), which this mirrors in spirit.
 */

/** Smallest pooled size class (a 32 × 1 KiB pull fits). */
export const PULL_BODY_MIN_CLASS_BYTES = 64 * 1024;
/** Largest pooled size class; larger bodies are not pooled. */
export const PULL_BODY_MAX_CLASS_BYTES = 1024 * 1024;
/** Default bound on the bytes of free buffers kept. */
export const PULL_BODY_POOL_MAX_FREE_BYTES = 8 * 1024 * 1024;

export class PullBodyPool {
  /** Free buffers per size class, index = log2(class / MIN_CLASS_BYTES). */
  private readonly free: Buffer[][] = [];
  /** Lent buffers → the id of their current lending (weakly held). */
  private readonly lent = new WeakMap<ArrayBuffer, number>();
  private lendSeq = 0;
  /** Views tied to one lending (tieView), weakly held. */
  private readonly viewLends = new WeakMap<Buffer, number>();
  private freeBytes = 0;
  /** Counters for tests and diagnostics. */
  reused = 0;
  allocated = 0;
  released = 0;

  constructor(private readonly maxFreeBytes = PULL_BODY_POOL_MAX_FREE_BYTES) {
    for (let c = PULL_BODY_MIN_CLASS_BYTES; c <= PULL_BODY_MAX_CLASS_BYTES; c *= 2) this.free.push([]);
  }

  /** A buffer of at least `minBytes` (contents undefined), pooled when it fits a size class. */
  acquire(minBytes: number): Buffer {
    if (minBytes > PULL_BODY_MAX_CLASS_BYTES) return Buffer.allocUnsafe(minBytes);
    let cls = 0;
    let bytes = PULL_BODY_MIN_CLASS_BYTES;
    while (bytes < minBytes) {
      bytes *= 2;
      cls++;
    }
    const list = this.free[cls]!;
    let buf = list.pop();
    if (buf !== undefined) {
      this.freeBytes -= bytes;
      this.reused++;
    } else {
      buf = Buffer.allocUnsafeSlow(bytes);
      this.allocated++;
    }
    this.lent.set(buf.buffer as ArrayBuffer, ++this.lendSeq);
    return buf;
  }

  /**
   * Ties `view` (a body handed to a caller, e.g. GetMessageResult.body) to the current lending of
   * its buffer and returns that lending's id: a later release(view) without a lend id then hands
   * back only that lending, never a later lending of the same memory (a stale second release).
   */
  tieView(view: Buffer): number {
    const id = this.lendIdOf(view);
    if (id !== 0) this.viewLends.set(view, id);
    return id;
  }

  /**
   * The id of the current lending of the buffer `view` belongs to (0 when not lent by this
   * pool): a holder that passes it to release() cannot hand back a later lending of the same
   * memory by mistake.
   */
  lendIdOf(view: Buffer): number {
    return this.lent.get(view.buffer as ArrayBuffer) ?? 0;
  }

  /**
   * Takes back the buffer `view` belongs to, when this pool lent it and has not got it back
   * (and, with `lendId`, only when that is still the current lending); true when taken. Nothing
   * may read `view` (or any view of its buffer) afterwards.
   */
  release(view: Buffer, lendId?: number): boolean {
    const ab = view.buffer as ArrayBuffer;
    const id = this.lent.get(ab);
    const want = lendId ?? this.viewLends.get(view);
    if (id === undefined || (want !== undefined && want !== id)) return false;
    this.lent.delete(ab);
    this.released++;
    const bytes = ab.byteLength;
    if (this.freeBytes + bytes > this.maxFreeBytes) return true;
    let cls = 0;
    for (let c = PULL_BODY_MIN_CLASS_BYTES; c < bytes; c *= 2) cls++;
    this.free[cls]!.push(Buffer.from(ab, 0, bytes));
    this.freeBytes += bytes;
    return true;
  }

  /** Bytes of free buffers held now. */
  get freeByteCount(): number {
    return this.freeBytes;
  }
}
