import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { RemotingServer } from '../../../src/remoting/transport/remoting-server.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import type { RemotingChannel } from '../../../src/remoting/processor/request-processor.js';
import { createRequestCommand, createResponseCommand, markOneway } from '../../../src/remoting/protocol/commands.js';
import { encodeFrame } from '../../../src/remoting/protocol/frame-codec.js';
import { getInt, getString } from '../../../src/remoting/headers/header-fields.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { RemotingTimeoutError } from '../../../src/remoting/transport/remoting-errors.js';
import { RawPeer } from '../../fixtures/remoting/raw-peer.js';
import { ALI_ONS_GET_ROUTE_FRAME, ROCKETMQ_BINARY_FRAME } from '../../fixtures/remoting/frames.js';

async function startServer(): Promise<RemotingServer> {
  const server = new RemotingServer({ listenPort: 0, host: '127.0.0.1', name: 'test' });
  server.registerProcessor(105, ({ request }) =>
    createResponseCommand(request, ResponseCode.SUCCESS, null, { topic: getString(request.extFields, 'topic') }, Buffer.from('route')));
  server.registerProcessor(14, ({ request }) => {
    getInt(request.extFields, 'queueId');
    return createResponseCommand(request, ResponseCode.SUCCESS);
  });
  server.registerProcessor(99, () => {
    throw new Error('boom in handler');
  });
  await server.start();
  return server;
}

test('ali-ons golden request gets a JSON response with the same opaque', async (t) => {
  const server = await startServer();
  t.after(() => server.shutdown());
  const peer = await RawPeer.connect(server.port);
  t.after(() => peer.destroy());
  peer.write(ALI_ONS_GET_ROUTE_FRAME);
  const resp = await peer.next();
  assert.equal(resp.opaque, 1);
  assert.equal(resp.flag, 1);
  assert.equal(resp.code, 0);
  assert.equal(resp.serializeTypeCurrentRPC, 0);
  assert.deepEqual(resp.extFields, { topic: 'TopicTest' });
  assert.equal(resp.body!.toString(), 'route');
  peer.destroy();
  await server.shutdown();
});

test('ROCKETMQ binary request gets a binary response', async (t) => {
  const server = await startServer();
  t.after(() => server.shutdown());
  const peer = await RawPeer.connect(server.port);
  t.after(() => peer.destroy());
  peer.write(ROCKETMQ_BINARY_FRAME);
  const resp = await peer.next();
  assert.equal(resp.serializeTypeCurrentRPC, 1);
  assert.equal(resp.opaque, 7);
  assert.deepEqual(resp.extFields, { topic: 'T1' });
  peer.destroy();
  await server.shutdown();
});

test('unknown code -> 3 with Apache remark; handler throw -> 1; HeaderError -> 1 with its message', async (t) => {
  const server = await startServer();
  t.after(() => server.shutdown());
  const peer = await RawPeer.connect(server.port);
  t.after(() => peer.destroy());
  const unknown = createRequestCommand(777);
  peer.write(encodeFrame(unknown));
  const r1 = await peer.next();
  assert.equal(r1.code, ResponseCode.REQUEST_CODE_NOT_SUPPORTED);
  assert.equal(r1.remark, ' request type 777 not supported');
  assert.equal(r1.opaque, unknown.opaque);

  peer.write(encodeFrame(createRequestCommand(99)));
  const r2 = await peer.next();
  assert.equal(r2.code, ResponseCode.SYSTEM_ERROR);
  assert.equal(r2.remark, 'boom in handler');

  peer.write(encodeFrame(createRequestCommand(14, { topic: 'T' })));
  const r3 = await peer.next();
  assert.equal(r3.code, ResponseCode.SYSTEM_ERROR);
  assert.equal(r3.remark, 'the custom field <queueId> is null');

  // the connection survives all of that
  peer.write(encodeFrame(createRequestCommand(105, { topic: 'still' })));
  assert.deepEqual((await peer.next()).extFields, { topic: 'still' });
  peer.destroy();
  await server.shutdown();
});

test('oneway-flagged requests get no reply, even for errors', async (t) => {
  const server = await startServer();
  t.after(() => server.shutdown());
  const peer = await RawPeer.connect(server.port);
  t.after(() => peer.destroy());
  peer.write(encodeFrame(markOneway(createRequestCommand(105, { topic: 'x' }))));
  peer.write(encodeFrame(markOneway(createRequestCommand(777))));
  peer.write(encodeFrame(markOneway(createRequestCommand(99))));
  const marker = createRequestCommand(105, { topic: 'marker' });
  peer.write(encodeFrame(marker));
  const r = await peer.next();
  assert.equal(r.opaque, marker.opaque);
  assert.equal(peer.pending, 0);
  peer.destroy();
  await server.shutdown();
});

test('a garbage frame closes only that connection; another client keeps getting answers', async (t) => {
  const server = await startServer();
  t.after(() => server.shutdown());
  const closedChannels: RemotingChannel[] = [];
  server.onChannelClose((ch) => closedChannels.push(ch));
  const client = new RemotingClient();
  t.after(() => client.close());
  const addr = `127.0.0.1:${server.port}`;
  assert.equal((await client.invokeSync(addr, createRequestCommand(105, { topic: 'a' }), 2000)).code, 0);

  const bad = await RawPeer.connect(server.port);
  t.after(() => bad.destroy());
  bad.write(Buffer.from('00000008ff000004deadbeef', 'hex')); // serialize type 255
  await bad.closed;
  await sleep(10);
  assert.equal(closedChannels.length, 1);

  const bad2 = await RawPeer.connect(server.port);
  t.after(() => bad2.destroy());
  bad2.write(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
  await bad2.closed;

  const bad3 = await RawPeer.connect(server.port);
  t.after(() => bad3.destroy());
  const badJson = Buffer.concat([Buffer.from('0000000900000005', 'hex'), Buffer.from('{bad}')]);
  bad3.write(badJson);
  await bad3.closed;

  const resp = await client.invokeSync(addr, createRequestCommand(105, { topic: 'b' }), 2000);
  assert.deepEqual(resp.extFields, { topic: 'b' });
  assert.equal(server.channels.length, 1);
  await client.close();
  await server.shutdown();
});

test('server-initiated invoke is matched by opaque; client without a processor answers 3', async (t) => {
  const server = await startServer();
  t.after(() => server.shutdown());
  const channels: RemotingChannel[] = [];
  server.registerProcessor(34, ({ request, channel }) => {
    channels.push(channel);
    return createResponseCommand(request, 0);
  });
  const client = new RemotingClient();
  t.after(() => client.close());
  client.registerProcessor(39, ({ request }) => createResponseCommand(request, 0, null, { state: 'COMMIT' }));
  const addr = `127.0.0.1:${server.port}`;
  await client.invokeSync(addr, createRequestCommand(34), 2000);
  const ch = channels[0]!;
  const answer = await server.invoke(ch, createRequestCommand(39), 2000);
  assert.deepEqual(answer.extFields, { state: 'COMMIT' });
  const notSupported = await server.invoke(ch, createRequestCommand(40), 2000);
  assert.equal(notSupported.code, 3);
  assert.equal(notSupported.remark, ' request type 40 not supported');
  await client.close();
  await server.shutdown();
});

test('server invoke to a silent peer times out; closing the peer rejects pending invokes', async (t) => {
  const server = await startServer();
  t.after(() => server.shutdown());
  const seen: RemotingChannel[] = [];
  server.registerProcessor(34, ({ request, channel }) => {
    seen.push(channel);
    return createResponseCommand(request, 0);
  });
  const peer = await RawPeer.connect(server.port);
  t.after(() => peer.destroy());
  peer.write(encodeFrame(createRequestCommand(34)));
  await peer.next();
  const ch = seen[0]!;
  await assert.rejects(server.invoke(ch, createRequestCommand(39), 50), RemotingTimeoutError);
  const pending = server.invoke(ch, createRequestCommand(39), 5000);
  await peer.next(); // the request reached the peer
  peer.destroy();
  await assert.rejects(pending, /closed before the response/);
  await server.shutdown();
});

test('many pipelined requests with large replies all arrive (backpressure)', async (t) => {
  const server = new RemotingServer({ listenPort: 0, host: '127.0.0.1' });
  t.after(() => server.shutdown());
  const big = Buffer.alloc(256 * 1024, 3);
  server.registerProcessor(11, ({ request }) => createResponseCommand(request, 0, null, null, big));
  await server.start();
  const client = new RemotingClient();
  t.after(() => client.close());
  const addr = `127.0.0.1:${server.port}`;
  const replies = await Promise.all(Array.from({ length: 64 }, () => client.invokeSync(addr, createRequestCommand(11), 10000)));
  assert.equal(replies.length, 64);
  for (const r of replies) assert.equal(r.body!.length, big.length);
  await client.close();
  await server.shutdown();
});

test('shutdown closes open connections and start() reports a busy port', async (t) => {
  const server = await startServer();
  t.after(() => server.shutdown());
  const peer = await RawPeer.connect(server.port);
  t.after(() => peer.destroy());
  const other = new RemotingServer({ listenPort: server.port, host: '127.0.0.1' });
  await assert.rejects(other.start(), /EADDRINUSE/);
  await server.shutdown();
  await peer.closed;
});

test('a handler may return null and answer later through the channel (long polling)', async (t) => {
  const server = new RemotingServer({ listenPort: 0, host: '127.0.0.1' });
  t.after(() => server.shutdown());
  const held: Array<{ request: import('../../../src/remoting/protocol/remoting-command.js').RemotingCommand; channel: RemotingChannel }> = [];
  server.registerProcessor(11, async (ctx) => {
    held.push(ctx);
    return null;
  });
  await server.start();
  const client = new RemotingClient();
  t.after(() => client.close());
  const pending = client.invokeSync(`127.0.0.1:${server.port}`, createRequestCommand(11, { queueOffset: 5 }), 5000);
  while (held.length === 0) await sleep(2);
  const { request, channel } = held[0]!;
  channel.send(createResponseCommand(request, ResponseCode.PULL_NOT_FOUND, null, { nextBeginOffset: 5 }));
  const resp = await pending;
  assert.equal(resp.code, ResponseCode.PULL_NOT_FOUND);
  assert.deepEqual(resp.extFields, { nextBeginOffset: '5' });
});

test('a returned response gets the request opaque, the response flag and serialize type', async (t) => {
  const server = new RemotingServer({ listenPort: 0, host: '127.0.0.1' });
  t.after(() => server.shutdown());
  server.registerProcessor(105, () => ({ ...createRequestCommand(0), remark: 'built by hand' }));
  await server.start();
  const peer = await RawPeer.connect(server.port);
  t.after(() => peer.destroy());
  peer.write(ROCKETMQ_BINARY_FRAME);
  const resp = await peer.next();
  assert.deepEqual([resp.opaque, resp.flag, resp.serializeTypeCurrentRPC, resp.remark], [7, 1, 1, 'built by hand']);
});

test('idle connections are closed after channelMaxIdleMs; the client reconnects', async (t) => {
  const server = new RemotingServer({ listenPort: 0, host: '127.0.0.1', channelMaxIdleMs: 100 });
  t.after(() => server.shutdown());
  server.registerProcessor(105, ({ request }) => createResponseCommand(request, 0));
  await server.start();
  const closed: RemotingChannel[] = [];
  server.onChannelClose((ch) => closed.push(ch));
  const client = new RemotingClient();
  t.after(() => client.close());
  const addr = `127.0.0.1:${server.port}`;
  await client.invokeSync(addr, createRequestCommand(105), 2000);
  for (let i = 0; i < 200 && closed.length === 0; i++) await sleep(10);
  assert.equal(closed.length, 1);
  await sleep(50); // let the client see the FIN
  assert.equal((await client.invokeSync(addr, createRequestCommand(105), 2000)).code, 0);
});

test('channelMaxIdleMs counts from the last read or write: a connection with traffic every 40 ms stays open past 3 × 300 ms; once quiet it closes 300–375 ms (+ timer slack) later', async (t) => {
  const server = new RemotingServer({ listenPort: 0, host: '127.0.0.1', channelMaxIdleMs: 300 });
  t.after(() => server.shutdown());
  server.registerProcessor(105, ({ request }) => createResponseCommand(request, 0));
  await server.start();
  let closedAtMs = -1;
  server.onChannelClose(() => { closedAtMs = performance.now(); });
  const client = new RemotingClient();
  t.after(() => client.close());
  const addr = `127.0.0.1:${server.port}`;
  const t0 = performance.now();
  let lastMs = t0;
  while (performance.now() - t0 < 900) {
    assert.equal((await client.invokeSync(addr, createRequestCommand(105), 2000)).code, 0);
    lastMs = performance.now();
    assert.equal(closedAtMs, -1, `closed ${Math.round(lastMs - t0)} ms in, with traffic every 40 ms`);
    await sleep(40);
  }
  for (let i = 0; i < 400 && closedAtMs < 0; i++) await sleep(5);
  const quietMs = closedAtMs - lastMs;
  assert.ok(quietMs >= 300 && quietMs < 1200, `closed ${Math.round(quietMs)} ms after the last traffic`);
});
