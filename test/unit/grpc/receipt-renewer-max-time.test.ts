/**
 * ReceiptRenewer and renewMaxTimeMillis (grpcMaxRenewMs), as Apache's DefaultReceiptHandleManager:
 * a push delivery held by a live client is renewed until it has been held `maxRenewMs`; the pass
 * that finds it due for renewal after that nacks it with the group's retry delay for its
 * reconsume count instead, so it is delivered again (attempt + 1) that long later, rather than
 * staying invisible for a whole renewal slice (before: tracking just stopped and the last
 * renewal ran out).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { PopStateStore } from '../../../src/broker/pop/pop-state-store.js';
import { PopService } from '../../../src/broker/pop/pop-service.js';
import { ClientSessions } from '../../../src/grpc/client-sessions.js';
import { ReceiptRenewer } from '../../../src/grpc/receipt-renewer.js';
import { retryBackoffMs } from '../../../src/grpc/settings-reply.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { FakePopBroker } from './fake-pop-broker.js';

test('held past maxRenewMs: renewed until then, then nacked with the retry backoff of its attempt and delivered again (attempt 2)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-renew-max-'));
  const clock = new ManualClock(1_000_000);
  const broker = new FakePopBroker(() => clock.nowMs());
  const state = PopStateStore.open({ dir, fs: new NodeFileSystem(), clock, flushIntervalMs: 1000, syncFlush: false, compactLogBytes: 1 << 20 });
  try {
    const pop = new PopService({ broker, state, config: { popInitFromMin: true, popMaxScanMessages: 2048 }, clock });
    const sessions = new ClientSessions(() => clock.nowMs());
    sessions.addStream('push@1', { write: () => true, closed: false, end: () => {} });
    const backoff = { grpcBackoffInitialMs: 1000, grpcBackoffMaxMs: 10_000, grpcBackoffMultiplier: 2 };
    const delays: Array<[string, number]> = [];
    const renewer = new ReceiptRenewer({
      pop,
      sessions,
      now: () => clock.nowMs(),
      intervalMs: 5000,
      invisibleMs: 20_000,
      maxRenewMs: 30_000,
      retryDelayMs: (group, n) => {
        delays.push([group, n]);
        return retryBackoffMs(backoff, n);
      },
      invisibleMsWhenClear: 1000,
      logger: silentLogger,
    });
    broker.createTopic('T', 1);
    broker.send('T', 0, 'held');
    const req = { group: 'G', topic: 'T', filter: null, batchSize: 1, invisibleMs: 20_000, fifo: false };
    const first = await pop.pop(req);
    assert.equal(first.messages.length, 1);
    const t0 = clock.nowMs();
    renewer.track('push@1', 'G', first.messages[0]!.receiptHandle, first.messages[0]!.attempt);

    const until = (): number | undefined => pop.invisibleUntilOf('G', first.messages[0]!.receiptHandle);
    for (let t = 5000; t <= 25_000; t += 5000) {
      clock.advance(5000);
      await renewer.renewDue();
      sessions.touch('push@1');
    }
    assert.equal(until(), t0 + 40_000, 'renewed at 10 s and 20 s by the 20 s slice');
    assert.equal(renewer.size, 1);

    clock.advance(5000); // 30 s held: due for renewal, and maxRenewMs reached
    await renewer.renewDue();
    assert.equal(renewer.size, 0, 'no longer tracked');
    assert.deepEqual(delays, [['G', 0]], 'the retry delay of a first delivery (reconsumeTimes 0)');
    assert.equal(until(), undefined, 'nacked: the client\'s handle is stale');

    clock.advance(999);
    assert.equal((await pop.pop(req)).messages.length, 0, 'invisible for the retry delay (1 s)');
    clock.advance(2);
    const again = await pop.pop(req);
    assert.equal(again.messages.length, 1, 'delivered again 1 s after the nack, not when the 40 s renewal would have ended');
    assert.equal(again.messages[0]!.attempt, 2);
    assert.equal(again.messages[0]!.message.body.toString(), 'held');

    // the second delivery, held as long, gets the backoff of reconsumeTimes 1 (2 s)
    renewer.track('push@1', 'G', again.messages[0]!.receiptHandle, again.messages[0]!.attempt);
    for (let i = 0; i < 6; i++) {
      clock.advance(5000);
      sessions.touch('push@1');
      await renewer.renewDue();
    }
    assert.deepEqual(delays.at(-1), ['G', 1]);
    assert.equal(retryBackoffMs(backoff, 1), 2000);
  } finally {
    await state.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('retryBackoffMs: min(max, initial × multiplier^n), n capped at 32', () => {
  const v = { grpcBackoffInitialMs: 1000, grpcBackoffMaxMs: 10_000, grpcBackoffMultiplier: 2 };
  assert.deepEqual([0, 1, 2, 3, 4, 100].map((n) => retryBackoffMs(v, n)), [1000, 2000, 4000, 8000, 10_000, 10_000]);
  assert.equal(retryBackoffMs({ ...v, grpcBackoffMaxMs: Number.MAX_SAFE_INTEGER }, 100), 1000 * 2 ** 32);
});
