/**
 * GrpcConsumerRegistration over many clients: sessions that expire, clients that terminate, and
 * ConsumerManager's own expiry of a silent client leave nothing behind (no group, no channel kept
 * for a client), and a client heard again after the manager expired it is registered anew.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/common/time/clock.js';
import { ConsumerManager } from '../../../src/broker/client/consumer-manager.js';
import { ClientSessions } from '../../../src/grpc/client-sessions.js';
import { GrpcConsumerRegistration } from '../../../src/grpc/consumer-registration.js';

function consumer(sessions: ClientSessions, reg: GrpcConsumerRegistration, id: string, group: string): void {
  const s = sessions.touch(id);
  s.clientType = 'SIMPLE_CONSUMER';
  s.group = group;
  s.settings = { subscription: { group: { name: group }, subscriptions: [{ topic: { name: 'T' }, expression: { type: 'TAG', expression: '*' } }] }, user_agent: { version: '5.0.8' } } as never;
  reg.register(s, 'ipv4:127.0.0.1:5000');
}

test('1000 gRPC consumers: expiry and termination unregister every one; a client expired by the ConsumerManager comes back on its next heartbeat', () => {
  const clock = new ManualClock(1_000_000);
  const manager = new ConsumerManager(clock, 120_000);
  const reg = new GrpcConsumerRegistration(manager);
  const sessions = new ClientSessions(() => clock.nowMs(), 120_000, (s) => reg.unregister(s));
  for (let i = 0; i < 1000; i++) consumer(sessions, reg, `c${i}@1`, `G${i % 10}`);
  assert.equal(manager.groupNames().length, 10);
  assert.equal(manager.getConsumerGroupInfo('G3')!.channels.size, 100);
  // 500 terminate, the other 500 go silent and expire
  for (let i = 0; i < 500; i++) sessions.remove(`c${i}@1`);
  assert.equal(manager.getConsumerGroupInfo('G3')!.channels.size, 50);
  clock.advance(121_000);
  assert.equal(sessions.expire(), 500);
  assert.deepEqual(manager.groupNames(), [], 'no group left');
  assert.equal((reg as unknown as { channels: Map<string, unknown> }).channels.size, 0, 'no channel kept');

  // a live client the ConsumerManager expired (silent for 120 s, session kept by an open stream)
  consumer(sessions, reg, 'x@1', 'GX');
  clock.advance(121_000);
  assert.equal(manager.scanNotActiveChannel(), 1);
  assert.equal(manager.getConsumerGroupInfo('GX'), undefined);
  assert.equal((reg as unknown as { channels: Map<string, unknown> }).channels.size, 0);
  consumer(sessions, reg, 'x@1', 'GX');
  assert.equal(manager.getConsumerGroupInfo('GX')!.channels.size, 1, 'registered again');
});
