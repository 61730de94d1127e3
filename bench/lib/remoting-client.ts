/**
 * A lean RocketMQ remoting client for load generation, written from the wire format (spec
 * client-protocols.md A1, A5, A7) and independent of src/remoting so the load generator costs
 * as little CPU as possible and judges the broker from outside:
 *
 *   frame = int32 L | int32 (serializeType << 24 | H) | H bytes JSON header | body,  L = 4 + H + body
 *
 * Requests are pipelined on one socket and matched to replies by `opaque`; writes issued in the
 * same tick are corked into one syscall.
 */
import { connect, type Socket } from 'node:net';

export interface Reply {
  code: number;
  remark?: string;
  extFields: Record<string, string | number>;
  body: Buffer;
}

interface Pending {
  resolve(r: Reply): void;
  reject(e: Error): void;
}

let opaqueSeq = 1;

/** The JSON header of a remoting reply frame, as the bench clients read it. */
export interface ReplyHeader {
  code: number;
  opaque: number;
  remark?: string;
  extFields?: Record<string, string | number>;
}

/**
 * Calls `each` for every whole frame at the start of `buf` (int32 length, int32 header length,
 * JSON header, body as a view) and returns the bytes of the unfinished frame after them.
 */
export function takeFrames(buf: Buffer, each: (header: ReplyHeader, body: Buffer, headerBytes: number) => void): Buffer {
  let p = 0;
  while (buf.length - p >= 4) {
    const total = buf.readInt32BE(p);
    if (buf.length - p < 4 + total) break;
    const headerLen = buf.readInt32BE(p + 4) & 0xffffff;
    const header = JSON.parse(buf.toString('utf8', p + 8, p + 8 + headerLen)) as ReplyHeader;
    const body = buf.subarray(p + 8 + headerLen, p + 4 + total);
    p += 4 + total;
    each(header, body, headerLen);
  }
  return p === buf.length ? Buffer.alloc(0) : buf.subarray(p);
}

/** A TCP connection to `host:port`, resolved once connected. @throws the socket's error (e.g. ECONNREFUSED). */
export async function openSocket(addr: string): Promise<Socket> {
  const i = addr.lastIndexOf(':');
  const sock = connect(Number(addr.slice(i + 1)), addr.slice(0, i));
  await new Promise<void>((res, rej) => {
    sock.once('connect', res);
    sock.once('error', rej);
  });
  return sock;
}
export class RawRemotingClient {
  private buf: Buffer = Buffer.alloc(0);
  private readonly pending = new Map<number, Pending>();
  private corked = false;
  private closed = false;

  private constructor(private readonly sock: Socket) {
    sock.setNoDelay(true);
    sock.on('data', (d: Buffer) => this.onData(d));
    const fail = (e?: Error): void => {
      this.closed = true;
      const err = e ?? new Error('connection closed');
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    sock.on('error', fail);
    sock.on('close', () => fail());
  }

  static async connect(addr: string): Promise<RawRemotingClient> {
    return new RawRemotingClient(await openSocket(addr));
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** Sends one JSON-header request and resolves with its reply. */
  invoke(code: number, extFields: Record<string, string | number | boolean>, body?: Buffer): Promise<Reply> {
    if (this.closed) return Promise.reject(new Error('connection closed'));
    const opaque = opaqueSeq++;
    if (opaqueSeq > 0x7ffffff0) opaqueSeq = 1;
    const header = Buffer.from(JSON.stringify({ code, language: 'JAVA', version: 401, opaque, flag: 0, extFields }));
    const bodyLen = body ? body.length : 0;
    const head = Buffer.allocUnsafe(8);
    head.writeInt32BE(4 + header.length + bodyLen, 0);
    head.writeInt32BE(header.length, 4);
    if (!this.corked) {
      this.corked = true;
      this.sock.cork();
      process.nextTick(() => {
        this.corked = false;
        this.sock.uncork();
      });
    }
    this.sock.write(head);
    this.sock.write(header);
    if (body && bodyLen > 0) this.sock.write(body);
    return new Promise((resolve, reject) => this.pending.set(opaque, { resolve, reject }));
  }

  private onData(d: Buffer): void {
    this.buf = takeFrames(this.buf.length === 0 ? d : Buffer.concat([this.buf, d]), (header, body) => {
      const w = this.pending.get(header.opaque);
      if (w) {
        this.pending.delete(header.opaque);
        w.resolve({ code: header.code, remark: header.remark, extFields: header.extFields ?? {}, body });
      }
    });
  }

  close(): void {
    this.closed = true;
    this.sock.destroy();
  }
}

/** Number of CommitLog records in a pull reply body (walks TOTALSIZE). */
export function countRecords(body: Buffer): number {
  let n = 0;
  for (let p = 0; p + 4 <= body.length; ) {
    const size = body.readInt32BE(p);
    if (size <= 0) break;
    p += size;
    n++;
  }
  return n;
}
