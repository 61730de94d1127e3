/**
 * Frames gathered for one socket write: each added command is encoded straight into a shared
 * chunk (no buffer per frame), and `take()` hands back what was gathered, normally as one buffer.
 *
 * Chunks are CHUNK_BYTES long and used front to back across batches: the part a batch used is
 * handed out as a view and never written again, the rest of the chunk serves the next batch
 * (the way Node's own Buffer pool works). When a frame does not fit the rest of the chunk, the
 * batch so far moves to a fresh chunk, so a batch of small frames is always one buffer. A body
 * larger than LARGE_FRAME_BYTES (a pull reply's records) is not copied: the frame's length words
 * and header go into the chunk and the body buffer itself is the next piece, so it must not
 * change after add(). The bytes are exactly encodeFrame's, in the order the commands were added.
 */
import type { RemotingCommand } from './remoting-command.js';
import { encodeFrame, encodeFrameInto } from './frame-codec.js';

const CHUNK_BYTES = 64 * 1024;
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

  /** Frames added since the last take(). */
  get count(): number {
    return this.frames;
  }

  /** Bytes added since the last take(). */
  get byteLength(): number {
    return this.bytes;
  }

  /**
   * Encodes `cmd` at the end of the batch. Throws what encodeFrame throws, in which case the
   * batch is unchanged.
   */
  add(cmd: RemotingCommand): void {
    const body = cmd.body;
    if (body && body.length > LARGE_FRAME_BYTES && this.addHeadThenBody(cmd, body)) return;
    let end = this.chunk.length - this.pos >= 8 ? encodeFrameInto(cmd, this.chunk, this.pos) : -1;
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
      const fresh = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, 2 * (carried + frame.length)));
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
      this.chunk = Buffer.allocUnsafe(CHUNK_BYTES);
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

  /** Everything added since the last take(), in order (usually one buffer); the batch is then empty. */
  take(): Buffer[] {
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
