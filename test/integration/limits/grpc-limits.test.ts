/**
 * gRPC front bounds against one real broker + front: a gzip bomb SendMessage is refused after a
 * bounded inflate, user properties are capped like Apache's proxy, and a stored zlib bomb
 * (remoting producer, sysFlag COMPRESSED) is left out of gRPC deliveries with a warning instead of
 * being inflated to 256 MiB per attempt. A normal send/receive works after each.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deflateSync, gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoIncludeDir } from '../../../src/grpc/proto/messaging-service.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand } from '../../../src/remoting/protocol/commands.js';
import { RequestCode } from '../../../src/remoting/codes/request-code.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { startHarness, type Harness } from '../grpc/grpc-harness.js';
import { CaptureLogger } from '../../support/capture-logger.js';

type Client = grpc.Client & Record<string, (...args: unknown[]) => unknown>;
const MiB = 1024 * 1024;

function newClient(endpoints: string): Client {
  const def = protoLoader.loadSync('apache/rocketmq/v2/service.proto', { includeDirs: [protoIncludeDir()], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { apache: { rocketmq: { v2: { MessagingService: new (a: string, c: grpc.ChannelCredentials, o: object) => Client } } } };
  return new pkg.apache.rocketmq.v2.MessagingService(endpoints, grpc.credentials.createInsecure(), { 'grpc.max_send_message_length': 8 * MiB });
}

function call<T>(c: Client, rpc: string, req: object): Promise<T> {
  const md = new grpc.Metadata();
  md.set('x-mq-client-id', 'limits-client@1');
  return new Promise((resolve, reject) => (c[rpc] as (r: object, m: grpc.Metadata, cb: (e: Error | null, r: T) => void) => void).call(c, req, md, (e, r) => (e ? reject(e) : resolve(r))));
}

function stream<T>(c: Client, rpc: string, req: object): Promise<T[]> {
  const md = new grpc.Metadata();
  md.set('x-mq-client-id', 'limits-client@1');
  const s = (c[rpc] as (r: object, m: grpc.Metadata, o: grpc.CallOptions) => grpc.ClientReadableStream<T>).call(c, req, md, { deadline: Date.now() + 10_000 });
  const out: T[] = [];
  return new Promise((resolve, reject) => {
    s.on('data', (d: T) => out.push(d));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

const message = (topic: string, body: Buffer, extra: { encoding?: string; props?: Record<string, string> } = {}) => ({
  topic: { name: topic },
  user_properties: extra.props ?? {},
  body,
  system_properties: { message_id: `M${Math.random().toString(16).slice(2)}`, body_encoding: extra.encoding ?? 'IDENTITY', message_type: 'NORMAL', born_host: 'h' },
});

describe('gRPC input bounds', { timeout: 60_000 }, () => {
  let h: Harness;
  let client: Client;
  const log = new CaptureLogger();

  before(async () => {
    h = await startHarness({}, log);
    client = newClient(h.endpoints);
  });

  after(async () => {
    client?.close();
    await h?.stop();
  });

  const assertNormalSendWorks = async (): Promise<void> => {
    const r = await call<{ status: { code: string } }>(client, 'SendMessage', { messages: [message('LIMITS_OK', Buffer.from('fine'))] });
    assert.equal(r.status.code, 'OK');
  };

  it('a 2 MB gzip body that inflates to 2 GiB is refused quickly, without the memory', async (t) => {
    const member = gzipSync(Buffer.alloc(64 * MiB)); // ~65 KB; gzip members concatenate
    const bomb = Buffer.concat(Array.from({ length: 32 }, () => member)); // 2 GiB inflated
    assert.ok(bomb.length > 1.5 * MiB && bomb.length < 4 * MiB, `bomb ${bomb.length} bytes`);
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    const r = await call<{ status: { code: string; message: string } }>(client, 'SendMessage', { messages: [message('LIMITS_BOMB', bomb, { encoding: 'GZIP' })] });
    const ms = performance.now() - t0;
    const grewMiB = (process.memoryUsage().rss - rss0) / MiB;
    t.diagnostic(`refused in ${ms.toFixed(0)} ms, rss +${grewMiB.toFixed(0)} MiB`);
    assert.equal(r.status.code, 'MESSAGE_BODY_TOO_LARGE');
    assert.match(r.status.message, /body_encoding GZIP, \d+ bytes\) inflates to more than the limit of 4194304 bytes/);
    assert.ok(ms < 1500, `took ${ms} ms`);
    assert.ok(grewMiB < 64, `rss grew ${grewMiB} MiB`);
    // a legitimate gzip body still works
    const ok = await call<{ status: { code: string } }>(client, 'SendMessage', { messages: [message('LIMITS_OK', gzipSync(Buffer.from('small')), { encoding: 'GZIP' })] });
    assert.equal(ok.status.code, 'OK');
    await assertNormalSendWorks();
  });

  it('user properties: more than 128, or more than 16 KiB, are refused (Apache proxy limits)', async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 129; i++) many[`k${i}`] = 'v';
    const r1 = await call<{ status: { code: string; message: string } }>(client, 'SendMessage', { messages: [message('LIMITS_OK', Buffer.from('x'), { props: many })] });
    assert.deepEqual([r1.status.code, r1.status.message], ['MESSAGE_PROPERTIES_TOO_LARGE', 'too many user properties (129), max is 128']);
    const r2 = await call<{ status: { code: string; message: string } }>(client, 'SendMessage', { messages: [message('LIMITS_OK', Buffer.from('x'), { props: { big: 'x'.repeat(16 * 1024) } })] });
    assert.deepEqual([r2.status.code, r2.status.message], ['MESSAGE_PROPERTIES_TOO_LARGE', 'the total size of user properties is 16387 bytes, max is 16384']);
    delete many.k128;
    const r3 = await call<{ status: { code: string } }>(client, 'SendMessage', { messages: [message('LIMITS_OK', Buffer.from('x'), { props: many })] });
    assert.equal(r3.status.code, 'OK');
  });

  it('a stored zlib body that inflates to 256 MiB is left out of gRPC deliveries with a warning, the next message is delivered', async (t) => {
    const remoting = new RemotingClient({ logger: silentLogger });
    t.after(() => remoting.close());
    const send = async (body: Buffer, sysFlag: number) => {
      const r = await remoting.invokeSync(`127.0.0.1:${h.broker.port}`,
        createRequestCommand(RequestCode.SEND_MESSAGE_V2, { a: 'P', b: 'LIMITS_ZLIB', c: 'TBW102', d: 1, e: 0, f: sysFlag, g: Date.now(), h: 0, i: '', j: 0, k: false }, body), 5000);
      assert.equal(r.code, ResponseCode.SUCCESS, r.remark ?? '');
    };
    const bomb = deflateSync(Buffer.alloc(256 * MiB), { level: 9 });
    await send(bomb, 1); // sysFlag COMPRESSED, zlib: what a remoting producer stores
    await send(deflateSync(Buffer.from('hello after the bomb')), 1);
    const mq = { topic: { name: 'LIMITS_ZLIB' }, id: 0, permission: 'READ_WRITE', accept_message_types: [] };
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    const got = await stream<Record<string, unknown>>(client, 'ReceiveMessage', { group: { name: 'LIMITS_G' }, message_queue: mq, batch_size: 16, invisible_duration: { seconds: 30, nanos: 0 }, long_polling_timeout: { seconds: 1, nanos: 0 } });
    const ms = performance.now() - t0;
    const grewMiB = (process.memoryUsage().rss - rss0) / MiB;
    t.diagnostic(`receive took ${ms.toFixed(0)} ms, rss +${grewMiB.toFixed(0)} MiB`);
    const bodies = got.filter((g) => g.content === 'message').map((g) => (g.message as { body: Buffer }).body.toString());
    assert.deepEqual(bodies, ['hello after the bomb']);
    assert.ok(ms < 1500, `took ${ms} ms`);
    assert.ok(grewMiB < 64, `rss grew ${grewMiB} MiB`);
    const warnings = log.matching('warn', 'cannot be delivered over gRPC');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /topic LIMITS_ZLIB, queue 0, offset 0\) cannot be delivered over gRPC: its compressed body \(zlib\) of \d+ bytes inflates to more than 4194304 bytes; left out of the reply to group LIMITS_G/);
    // PullMessage skips it the same way
    const pulled = await stream<Record<string, unknown>>(client, 'PullMessage', { group: { name: 'LIMITS_G' }, message_queue: mq, offset: 0, batch_size: 10, long_polling_timeout: { seconds: 0, nanos: 0 } });
    assert.deepEqual(pulled.filter((g) => g.content === 'message').map((g) => (g.message as { body: Buffer }).body.toString()), ['hello after the bomb']);
    await assertNormalSendWorks();
  });
});
