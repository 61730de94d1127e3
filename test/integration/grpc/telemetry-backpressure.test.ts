/**
 * A gRPC client that stops reading its Telemetry stream must not make the broker buffer commands
 * for it without bound (telemetry-handler.ts TELEMETRY_MAX_PENDING_COMMANDS). A raw HTTP/2 client
 * (node:http2, stream paused: no WINDOW_UPDATE, as a stalled reader) sends settings thousands of
 * times; the broker drops replies past the bound (with a warning) and, once the client reads, it
 * gets only what the HTTP/2 windows held plus the bounded queue.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoIncludeDir } from '../../../src/grpc/proto/messaging-service.js';
import { TELEMETRY_MAX_PENDING_COMMANDS } from '../../../src/grpc/telemetry-handler.js';
import type { Logger } from '../../../src/common/logging/logger.js';
import { startHarness, type Harness } from './grpc-harness.js';

function telemetryCodec(): grpc.MethodDefinition<object, Record<string, unknown>> {
  const def = protoLoader.loadSync('apache/rocketmq/v2/service.proto', { includeDirs: [protoIncludeDir()], keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { apache: { rocketmq: { v2: { MessagingService: { service: grpc.ServiceDefinition } } } } };
  return pkg.apache.rocketmq.v2.MessagingService.service.Telemetry as grpc.MethodDefinition<object, Record<string, unknown>>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Telemetry back-pressure', { timeout: 60_000 }, () => {
  let h: Harness;
  const warnings: string[] = [];
  const capture = (): Logger => ({ info() {}, error() {}, debug() {}, warn: (m: object | string) => void warnings.push(String(m)), child: () => capture() });

  before(async () => {
    h = await startHarness({}, capture());
  });
  after(async () => {
    await h?.stop();
  });

  it('a client that does not read gets its settings replies dropped past the bound; the stream keeps working', async () => {
    const codec = telemetryCodec();
    const session = http2.connect(`http://${h.endpoints}`);
    try {
      const req = session.request({
        ':method': 'POST',
        ':path': '/apache.rocketmq.v2.MessagingService/Telemetry',
        'content-type': 'application/grpc',
        te: 'trailers',
        'x-mq-client-id': 'slow-reader@1',
      });
      req.pause(); // read nothing: the stream's receive window is never reopened
      // a settings command with 200 subscriptions: its reply echoes them (~6 KB)
      const subscriptions = Array.from({ length: 200 }, (_, i) => ({ topic: { name: `SlowTopic${i}` }, expression: { type: 'TAG', expression: '*' } }));
      const body = codec.requestSerialize({ settings: { client_type: 'PUSH_CONSUMER', subscription: { group: { name: 'G_SLOW' }, subscriptions }, user_agent: { language: 'JAVA', version: '5.0.0' } } });
      const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), body]);
      frame.writeUInt32BE(body.length, 1);
      const sent = 2000;
      for (let i = 0; i < sent; i++) if (!req.write(frame)) await new Promise((r) => req.once('drain', r));
      const dropped = /telemetry stream of slow-reader@1: \d+ commands not read by the client; command dropped/;
      for (let i = 0; i < 400 && !warnings.some((w) => dropped.test(w)); i++) await sleep(50);
      assert.ok(warnings.some((w) => dropped.test(w)), `no drop warning; warnings: ${warnings.join(' | ')}`);

      // now read everything that was kept for the client
      let replies = 0;
      let pending = Buffer.alloc(0);
      req.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        while (pending.length >= 5 && pending.length >= 5 + pending.readUInt32BE(1)) {
          pending = pending.subarray(5 + pending.readUInt32BE(1));
          replies++;
        }
      });
      req.resume();
      let last = -1;
      for (let quiet = 0; quiet < 10; quiet = replies === last ? quiet + 1 : 0, last = replies) await sleep(50);
      assert.ok(replies >= TELEMETRY_MAX_PENDING_COMMANDS, `the bound was reached (${replies} replies)`);
      assert.ok(replies < sent / 4, `${replies} of ${sent} replies were kept for a client that did not read`);
      const before = replies;
      req.write(frame);
      for (let i = 0; i < 100 && replies === before; i++) await sleep(20);
      assert.equal(replies, before + 1, 'the stream still answers settings');
      req.end();
    } finally {
      session.close();
    }
  });
});
