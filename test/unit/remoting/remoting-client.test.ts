import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freePort } from '../../support/free-port.js';
import { RemotingServer } from '../../../src/remoting/transport/remoting-server.js';
import { parseAddress, RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand, createResponseCommand } from '../../../src/remoting/protocol/commands.js';
import { RemotingConnectError, RemotingSendRequestError, RemotingTimeoutError } from '../../../src/remoting/transport/remoting-errors.js';
import type { RemotingChannel } from '../../../src/remoting/processor/request-processor.js';

async function echoServer(port = 0): Promise<{ server: RemotingServer; channels: RemotingChannel[]; seen: number[] }> {
  const server = new RemotingServer({ listenPort: port, host: '127.0.0.1' });
  const channels: RemotingChannel[] = [];
  const seen: number[] = [];
  server.registerProcessor(105, ({ request, channel }) => {
    channels.push(channel);
    seen.push(request.code);
    return createResponseCommand(request, 0, null, { echo: String(request.extFields?.topic ?? '') });
  });
  server.registerProcessor(11, () => null); // never answers (like a suspended pull)
  server.registerProcessor(15, ({ request }) => {
    seen.push(request.code);
    return createResponseCommand(request, 0);
  });
  await server.start();
  return { server, channels, seen };
}

test('invokeSync over loopback reuses one connection per address', async (t) => {
  const { server, channels } = await echoServer();
  t.after(() => server.shutdown());
  const client = new RemotingClient();
  t.after(() => client.close());
  const addr = `127.0.0.1:${server.port}`;
  const [a, b] = await Promise.all([
    client.invokeSync(addr, createRequestCommand(105, { topic: 'A' }), 2000),
    client.invokeSync(addr, createRequestCommand(105, { topic: 'B' }), 2000),
  ]);
  assert.deepEqual(a.extFields, { echo: 'A' });
  assert.deepEqual(b.extFields, { echo: 'B' });
  assert.equal(new Set(channels.map((c) => c.id)).size, 1);
  await client.close();
  await server.shutdown();
});

test('no response in time -> RemotingTimeoutError; the connection stays usable', async (t) => {
  const { server, channels } = await echoServer();
  t.after(() => server.shutdown());
  const client = new RemotingClient();
  t.after(() => client.close());
  const addr = `127.0.0.1:${server.port}`;
  // connected first: under load the connect alone can take longer than the 50 ms timeout
  await client.invokeSync(addr, createRequestCommand(105, { topic: 'before' }), 5000);
  await assert.rejects(client.invokeSync(addr, createRequestCommand(11), 50), (e: unknown) =>
    e instanceof RemotingTimeoutError && e.message === `wait response on the channel <${addr}> timeout, 50(ms)`);
  const r = await client.invokeSync(addr, createRequestCommand(105, { topic: 'after' }), 2000);
  assert.deepEqual(r.extFields, { echo: 'after' });
  assert.equal(new Set(channels.map((c) => c.id)).size, 1);
  await client.close();
  await server.shutdown();
});

test('connection lost while waiting rejects; the next call reconnects', async (t) => {
  const { server, channels } = await echoServer();
  t.after(() => server.shutdown());
  const client = new RemotingClient();
  t.after(() => client.close());
  const addr = `127.0.0.1:${server.port}`;
  await client.invokeSync(addr, createRequestCommand(105, { topic: 'x' }), 2000);
  const waiting = client.invokeSync(addr, createRequestCommand(11), 5000);
  await new Promise((r) => setTimeout(r, 20));
  channels[0]!.close();
  await assert.rejects(waiting, (e: unknown) => e instanceof RemotingSendRequestError && /closed before the response/.test((e as Error).message));
  const again = await client.invokeSync(addr, createRequestCommand(105, { topic: 'y' }), 2000);
  assert.deepEqual(again.extFields, { echo: 'y' });
  assert.equal(new Set(channels.map((c) => c.id)).size, 2);
  await client.close();
  await server.shutdown();
});

test('server restart on the same port: client reconnects on demand', async (t) => {
  const first = await echoServer();
  t.after(() => first.server.shutdown());
  const port = first.server.port;
  const client = new RemotingClient();
  t.after(() => client.close());
  const addr = `127.0.0.1:${port}`;
  await client.invokeSync(addr, createRequestCommand(105, { topic: '1' }), 2000);
  await first.server.shutdown();
  // Depending on when the FIN is seen: the old connection fails the call, or the reconnect is refused.
  await assert.rejects(client.invokeSync(addr, createRequestCommand(105), 500), (e: unknown) =>
    e instanceof RemotingConnectError || e instanceof RemotingSendRequestError);
  await assert.rejects(client.invokeSync(addr, createRequestCommand(105), 500), RemotingConnectError);
  const second = await echoServer(port);
  t.after(() => second.server.shutdown());
  const r = await client.invokeSync(addr, createRequestCommand(105, { topic: '2' }), 2000);
  assert.deepEqual(r.extFields, { echo: '2' });
  await client.close();
  await second.server.shutdown();
});

test('connect refused -> RemotingConnectError naming the address', async (t) => {
  const port = await freePort();
  const client = new RemotingClient({ connectTimeoutMs: 1000 });
  t.after(() => client.close());
  await assert.rejects(client.invokeSync(`127.0.0.1:${port}`, createRequestCommand(105), 1000), (e: unknown) =>
    e instanceof RemotingConnectError && e.message.startsWith(`connect to <127.0.0.1:${port}> failed`));
  await client.close();
});

test('invokeOneway sets the oneway flag and gets no reply', async (t) => {
  const { server, seen } = await echoServer();
  t.after(() => server.shutdown());
  const client = new RemotingClient();
  t.after(() => client.close());
  const addr = `127.0.0.1:${server.port}`;
  const req = createRequestCommand(15, { commitOffset: 3 });
  await client.invokeOneway(addr, req);
  assert.equal(req.flag & 2, 2);
  await client.invokeSync(addr, createRequestCommand(105), 2000);
  assert.deepEqual(seen, [15, 105]);
  await client.close();
  await server.shutdown();
});

test('close() rejects pending calls and later calls', async (t) => {
  const { server } = await echoServer();
  t.after(() => server.shutdown());
  const client = new RemotingClient();
  t.after(() => client.close());
  const addr = `127.0.0.1:${server.port}`;
  const pending = client.invokeSync(addr, createRequestCommand(11), 5000);
  await new Promise((r) => setTimeout(r, 20));
  await client.close();
  await assert.rejects(pending, RemotingSendRequestError);
  await assert.rejects(client.invokeSync(addr, createRequestCommand(105), 500), /remoting client is closed/);
  await server.shutdown();
});

test('parseAddress accepts host:port and [v6]:port, rejects garbage', () => {
  assert.deepEqual(parseAddress('127.0.0.1:9876'), { host: '127.0.0.1', port: 9876 });
  assert.deepEqual(parseAddress('[::1]:10911'), { host: '::1', port: 10911 });
  assert.deepEqual(parseAddress('broker-a.local:10911'), { host: 'broker-a.local', port: 10911 });
  assert.throws(() => parseAddress('nohost'), RemotingConnectError);
  assert.throws(() => parseAddress('h:0'), RemotingConnectError);
  assert.throws(() => parseAddress('h:70000'), RemotingConnectError);
});
