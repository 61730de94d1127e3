import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ManualClock } from '../../../src/common/time/clock.js';
import { bodyCrc } from '../../../src/common/bytes/crc32.js';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { offsetToFileName } from '../../../src/store/mapped-file/file-names.js';
import { capturingLogger, makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

const clFile = (root: string, offset: number): string => path.join(root, 'commitlog', offsetToFileName(offset));
const cqDir = (root: string, topic: string, q: number): string => path.join(root, 'consumequeue', topic, String(q));
const bodyFor = (recordSize: number, topic = 'T'): Buffer => Buffer.alloc(recordSize - 91 - topic.length, 0x61);
/** Writes `bytes` into a CommitLog file at `pos` (the store must be closed). */
function patchFile(file: string, pos: number, bytes: Buffer): void {
  const fd = fs.openSync(file, 'r+');
  fs.writeSync(fd, bytes, 0, bytes.length, pos);
  fs.closeSync(fd);
}

test('clean shutdown + reopen continues physical and queue offsets (normal recovery, abort file removed)', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    assert.ok(fs.existsSync(path.join(root, 'abort')), 'abort file present while running');
    let last = 0;
    for (let i = 0; i < 30; i++) last = (await store.putMessage(makeMessage({ queueId: i % 3, body: bodyFor(300) }))).appendResult!.wroteOffset;
    const max = store.getMaxPhyOffset();
    await store.shutdown();
    assert.equal(fs.existsSync(path.join(root, 'abort')), false);
    const again = await openStore(smallConfig(root));
    assert.equal(again.recoveryReport.mode, 'normal');
    // ConsumeQueues were complete; the index asks again for its last indexed record (it knows
    // that record's start offset, not its end), which it then skips.
    assert.equal(again.recoveryReport.recordsDispatched, 1);
    assert.equal(again.getMaxPhyOffset(), max);
    assert.ok(last < max);
    const r = await again.putMessage(makeMessage({ queueId: 1, body: bodyFor(300) }));
    assert.equal(r.appendResult!.queueOffset, 10);
    assert.equal(r.appendResult!.wroteOffset, max);
    assert.equal(again.getMaxOffsetInQueue('T', 0), 10);
    const g = await again.getMessage('g', 'T', 1, 10, 1);
    assert.equal(decodeRecord(g.messages[0]!).commitLogOffset, max);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('crash keeps the abort file; the next start runs abnormal recovery and keeps every complete record', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    for (let i = 0; i < 12; i++) await store.putMessage(makeMessage({ body: bodyFor(500) }));
    const max = store.getMaxPhyOffset();
    store.closeAbruptly();
    assert.ok(fs.existsSync(path.join(root, 'abort')));
    const again = await openStore(smallConfig(root));
    assert.equal(again.recoveryReport.mode, 'abnormal');
    assert.equal(again.getMaxPhyOffset(), max);
    assert.equal(again.getMaxOffsetInQueue('T', 0), 12);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('B02 CommitLog lost the tail holding T: dangling CQ entries and the empty rolled CQ file are removed, min <= max', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    for (let i = 0; i < 3; i++) await store.putMessage(makeMessage({ topic: 'U', body: bodyFor(300, 'U') }));
    const tStart = store.getMaxPhyOffset();
    for (let i = 0; i < 10; i++) await store.putMessage(makeMessage({ body: bodyFor(300) }));
    store.closeAbruptly();
    // T/q0's CQ had just rolled to a new, empty file
    fs.writeFileSync(path.join(cqDir(root, 'T', 0), offsetToFileName(200)), Buffer.alloc(200));
    // the CommitLog lost its unflushed tail: everything from T's first record on
    for (const name of fs.readdirSync(path.join(root, 'commitlog'))) {
      const base = Number(name);
      const from = Math.max(0, tStart - base);
      if (from < 4096) patchFile(path.join(root, 'commitlog', name), from, Buffer.alloc(4096 - from));
    }
    const again = await openStore(smallConfig(root));
    assert.equal(again.recoveryReport.stoppedAt, tStart);
    assert.equal(again.getMaxOffsetInQueue('T', 0), 0);
    assert.equal(again.getMinOffsetInQueue('T', 0), 0);
    assert.equal(fs.readdirSync(cqDir(root, 'T', 0)).length, 0, 'no CQ file left for T/q0');
    assert.equal(again.getMaxOffsetInQueue('U', 0), 3);
    const r = await again.putMessage(makeMessage({ body: 'after' }));
    assert.equal(r.appendResult!.queueOffset, 0);
    assert.equal(r.appendResult!.wroteOffset, tStart);
    const g = await again.getMessage('g', 'T', 0, 0, 32);
    assert.equal(g.status, 'FOUND');
    assert.equal(decodeRecord(g.messages[0]!).body.toString(), 'after');
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('B03 newest CQ file deleted after an abnormal stop: entries 20-24 are rebuilt from the CommitLog', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    const written: Array<{ phy: number; size: number }> = [];
    for (let i = 0; i < 25; i++) {
      const r = await store.putMessage(makeMessage({ tags: `tag${i % 4}`, body: bodyFor(300) }));
      written.push({ phy: r.appendResult!.wroteOffset, size: r.appendResult!.wroteBytes });
    }
    store.closeAbruptly();
    fs.unlinkSync(path.join(cqDir(root, 'T', 0), offsetToFileName(400)));
    const logger = capturingLogger();
    const again = await openStore(smallConfig(root), { logger });
    assert.equal(again.recoveryReport.mode, 'abnormal');
    assert.equal(again.getMaxOffsetInQueue('T', 0), 25);
    assert.equal(again.recoveryReport.cqEntriesRebuilt, 5);
    const cq = again.consumeQueueStore.find('T', 0)!;
    for (let q = 20; q < 25; q++) {
      assert.deepEqual(cq.getEntry(q), { phyOffset: written[q]!.phy, size: written[q]!.size, tagsCode: makeTagsCode(`tag${q % 4}`) });
    }
    assert.equal(logger.lines.filter((l) => /logic queue order/.test(l.msg)).length, 0, 'no ordering-gap warnings');
    const g = await again.getMessage('g', 'T', 0, 20, 32);
    assert.deepEqual(g.messageQueueOffsets, [20, 21, 22, 23, 24]);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

function makeTagsCode(tags: string): number {
  let h = 0;
  for (let i = 0; i < tags.length; i++) h = (Math.imul(h, 31) + tags.charCodeAt(i)) | 0;
  return h;
}

test('B04 queue whose CommitLog data expired stays positioned at 10 after a crash: min = max = 10, next message gets 10', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    for (let i = 0; i < 10; i++) await store.putMessage(makeMessage({ body: bodyFor(400) }));
    for (let i = 0; i < 3; i++) await store.putMessage(makeMessage({ topic: 'U', body: bodyFor(1000, 'U') }));
    assert.equal((await store.putMessage(makeMessage({ topic: 'U', body: bodyFor(1000, 'U') }))).appendResult!.wroteOffset, 4096 + 3000);
    store.closeAbruptly();
    fs.unlinkSync(clFile(root, 0)); // all of T's records expired
    const again = await openStore(smallConfig(root));
    assert.equal(again.getMinPhyOffset(), 4096);
    assert.equal(again.getMaxOffsetInQueue('T', 0), 10);
    assert.equal(again.getMinOffsetInQueue('T', 0), 10);
    const before = await again.getMessage('g', 'T', 0, 10, 32);
    assert.deepEqual([before.status, before.nextBeginOffset], ['OFFSET_OVERFLOW_ONE', 10]);
    const r = await again.putMessage(makeMessage({ body: 'next' }));
    assert.equal(r.appendResult!.queueOffset, 10);
    const g = await again.getMessage('g', 'T', 0, 10, 32);
    assert.equal(g.status, 'FOUND');
    assert.equal(decodeRecord(g.messages[0]!).body.toString(), 'next');
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('B05 CommitLog cut after msg 6 while the checkpoint recorded msg 10: positions and checkpoint clamped, CQ 6-9 removed', async () => {
  const root = tempDir();
  try {
    const clock = new ManualClock(0);
    const store = await openStore(smallConfig(root), { clock });
    const ends: number[] = [];
    for (let i = 1; i <= 10; i++) {
      clock.set(i * 1000);
      const r = await store.putMessage(makeMessage({ body: bodyFor(300) }));
      ends.push(r.appendResult!.wroteOffset + r.appendResult!.wroteBytes);
    }
    await store.shutdown(); // checkpoint and flush position now cover msg 10
    fs.writeFileSync(path.join(root, 'abort'), '1'); // ... then the machine dies: abnormal restart
    const end6 = ends[5]!;
    // the last CL file loses everything after msg 6 (file stays full size, tail zero)
    const lastBase = end6 - (end6 % 4096);
    patchFile(clFile(root, lastBase), end6 - lastBase, Buffer.alloc(4096 - (end6 - lastBase)));
    for (const name of fs.readdirSync(path.join(root, 'commitlog'))) if (Number(name) > lastBase) fs.unlinkSync(path.join(root, 'commitlog', name));
    const again = await openStore(smallConfig(root), { clock });
    assert.equal(again.recoveryReport.mode, 'abnormal');
    assert.equal(again.getMaxPhyOffset(), end6);
    assert.equal(again.getFlushedPhyOffset(), end6);
    assert.equal(again.commitLog.mfq.getCommittedWhere(), end6);
    assert.equal(again.checkpoint.confirmPhyOffset, end6);
    assert.equal(again.checkpoint.physicMsgTimestamp, 6000, "clamped to the last verified record");
    assert.equal(again.checkpoint.logicsMsgTimestamp, 6000);
    assert.equal(again.getMaxOffsetInQueue('T', 0), 6);
    clock.set(20_000);
    const r = await again.putMessage(makeMessage({ body: bodyFor(300) }));
    assert.deepEqual([r.appendResult!.wroteOffset, r.appendResult!.queueOffset], [end6, 6]);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('B05 variant: CommitLog end below every queue entry resets all queues consistently', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    for (let i = 0; i < 10; i++) await store.putMessage(makeMessage({ queueId: i % 2, body: bodyFor(300) }));
    store.closeAbruptly();
    patchFile(clFile(root, 0), 0, Buffer.alloc(4096));
    for (const name of fs.readdirSync(path.join(root, 'commitlog'))) if (Number(name) > 0) fs.unlinkSync(path.join(root, 'commitlog', name));
    const again = await openStore(smallConfig(root));
    assert.equal(again.getMaxPhyOffset(), 0);
    for (const q of [0, 1]) {
      assert.equal(again.getMaxOffsetInQueue('T', q), 0);
      assert.equal(again.getMinOffsetInQueue('T', q), 0);
    }
    assert.equal((await again.putMessage(makeMessage({ queueId: 1 }))).appendResult!.queueOffset, 0);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

for (const mode of ['clean', 'crash'] as const) {
  test(`B06 1 MiB - 100 B bodies across files: ConsumeQueues rebuilt from the CommitLog after deleting them (${mode})`, async () => {
    const root = tempDir();
    try {
      const cfg = smallConfig(root, { mappedFileSizeCommitLog: 8 * 1024 * 1024 });
      const store = await openStore(cfg);
      const written: Array<{ topic: string; phy: number; size: number }> = [];
      for (let i = 0; i < 20; i++) {
        const topic = i % 2 === 0 ? 'A' : 'B';
        const body = Buffer.alloc(1024 * 1024 - 100, 48 + (i % 10));
        const r = await store.putMessage(makeMessage({ topic, keys: `k${i}`, body }));
        assert.equal(r.status, 'PUT_OK');
        written.push({ topic, phy: r.appendResult!.wroteOffset, size: r.appendResult!.wroteBytes });
      }
      if (mode === 'clean') await store.shutdown();
      else store.closeAbruptly();
      fs.rmSync(path.join(root, 'consumequeue'), { recursive: true });
      fs.rmSync(path.join(root, 'index'), { recursive: true, force: true });
      const again = await openStore(cfg);
      assert.equal(again.getMaxOffsetInQueue('A', 0), 10);
      assert.equal(again.getMaxOffsetInQueue('B', 0), 10);
      for (let i = 0; i < 20; i++) {
        const w = written[i]!;
        const q = Math.floor(i / 2);
        assert.deepEqual(again.consumeQueueStore.find(w.topic, 0)!.getEntry(q), { phyOffset: w.phy, size: w.size, tagsCode: 0 });
        const m = (await again.lookMessageByOffset(w.phy))!;
        assert.equal(m.topic, w.topic);
        assert.equal(m.properties.get('KEYS'), `k${i}`);
        assert.equal(m.body.length, 1024 * 1024 - 100);
        assert.ok(m.body.every((b) => b === 48 + (i % 10)), `body of record ${i} is not mixed with a neighbour`);
      }
      // The index was deleted too: it is rebuilt from the CommitLog and keys decode exactly.
      const q = await again.queryMessage('B', 'k7', 32, 0, Number.MAX_SAFE_INTEGER);
      assert.equal(q.messages.length, 1);
      const found = decodeRecord(q.messages[0]!, 0);
      assert.equal(found.topic, 'B');
      assert.equal(found.commitLogOffset, written[7]!.phy);
      assert.equal((await again.queryMessage('A', 'k7', 32, 0, Number.MAX_SAFE_INTEGER)).messages.length, 0);
      await again.shutdown();
    } finally {
      removeDir(root);
    }
  });
}

test('B08 body whose CRC is 0 survives recovery', async () => {
  const root = tempDir();
  try {
    const body = Buffer.concat([Buffer.from('hello'), Buffer.from([0x1b, 0xac, 0xc9, 0x5b])]);
    assert.equal(bodyCrc(body), 0);
    const store = await openStore(smallConfig(root));
    await store.putMessage(makeMessage({ body: 'one' }));
    const two = await store.putMessage(makeMessage({ body }));
    const three = await store.putMessage(makeMessage({ body: 'three' }));
    store.closeAbruptly();
    const again = await openStore(smallConfig(root, { checkCRCOnRecover: true }));
    assert.equal(again.recoveryReport.mode, 'abnormal');
    assert.equal(again.getMaxPhyOffset(), three.appendResult!.wroteOffset + three.appendResult!.wroteBytes);
    assert.equal(again.getMaxOffsetInQueue('T', 0), 3);
    assert.equal((await again.lookMessageByOffset(two.appendResult!.wroteOffset))!.bodyCrc, 0);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('B10 a record whose body CRC fails ends the log: truncate at msg 7, CQ max 6, the next send reuses the slot', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    const offsets: number[] = [];
    for (let i = 0; i < 10; i++) offsets.push((await store.putMessage(makeMessage({ body: bodyFor(300) }))).appendResult!.wroteOffset);
    store.closeAbruptly();
    const msg7 = offsets[6]!;
    const base = msg7 - (msg7 % 4096);
    const file = clFile(root, base);
    const data = fs.readFileSync(file);
    const bodyPos = msg7 - base + 88;
    patchFile(file, bodyPos, Buffer.from([data[bodyPos]! ^ 0xff]));
    const logger = capturingLogger();
    const again = await openStore(smallConfig(root), { logger });
    assert.equal(again.recoveryReport.stoppedAt, msg7);
    assert.match(again.recoveryReport.stopReason, /CRC/);
    assert.equal(again.getMaxPhyOffset(), msg7);
    assert.equal(again.getMaxOffsetInQueue('T', 0), 6);
    const r = await again.putMessage(makeMessage({ body: 'replacement' }));
    assert.deepEqual([r.appendResult!.queueOffset, r.appendResult!.wroteOffset], [6, msg7]);
    assert.equal(logger.lines.filter((l) => /logic queue order/.test(l.msg)).length, 0);
    await again.shutdown();
    const third = await openStore(smallConfig(root));
    assert.equal(third.getMaxOffsetInQueue('T', 0), 7);
    assert.equal((await third.lookMessageByOffset(msg7))!.body.toString(), 'replacement');
    await third.shutdown();
  } finally {
    removeDir(root);
  }
});

for (const variant of ['two bytes of the TOTALSIZE field', 'full header, body cut short'] as const) {
  test(`B12 partial write at the tail is discarded automatically (${variant})`, async () => {
    const root = tempDir();
    try {
      const cfg = smallConfig(root, { mappedFileSizeCommitLog: 1 << 20 });
      const store = await openStore(cfg);
      for (let i = 0; i < 4; i++) await store.putMessage(makeMessage({ body: Buffer.alloc(70_000, i + 1) }));
      const end4 = store.getMaxPhyOffset();
      // what msg 5 would look like
      const probe = await store.putMessage(makeMessage({ body: Buffer.alloc(70_000, 5) }));
      const msg5 = (await store.selectOneMessageByOffset(probe.appendResult!.wroteOffset))!;
      store.closeAbruptly();
      patchFile(clFile(root, 0), end4, Buffer.alloc(msg5.length)); // forget msg 5 ...
      const partial = variant === 'two bytes of the TOTALSIZE field' ? msg5.subarray(0, 2) : msg5.subarray(0, 200);
      assert.notEqual(partial.readUInt16BE(0), 0, 'TOTALSIZE 0x0001xxxx: its first two bytes are not zero');
      patchFile(clFile(root, 0), end4, partial); // ... except a torn prefix
      const again = await openStore(cfg);
      assert.equal(again.recoveryReport.stoppedAt, end4);
      assert.equal(again.recoveryReport.truncatedBytes, partial.length);
      assert.equal(again.getMaxPhyOffset(), end4);
      assert.equal(again.getMaxOffsetInQueue('T', 0), 4);
      const onDisk = fs.readFileSync(clFile(root, 0));
      assert.ok(onDisk.subarray(end4, end4 + 300).every((b) => b === 0), 'torn bytes zeroed on disk');
      const r = await again.putMessage(makeMessage({ body: 'next' }));
      assert.deepEqual([r.appendResult!.wroteOffset, r.appendResult!.queueOffset], [end4, 4]);
      await again.shutdown();
    } finally {
      removeDir(root);
    }
  });
}

test('recovery report names the start file, records scanned and where/why it stopped', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    for (let i = 0; i < 20; i++) await store.putMessage(makeMessage({ body: bodyFor(1000) }));
    await store.shutdown();
    const again = await openStore(smallConfig(root));
    const rep = again.recoveryReport;
    assert.equal(rep.startFile, clFile(root, 4 * 4096));
    assert.equal(rep.recordsScanned, 4);
    assert.equal(rep.stoppedAt, 4 * 4096 + 4000);
    assert.match(rep.stopReason, /zero-filled/);
    assert.equal(rep.truncatedBytes, 0);
    await again.shutdown();
  } finally {
    removeDir(root);
  }
});

test('cqEntriesRemovedTotal counts real entries only: 0 after a clean stop, 2 for a torn CQ tail', async () => {
  const root = tempDir();
  try {
    // 13 entries in 10-entry CQ files: the second file holds 3 entries and 7 never-written slots.
    const store = await openStore(smallConfig(root));
    for (let i = 0; i < 13; i++) await store.putMessage(makeMessage({ body: bodyFor(200) }));
    await store.shutdown();
    const again = await openStore(smallConfig(root));
    assert.equal(again.recoveryReport.mode, 'normal');
    assert.equal(again.recoveryReport.consumeQueues, 1);
    assert.equal(again.recoveryReport.cqEntriesRemovedTotal, 0, 'pre-allocated zero slots are not entries');
    assert.equal(again.getMaxOffsetInQueue('T', 0), 13);
    await again.shutdown();
    // A torn slot (offset written, size 0) at queue offset 13 and a stale entry after it: both cut off.
    const slot = Buffer.alloc(20);
    slot.writeBigInt64BE(999n, 0);
    patchFile(path.join(cqDir(root, 'T', 0), offsetToFileName(200)), 3 * 20, slot);
    slot.writeInt32BE(100, 8);
    patchFile(path.join(cqDir(root, 'T', 0), offsetToFileName(200)), 4 * 20, slot);
    const third = await openStore(smallConfig(root));
    assert.equal(third.recoveryReport.cqEntriesRemovedTotal, 2);
    assert.equal(third.getMaxOffsetInQueue('T', 0), 13);
    await third.shutdown();
  } finally {
    removeDir(root);
  }
});
