/**
 * Remoting frame codec (client-protocols.md A1 and C).
 *
 *   int32 BE  L = bytes after this field (4 + H + body length)
 *   int32 BE  (serializeType << 24) | H     serializeType 0 = JSON, 1 = ROCKETMQ binary
 *   H bytes   header
 *   rest      body (may be empty)
 *
 * Apache's decoder is a LengthFieldBasedFrameDecoder with a 16 MiB limit on the whole frame
 * (length field included); FrameDecoder applies the same limit (configurable). ali-ons does
 * not mask the serialize-type byte when parsing, so replies to it must use type 0; a
 * response is always encoded in its request's type (see createResponseCommand).
 */
import type { RemotingCommand } from './remoting-command.js';
import { FrameError } from './frame-error.js';
import { decodeJsonCommand, jsonHeaderText, writeJsonHeader } from './json-header.js';
import { decodeBinaryCommand, planBinaryHeader, writeBinaryHeader } from './binary-header.js';

export { FrameError } from './frame-error.js';

/** Apache's default `com.rocketmq.remoting.frameMaxLength`: 16 MiB, length field included. */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;
export const SERIALIZE_TYPE_JSON = 0;
export const SERIALIZE_TYPE_ROCKETMQ = 1;
const MAX_HEADER_BYTES = 0xffffff;

/** Whole frame (length prefix included). Throws FrameError when the header exceeds 24 bits. */
export function encodeFrame(cmd: RemotingCommand): Buffer {
  const bodyLength = cmd.body?.length ?? 0;
  if (cmd.serializeTypeCurrentRPC === 1) {
    const plan = planBinaryHeader(cmd);
    const out = Buffer.allocUnsafe(8 + checkedHeaderLength(plan.size) + bodyLength);
    writeBinaryHeader(cmd, plan, out, 8);
    return finishFrame(out, 0, SERIALIZE_TYPE_ROCKETMQ, plan.size, cmd.body);
  }
  const headerLength = prepareJsonHeader(cmd);
  const out = Buffer.allocUnsafe(8 + headerLength + bodyLength);
  jsonHeaderSource.copy(out, 8, 0, headerLength);
  return finishFrame(out, 0, SERIALIZE_TYPE_JSON, headerLength, cmd.body);
}

/**
 * Appends the frame of `cmd` to `out` at `pos` when it fits in `out.length - pos` bytes and
 * returns the end offset; returns -1 when it does not fit (then bytes of `out` from `pos` on may
 * have been overwritten, never those before `pos` nor past its end: only free room may be passed). Same bytes as
 * encodeFrame. With `withBody` false only the length words and the header are written (the
 * length still counts the body; the caller sends `cmd.body` right after, e.g. as its own write
 * piece) and the returned end is the header's. Throws like encodeFrame.
 */
export function encodeFrameInto(cmd: RemotingCommand, out: Buffer, pos: number, withBody = true): number {
  const bodyLength = cmd.body?.length ?? 0;
  if (cmd.serializeTypeCurrentRPC === 1) {
    const plan = planBinaryHeader(cmd);
    const bodyHere = withBody ? bodyLength : 0;
    if (pos + 8 + checkedHeaderLength(plan.size) + bodyHere > out.length) return -1;
    writeBinaryHeader(cmd, plan, out, pos + 8);
    finishFrame(out, pos, SERIALIZE_TYPE_ROCKETMQ, plan.size, cmd.body, withBody);
    return pos + 8 + plan.size + bodyHere;
  }
  const bodyHere = withBody ? bodyLength : 0;
  // the header straight into `out` (writeJsonHeader never writes past its end); a header that
  // did not fit leaves `out` from pos + 8 on scribbled, which is room the caller did not use
  const headerEnd = writeJsonHeader(cmd, out, pos + 8);
  const headerLength = checkedHeaderLength(headerEnd - pos - 8);
  if (headerEnd + bodyHere > out.length) return -1;
  finishFrame(out, pos, SERIALIZE_TYPE_JSON, headerLength, cmd.body, withBody);
  return headerEnd + bodyHere;
}

/** Encoding space for JSON headers; a header that does not fit gets a buffer of its own. */
const scratch = Buffer.allocUnsafe(16 * 1024);
/** Where prepareJsonHeader left the header bytes (scratch, or an own buffer for a huge header). */
let jsonHeaderSource: Buffer = scratch;

/**
 * Encodes the JSON header of `cmd` to bytes 0..n of `jsonHeaderSource` and returns n. The bytes
 * stay valid only until the next call: copy them out at once.
 */
function prepareJsonHeader(cmd: RemotingCommand): number {
  const end = writeJsonHeader(cmd, scratch, 0);
  jsonHeaderSource = end <= scratch.length ? scratch : Buffer.from(jsonHeaderText(cmd), 'utf8');
  return checkedHeaderLength(jsonHeaderSource === scratch ? end : jsonHeaderSource.length);
}

function checkedHeaderLength(n: number): number {
  if (n > MAX_HEADER_BYTES) throw new FrameError(`header too large: ${n} bytes`);
  return n;
}

/** Writes the two length words at `pos` and (unless `withBody` is false) the body after the header; returns `out`. */
function finishFrame(out: Buffer, pos: number, type: number, headerLength: number, body: Buffer | null, withBody = true): Buffer {
  const bodyLength = body?.length ?? 0;
  out.writeInt32BE(4 + headerLength + bodyLength, pos);
  out.writeUInt32BE(((type << 24) | headerLength) >>> 0, pos + 4);
  if (withBody && body && bodyLength > 0) body.copy(out, pos + 8 + headerLength);
  return out;
}

/**
 * Decodes the bytes after the length field (header-length word, header, body).
 * The body is a view into `frame` (not copied). Throws FrameError.
 */
export function decodeFrameBody(frame: Buffer): RemotingCommand {
  return decodeFrameAt(frame, 0, frame.length);
}

/** decodeFrameBody of frame[start, end), without slicing anything but the body. */
export function decodeFrameAt(frame: Buffer, start: number, end: number): RemotingCommand {
  const length = end - start;
  if (length < 4) throw new FrameError(`frame too short: ${length} bytes`);
  const word = frame.readUInt32BE(start);
  const type = word >>> 24;
  const headerLength = word & MAX_HEADER_BYTES;
  if (headerLength > length - 4) {
    throw new FrameError(`header length ${headerLength} exceeds frame (${length - 4} bytes after the header-length word)`);
  }
  const headerStart = start + 4;
  const headerEnd = headerStart + headerLength;
  const body = end > headerEnd ? frame.subarray(headerEnd, end) : null;
  if (type === SERIALIZE_TYPE_JSON) return decodeJsonCommand(frame, body, headerStart, headerEnd);
  if (type === SERIALIZE_TYPE_ROCKETMQ) return decodeBinaryCommand(frame, body, headerStart, headerEnd);
  throw new FrameError(`unknown serialize type ${type}`);
}

export interface FrameDecoderOptions {
  /** Largest accepted frame including its 4-byte length field. Default 16 MiB. */
  maxFrameBytes?: number;
}

/**
 * Streaming decoder: feed arbitrary chunks with push(); every complete frame is decoded and
 * handed to `onCommand` in order. Buffered chunks are joined only once per frame, so a large
 * body arriving in many chunks costs O(size).
 *
 * Memory: nothing is allocated for a frame's declared length; an unfinished frame is just the
 * chunks received so far, so a peer holds at most what it has actually sent, and never more than
 * maxFrameBytes per connection (a larger declared length fails at once).
 *
 * On garbage push() throws FrameError and the decoder stays failed (every later push throws
 * the same error): the stream has lost sync and the connection must be closed.
 */
export class FrameDecoder {
  private readonly maxFrameBytes: number;
  private chunks: Buffer[] = [];
  /** Bytes of chunks[0] already consumed. */
  private head = 0;
  /** Bytes received and not consumed (over all chunks, minus `head`). */
  private buffered = 0;
  /** L of the frame being assembled, or -1 while its length field is not complete. */
  private frameLength = -1;
  private failure: FrameError | null = null;
  private decoded = 0;

  constructor(
    private readonly onCommand: (cmd: RemotingCommand) => void,
    opts: FrameDecoderOptions = {},
  ) {
    this.maxFrameBytes = opts.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    if (!(this.maxFrameBytes >= 8)) throw new RangeError(`maxFrameBytes must be >= 8: ${this.maxFrameBytes}`);
  }

  /** Bytes received but not yet part of a decoded frame. */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /**
   * True while a frame has begun and is not complete: bytes are buffered, or its length field has
   * been read and none of the rest has arrived yet (bufferedBytes is then 0).
   */
  get frameInProgress(): boolean {
    return this.buffered > 0 || this.frameLength >= 0;
  }

  /** Frames decoded so far (a change tells a caller that a new frame may have begun). */
  get framesDecoded(): number {
    return this.decoded;
  }

  /**
   * Drops every buffered byte (the connection is closing): the partial frame's chunks become
   * garbage at once even if something still holds the decoder. Later pushes throw FrameError.
   */
  release(): void {
    this.chunks = [];
    this.head = 0;
    this.buffered = 0;
    this.frameLength = -1;
    this.failure ??= new FrameError('decoder released');
  }

  push(chunk: Buffer): void {
    if (this.failure) throw this.failure;
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    try {
      this.drain();
    } catch (e) {
      if (e instanceof FrameError) {
        this.failure = e;
        this.chunks = [];
        this.head = 0;
        this.buffered = 0;
      }
      throw e;
    }
  }

  /**
   * Decodes every complete frame. A frame (or length field) lying inside the first chunk is read
   * in place; only one spread over several chunks is copied together first.
   */
  private drain(): void {
    for (;;) {
      if (this.frameLength < 0) {
        if (this.buffered < 4) return;
        const first = this.chunks[0]!;
        let length: number;
        if (first.length - this.head >= 4) {
          length = first.readInt32BE(this.head);
          this.skip(first, 4);
        } else {
          length = this.take(4).readInt32BE(0);
        }
        if (length < 4) throw new FrameError(`invalid frame length ${length}`);
        if (length > this.maxFrameBytes - 4) {
          throw new FrameError(`frame of ${length + 4} bytes exceeds the limit of ${this.maxFrameBytes}`);
        }
        this.frameLength = length;
      }
      const n = this.frameLength;
      if (this.buffered < n) return;
      this.frameLength = -1;
      this.decoded++;
      const first = this.chunks[0]!;
      if (first.length - this.head >= n) {
        const start = this.head;
        this.skip(first, n);
        this.onCommand(decodeFrameAt(first, start, start + n));
      } else {
        this.onCommand(decodeFrameAt(this.take(n), 0, n));
      }
    }
  }

  /** Consumes n bytes of `first` (= chunks[0]); n <= its unconsumed length. */
  private skip(first: Buffer, n: number): void {
    this.head += n;
    this.buffered -= n;
    if (this.head === first.length) {
      this.chunks.shift();
      this.head = 0;
    }
  }

  /** Removes and returns a copy of the first n unconsumed bytes (n <= buffered), spread over chunks. */
  private take(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const c = this.chunks[0]!;
      const used = Math.min(c.length - this.head, n - filled);
      c.copy(out, filled, this.head, this.head + used);
      filled += used;
      this.skip(c, used);
    }
    return out;
  }
}
