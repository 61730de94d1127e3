/**
 * ProducerManager's client-id index (channelOfClient, the request-reply push target) stays in
 * step with every way an entry leaves: UNREGISTER_CLIENT, connection close, heartbeat expiry, a
 * channel re-registered under another client id. And remoting check-backs skip stand-in channels
 * (gRPC producers, which get theirs over Telemetry).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ProducerManager } from '../../../src/broker/client/producer-manager.js';
import { remotingTransactionChecker } from '../../../src/broker/transaction/remoting-transaction-checker.js';
import type { RemotingChannel } from '../../../src/remoting/processor/request-processor.js';
import { socketAddressOf } from '../../../src/common/message/msgid.js';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';
import type { CheckRequest } from '../../../src/broker/transaction/transactional-message-service.js';

class TestChannel implements RemotingChannel {
  closed = false;
  readonly sent: RemotingCommand[] = [];
  private readonly listeners: Array<() => void> = [];
  constructor(
    readonly id: string,
    readonly standIn = false,
    readonly remoteAddress = '127.0.0.1:1',
  ) {}
  send(cmd: RemotingCommand): void {
    this.sent.push(cmd);
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const l of this.listeners.splice(0)) l();
  }
  onClose(l: () => void): void {
    this.listeners.push(l);
  }
}

const clock = (t: { now: number }) => ({ nowMs: () => t.now });
const info = (channel: RemotingChannel, clientId: string) => ({ channel, clientId, language: 'JAVA', version: 0 });

describe('ProducerManager.channelOfClient (indexed by client id)', () => {
  it('finds a client in any group, and forgets it on unregister (of its last group), close and expiry', () => {
    const t = { now: 0 };
    const pm = new ProducerManager(clock(t), 120_000);
    const a = new TestChannel('a');
    const b = new TestChannel('b');
    pm.registerProducer('G1', info(a, 'cA'));
    pm.registerProducer('G2', info(a, 'cA'));
    pm.registerProducer('G1', info(b, 'cB'));
    assert.equal(pm.channelOfClient('cA'), a);
    assert.equal(pm.channelOfClient('cB'), b);
    assert.equal(pm.channelOfClient('nobody'), undefined);

    pm.unregisterProducer('G1', a, 'cA');
    assert.equal(pm.channelOfClient('cA'), a, 'still a producer of G2');
    pm.unregisterProducer('G2', a, 'cA');
    assert.equal(pm.channelOfClient('cA'), undefined);

    b.close();
    assert.equal(pm.channelOfClient('cB'), undefined);
    assert.deepEqual(pm.groupNames(), []);

    const c = new TestChannel('c');
    pm.registerProducer('G3', info(c, 'cC'));
    t.now = 120_001;
    assert.equal(pm.scanNotActiveChannel(), 1);
    assert.equal(pm.channelOfClient('cC'), undefined);
  });

  it('a channel re-registered under another client id answers only for the new id', () => {
    const pm = new ProducerManager(clock({ now: 0 }));
    const a = new TestChannel('a');
    pm.registerProducer('G', info(a, 'old'));
    pm.registerProducer('G', info(a, 'new'));
    assert.equal(pm.channelOfClient('old'), undefined);
    assert.equal(pm.channelOfClient('new'), a);
  });
});

describe('remoting check-back (CHECK_TRANSACTION_STATE) never goes to a stand-in channel', () => {
  it('picks the remoting connection of the group; a group of stand-ins only is declined', () => {
    const pm = new ProducerManager(clock({ now: 0 }));
    const grpcStandIn = new TestChannel('grpc:c1', true);
    const remoting = new TestChannel('r1');
    pm.registerProducer('TopicT', info(grpcStandIn, 'c1'));
    const checker = remotingTransactionChecker((g) => pm.channelsOf(g));
    const req = { producerGroup: 'TopicT', halfQueueOffset: 0, commitLogOffset: 0, transactionId: 'x', message: { topic: 'TopicT', properties: new Map(), msgId: 'm', storeHost: socketAddressOf('127.0.0.1', 1), bornHost: socketAddressOf('127.0.0.1', 2), body: Buffer.alloc(0), queueOffset: 0, commitLogOffset: 0, storeTimestamp: 0, bornTimestamp: 0, queueId: 0, flag: 0, sysFlag: 0, reconsumeTimes: 0, preparedTransactionOffset: 0, bodyCRC: 0, storeSize: 0 } } as unknown as CheckRequest;
    assert.equal(checker(req), false, 'only a gRPC stand-in is registered: left to the Telemetry checker');
    assert.equal(grpcStandIn.sent.length, 0);
    pm.registerProducer('TopicT', info(remoting, 'c2'));
    for (let i = 0; i < 4; i++) assert.equal(checker(req), true);
    assert.equal(remoting.sent.length, 4);
    assert.equal(grpcStandIn.sent.length, 0);
  });
});
