/**
 * A lean RocketMQ remoting client for tests and load generation, written independently of
 * src/remoting: one socket, pipelined JSON-header requests matched by opaque.
 */
import { connect, type Socket } from 'node:net';
import { jsonFrame } from './raw-remoting.js';

export interface LeanReply {
  code: number;
  remark: string | null;
  extFields: Record<string, string>;
  body: Buffer;
}

export class LeanClient {
  private sock: Socket;
  private buf: Buffer = Buffer.alloc(0);
  private opaque = 1;
  private pending = new Map<number, { resolve: (r: LeanReply) => void; reject: (e: Error) => void }>();
  private closedError: Error | null = null;
  readonly ready: Promise<void>;

  constructor(addr: string) {
    const i = addr.lastIndexOf(':');
    this.sock = connect(Number(addr.slice(i + 1)), addr.slice(0, i));
    this.sock.setNoDelay(true);
    this.ready = new Promise((resolve, reject) => {
      this.sock.once('connect', () => resolve());
      this.sock.once('error', reject);
    });
    this.sock.on('data', (d) => this.onData(d));
    this.sock.on('error', () => {});
    this.sock.on('close', () => {
      this.closedError = new Error('connection closed');
      for (const p of this.pending.values()) p.reject(this.closedError);
      this.pending.clear();
    });
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    while (this.buf.length >= 4) {
      const total = this.buf.readInt32BE(0);
      if (this.buf.length < 4 + total) break;
      const headerLen = this.buf.readInt32BE(4) & 0xffffff;
      const header = JSON.parse(this.buf.subarray(8, 8 + headerLen).toString('utf8'));
      const body = Buffer.from(this.buf.subarray(8 + headerLen, 4 + total));
      this.buf = this.buf.subarray(4 + total);
      const p = this.pending.get(header.opaque);
      if (p && (header.flag & 1) === 1) {
        this.pending.delete(header.opaque);
        p.resolve({ code: header.code, remark: header.remark ?? null, extFields: header.extFields ?? {}, body });
      }
    }
  }

  invoke(code: number, extFields: Record<string, unknown>, body?: Buffer, timeoutMs = 15_000): Promise<LeanReply> {
    if (this.closedError) return Promise.reject(this.closedError);
    const opaque = this.opaque++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(opaque);
        reject(new Error(`request ${code} timed out`));
      }, timeoutMs);
      this.pending.set(opaque, {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.sock.write(jsonFrame({ code, language: 'JAVA', version: 121, opaque, flag: 0, extFields }, body));
    });
  }

  /** SEND_MESSAGE_V2 (310) with ali-ons style single-letter headers. */
  send(topic: string, queueId: number, body: Buffer, props: Record<string, string> = {}, timeoutMs = 15_000): Promise<LeanReply> {
    const i = Object.entries(props)
      .map(([k, v]) => `${k}\u0001${v}\u0002`)
      .join('');
    return this.invoke(310, { a: 'PID_LEAN', b: topic, c: 'TBW102', d: 4, e: queueId, f: 0, g: Date.now(), h: 0, i, j: 0, k: false }, body, timeoutMs);
  }

  /** PULL_MESSAGE (11) without suspension; returns the raw reply (body = packed records). */
  pull(group: string, topic: string, queueId: number, queueOffset: number, maxMsgNums = 32): Promise<LeanReply> {
    return this.invoke(11, {
      consumerGroup: group,
      topic,
      queueId,
      queueOffset,
      maxMsgNums,
      sysFlag: 4,
      commitOffset: 0,
      suspendTimeoutMillis: 0,
      subscription: '*',
      subVersion: 0,
    });
  }

  close(): void {
    this.sock.destroy();
  }
}
