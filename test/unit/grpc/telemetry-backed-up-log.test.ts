/**
 * The "commands not read by the client" warning of a backed-up Telemetry stream is rate limited
 * under one fixed key: RateLimitedLog keeps an entry per key for ever, so a key holding the
 * client id (a header any peer chooses) grew by one entry per client id that backed up its stream,
 * and many stalled clients each got their own line every 10 s.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import { telemetryHandler, TELEMETRY_MAX_PENDING_COMMANDS } from '../../../src/grpc/telemetry-handler.js';
import { ClientSessions } from '../../../src/grpc/client-sessions.js';
import type { GrpcServices } from '../../../src/grpc/grpc-services.js';

/** A Telemetry call whose client reads nothing: every command written stays pending. */
function stalledCall(clientId: string): EventEmitter & { writableLength: number; cancelled: boolean } {
  const call = Object.assign(new EventEmitter(), {
    writableLength: 0,
    cancelled: false,
    metadata: new grpc.Metadata(),
    getPeer: () => 'ipv4:127.0.0.1:1',
    write(): boolean {
      call.writableLength++;
      return false;
    },
    end(): void {},
  });
  call.metadata.set('x-mq-client-id', clientId);
  return call;
}

test('backed-up Telemetry streams of many clients: one warning key, one line per interval', () => {
  const warnings: string[] = [];
  const sessions = new ClientSessions(() => 0);
  const services = {
    ctx: { config: { maxMessageSize: 4 * 1024 * 1024, enablePropertyFilter: false }, subscriptionGroupManager: { findSubscriptionGroupConfig: () => undefined } },
    config: { grpcMaxBodySizeBytes: 4 * 1024 * 1024, grpcProducerMaxAttempts: 3, grpcBackoffInitialMs: 10, grpcBackoffMaxMs: 1000, grpcBackoffMultiplier: 2, grpcReceiveBatchSize: 32, grpcPushLongPollingTimeoutMs: 20000 },
    sessions,
    registration: { register() {} },
    logger: { info() {}, error() {}, debug() {}, warn: (m: string) => void warnings.push(m), child() { return this; } },
  } as unknown as GrpcServices;
  const handler = telemetryHandler(services);
  const settings = { settings: { client_type: 'PRODUCER', publishing: { topics: [] } } };
  for (let c = 0; c < 50; c++) {
    const call = stalledCall(`stalled-${c}@1`);
    handler(call as never);
    for (let i = 0; i < TELEMETRY_MAX_PENDING_COMMANDS + 3; i++) call.emit('data', settings);
    assert.equal(call.writableLength, TELEMETRY_MAX_PENDING_COMMANDS, 'replies past the bound are dropped');
  }
  const backedUp = warnings.filter((w) => /commands not read by the client; command dropped/.test(w));
  assert.equal(backedUp.length, 1, `one line for all 50 clients within the interval, got ${backedUp.length}`);
});
