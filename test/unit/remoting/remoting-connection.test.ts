/**
 * Output gathering of RemotingConnection: frames sent in one event-loop turn reach the socket
 * in one write, byte for byte what encodeFrame gives, in order; closed sockets never throw.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { silentLogger } from '../../../src/common/logging/logger.js';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';
import { createRequestCommand, createResponseCommand } from '../../../src/remoting/protocol/commands.js';
import { encodeFrame, FrameDecoder } from '../../../src/remoting/protocol/frame-codec.js';
import { RemotingConnection } from '../../../src/remoting/transport/remoting-connection.js';

interface Pair {
  conn: RemotingConnection;
  /** the peer's end of the socket */
  peer: net.Socket;
  /** every chunk the peer received, as received */
  chunks: Buffer[];
  /** socket.write calls made by the connection */
  writes: number;
  /** waits until the peer has received `n` bytes in all */
  received(n: number, timeoutMs?: number): Promise<Buffer>;
  cleanup(): Promise<void>;
}

async function pair(onRequest: (c: RemotingConnection, r: RemotingCommand) => void = () => {}): Promise<Pair> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  const accepted = once(server, 'connection');
  const peer = net.connect(port, '127.0.0.1');
  peer.on('error', () => undefined);
  await once(peer, 'connect');
  const [socket] = (await accepted) as [net.Socket];
  const counter = { writes: 0 };
  const write = socket.write.bind(socket) as (...a: unknown[]) => boolean;
  (socket as unknown as { write: (...a: unknown[]) => boolean }).write = (...a: unknown[]) => {
    counter.writes++;
    return write(...a);
  };
  const conn = new RemotingConnection(socket, { id: 't-1', logger: silentLogger, onRequest });
  const chunks: Buffer[] = [];
  let total = 0;
  let waiter: (() => void) | null = null;
  peer.on('data', (d: Buffer) => {
    chunks.push(d);
    total += d.length;
    waiter?.();
  });
  return {
    conn,
    peer,
    chunks,
    get writes() {
      return counter.writes;
    },
    received: (n, timeoutMs = 2000) =>
      new Promise<Buffer>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${total} of ${n} bytes arrived`)), timeoutMs);
        const check = (): void => {
          if (total < n) return;
          clearTimeout(timer);
          waiter = null;
          resolve(Buffer.concat(chunks));
        };
        waiter = check;
        check();
      }),
    cleanup: async () => {
      conn.close();
      peer.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function reply(opaque: number, code: number, ext: Record<string, string | number> | null, body: Buffer | null, type: 0 | 1 = 0): RemotingCommand {
  const req: RemotingCommand = { ...createRequestCommand(310), opaque, serializeTypeCurrentRPC: type };
  return createResponseCommand(req, code, code === 0 ? null : 'failed', ext, body);
}

function decodeAll(bytes: Buffer): RemotingCommand[] {
  const out: RemotingCommand[] = [];
  const d = new FrameDecoder((c) => out.push(c));
  d.push(bytes);
  assert.equal(d.bufferedBytes, 0, 'no partial frame left over');
  return out;
}

test('two replies sent in one turn arrive in one write as two well-formed frames, in order', async (t) => {
  const p = await pair();
  t.after(() => p.cleanup());
  const r1 = reply(41, 0, { msgId: '7F0000010000A1B2000000000000002A', queueId: 2, queueOffset: 7, MSG_REGION: 'DefaultRegion', TRACE_ON: 'true' }, null);
  const r2 = reply(42, 17, null, Buffer.from('route body'));
  const expected = Buffer.concat([encodeFrame(r1), encodeFrame(r2)]);
  assert.equal(p.conn.send(r1), true);
  assert.equal(p.conn.send(r2), true);
  const got = await p.received(expected.length);
  assert.deepEqual(got, expected, 'exactly the bytes of the two frames, back to back');
  assert.equal(p.writes, 1, 'one socket write for the turn');
  const [a, b] = decodeAll(got);
  assert.equal(a!.opaque, 41);
  assert.equal(a!.flag, 1);
  assert.equal(a!.extFields!.queueOffset, '7');
  assert.equal(b!.opaque, 42);
  assert.equal(b!.code, 17);
  assert.equal(b!.remark, 'failed');
  assert.equal(b!.body!.toString(), 'route body');
});

test('a JSON and a ROCKETMQ reply gathered together keep their own serialize types', async (t) => {
  const p = await pair();
  t.after(() => p.cleanup());
  const r1 = reply(1, 0, { a: 'x' }, null, 1);
  const r2 = reply(2, 0, { b: 'y' }, Buffer.from([1, 2, 3]), 0);
  const expected = Buffer.concat([encodeFrame(r1), encodeFrame(r2)]);
  p.conn.send(r1);
  p.conn.send(r2);
  const got = await p.received(expected.length);
  assert.deepEqual(got, expected);
  assert.equal(got.readUInt32BE(4) >>> 24, 1, 'first frame: ROCKETMQ');
  const [a, b] = decodeAll(got);
  assert.equal(a!.serializeTypeCurrentRPC, 1);
  assert.equal(b!.serializeTypeCurrentRPC, 0);
  assert.deepEqual(a!.extFields, { a: 'x' });
  assert.deepEqual(b!.extFields, { b: 'y' });
});

test('replies from separate turns are separate writes; each turn keeps its order', async (t) => {
  const p = await pair();
  t.after(() => p.cleanup());
  const first = [reply(1, 0, null, null), reply(2, 0, null, null)];
  for (const r of first) p.conn.send(r);
  const firstBytes = Buffer.concat(first.map(encodeFrame));
  await p.received(firstBytes.length);
  assert.equal(p.writes, 1);
  const second = [reply(3, 0, null, null)];
  p.conn.send(second[0]!);
  const all = await p.received(firstBytes.length + encodeFrame(second[0]!).length);
  assert.equal(p.writes, 2);
  assert.deepEqual(decodeAll(all).map((c) => c.opaque), [1, 2, 3]);
});

test('a large batch (beyond the copy limit) is written corked and arrives intact, in order', async (t) => {
  const p = await pair();
  t.after(() => p.cleanup());
  const replies = Array.from({ length: 40 }, (_, i) => reply(100 + i, 0, { i }, Buffer.alloc(20_000, i)));
  const expected = Buffer.concat(replies.map(encodeFrame));
  assert.ok(expected.length > 256 * 1024);
  for (const r of replies) p.conn.send(r);
  const got = await p.received(expected.length, 5000);
  assert.deepEqual(got, expected);
  assert.deepEqual(decodeAll(got).map((c) => c.opaque), replies.map((r) => r.opaque));
});

test('onWritten runs for every gathered frame once it is handed to the OS', async (t) => {
  const p = await pair();
  t.after(() => p.cleanup());
  const seen: Array<string> = [];
  p.conn.send(reply(1, 0, null, null), (err) => seen.push(`1:${err ? 'err' : 'ok'}`));
  p.conn.send(reply(2, 0, null, null));
  p.conn.send(reply(3, 0, null, null), (err) => seen.push(`3:${err ? 'err' : 'ok'}`));
  assert.deepEqual(seen, [], 'nothing is written before the end of the turn');
  await p.received(encodeFrame(reply(1, 0, null, null)).length * 3);
  for (let i = 0; i < 20 && seen.length < 2; i++) await new Promise((r) => setImmediate(r));
  assert.deepEqual(seen, ['1:ok', '3:ok']);
});

test('a reply to a closed socket does not throw; its callback gets an error', async (t) => {
  const p = await pair();
  t.after(() => p.cleanup());
  const closed = new Promise<void>((r) => p.conn.onClose(r));
  p.peer.destroy();
  await closed;
  let err: Error | null | undefined;
  assert.doesNotThrow(() => p.conn.send(reply(9, 0, { x: 1 }, null), (e) => (err = e)));
  assert.ok(err instanceof Error, 'callback told the frame was not written');
  assert.equal(p.conn.send(reply(10, 0, null, null)), false);
});

test('frames queued when the socket dies before the end of the turn fail their callbacks, without throwing', async (t) => {
  const p = await pair();
  t.after(() => p.cleanup());
  const errors: Array<Error | null | undefined> = [];
  p.conn.send(reply(1, 0, null, null), (e) => errors.push(e));
  p.conn.send(reply(2, 0, null, null), (e) => errors.push(e));
  // destroy the socket underneath the connection before the gathered write runs
  (p.conn as unknown as { socket: net.Socket }).socket.destroy();
  await new Promise((r) => setImmediate(r));
  assert.equal(errors.length, 2);
  assert.ok(errors.every((e) => e instanceof Error));
});

test('close() right after send() still delivers the reply first', async (t) => {
  const p = await pair();
  t.after(() => p.cleanup());
  const r = reply(77, 0, { last: 'words' }, null);
  p.conn.send(r);
  p.conn.close();
  const got = await p.received(encodeFrame(r).length);
  assert.deepEqual(got, encodeFrame(r));
  await once(p.peer, 'close');
});

test('requests pipelined in one chunk get their replies gathered, matched by opaque', async (t) => {
  const p = await pair((conn, req) => {
    // answer asynchronously, like a processor awaiting the store
    void Promise.resolve().then(() => conn.send(createResponseCommand(req, 0, null, { echo: req.opaque })));
  });
  t.after(() => p.cleanup());
  const reqs = Array.from({ length: 8 }, () => createRequestCommand(310, { a: 'g' }, Buffer.from('body')));
  p.peer.write(Buffer.concat(reqs.map(encodeFrame)));
  const expected = Buffer.concat(reqs.map((q) => encodeFrame(createResponseCommand(q, 0, null, { echo: q.opaque }))));
  const got = await p.received(expected.length);
  assert.deepEqual(got, expected);
  assert.equal(p.writes, 1, 'eight replies, one write');
  assert.deepEqual(decodeAll(got).map((c) => c.opaque), reqs.map((q) => q.opaque));
});

test("a command's own onWritten (pull bodies handed back) runs only once the kernel took its bytes: not at send, not while the peer does not read", async (t) => {
  const p = await pair();
  t.after(() => p.cleanup());
  p.peer.pause();
  const body = Buffer.alloc(256 * 1024, 7);
  const frames = 128; // 32 MiB: more than loopback's socket buffers hold
  const written: number[] = [];
  let bytes = 0;
  for (let i = 0; i < frames; i++) {
    const r = reply(i, 0, null, body);
    r.onWritten = (err) => {
      assert.ok(!err, `frame ${i}: ${err?.message}`);
      written.push(i);
    };
    bytes += encodeFrame(r).length;
    p.conn.send(r);
    assert.ok(!written.includes(i), `frame ${i}: not at send()`);
    if (i % 8 === 7) await new Promise((r) => setImmediate(r));
  }
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(written.length < frames, `the peer read nothing, yet all ${frames} frames were reported written`);
  assert.ok(!written.includes(frames - 1), 'the last frame is still queued');
  p.peer.resume();
  await p.received(bytes, 10_000);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(written, Array.from({ length: frames }, (_, i) => i), 'each once, in order');
});
