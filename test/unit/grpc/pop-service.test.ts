import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { PopStateStore } from '../../../src/broker/pop/pop-state-store.js';
import { PopService, type PopRequest } from '../../../src/broker/pop/pop-service.js';
import { buildSubscriptionData, createTagMessageFilter } from '../../../src/broker/filter/subscription-data.js';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { FakePopBroker } from './fake-pop-broker.js';

interface Rig {
  clock: ManualClock;
  broker: FakePopBroker;
  state: PopStateStore;
  pop: PopService;
  dir: string;
  reopen(): Promise<void>;
  close(): Promise<void>;
}

function rig(): Rig {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-popsvc-'));
  const clock = new ManualClock(1_000_000);
  const broker = new FakePopBroker(() => clock.nowMs());
  const openState = (): PopStateStore =>
    PopStateStore.open({ dir, fs: new NodeFileSystem(), clock, flushIntervalMs: 1000, syncFlush: false, compactLogBytes: 1 << 20 });
  const r: Rig = {
    clock,
    broker,
    dir,
    state: openState(),
    pop: undefined as unknown as PopService,
    async reopen() {
      await r.state.close();
      r.state = openState();
      r.pop = new PopService({ broker, state: r.state, config: { popInitFromMin: true, popMaxScanMessages: 2048 }, clock });
    },
    async close() {
      await r.state.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  r.pop = new PopService({ broker, state: r.state, config: { popInitFromMin: true, popMaxScanMessages: 2048 }, clock });
  return r;
}

const req = (over: Partial<PopRequest> = {}): PopRequest => ({ group: 'G', topic: 'T', filter: null, batchSize: 10, invisibleMs: 10_000, fifo: false, ...over });
const bodies = (r: { messages: Array<{ message: { body: Buffer } }> }): string[] => r.messages.map((m) => m.message.body.toString());

test('pop hands out, hides, redelivers after invisibility with attempt + 1, and rejects stale handles', async () => {
  const r = rig();
  try {
    r.broker.createTopic('T', 2);
    r.broker.send('T', 0, 'a');
    r.broker.send('T', 1, 'b');
    const first = await r.pop.pop(req());
    assert.deepEqual(bodies(first).sort(), ['a', 'b']);
    assert.ok(first.messages.every((m) => m.attempt === 1 && m.invisibleUntilMs === 1_010_000));
    assert.deepEqual(bodies(await r.pop.pop(req())), [], 'invisible messages are not handed out again');
    assert.deepEqual(bodies(await r.pop.pop(req({ group: 'G2' }))).sort(), ['a', 'b'], 'another group gets every message');
    const a = first.messages.find((m) => m.message.body.toString() === 'a')!;
    assert.equal((await r.pop.ack('G', a.receiptHandle)).ok, true);
    const again = await r.pop.ack('G', a.receiptHandle);
    assert.equal(again.ok, false);
    r.clock.advance(10_000);
    const second = await r.pop.pop(req());
    assert.deepEqual(bodies(second), ['b']);
    assert.equal(second.messages[0]!.attempt, 2);
    const b1 = first.messages.find((m) => m.message.body.toString() === 'b')!;
    const stale = await r.pop.ack('G', b1.receiptHandle);
    assert.equal(stale.ok, false);
    assert.match((stale as { reason: string }).reason, /stale/);
    assert.equal((await r.pop.ack('G', second.messages[0]!.receiptHandle)).ok, true);
    assert.equal(r.broker.committedOffset('G', 'T', 0), 1);
    assert.equal(r.broker.committedOffset('G', 'T', 1), 1);
    assert.equal((await r.pop.ack('G', 'garbage')).ok, false);
  } finally {
    await r.close();
  }
});

test('change invisible duration issues a new handle and invalidates the old one', async () => {
  const r = rig();
  try {
    r.broker.createTopic('T', 1);
    r.broker.send('T', 0, 'a');
    const [m] = (await r.pop.pop(req())).messages;
    const changed = await r.pop.changeInvisibleDuration('G', m!.receiptHandle, 60_000);
    assert.equal(changed.ok, true);
    assert.notEqual(changed.receiptHandle, m!.receiptHandle);
    r.clock.advance(30_000);
    assert.deepEqual(bodies(await r.pop.pop(req())), [], 'still invisible after the original 10 s');
    assert.equal((await r.pop.ack('G', m!.receiptHandle)).ok, false, 'old handle is stale');
    assert.equal((await r.pop.ack('G', changed.receiptHandle!)).ok, true);
  } finally {
    await r.close();
  }
});

test('a handle whose invisible time is over is expired: ack and changeInvisibleDuration refused (as Apache proxy), the message comes back', async () => {
  const r = rig();
  try {
    r.broker.createTopic('T', 1);
    r.broker.send('T', 0, 'a');
    const [m] = (await r.pop.pop(req({ invisibleMs: 1000 }))).messages;
    r.clock.advance(999);
    assert.equal(r.pop.checkLiveHandle('G', m!.receiptHandle).ok, true, 'still valid 1 ms before the end');
    r.clock.advance(1);
    const ack = await r.pop.ack('G', m!.receiptHandle);
    assert.equal(ack.ok, false);
    assert.match((ack as { reason: string }).reason, /receipt handle is expired: the invisible time ended 0 ms ago/);
    const change = await r.pop.changeInvisibleDuration('G', m!.receiptHandle, 5000);
    assert.equal(change.ok, false);
    assert.match((change as { reason: string }).reason, /expired/);
    assert.equal(r.broker.committedOffset('G', 'T', 0), 0, 'nothing acked');
    const again = (await r.pop.pop(req())).messages;
    assert.deepEqual(again.map((x) => [x.message.body.toString(), x.attempt]), [['a', 2]]);
    assert.equal((await r.pop.ack('G', again[0]!.receiptHandle)).ok, true);
    assert.equal(r.broker.committedOffset('G', 'T', 0), 1);
  } finally {
    await r.close();
  }
});

test('renew extends the invisibility and keeps the handle valid', async () => {
  const r = rig();
  try {
    r.broker.createTopic('T', 1);
    r.broker.send('T', 0, 'a');
    const [m] = (await r.pop.pop(req({ invisibleMs: 1000 }))).messages;
    r.clock.advance(900);
    assert.equal((await r.pop.renew('G', m!.receiptHandle, 1000)).ok, true);
    assert.equal(r.pop.invisibleUntilOf('G', m!.receiptHandle), 1_001_900);
    r.clock.advance(500);
    assert.deepEqual(bodies(await r.pop.pop(req())), [], 'still invisible after the first second');
    assert.equal((await r.pop.ack('G', m!.receiptHandle)).ok, true, 'the original handle still acks');
    assert.equal((await r.pop.renew('G', m!.receiptHandle, 1000)).ok, false, 'nothing to renew after the ack');
  } finally {
    await r.close();
  }
});

test('a message past max delivery attempts goes to %DLQ%<group>, is acked and counted as dead-lettered', async () => {
  const r = rig();
  try {
    r.broker.maxAttempts = 2;
    r.broker.createTopic('T', 1);
    r.broker.send('T', 0, 'x', { KEYS: 'k1', TAGS: 'tagA' });
    for (let attempt = 1; attempt <= 2; attempt++) {
      const got = await r.pop.pop(req({ invisibleMs: 1000 }));
      assert.equal(got.messages[0]!.attempt, attempt);
      r.clock.advance(1000);
    }
    assert.deepEqual(bodies(await r.pop.pop(req())), []);
    await new Promise((res) => setImmediate(res));
    const dlq = r.broker.queues.get('%DLQ%G')![0]!;
    assert.equal(dlq.length, 1);
    const m = decodeRecord(dlq[0]!);
    assert.equal(m.body.toString(), 'x');
    assert.equal(m.reconsumeTimes, 2);
    assert.equal(m.properties.get('KEYS'), 'k1');
    assert.equal(m.properties.get('DLQ_ORIGIN_TOPIC'), 'T');
    assert.equal(m.properties.get('DLQ_ORIGIN_MESSAGE_ID'), 'U-x');
    assert.deepEqual(r.broker.deadLettered, ['G@T'], 'counted as a dead-lettering of T by G (DLQ_PUT_NUMS, rocketmq_send_to_dlq_messages_total)');
    assert.equal(r.state.table.get('G', 'T', 0)!.ackOffset, 1);
    r.clock.advance(60_000);
    assert.deepEqual(bodies(await r.pop.pop(req())), []);
  } finally {
    await r.close();
  }
});

test('FIFO: a message group is held back while an earlier message of it is in flight', async () => {
  const r = rig();
  try {
    r.broker.createTopic('T', 1);
    r.broker.send('T', 0, 'a1', { __SHARDINGKEY: 'A' });
    r.broker.send('T', 0, 'a2', { __SHARDINGKEY: 'A' });
    r.broker.send('T', 0, 'b1', { __SHARDINGKEY: 'B' });
    const one = await r.pop.pop(req({ fifo: true, batchSize: 1 }));
    assert.deepEqual(bodies(one), ['a1']);
    assert.deepEqual(bodies(await r.pop.pop(req({ fifo: true }))), ['b1'], 'a2 waits for a1');
    await r.pop.ack('G', one.messages[0]!.receiptHandle);
    assert.deepEqual(bodies(await r.pop.pop(req({ fifo: true }))), ['a2']);
  } finally {
    await r.close();
  }
});

test('tag filter: unmatched messages are skipped and the ack offset moves over them', async () => {
  const r = rig();
  try {
    r.broker.createTopic('T', 1);
    r.broker.send('T', 0, 'n1', { TAGS: 'no' });
    r.broker.send('T', 0, 'y1', { TAGS: 'yes' });
    r.broker.send('T', 0, 'n2', { TAGS: 'no' });
    const filter = createTagMessageFilter(buildSubscriptionData('T', 'yes'));
    const got = await r.pop.pop(req({ filter }));
    assert.deepEqual(bodies(got), ['y1']);
    await r.pop.ack('G', got.messages[0]!.receiptHandle);
    assert.deepEqual(bodies(await r.pop.pop(req({ filter }))), []);
    assert.equal(r.state.table.get('G', 'T', 0)!.ackOffset, 3);
  } finally {
    await r.close();
  }
});

test('acks and invisibility survive a restart of the pop state', async () => {
  const r = rig();
  try {
    r.broker.createTopic('T', 1);
    for (const b of ['m0', 'm1', 'm2', 'm3']) r.broker.send('T', 0, b);
    const got = await r.pop.pop(req({ batchSize: 3 }));
    assert.deepEqual(bodies(got), ['m0', 'm1', 'm2']);
    await r.pop.ack('G', got.messages[0]!.receiptHandle);
    await r.pop.ack('G', got.messages[2]!.receiptHandle);
    await r.reopen();
    assert.deepEqual(bodies(await r.pop.pop(req())), ['m3'], 'm1 still invisible, m0/m2 acked');
    assert.equal((await r.pop.ack('G', got.messages[1]!.receiptHandle)).ok, true, 'handles stay valid across restarts');
    r.clock.advance(10_000);
    const later = await r.pop.pop(req());
    assert.deepEqual(bodies(later), ['m3']);
    assert.equal(later.messages[0]!.attempt, 2);
  } finally {
    await r.close();
  }
});

test('role: a slave pops and writes nothing; a promoted replica starts from the replicated consumer offsets; a demoted master stops', async () => {
  const r = rig();
  try {
    r.broker.createTopic('T', 1);
    for (const b of ['m0', 'm1', 'm2', 'm3', 'm4']) r.broker.send('T', 0, b);
    // master: hand out all five, ack the first two
    const first = await r.pop.pop(req({ invisibleMs: 1000 }));
    assert.deepEqual(bodies(first), ['m0', 'm1', 'm2', 'm3', 'm4']);
    for (const m of first.messages.slice(0, 2)) assert.equal((await r.pop.ack('G', m.receiptHandle)).ok, true);
    assert.equal(r.broker.committedOffset('G', 'T', 0), 2);
    // demoted: nothing handed out (not even what became visible), no state written, writes refused
    assert.equal(r.pop.setMaster(false), 0);
    assert.equal(r.pop.isMaster, false);
    r.clock.advance(5_000);
    const stateBefore = JSON.stringify(r.state.table.toSnapshot());
    const onSlave = await r.pop.pop(req());
    assert.equal(onSlave.messages.length, 0);
    assert.equal(r.pop.hasVisibleMessage('G', 'T', -1), false, 'NOTIFICATION: no message on a slave');
    const ack = await r.pop.ack('G', first.messages[2]!.receiptHandle);
    assert.equal(ack.ok, false);
    assert.match((ack as { reason: string }).reason, /not the master/);
    assert.equal(JSON.stringify(r.state.table.toSnapshot()), stateBefore, 'no pop state written');
    assert.equal(r.broker.committedOffset('G', 'T', 0), 2, 'no consumer offset written');
    // meanwhile the other master consumed up to 4; slave synchronize copied its offset here
    r.broker.commitOffset('G', 'T', 0, 4);
    // promoted again: the ack offset is raised to the replicated one, only m4 (never acked there) comes back
    assert.equal(r.pop.setMaster(true), 1);
    assert.equal(r.state.table.get('G', 'T', 0)!.ackOffset, 4);
    const again = await r.pop.pop(req());
    assert.deepEqual(bodies(again), ['m4']);
    assert.equal(again.messages[0]!.attempt, 2, 'm4 was delivered once on this replica before');
    assert.equal(r.pop.setMaster(true), 0, 'no change, nothing moved');
  } finally {
    await r.close();
  }
});

test('a committed consumer offset beyond the pop state (a pull consumer of the group went further) is where the next pop starts (Apache getPopOffset)', async () => {
  const r = rig();
  try {
    r.broker.createTopic('T', 1);
    for (const b of ['m0', 'm1', 'm2', 'm3', 'm4', 'm5']) r.broker.send('T', 0, b);
    const first = await r.pop.pop(req({ batchSize: 2 }));
    assert.deepEqual(bodies(first), ['m0', 'm1']);
    for (const m of first.messages) assert.equal((await r.pop.ack('G', m.receiptHandle)).ok, true);
    assert.equal(r.broker.committedOffset('G', 'T', 0), 2);
    // the group is then consumed by pull elsewhere, which commits offset 4
    r.broker.commitOffset('G', 'T', 0, 4);
    assert.equal(r.pop.hasVisibleMessage('G', 'T', 0), true);
    assert.deepEqual(bodies(await r.pop.peek('G', 'T', 0, 10, null)), ['m4', 'm5'], 'peek starts there too');
    const next = await r.pop.pop(req());
    assert.deepEqual(bodies(next), ['m4', 'm5'], 'm2, m3 were consumed by the pull consumer: not re-delivered');
    for (const m of next.messages) assert.equal((await r.pop.ack('G', m.receiptHandle)).ok, true);
    assert.equal(r.broker.committedOffset('G', 'T', 0), 6);
    assert.equal(r.pop.hasVisibleMessage('G', 'T', 0), false);
    // a committed offset past the queue end is corrected to the max offset (Apache: OFFSET_OVERFLOW_BADLY → max)
    r.broker.send('T', 0, 'm6');
    r.broker.commitOffset('G', 'T', 0, 100);
    assert.deepEqual(bodies(await r.pop.pop(req())), []);
    assert.equal(r.broker.committedOffset('G', 'T', 0), 7);
    r.broker.send('T', 0, 'm7');
    assert.deepEqual(bodies(await r.pop.pop(req())), ['m7']);
  } finally {
    await r.close();
  }
});
