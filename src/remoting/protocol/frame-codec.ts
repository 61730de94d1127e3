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
import { decodeJsonHeader, encodeJsonHeader } from './json-header.js';
import { decodeBinaryHeader, encodeBinaryHeader } from './binary-header.js';

export { FrameError } from './frame-error.js';

/** Apache's default `com.rocketmq.remoting.frameMaxLength`: 16 MiB, length field included. */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;
export const SERIALIZE_TYPE_JSON = 0;
export const SERIALIZE_TYPE_ROCKETMQ = 1;
const MAX_HEADER_BYTES = 0xffffff;

/** Whole frame (length prefix included). Throws FrameError when the header exceeds 24 bits. */
export function encodeFrame(cmd: RemotingCommand): Buffer {
  const type = cmd.serializeTypeCurrentRPC === 1 ? SERIALIZE_TYPE_ROCKETMQ : SERIALIZE_TYPE_JSON;
  const header = type === SERIALIZE_TYPE_JSON ? encodeJsonHeader(cmd) : encodeBinaryHeader(cmd);
  if (header.length > MAX_HEADER_BYTES) throw new FrameError(`header too large: ${header.length} bytes`);
  const bodyLength = cmd.body?.length ?? 0;
  const out = Buffer.allocUnsafe(8 + header.length + bodyLength);
  out.writeInt32BE(4 + header.length + bodyLength, 0);
  out.writeUInt32BE(((type << 24) | header.length) >>> 0, 4);
  header.copy(out, 8);
  if (cmd.body && bodyLength > 0) cmd.body.copy(out, 8 + header.length);
  return out;
}

/**
 * Decodes the bytes after the length field (header-length word, header, body).
 * The body is a view into `frame` (not copied). Throws FrameError.
 */
export function decodeFrameBody(frame: Buffer): RemotingCommand {
  if (frame.length < 4) throw new FrameError(`frame too short: ${frame.length} bytes`);
  const word = frame.readUInt32BE(0);
  const type = word >>> 24;
  const headerLength = word & MAX_HEADER_BYTES;
  if (headerLength > frame.length - 4) {
    throw new FrameError(`header length ${headerLength} exceeds frame (${frame.length - 4} bytes after the header-length word)`);
  }
  const header = frame.subarray(4, 4 + headerLength);
  let decoded: Omit<RemotingCommand, 'body'>;
  if (type === SERIALIZE_TYPE_JSON) decoded = decodeJsonHeader(header);
  else if (type === SERIALIZE_TYPE_ROCKETMQ) decoded = decodeBinaryHeader(header);
  else throw new FrameError(`unknown serialize type ${type}`);
  const body = frame.length > 4 + headerLength ? frame.subarray(4 + headerLength) : null;
  return { ...decoded, body };
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
 * On garbage push() throws FrameError and the decoder stays failed (every later push throws
 * the same error): the stream has lost sync and the connection must be closed.
 */
export class FrameDecoder {
  private readonly maxFrameBytes: number;
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** L of the frame being assembled, or -1 while its length field is not complete. */
  private frameLength = -1;
  private failure: FrameError | null = null;

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
        this.buffered = 0;
      }
      throw e;
    }
  }

  private drain(): void {
    for (;;) {
      if (this.frameLength < 0) {
        if (this.buffered < 4) return;
        const length = this.take(4).readInt32BE(0);
        if (length < 4) throw new FrameError(`invalid frame length ${length}`);
        if (length > this.maxFrameBytes - 4) {
          throw new FrameError(`frame of ${length + 4} bytes exceeds the limit of ${this.maxFrameBytes}`);
        }
        this.frameLength = length;
      }
      if (this.buffered < this.frameLength) return;
      const frame = this.take(this.frameLength);
      this.frameLength = -1;
      this.onCommand(decodeFrameBody(frame));
    }
  }

  /** Removes and returns the first n buffered bytes (n <= buffered). */
  private take(n: number): Buffer {
    const first = this.chunks[0]!;
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
    } else {
      out = Buffer.allocUnsafe(n);
      let filled = 0;
      while (filled < n) {
        const c = this.chunks[0]!;
        const used = Math.min(c.length, n - filled);
        c.copy(out, filled, 0, used);
        filled += used;
        if (used === c.length) this.chunks.shift();
        else this.chunks[0] = c.subarray(used);
      }
    }
    this.buffered -= n;
    return out;
  }
}
