/**
 * GrpcClientRegistration over many clients: sessions that expire, clients that terminate, and
 * ConsumerManager's own expiry of a silent client leave nothing behind (no group, no channel kept
 * for a client), and a client heard again after the manager expired it is registered anew.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/common/time/clock.js';
import { ConsumerManager } from '../../../src/broker/client/consumer-manager.js';
import { ProducerManager } from '../../../src/broker/client/producer-manager.js';
import { ClientSessions } from '../../../src/grpc/client-sessions.js';
import { GrpcClientRegistration, clientVersionOrdinal } from '../../../src/grpc/client-registration.js';

function consumer(sessions: ClientSessions, reg: GrpcClientRegistration, id: string, group: string): void {
  const s = sessions.touch(id);
  s.clientType = 'SIMPLE_CONSUMER';
  s.group = group;
  s.settings = { subscription: { group: { name: group }, subscriptions: [{ topic: { name: 'T' }, expression: { type: 'TAG', expression: '*' } }] }, user_agent: { version: '5.0.8' } } as never;
  reg.register(s, 'ipv4:127.0.0.1:5000');
}

test('1000 gRPC consumers: expiry and termination unregister every one; a client expired by the ConsumerManager comes back on its next heartbeat', () => {
  const clock = new ManualClock(1_000_000);
  const manager = new ConsumerManager(clock, 120_000);
  const reg = new GrpcClientRegistration(manager, new ProducerManager(clock));
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

function producer(sessions: ClientSessions, reg: GrpcClientRegistration, id: string, topics: string[]): void {
  const s = sessions.touch(id);
  s.clientType = 'PRODUCER';
  s.language = 'JAVA';
  s.settings = { client_type: 'PRODUCER', publishing: { topics: topics.map((name) => ({ name })) }, user_agent: { language: 'JAVA', version: '5.0.7' } } as never;
  reg.register(s, 'ipv4:127.0.0.1:6000');
}

test('gRPC producers: one ProducerManager entry per publishing topic (group = topic), a stand-in channel; settings, termination, expiry and the manager\'s own expiry keep it in step', () => {
  const clock = new ManualClock(1_000_000);
  const producers = new ProducerManager(clock, 120_000);
  const reg = new GrpcClientRegistration(new ConsumerManager(clock, 120_000), producers);
  const sessions = new ClientSessions(() => clock.nowMs(), 120_000, (s) => reg.unregister(s));
  producer(sessions, reg, 'p1@1', ['TA', 'TB']);
  producer(sessions, reg, 'p2@1', ['TA']);
  assert.deepEqual(producers.groupNames().sort(), ['TA', 'TB']);
  assert.deepEqual(producers.clientIds('TA'), ['p1@1', 'p2@1']);
  const [entry] = producers.entriesOf('TB');
  assert.equal(entry!.clientId, 'p1@1');
  assert.equal(entry!.language, 'JAVA');
  assert.equal(entry!.channel.id, 'grpc:p1@1');
  assert.equal(entry!.channel.remoteAddress, '127.0.0.1:6000');
  assert.equal(entry!.channel.standIn, true);
  assert.equal(entry!.version, clientVersionOrdinal('5.0.7'));
  assert.equal(producers.channelsOf('TA').length, 2);
  assert.equal(producers.channelOfClient('p1@1'), undefined, 'no remoting push (reply message) to a gRPC stand-in');

  producer(sessions, reg, 'p1@1', ['TA']);
  assert.deepEqual(producers.groupNames().sort(), ['TA'], 'TB left with the settings that no longer name it');
  sessions.remove('p1@1');
  assert.deepEqual(producers.clientIds('TA'), ['p2@1']);
  clock.advance(121_000);
  assert.equal(sessions.expire(), 1);
  assert.deepEqual(producers.groupNames(), []);

  producer(sessions, reg, 'p3@1', ['TC']);
  clock.advance(121_000);
  assert.equal(producers.scanNotActiveChannel(), 1, 'the ProducerManager expires a producer without heartbeat');
  producer(sessions, reg, 'p3@1', ['TC']);
  assert.deepEqual(producers.clientIds('TC'), ['p3@1'], 'registered again on its next heartbeat');
});
