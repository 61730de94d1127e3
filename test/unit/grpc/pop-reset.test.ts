/**
 * Offset reset of a pop consumer group (docs/internals/pop.md "Offset reset"): the RESET record
 * (codec, table semantics, log replay after a crash, an old snapshot plus a new log) and
 * PopService.resetOffset (backwards → the same messages again, forwards → skipped, receipts from
 * before the reset refused without changing anything, a restart in between, slave refusal).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { PopStateStore } from '../../../src/broker/pop/pop-state-store.js';
import { PopStateTable } from '../../../src/broker/pop/pop-state-table.js';
import { decodePopLog, encodePopRecord } from '../../../src/broker/pop/pop-record-codec.js';
import { PopService, type PopRequest } from '../../../src/broker/pop/pop-service.js';
import { FakePopBroker } from './fake-pop-broker.js';

const ref = { group: 'G', topic: 'T', queueId: 0 };
const fsPort = new NodeFileSystem();

test('RESET record: codec round-trip (type 4, version 0 on disk) and torn tail', () => {
  const recs = [
    { type: 'MOVE' as const, ...ref, offset: 5 },
    { type: 'RESET' as const, group: 'grüppe', topic: 'T2', queueId: 3, offset: 2 },
    { type: 'POP' as const, ...ref, offset: 5, attempts: 1, invisibleUntilMs: 99, version: 7 },
  ];
  const reset = encodePopRecord(recs[1]);
  assert.equal(reset.readInt8(8), 4);
  assert.equal(reset.readBigInt64BE(9), 0n);
  assert.equal(reset.readBigInt64BE(17), 2n);
  const buf = Buffer.concat(recs.map(encodePopRecord));
  assert.deepEqual(decodePopLog(buf).records, recs);
  const unknown = Buffer.from(reset);
  unknown.writeInt8(9, 8);
  assert.match(decodePopLog(unknown).stopReason ?? '', /crc mismatch/);
});

test('RESET in the table: ack offset set backwards or forwards, every entry dropped, state created', () => {
  const t = new PopStateTable();
  t.apply({ type: 'MOVE', ...ref, offset: 10 });
  for (const off of [10, 11, 12]) t.apply({ type: 'POP', ...ref, offset: off, attempts: 2, invisibleUntilMs: 100, version: 50 + off });
  t.apply({ type: 'ACK', ...ref, offset: 10, version: 60 });
  assert.equal(t.get('G', 'T', 0)!.ackOffset, 11);
  t.apply({ type: 'RESET', ...ref, offset: 4 });
  assert.equal(t.get('G', 'T', 0)!.ackOffset, 4, 'backwards');
  assert.equal(t.get('G', 'T', 0)!.entries.size, 0);
  assert.equal(t.maxVersion, 62, 'a RESET does not touch versions');
  t.apply({ type: 'POP', ...ref, offset: 5, attempts: 1, invisibleUntilMs: 100, version: 70 });
  t.apply({ type: 'RESET', ...ref, offset: 20 });
  assert.deepEqual({ ack: t.get('G', 'T', 0)!.ackOffset, n: t.get('G', 'T', 0)!.entries.size }, { ack: 20, n: 0 }, 'forwards');
  // an ACK of a delivery from before the reset, below the new start: ignored
  t.apply({ type: 'ACK', ...ref, offset: 5, version: 70 });
  assert.equal(t.get('G', 'T', 0)!.entries.size, 0);
  t.apply({ type: 'RESET', group: 'G', topic: 'T', queueId: 7, offset: 3 });
  assert.equal(t.get('G', 'T', 7)!.ackOffset, 3);
});

test('RESET survives a crash (no close: log replay) and a compaction; an old format-1 snapshot without it still loads', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-popreset-'));
  const open = (): PopStateStore => PopStateStore.open({ dir, fs: fsPort, clock: new ManualClock(1_000), flushIntervalMs: 50, syncFlush: false, compactLogBytes: 1 << 20 });
  try {
    // a snapshot as written before RESET existed (format 1), with an entry in flight
    fs.writeFileSync(path.join(dir, 'snapshot.json'), JSON.stringify({ format: 1, generation: 3, maxVersion: 9, queues: [{ ...ref, ackOffset: 8, entries: [[8, 1, 5000, 9, 0], [9, 1, 5000, 9, 1]] }] }));
    let s = open();
    assert.deepEqual([s.table.get('G', 'T', 0)!.ackOffset, s.table.get('G', 'T', 0)!.entries.size], [8, 2]);
    await s.record({ type: 'RESET', ...ref, offset: 2 });
    await s.flush();
    // crash: no close; the RESET is only in pop-3.log
    s = open();
    assert.deepEqual([s.table.get('G', 'T', 0)!.ackOffset, s.table.get('G', 'T', 0)!.entries.size], [2, 0], 'replayed from the log');
    await s.record({ type: 'POP', ...ref, offset: 2, attempts: 1, invisibleUntilMs: 5000, version: s.nextVersion() });
    await s.close(); // compaction: snapshot of generation 5
    s = open();
    const st = s.table.get('G', 'T', 0)!;
    assert.equal(st.ackOffset, 2);
    assert.deepEqual([...st.entries.keys()], [2]);
    assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'snapshot.json'), 'utf8')).format, 1, 'snapshot format unchanged');
    await s.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

interface Rig {
  broker: FakePopBroker;
  clock: ManualClock;
  state: PopStateStore;
  pop: PopService;
  reopen(): Promise<void>;
  /** SIGKILL: the pop state store is not closed, the committed offsets are the persisted ones. */
  crash(): void;
  close(): Promise<void>;
}

function rig(): Rig {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-popreset-svc-'));
  const clock = new ManualClock(1_000_000);
  const broker = new FakePopBroker(() => clock.nowMs());
  const openState = (): PopStateStore => PopStateStore.open({ dir, fs: fsPort, clock, flushIntervalMs: 1000, syncFlush: false, compactLogBytes: 1 << 20 });
  const make = (state: PopStateStore): PopService => new PopService({ broker, state, config: { popInitFromMin: true, popMaxScanMessages: 2048 }, clock });
  const r: Rig = {
    broker,
    clock,
    state: openState(),
    pop: undefined as unknown as PopService,
    async reopen() {
      await r.state.close();
      r.state = openState();
      r.pop = make(r.state);
    },
    crash() {
      r.broker.crashOffsets();
      r.state = openState();
      r.pop = make(r.state);
    },
    async close() {
      await r.state.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  r.pop = make(r.state);
  return r;
}

const req = (over: Partial<PopRequest> = {}): PopRequest => ({ group: 'G', topic: 'T', filter: null, batchSize: 32, invisibleMs: 60_000, fifo: false, ...over });
const bodies = (r: { messages: Array<{ message: { body: Buffer } }> }): string[] => r.messages.map((m) => m.message.body.toString());

test('resetOffset backwards hands the same messages out again (attempt 1), forwards skips; receipts from before are refused and change nothing', async () => {
  const r = rig();
  try {
    r.broker.createTopic('T', 1);
    for (let i = 0; i < 6; i++) r.broker.send('T', 0, `m${i}`);
    const first = await r.pop.pop(req({ batchSize: 4 }));
    assert.deepEqual(bodies(first), ['m0', 'm1', 'm2', 'm3']);
    for (const m of first.messages.slice(0, 2)) assert.equal((await r.pop.ack('G', m.receiptHandle)).ok, true);
    assert.equal(r.broker.committedOffset('G', 'T', 0), 2);
    // m2, m3 in flight; reset back to 1
    await r.pop.resetOffset('G', 'T', 0, 1);
    assert.equal(r.broker.committedOffset('G', 'T', 0), 1, 'the consumer offset follows the reset');
    assert.equal(r.pop.popStartOffset('G', 'T', 0), 1);
    const old = await r.pop.ack('G', first.messages[2]!.receiptHandle);
    assert.equal(old.ok, false, 'a receipt from before the reset is refused');
    const again = await r.pop.pop(req());
    assert.deepEqual(bodies(again), ['m1', 'm2', 'm3', 'm4', 'm5'], 'replayed from offset 1, in-flight ones included');
    assert.deepEqual(again.messages.map((m) => m.attempt), [1, 1, 1, 1, 1]);
    const stale = await r.pop.ack('G', first.messages[3]!.receiptHandle);
    assert.equal(stale.ok, false, 'the old delivery of m3 is stale after its redelivery');
    assert.equal(r.state.table.get('G', 'T', 0)!.entries.get(3)!.acked, false, 'the stale ack did not ack the new delivery');
    for (const m of again.messages.slice(0, 2)) assert.equal((await r.pop.ack('G', m.receiptHandle)).ok, true);
    assert.equal(r.broker.committedOffset('G', 'T', 0), 3);

    // forwards past m3..m5 (in flight) and the new m6
    r.broker.send('T', 0, 'm6');
    r.broker.send('T', 0, 'm7');
    await r.pop.resetOffset('G', 'T', 0, 7);
    assert.equal((await r.pop.ack('G', again.messages[4]!.receiptHandle)).ok, false, 'm5 is below the new start');
    r.clock.advance(120_000); // nothing in flight comes back either
    assert.deepEqual(bodies(await r.pop.pop(req())), ['m7']);
  } finally {
    await r.close();
  }
});

test('a reset survives a broker restart; a reset on a slave is refused', async () => {
  const r = rig();
  try {
    r.broker.createTopic('T', 2);
    for (let i = 0; i < 3; i++) r.broker.send('T', 1, `q1-${i}`);
    const got = await r.pop.pop(req({ queueId: 1 }));
    for (const m of got.messages) await r.pop.ack('G', m.receiptHandle);
    assert.equal(r.pop.popStartOffset('G', 'T', 1), 3);
    await r.pop.resetOffset('G', 'T', 1, 0);
    assert.equal(r.broker.committedOffset('G', 'T', 1), 0);
    await r.reopen();
    assert.equal(r.pop.popStartOffset('G', 'T', 1), 0);
    assert.deepEqual(bodies(await r.pop.pop(req({ queueId: 1 }))), ['q1-0', 'q1-1', 'q1-2']);
    r.pop.setMaster(false);
    await assert.rejects(r.pop.resetOffset('G', 'T', 1, 0), /Can not reset offset in slave broker/);
    r.pop.setMaster(true);
    await assert.rejects(r.pop.resetOffset('G', 'T', 1, -1), /non-negative/);
  } finally {
    await r.close();
  }
});

test('a backward reset survives a crash right after it: the committed offset is made durable with the RESET record (else the stale, higher one on disk wins the pop start)', async () => {
  const r = rig();
  try {
    r.broker.createTopic('T', 1);
    for (let i = 0; i < 3; i++) r.broker.send('T', 0, `m${i}`);
    const got = await r.pop.pop(req());
    for (const m of got.messages) assert.equal((await r.pop.ack('G', m.receiptHandle)).ok, true);
    assert.equal(r.broker.committedOffset('G', 'T', 0), 3);
    await r.broker.persistOffsets(); // the periodic consumerOffset.json flush, before the reset
    await r.pop.resetOffset('G', 'T', 0, 0);
    await r.state.flush();
    r.crash();
    assert.equal(r.pop.popStartOffset('G', 'T', 0), 0);
    assert.deepEqual(bodies(await r.pop.pop(req())), ['m0', 'm1', 'm2']);
  } finally {
    await r.close();
  }
});
