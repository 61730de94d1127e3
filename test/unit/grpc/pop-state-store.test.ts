import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { PopSnapshotCorruptError, PopStateStore } from '../../../src/broker/pop/pop-state-store.js';
import { PopStateTable } from '../../../src/broker/pop/pop-state-table.js';
import { decodePopLog, encodePopRecord } from '../../../src/broker/pop/pop-record-codec.js';
import { decodeReceiptHandle, encodeReceiptHandle, ReceiptHandleError } from '../../../src/broker/pop/receipt-handle.js';

const fsPort = new NodeFileSystem();

function tmpDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-pop-'));
}

function open(dir: string, clock = new ManualClock(1_000), compactLogBytes = 1 << 20): PopStateStore {
  return PopStateStore.open({ dir, fs: fsPort, clock, flushIntervalMs: 50, syncFlush: false, compactLogBytes });
}

const ref = { group: 'G', topic: 'T', queueId: 0 };

test('receipt handle round-trips and rejects garbage', () => {
  const h = { brokerName: 'broker-a', topic: '%RETRY%g', queueId: 3, queueOffset: 12, commitLogOffset: 2 ** 40, version: 1_700_000_000_000_001, invisibleUntilMs: 1_700_000_030_000, attempt: 2 };
  const text = encodeReceiptHandle(h);
  assert.deepEqual(decodeReceiptHandle(text), h);
  for (const bad of ['', 'x', '1', '1abc', '2' + text.slice(1), text.slice(0, -3)]) {
    assert.throws(() => decodeReceiptHandle(bad), ReceiptHandleError, bad);
  }
});

test('pop record codec round-trips and stops at a torn or corrupted record', () => {
  const recs = [
    { type: 'MOVE' as const, ...ref, offset: 5 },
    { type: 'POP' as const, ...ref, offset: 5, attempts: 1, invisibleUntilMs: 99, version: 7 },
    { type: 'ACK' as const, group: 'grüppe', topic: 'T2', queueId: 1, offset: 9, version: 8 },
  ];
  const buf = Buffer.concat(recs.map(encodePopRecord));
  assert.deepEqual(decodePopLog(buf).records, recs);
  const torn = decodePopLog(buf.subarray(0, buf.length - 3));
  assert.equal(torn.records.length, 2);
  assert.equal(torn.validBytes, encodePopRecord(recs[0]).length + encodePopRecord(recs[1]).length);
  const flipped = Buffer.from(buf);
  flipped[encodePopRecord(recs[0]).length + 20] ^= 0xff;
  const bad = decodePopLog(flipped);
  assert.equal(bad.records.length, 1);
  assert.match(bad.stopReason ?? '', /crc mismatch/);
});

test('state table: acks advance the ack offset over contiguous acked entries only', () => {
  const t = new PopStateTable();
  t.apply({ type: 'MOVE', ...ref, offset: 10 });
  for (const off of [10, 11, 12]) t.apply({ type: 'POP', ...ref, offset: off, attempts: 1, invisibleUntilMs: 100, version: off });
  t.apply({ type: 'ACK', ...ref, offset: 11, version: 11 });
  assert.equal(t.get('G', 'T', 0)!.ackOffset, 10);
  t.apply({ type: 'ACK', ...ref, offset: 10, version: 10 });
  assert.equal(t.get('G', 'T', 0)!.ackOffset, 12);
  assert.deepEqual([...t.get('G', 'T', 0)!.entries.keys()], [12]);
  t.apply({ type: 'POP', ...ref, offset: 3, attempts: 1, invisibleUntilMs: 1, version: 20 });
  assert.equal(t.get('G', 'T', 0)!.entries.has(3), false, 'records below the ack offset are ignored');
  t.apply({ type: 'MOVE', ...ref, offset: 4 });
  assert.equal(t.get('G', 'T', 0)!.ackOffset, 12, 'MOVE never goes back');
});

test('pop state survives reopen, a torn log tail, and compaction', async () => {
  const dir = tmpDir();
  try {
    let s = open(dir);
    await s.record({ type: 'MOVE', ...ref, offset: 0 });
    const v1 = s.nextVersion();
    const v2 = s.nextVersion();
    assert.ok(v2 > v1);
    await s.record({ type: 'POP', ...ref, offset: 0, attempts: 1, invisibleUntilMs: 5000, version: v1 });
    await s.record({ type: 'POP', ...ref, offset: 1, attempts: 1, invisibleUntilMs: 5000, version: v2 });
    await s.record({ type: 'ACK', ...ref, offset: 0, version: v1 });
    await s.flush();
    // Simulate a crash: no close, then a torn half-record at the tail.
    const log = path.join(dir, 'pop-0.log');
    fs.appendFileSync(log, encodePopRecord({ type: 'ACK', ...ref, offset: 1, version: v2 }).subarray(0, 10));
    s = open(dir);
    const st = s.table.get('G', 'T', 0)!;
    assert.equal(st.ackOffset, 1);
    assert.deepEqual(st.entries.get(1), { attempts: 1, invisibleUntilMs: 5000, version: v2, acked: false });
    assert.ok(s.nextVersion() > v2, 'versions keep growing after a restart');
    await s.record({ type: 'ACK', ...ref, offset: 1, version: v2 });
    await s.compact();
    assert.deepEqual(fs.readdirSync(dir).sort(), ['pop-1.log', 'snapshot.json']);
    await s.record({ type: 'POP', ...ref, offset: 2, attempts: 3, invisibleUntilMs: 7, version: 1 });
    await s.close();
    s = open(dir);
    assert.equal(s.table.get('G', 'T', 0)!.ackOffset, 2);
    assert.equal(s.table.get('G', 'T', 0)!.entries.get(2)!.attempts, 3);
    await s.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('crash between log switch and snapshot write replays both logs', async () => {
  const dir = tmpDir();
  try {
    const s = open(dir);
    await s.record({ type: 'MOVE', ...ref, offset: 0 }, { type: 'POP', ...ref, offset: 0, attempts: 1, invisibleUntilMs: 1, version: 1 });
    await s.flush();
    // What compaction leaves when it dies before the snapshot: old log + new empty log, no snapshot.
    fs.copyFileSync(path.join(dir, 'pop-0.log'), path.join(dir, 'saved.log'));
    await s.close();
    fs.rmSync(path.join(dir, 'snapshot.json'));
    fs.rmSync(path.join(dir, 'pop-1.log'));
    fs.renameSync(path.join(dir, 'saved.log'), path.join(dir, 'pop-0.log'));
    fs.writeFileSync(path.join(dir, 'pop-1.log'), encodePopRecord({ type: 'ACK', ...ref, offset: 0, version: 1 }));
    const r = open(dir);
    assert.equal(r.table.get('G', 'T', 0)!.ackOffset, 1);
    await r.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('log compaction triggers by size and keeps the state', async () => {
  const dir = tmpDir();
  try {
    const s = open(dir, new ManualClock(1), 2000);
    await s.record({ type: 'MOVE', ...ref, offset: 0 });
    for (let i = 0; i < 100; i++) {
      const v = s.nextVersion();
      await s.record({ type: 'POP', ...ref, offset: i, attempts: 1, invisibleUntilMs: 9, version: v }, { type: 'ACK', ...ref, offset: i, version: v });
    }
    await s.close();
    const r = open(dir);
    assert.equal(r.table.get('G', 'T', 0)!.ackOffset, 100);
    assert.equal(r.table.get('G', 'T', 0)!.entries.size, 0);
    await r.close();
    assert.ok(fs.readdirSync(dir).filter((n) => n.endsWith('.log')).length === 1);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a corrupt pop/snapshot.json refuses the open with an error naming the file, and leaves the file as it was', () => {
  const cases: Array<[string, string]> = [
    ['{{', /is corrupt: .*JSON/.source],
    ['', /\(0 bytes\) is corrupt/.source],
    ['null', /unknown format/.source],
    ['{"format":1,"generation":0,"queues":[{"group":5}]}', /bad queue entry/.source],
    ['{"format":1,"generation":0,"queues":{"x":1}}', /queues is not an array/.source],
  ];
  for (const [text, detail] of cases) {
    const dir = tmpDir();
    try {
      const snap = path.join(dir, 'snapshot.json');
      fs.writeFileSync(snap, text);
      assert.throws(
        () => open(dir),
        (e: Error) =>
          e instanceof PopSnapshotCorruptError &&
          e.message.includes(`pop state snapshot ${snap}`) &&
          new RegExp(detail).test(e.message) &&
          /Move the file away/.test(e.message),
        JSON.stringify(text),
      );
      assert.equal(fs.readFileSync(snap, 'utf8'), text, 'the snapshot is left for inspection');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
});
