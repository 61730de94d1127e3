/**
 * PullRequestHoldService: a connection that closes takes every pull it had parked with it, also
 * when it held several on the same queue (a client with two groups subscribed to one topic holds
 * one pull per group on each queue). Soak finding: the close handler removed entries from the
 * list it was iterating, so every second held pull of the connection stayed parked (timer, request
 * and channel referenced) until its suspend timeout.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PullRequestHoldService, type PullRequest } from '../../../src/broker/longpolling/pull-request-hold-service.js';
import type { RemotingChannel } from '../../../src/remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../../src/remoting/protocol/remoting-command.js';

class FakeChannel implements RemotingChannel {
  closed = false;
  private readonly listeners: Array<() => void> = [];
  constructor(readonly id: string, readonly remoteAddress = `127.0.0.1:${id}`) {}
  send(): void {}
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const l of this.listeners) l();
  }
  onClose(listener: () => void): void {
    this.listeners.push(listener);
  }
}

describe('PullRequestHoldService and closing connections', () => {
  it('drops every pull a closed connection held, several on one queue included', async () => {
    const woken: PullRequest[] = [];
    const svc = new PullRequestHoldService({ clock: { nowMs: () => Date.now() }, maxOffsetOf: () => 0, wakeup: async (r) => void woken.push(r), checkIntervalMs: 60_000 });
    const a = new FakeChannel('a');
    const b = new FakeChannel('b');
    const hold = (channel: RemotingChannel, queueId: number, group: string): void =>
      svc.suspendPullRequest({ channel, request: { extFields: { consumerGroup: group } } as unknown as RemotingCommand, topic: 'T', queueId, pullFromThisOffset: 0, suspendTimestamp: Date.now(), timeoutMillis: 30_000, subscription: null });
    for (const g of ['G1', 'G2', 'G3', 'G4']) hold(a, 0, g);
    hold(b, 0, 'G1');
    hold(a, 1, 'G1');
    hold(a, 1, 'G2');
    assert.equal(svc.size, 7);
    a.close();
    assert.equal(svc.size, 1, 'only the other connection\'s pull is still held');
    // the survivor is still answered on arrival, the dropped ones are not
    svc.notifyMessageArriving('T', 0, 1);
    await new Promise((r) => setImmediate(r));
    assert.equal(woken.length, 1);
    assert.equal(woken[0]!.channel, b);
    assert.equal(svc.size, 0);
    await svc.shutdown();
  });
});
