/**
 * grpc-timeout tolerance (src/grpc/grpc-timeout-header.ts): raw HTTP/2 gRPC requests with the
 * deadlines rocketmq-client-java 5.0.x sends (31536000M = 60 × 365 days) and other extremes keep
 * the stream open and working; short deadlines still expire; plain grpc-js (the control) ends the
 * 31536000M stream at once with DEADLINE_EXCEEDED.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { createDeadlineTolerantServer, MAX_NODE_TIMER_MS, normalizeGrpcTimeout } from '../../../src/grpc/grpc-timeout-header.js';

describe('normalizeGrpcTimeout', () => {
  it('drops deadlines a Node timer cannot hold (no server-side deadline)', () => {
    for (const v of ['31536000M', '99999999H', '99999999M', '99999999S', '2147484S', '597H', '2147483648m']) {
      assert.equal(normalizeGrpcTimeout(v), null, v);
    }
  });
  it('keeps representable values written per spec (≤ 8 digits) unchanged', () => {
    for (const v of ['1S', '200m', '2147483S', '596H', '35791M', '99999999m', '99999999u', '99999999n', '0m', '30S']) {
      assert.equal(normalizeGrpcTimeout(v), v, v);
    }
  });
  it('rewrites representable values with more than 8 digits into ≤ 8 digits, never longer than sent', () => {
    assert.equal(normalizeGrpcTimeout('000000005S'), '5000m');
    assert.equal(normalizeGrpcTimeout('1500000000m'), '1500000S');
    assert.equal(normalizeGrpcTimeout('2147483647m'), '2147483S');
    assert.equal(normalizeGrpcTimeout('123456789u'), '123457m');
    assert.ok(2147483 * 1000 <= MAX_NODE_TIMER_MS);
  });
  it('leaves malformed values to grpc-js (which answers INTERNAL)', () => {
    for (const v of ['', 'abc', '10x', '-5S', '1.5S']) assert.equal(normalizeGrpcTimeout(v), v, v);
  });
});

const identity = (b: Buffer): Buffer => b;
const echoService: grpc.ServiceDefinition = {
  Echo: {
    path: '/tsmq.test.Echo/Echo',
    requestStream: true,
    responseStream: true,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
};

async function startEcho(server: grpc.Server): Promise<number> {
  server.addService(echoService, {
    Echo: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      call.on('data', (b: Buffer) => call.write(Buffer.concat([Buffer.from('echo:'), b])));
      call.on('end', () => call.end());
    },
  });
  return new Promise((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, port) => (e ? reject(e) : resolve(port))));
}

function frame(payload: string): Buffer {
  const body = Buffer.from(payload);
  const head = Buffer.alloc(5);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface RawCall {
  /** Response messages received so far (gRPC length-prefixed frames decoded). */
  messages: string[];
  /** grpc-status from trailers (or from a trailers-only response), null while the call is open. */
  status: () => number | null;
  statusMessage: () => string;
  send(payload: string): void;
  end(): void;
  /** Resolves when the call has a status (the stream is then closed) or the stream closed. */
  done: Promise<void>;
}

/** Opens one raw HTTP/2 gRPC stream to the echo service with the given grpc-timeout header. */
function rawCall(session: http2.ClientHttp2Session, timeout: string): RawCall {
  const req = session.request({
    ':method': 'POST',
    ':path': '/tsmq.test.Echo/Echo',
    'content-type': 'application/grpc',
    te: 'trailers',
    'grpc-timeout': timeout,
  });
  const messages: string[] = [];
  let status: number | null = null;
  let statusMessage = '';
  let pending = Buffer.alloc(0);
  let settle: () => void = () => {};
  const done = new Promise<void>((resolve) => (settle = resolve));
  const takeStatus = (h: http2.IncomingHttpHeaders): void => {
    if (h['grpc-status'] !== undefined) {
      status = Number(h['grpc-status']);
      statusMessage = String(h['grpc-message'] ?? '');
      settle();
      setImmediate(() => req.close());
    }
  };
  req.on('response', takeStatus);
  req.on('trailers', takeStatus);
  req.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 5 && pending.length >= 5 + pending.readUInt32BE(1)) {
      const len = pending.readUInt32BE(1);
      messages.push(pending.subarray(5, 5 + len).toString());
      pending = pending.subarray(5 + len);
    }
  });
  req.on('close', () => settle());
  return {
    messages,
    status: () => status,
    statusMessage: () => statusMessage,
    send: (p) => void req.write(frame(p)),
    end: () => void req.end(),
    done,
  };
}

describe('deadline-tolerant gRPC server over raw HTTP/2', () => {
  let tolerant: grpc.Server;
  let plain: grpc.Server;
  let tolerantPort = 0;
  let plainPort = 0;
  let session: http2.ClientHttp2Session;

  before(async () => {
    const created = createDeadlineTolerantServer();
    assert.equal(created.deadlineClampInstalled, true, 'the installed @grpc/grpc-js lost the createHttp2Server hook');
    tolerant = created.server;
    tolerantPort = await startEcho(tolerant);
    plain = new grpc.Server();
    plainPort = await startEcho(plain);
    session = http2.connect(`http://127.0.0.1:${tolerantPort}`);
  });

  after(() => {
    session?.close();
    tolerant?.forceShutdown();
    plain?.forceShutdown();
  });

  for (const timeout of ['31536000M', '99999999H', '99999999S', '2147483648m', '597H']) {
    it(`grpc-timeout: ${timeout} — the stream stays open, echoes messages and ends OK when the client ends it`, async () => {
      const call = rawCall(session, timeout);
      await sleep(150);
      assert.equal(call.status(), null, `stream ended early: status ${call.status()} ${call.statusMessage()}`);
      call.send('one');
      call.send('two');
      for (let i = 0; i < 100 && call.messages.length < 2; i++) await sleep(10);
      assert.deepEqual(call.messages, ['echo:one', 'echo:two']);
      await sleep(100);
      assert.equal(call.status(), null, 'stream ended after the messages');
      call.end();
      await call.done;
      assert.equal(call.status(), grpc.status.OK, call.statusMessage());
    });
  }

  it('a short deadline (200m) still expires with DEADLINE_EXCEEDED', async () => {
    const started = Date.now();
    const call = rawCall(session, '200m');
    call.send('x');
    await call.done;
    assert.equal(call.status(), grpc.status.DEADLINE_EXCEEDED);
    assert.ok(Date.now() - started >= 180, `expired after ${Date.now() - started} ms`);
    assert.deepEqual(call.messages, ['echo:x']);
  });

  it('a representable 9-digit value (000000300m = 300 ms) is honoured, not misread', async () => {
    const started = Date.now();
    const call = rawCall(session, '000000300m');
    await call.done;
    assert.equal(call.status(), grpc.status.DEADLINE_EXCEEDED);
    const tookMs = Date.now() - started;
    assert.ok(tookMs >= 280 && tookMs < 5000, `expired after ${tookMs} ms`);
  });

  it('a malformed grpc-timeout is refused with INTERNAL and the server keeps serving', async () => {
    const bad = rawCall(session, 'soon');
    await bad.done;
    assert.equal(bad.status(), grpc.status.INTERNAL);
    assert.match(bad.statusMessage(), /grpc-timeout/);
    const good = rawCall(session, '31536000M');
    good.send('still');
    for (let i = 0; i < 100 && good.messages.length < 1; i++) await sleep(10);
    good.end();
    await good.done;
    assert.deepEqual(good.messages, ['echo:still']);
    assert.equal(good.status(), grpc.status.OK);
  });

  it('control: plain grpc-js ends the 31536000M stream at once with DEADLINE_EXCEEDED (the bug this works around)', async () => {
    const s = http2.connect(`http://127.0.0.1:${plainPort}`);
    try {
      const call = rawCall(s, '31536000M');
      await Promise.race([call.done, sleep(2000)]);
      assert.equal(call.status(), grpc.status.DEADLINE_EXCEEDED, 'if grpc-js now handles huge deadlines, this control can go');
    } finally {
      s.close();
    }
  });
});
