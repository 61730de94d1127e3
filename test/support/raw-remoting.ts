/**
 * Raw RocketMQ remoting frames over a plain socket, written independently of src/remoting so
 * that tests judge the wire format on their own: int32 length | int32 (type<<24 | headerLen) |
 * JSON header | body.
 */
import { connect } from 'node:net';

export interface RawReply {
  closed: boolean;
  header: { code?: number; remark?: string; opaque?: number; flag?: number; extFields?: Record<string, string> };
  body: Buffer;
}

let opaqueSeq = 900_000;

export function jsonFrame(header: Record<string, unknown>, body: Buffer = Buffer.alloc(0)): Buffer {
  const h = Buffer.from(JSON.stringify(header));
  const out = Buffer.alloc(8 + h.length + body.length);
  out.writeInt32BE(4 + h.length + body.length, 0);
  out.writeInt32BE(h.length, 4);
  h.copy(out, 8);
  body.copy(out, 8 + h.length);
  return out;
}

/** Sends one frame (a JSON request built from `req`, or `raw` bytes) and reads one reply or the close. */
export async function rawInvoke(
  addr: string,
  req: { code: number; extFields: Record<string, unknown>; body?: Buffer } | null,
  raw?: Buffer,
  timeoutMs = 10_000,
): Promise<RawReply> {
  const [host, port] = [addr.slice(0, addr.lastIndexOf(':')), Number(addr.slice(addr.lastIndexOf(':') + 1))];
  const frame =
    raw ??
    jsonFrame(
      { code: req!.code, language: 'JAVA', version: 121, opaque: ++opaqueSeq, flag: 0, extFields: req!.extFields },
      req!.body,
    );
  return await new Promise((resolve, reject) => {
    const sock = connect(port, host);
    let buf: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no reply from ${addr} within ${timeoutMs} ms`));
    }, timeoutMs);
    sock.on('connect', () => sock.write(frame));
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
        const total = buf.readInt32BE(0);
        const headerLen = buf.readInt32BE(4) & 0xffffff;
        const header = JSON.parse(buf.subarray(8, 8 + headerLen).toString('utf8'));
        clearTimeout(timer);
        sock.destroy();
        resolve({ closed: false, header, body: buf.subarray(8 + headerLen, 4 + total) });
      }
    });
    sock.on('close', () => {
      clearTimeout(timer);
      resolve({ closed: true, header: {}, body: Buffer.alloc(0) });
    });
    sock.on('error', () => {});
  });
}

/** A SEND_MESSAGE_V2 (310) request as ali-ons builds it. */
export async function sendV2Frame(addr: string, topic: string, body: Buffer, queueId = 0): Promise<RawReply> {
  return await rawInvoke(addr, {
    code: 310,
    extFields: { a: 'PID_RAW', b: topic, c: 'TBW102', d: 4, e: queueId, f: 0, g: Date.now(), h: 0, i: 'TAGS\u0001raw\u0002', j: 0, k: false },
    body,
  });
}
