/**
 * Frames gathered for one socket write: each added command is encoded straight into a shared
 * chunk (no buffer per frame), and `take()` hands back what was gathered, normally as one buffer.
 *
 * Chunks are used front to back across batches: the part a batch used is handed out as a view
 * and never written again, the rest of the chunk serves the next batch (the way Node's own Buffer
 * pool works). Each FrameBatch (one per connection) holds one chunk for as long as it lives, so
 * its size adapts: MIN_CHUNK_BYTES (4 KiB) to start, doubled up to MAX_CHUNK_BYTES (64 KiB) when
 * a chunk was used up within GROW_TAKES take()s (a connection writing many frames per turn),
 * halved again when one lasted SHRINK_TAKES take()s or more (a few small replies now and then).
 * An idle connection (a held long poll, a consumer between pulls) so keeps 4 KiB, not 64 KiB:
 * 2,000 such connections held 131 MB of chunks before (soak9), 8 MiB now. When a frame does not fit the rest of the chunk, the
 * batch so far moves to a fresh chunk, so a batch of small frames is always one buffer. A body
 * larger than LARGE_FRAME_BYTES (a pull reply's records) is not copied: the frame's length words
 * and header go into the chunk and the body buffer itself is the next piece, so it must not
 * change after add(). The bytes are exactly encodeFrame's, in the order the commands were added.
 */
import type { RemotingCommand } from './remoting-command.js';
import { encodeFrame, encodeFrameInto } from './frame-codec.js';

/** Chunk size bounds (bytes); see the file comment. */
export const MIN_CHUNK_BYTES = 4 * 1024;
export const MAX_CHUNK_BYTES = 64 * 1024;
/** A chunk used up within this many take()s doubles the next one's size. */
const GROW_TAKES = 2;
/** A chunk that lasted this many take()s or more halves the next one's size. */
const SHRINK_TAKES = 16;
const LARGE_FRAME_BYTES = 16 * 1024;

export class FrameBatch {
  private chunk: Buffer = Buffer.alloc(0);
  /** Start of this batch's bytes in `chunk`. */
  private start = 0;
  private pos = 0;
  /** Finished pieces of this batch, in order (chunk views and large frames). */
  private pieces: Buffer[] = [];
  private bytes = 0;
  private frames = 0;
  /** Size of the next fresh chunk (MIN_CHUNK_BYTES..MAX_CHUNK_BYTES). */
  private chunkBytes = MIN_CHUNK_BYTES;
  /** take() calls since the current chunk was allocated. */
  private takesOfChunk = 0;

  /** Frames added since the last take(). */
  get count(): number {
    return this.frames;
  }

  /** Bytes added since the last take(). */
  get byteLength(): number {
    return this.bytes;
  }

  /** Bytes of the chunk this batch holds (what an idle connection keeps allocated). */
  get chunkCapacity(): number {
    return this.chunk.length;
  }

  /**
   * Encodes `cmd` at the end of the batch. Throws what encodeFrame throws, in which case the
   * batch is unchanged.
   */
  add(cmd: RemotingCommand): void {
    const body = cmd.body;
    if (body && body.length > LARGE_FRAME_BYTES && this.addHeadThenBody(cmd, body)) return;
    let end = this.chunk.length - this.pos >= 8 ? encodeFrameInto(cmd, this.chunk, this.pos) : -1;
    if (end < 0 && this.pos === this.start) {
      // nothing of this batch to carry: encode straight into a fresh chunk
      const fresh = Buffer.allocUnsafe(this.nextChunkBytes());
      end = encodeFrameInto(cmd, fresh, 0);
      if (end >= 0) {
        this.chunk = fresh;
        this.start = 0;
        this.pos = 0;
      }
    }
    if (end < 0) {
      const frame = encodeFrame(cmd);
      if (frame.length > LARGE_FRAME_BYTES) {
        this.cut();
        this.pieces.push(frame);
        this.bytes += frame.length;
        this.frames++;
        return;
      }
      // does not fit the rest of this chunk: continue in a fresh one, moving this batch's bytes
      // along (at most a few KiB) so the batch stays one buffer
      const carried = this.pos - this.start;
      const fresh = Buffer.allocUnsafe(Math.max(this.nextChunkBytes(), 2 * (carried + frame.length)));
      this.chunk.copy(fresh, 0, this.start, this.pos);
      this.chunk = fresh;
      this.start = 0;
      this.pos = carried;
      end = carried + frame.copy(fresh, carried);
    }
    this.bytes += end - this.pos;
    this.pos = end;
    this.frames++;
  }

  /** Header into the chunk (a fresh one when it does not fit), then `body` as a piece; false when the header does not fit a fresh chunk either. */
  private addHeadThenBody(cmd: RemotingCommand, body: Buffer): boolean {
    let end = this.chunk.length - this.pos >= 8 ? encodeFrameInto(cmd, this.chunk, this.pos, false) : -1;
    if (end < 0) {
      this.cut();
      this.chunk = Buffer.allocUnsafe(this.nextChunkBytes());
      this.start = 0;
      this.pos = 0;
      end = encodeFrameInto(cmd, this.chunk, 0, false);
      if (end < 0) return false; // a header of more than CHUNK_BYTES: encoded whole by add()
    }
    this.bytes += end - this.pos + body.length;
    this.pos = end;
    this.cut();
    this.pieces.push(body);
    this.frames++;
    return true;
  }

  /** Size for a fresh chunk, adapted to how fast the one it replaces was used up (file comment). */
  private nextChunkBytes(): number {
    if (this.chunk.length > 0) {
      if (this.takesOfChunk <= GROW_TAKES) this.chunkBytes = Math.min(MAX_CHUNK_BYTES, this.chunkBytes * 2);
      else if (this.takesOfChunk >= SHRINK_TAKES) this.chunkBytes = Math.max(MIN_CHUNK_BYTES, this.chunkBytes / 2);
    }
    this.takesOfChunk = 0;
    return this.chunkBytes;
  }

  /** Everything added since the last take(), in order (usually one buffer); the batch is then empty. */
  take(): Buffer[] {
    this.takesOfChunk++;
    this.cut();
    const out = this.pieces;
    this.pieces = [];
    this.bytes = 0;
    this.frames = 0;
    return out;
  }

  /** Drops everything added since the last take(). */
  clear(): void {
    this.take();
  }

  /** Closes the current chunk view (if any bytes went into it) as a piece. */
  private cut(): void {
    if (this.pos > this.start) {
      this.pieces.push(this.chunk.subarray(this.start, this.pos));
      this.start = this.pos;
    }
  }
}
