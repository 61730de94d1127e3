/**
 * Wire format of classic master/slave replication (RocketMQ `DefaultHAService`, spec §9).
 * Plain TCP on the master's `haListenPort`, no handshake, all integers big-endian:
 *
 *   slave → master, offset report (8 bytes):
 *     | slaveMaxPhyOffset : int64 |
 *   The first report of a connection is where the master starts sending (0 = the slave is
 *   empty); every report is the slave's ack offset (bytes it holds).
 *
 *   master → slave, data frame (12-byte header + body):
 *     | masterPhyOffset : int64 | bodySize : int32 | body : bodySize bytes of raw CommitLog |
 *   A frame never spans two CommitLog segments and may cut a record anywhere. bodySize 0 is a
 *   heartbeat; its offset is where the master will continue.
 *
 * tsmq extension (still valid RocketMQ framing): when a slave's first report is beyond the
 * master's max offset, the master sends one heartbeat header carrying its max offset before it
 * closes the connection. A tsmq slave reads a heartbeat offset below its own max as "the master
 * ends here" and truncates to it (docs/ha.md, case B35).
 *
 * tsmq controller-mode extension, the confirm offset (docs/failover.md "What consumers see"):
 * a slave that can bound its dispatch sends the confirm hello (`encodeConfirmHello`, a hello of
 * the reserved replica id HA_CONFIRM_HELLO_ID) before its own hello; its master then sends
 *   master → slave, confirm frame (12 bytes, header only):
 *     | confirmOffset : int64 | bodySize : int32 = -1 |
 * before any other frame of the connection and whenever the value changes: the CommitLog
 * offset below which every sync-state-set member holds the data (Apache 5 sends it in every
 * AutoSwitch transfer header; tsmq keeps its 12-byte framing and sends it on change). A master
 * without the extension ignores the confirm hello (the real hello that follows overrides it)
 * and sends no confirm frame; the slave sees a data or heartbeat frame first and knows.
 */

/** Size of a slave offset report. */
export const HA_REPORT_BYTES = 8;
/** Size of a master frame header. */
export const HA_FRAME_HEADER_BYTES = 12;
/** Slave reconnect delay after a failed or closed connection (RocketMQ: 5 s). */
export const HA_RECONNECT_INTERVAL_MS = 5000;
/** Longest the master's transfer loop sleeps when there is nothing to send (RocketMQ: 100 ms). */
export const HA_IDLE_WAIT_MS = 100;
/** Connect timeout of the slave (RocketMQ: 3 s). */
export const HA_CONNECT_TIMEOUT_MS = 3000;

/** A violation of the replication protocol; the connection is closed. */
export class HAProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HAProtocolError';
  }
}

/** The 8-byte offset report. */
export function encodeReport(offset: number): Buffer {
  assertOffset(offset);
  const b = Buffer.allocUnsafe(HA_REPORT_BYTES);
  b.writeBigInt64BE(BigInt(offset), 0);
  return b;
}

/** Writes a frame header at `at` of `buf`. */
export function writeFrameHeader(buf: Buffer, at: number, offset: number, bodySize: number): void {
  assertOffset(offset);
  if (!Number.isInteger(bodySize) || bodySize < 0 || bodySize > 0x7fffffff) throw new RangeError(`bad HA frame body size ${bodySize}`);
  buf.writeBigInt64BE(BigInt(offset), at);
  buf.writeInt32BE(bodySize, at + 8);
}

/** A heartbeat (or truncation hint) frame: header only. */
export function encodeHeartbeat(offset: number): Buffer {
  const b = Buffer.allocUnsafe(HA_FRAME_HEADER_BYTES);
  writeFrameHeader(b, 0, offset, 0);
  return b;
}

/** Reads an int64 as a JS number; values outside the safe range come back as NaN (callers reject them). */
export function readOffset(buf: Buffer, at: number): number {
  const v = buf.readBigInt64BE(at);
  return v >= 0n && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : Number.NaN;
}

/**
 * tsmq controller mode (docs/failover.md): a replica's first 8 bytes on the HA connection may be a
 * hello naming its replica id, so the master can tell which sync-state-set member acked what.
 * Encoded as the int64 `HA_HELLO_BASE - replicaId` (a large negative value no offset report can
 * take); a classic master would reject it as out of range, which is why only controller-mode
 * replicas send it.
 */
export const HA_HELLO_BASE = -0x7473_6d71_0000n;

/** The hello report of replica `replicaId` (integer 0..65535). */
export function encodeHello(replicaId: number): Buffer {
  if (!Number.isInteger(replicaId) || replicaId < 0 || replicaId > 0xffff) throw new RangeError(`bad replica id ${replicaId}`);
  const b = Buffer.allocUnsafe(HA_REPORT_BYTES);
  b.writeBigInt64BE(HA_HELLO_BASE - BigInt(replicaId), 0);
  return b;
}

/** Replica id reserved for the confirm hello (controllerReplicaId takes 0..65534). */
export const HA_CONFIRM_HELLO_ID = 0xffff;

/** The confirm hello: "this slave reads confirm frames" (a hello of HA_CONFIRM_HELLO_ID). */
export function encodeConfirmHello(): Buffer {
  return encodeHello(HA_CONFIRM_HELLO_ID);
}

/** bodySize of a confirm frame. */
export const HA_CONFIRM_FRAME_SIZE = -1;

/** A confirm frame carrying `confirmOffset` (CommitLog bytes). */
export function encodeConfirmFrame(confirmOffset: number): Buffer {
  assertOffset(confirmOffset);
  const b = Buffer.allocUnsafe(HA_FRAME_HEADER_BYTES);
  b.writeBigInt64BE(BigInt(confirmOffset), 0);
  b.writeInt32BE(HA_CONFIRM_FRAME_SIZE, 8);
  return b;
}

function assertOffset(offset: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`bad HA offset ${offset}`);
}

/**
 * Incremental reader of the master's report stream: keeps the byte alignment across chunks and
 * returns, per chunk, the LAST complete 8-byte value (RocketMQ reads only the newest report of
 * what arrived), or null when no report completed.
 */
export class ReportReader {
  private readonly partial = Buffer.alloc(HA_REPORT_BYTES);
  private partialLen = 0;
  /** Replica id of a controller-mode hello seen in the stream (see `encodeHello`), or null. */
  helloReplicaId: number | null = null;
  /** True once the confirm hello arrived (the slave reads confirm frames). */
  confirmCapable = false;

  private isHello(buf: Buffer, at: number): boolean {
    const v = buf.readBigInt64BE(at);
    if (v > HA_HELLO_BASE || v < HA_HELLO_BASE - 0xffffn) return false;
    const id = Number(HA_HELLO_BASE - v);
    if (id === HA_CONFIRM_HELLO_ID) this.confirmCapable = true;
    else this.helloReplicaId = id;
    return true;
  }

  push(chunk: Buffer): number | null {
    let last: number | null = null;
    let i = 0;
    if (this.partialLen > 0) {
      const take = Math.min(HA_REPORT_BYTES - this.partialLen, chunk.length);
      chunk.copy(this.partial, this.partialLen, 0, take);
      this.partialLen += take;
      i = take;
      if (this.partialLen < HA_REPORT_BYTES) return null;
      last = readOffset(this.partial, 0);
      this.partialLen = 0;
    }
    if (last !== null && this.isHello(this.partial, 0)) last = null;
    const whole = Math.floor((chunk.length - i) / HA_REPORT_BYTES);
    for (let k = 0; k < whole; k++, i += HA_REPORT_BYTES) {
      if (!this.isHello(chunk, i)) last = readOffset(chunk, i);
    }
    if (i < chunk.length) {
      chunk.copy(this.partial, 0, i);
      this.partialLen = chunk.length - i;
    }
    return last;
  }
}

/** What the slave-side frame reader hands out. */
export type FrameEvent =
  | { kind: 'header'; offset: number; bodySize: number }
  /** A confirm frame (controller mode): the master's confirm offset. */
  | { kind: 'confirm'; confirmOffset: number }
  /** A piece of the current frame's body: `chunk[start, start+length)` goes to CommitLog `offset`. */
  | { kind: 'body'; offset: number; chunk: Buffer; start: number; length: number; frameDone: boolean };

/**
 * Incremental reader of the master's frame stream. Bodies are not reassembled: each piece is
 * handed out as soon as it arrives (a slice of the received chunk), so the slave can append it
 * without copying. A header split across chunks is reassembled.
 */
export class FrameReader {
  private readonly header = Buffer.alloc(HA_FRAME_HEADER_BYTES);
  private headerLen = 0;
  private bodyLeft = 0;
  private bodyOffset = 0;

  constructor(private readonly maxBodySize: number) {}

  /** True when the reader is between frames (no partial header or body pending). */
  get idle(): boolean {
    return this.headerLen === 0 && this.bodyLeft === 0;
  }

  /** Splits one received chunk into events. @throws HAProtocolError for an impossible header. */
  *push(chunk: Buffer): Generator<FrameEvent> {
    let i = 0;
    while (i < chunk.length) {
      if (this.bodyLeft > 0) {
        const n = Math.min(this.bodyLeft, chunk.length - i);
        this.bodyLeft -= n;
        const offset = this.bodyOffset;
        this.bodyOffset += n;
        yield { kind: 'body', offset, chunk, start: i, length: n, frameDone: this.bodyLeft === 0 };
        i += n;
        continue;
      }
      const take = Math.min(HA_FRAME_HEADER_BYTES - this.headerLen, chunk.length - i);
      chunk.copy(this.header, this.headerLen, i, i + take);
      this.headerLen += take;
      i += take;
      if (this.headerLen < HA_FRAME_HEADER_BYTES) break;
      this.headerLen = 0;
      const offset = readOffset(this.header, 0);
      const bodySize = this.header.readInt32BE(8);
      if (Number.isNaN(offset)) throw new HAProtocolError('frame offset is negative or beyond 2^53');
      if (bodySize === HA_CONFIRM_FRAME_SIZE) {
        yield { kind: 'confirm', confirmOffset: offset };
        continue;
      }
      if (bodySize < 0 || bodySize > this.maxBodySize) throw new HAProtocolError(`frame body size ${bodySize} outside 0..${this.maxBodySize}`);
      this.bodyLeft = bodySize;
      this.bodyOffset = offset;
      yield { kind: 'header', offset, bodySize };
    }
  }
}
