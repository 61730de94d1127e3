import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IndexFile, indexFileSizeBytes, indexKeyHash } from '../../../src/store/index/index-file.js';
import { IndexService, indexFileName } from '../../../src/store/index/index-service.js';
import { NodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { ManualClock } from '../../../src/common/time/clock.js';
import { silentLogger } from '../../../src/common/logging/logger.js';
import type { DispatchRequest } from '../../../src/common/message/record-codec.js';

const fs = new NodeFileSystem();

function dispatch(over: Partial<DispatchRequest>): DispatchRequest {
  return {
    topic: 'T',
    queueId: 0,
    commitLogOffset: 0,
    msgSize: 100,
    tagsCode: 0,
    storeTimestamp: 1_700_000_000_000,
    consumeQueueOffset: 0,
    keys: '',
    uniqKey: null,
    sysFlag: 0,
    preparedTransactionOffset: 0,
    properties: new Map(),
    bornTimestamp: 1_700_000_000_000,
    ...over,
  };
}

describe('IndexFile (store-format.md §2.5)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tsmq-index-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('default geometry is 420,000,040 bytes and entry 1 starts at byte 20,000,060', () => {
    assert.equal(indexFileSizeBytes(5_000_000, 20_000_000), 420_000_040);
    const f = IndexFile.create(fs, join(dir, 'big'), 5_000_000, 20_000_000);
    assert.equal(statSync(join(dir, 'big')).size, 420_000_040);
    assert.equal(f.putKey('TopicTest#OrderID188', 0x1234, 1_700_000_000_000), true);
    f.commit();
    const fd = fs.open(join(dir, 'big'), 'r');
    const slot = Buffer.alloc(4);
    // hashCode -1231271670 -> hash 1231271670 -> slot 1,271,670 -> slot byte 5,086,720
    assert.equal(indexKeyHash('TopicTest#OrderID188'), 1231271670);
    fs.pread(fd, slot, 0, 4, 5_086_720);
    assert.equal(slot.readInt32BE(0), 1);
    const entry = Buffer.alloc(20);
    fs.pread(fd, entry, 0, 20, 20_000_060);
    assert.equal(entry.readInt32BE(0), 1231271670);
    assert.equal(Number(entry.readBigInt64BE(4)), 0x1234);
    assert.equal(entry.readInt32BE(12), 0);
    assert.equal(entry.readInt32BE(16), 0);
    const header = Buffer.alloc(40);
    fs.pread(fd, header, 0, 40, 0);
    assert.equal(Number(header.readBigInt64BE(0)), 1_700_000_000_000);
    assert.equal(Number(header.readBigInt64BE(16)), 0x1234);
    assert.equal(header.readInt32BE(32), 1);
    assert.equal(header.readInt32BE(36), 2);
    fs.close(fd);
    f.destroy();
  });

  it('IndexFileTest anchor: 100 slots / 400 entries accepts 399 keys, refuses the 400th; key "60" is found once', () => {
    const f = IndexFile.create(fs, join(dir, 'small'), 100, 400);
    for (let i = 0; i < 399; i++) assert.equal(f.putKey(String(i), i, 1_700_000_000_000 + i * 10), true, `key ${i}`);
    assert.equal(f.putKey('399', 399, 1_700_000_010_000), false);
    assert.equal(f.isFull(), true);
    const out: number[] = [];
    f.selectPhyOffsets(out, '60', 10, 0, Number.MAX_SAFE_INTEGER);
    assert.deepEqual(out, [60]);
    f.close();
    // Re-opened read-only from disk: same answer.
    const g = IndexFile.open(fs, join(dir, 'small'), 100, 400, false);
    assert.equal(g.header.indexCount, 400);
    const out2: number[] = [];
    g.selectPhyOffsets(out2, '60', 10, 0, Number.MAX_SAFE_INTEGER);
    assert.deepEqual(out2, [60]);
    g.close();
  });

  it('time differences are whole seconds from the first entry and filter lookups', () => {
    const f = IndexFile.create(fs, join(dir, 't'), 16, 64);
    f.putKey('k', 100, 10_000);
    f.putKey('k', 200, 12_500); // diff 2 s
    f.putKey('k', 300, 15_999); // diff 5 s
    const all: number[] = [];
    f.selectPhyOffsets(all, 'k', 10, 0, Number.MAX_SAFE_INTEGER);
    assert.deepEqual(all, [300, 200, 100]);
    const mid: number[] = [];
    f.selectPhyOffsets(mid, 'k', 10, 11_000, 13_000);
    assert.deepEqual(mid, [200]);
    f.close();
  });
});

describe('IndexService', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tsmq-indexsvc-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function service(clock: ManualClock, maxIndexNum = 10, ts = { v: 0 }) {
    return new IndexService(
      fs,
      { indexDir: join(dir, 'index'), maxHashSlotNum: 8, maxIndexNum, messageIndexEnable: true },
      clock,
      { get indexMsgTimestamp() { return ts.v; }, setIndexMsgTimestamp: (t: number) => (ts.v = t), flush: async () => {} },
      silentLogger,
    );
  }

  it('names files by local creation time yyyyMMddHHmmssSSS', () => {
    const d = new Date(2024, 0, 2, 3, 4, 5, 678).getTime();
    assert.equal(indexFileName(d), '20240102030405678');
  });

  it('indexes topic#UNIQ_KEY and every KEYS key once (B14 duplicate key in KEYS)', () => {
    const svc = service(new ManualClock(1_700_000_000_000), 100);
    svc.load(true, 0);
    svc.buildIndex(dispatch({ commitLogOffset: 0, keys: 'order-1 order-1', uniqKey: 'u1' }));
    svc.buildIndex(dispatch({ commitLogOffset: 0, keys: 'order-1 order-1', uniqKey: 'u1' })); // re-dispatch is skipped
    assert.deepEqual(svc.queryOffset('T', 'order-1', 32, 0, Number.MAX_SAFE_INTEGER).phyOffsets, [0]);
    assert.deepEqual(svc.queryOffset('T', 'u1', 32, 0, Number.MAX_SAFE_INTEGER).phyOffsets, [0]);
    assert.deepEqual(svc.queryOffset('Other', 'u1', 32, 0, Number.MAX_SAFE_INTEGER).phyOffsets, []);
  });

  it('indexes each distinct key once: KEYS equal to UNIQ_KEY, repeated words; KEYS of spaces only still advance the end', () => {
    const svc = service(new ManualClock(1_700_000_000_000), 4); // 3 entries fit one file
    svc.load(true, 0);
    svc.buildIndex(dispatch({ commitLogOffset: 0, keys: 'u1', uniqKey: 'u1' })); // 1 entry
    svc.buildIndex(dispatch({ commitLogOffset: 100, keys: '   ', uniqKey: null })); // no entry
    assert.equal(svc.indexedUpToPhyOffset, 100);
    svc.buildIndex(dispatch({ commitLogOffset: 200, keys: 'a b  a', uniqKey: 'b' })); // 2 entries: b, a
    assert.equal(svc.fileCount, 1, 'exactly 3 entries: a duplicate would have rolled to a second file');
    assert.equal(svc.indexedUpToPhyOffset, 200);
    for (const [key, offsets] of [['u1', [0]], ['a', [200]], ['b', [200]]] as const) {
      assert.deepEqual(svc.queryOffset('T', key, 32, 0, Number.MAX_SAFE_INTEGER).phyOffsets, offsets, key);
    }
    svc.buildIndex(dispatch({ commitLogOffset: 300, keys: 'c', uniqKey: null }));
    assert.equal(svc.fileCount, 2);
    assert.deepEqual(svc.queryOffset('T', 'c', 32, 0, Number.MAX_SAFE_INTEGER).phyOffsets, [300]);
  });

  it('rolls to a new file when full, keeps finding old keys, records indexMsgTimestamp, deletes files below the CommitLog min', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const ts = { v: 0 };
    const svc = service(clock, 4, ts); // 3 entries per file
    svc.load(true, 0);
    for (let i = 0; i < 7; i++) {
      clock.advance(1000);
      svc.buildIndex(dispatch({ commitLogOffset: i * 100, keys: `k${i}`, storeTimestamp: clock.nowMs() }));
    }
    assert.equal(svc.fileCount, 3);
    await svc.flush();
    assert.equal(ts.v, 1_700_000_000_000 + 7000, 'a full flush moves indexMsgTimestamp to the writable file end (k6)');
    for (let i = 0; i < 7; i++) assert.deepEqual(svc.queryOffset('T', `k${i}`, 32, 0, Number.MAX_SAFE_INTEGER).phyOffsets, [i * 100]);
    assert.equal(svc.deleteExpiredFiles(300), 1);
    assert.equal(svc.fileCount, 2);
    await svc.shutdown();
  });

  it('after an abnormal exit, a file newer than indexMsgTimestamp is destroyed and its begin offset is the rebuild start', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const ts = { v: 0 };
    const svc = service(clock, 4, ts);
    svc.load(true, 0);
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      svc.buildIndex(dispatch({ commitLogOffset: i * 100, keys: `k${i}`, storeTimestamp: clock.nowMs() }));
    }
    await svc.shutdown(); // everything durable, indexMsgTimestamp = end of k4 (1_700_000_005_000)
    ts.v = 1_700_000_003_000; // as if the checkpoint write after the last index flush was lost
    const again = service(clock, 4, ts);
    const { rebuildFromPhyOffset } = again.load(false, ts.v);
    assert.equal(rebuildFromPhyOffset, 300, 'the second file begins at its first entry (k3)');
    assert.equal(again.fileCount, 1);
    assert.deepEqual(again.queryOffset('T', 'k0', 32, 0, Number.MAX_SAFE_INTEGER).phyOffsets, [0]);
    assert.deepEqual(again.queryOffset('T', 'k3', 32, 0, Number.MAX_SAFE_INTEGER).phyOffsets, []);
    again.buildIndex(dispatch({ commitLogOffset: 300, keys: 'k3', storeTimestamp: clock.nowMs() }));
    assert.deepEqual(again.queryOffset('T', 'k3', 32, 0, Number.MAX_SAFE_INTEGER).phyOffsets, [300]);
    await again.shutdown();
  });

  it('after a clean shutdown and a crash with nothing flushed since, the index is kept whole', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const ts = { v: 0 };
    const svc = service(clock, 4, ts);
    svc.load(true, 0);
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      svc.buildIndex(dispatch({ commitLogOffset: i * 100, keys: `k${i}`, storeTimestamp: clock.nowMs() }));
    }
    await svc.shutdown();
    const again = service(clock, 4, ts);
    assert.deepEqual(again.load(false, ts.v), { rebuildFromPhyOffset: null });
    assert.equal(again.indexedUpToPhyOffset, 400);
    for (let i = 0; i < 5; i++) assert.deepEqual(again.queryOffset('T', `k${i}`, 32, 0, Number.MAX_SAFE_INTEGER).phyOffsets, [i * 100]);
    await again.shutdown();
  });
});

describe('IndexService writable-file flush', () => {
  it('after flushWritable, an abnormal restart keeps the writable file and re-indexes only what came later', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsmq-indexflush-'));
    try {
      const clock = new ManualClock(1_700_000_000_000);
      const ts = { v: 0 };
      const cp = { get indexMsgTimestamp() { return ts.v; }, setIndexMsgTimestamp: (t: number) => (ts.v = t), flush: async () => {} };
      const cfg = { indexDir: join(dir, 'index'), maxHashSlotNum: 64, maxIndexNum: 1000, messageIndexEnable: true };
      const svc = new IndexService(fs, cfg, clock, cp, silentLogger);
      svc.load(true, 0);
      for (let i = 0; i < 5; i++) {
        clock.advance(1000);
        svc.buildIndex(dispatch({ commitLogOffset: i * 100, keys: `k${i}`, storeTimestamp: clock.nowMs() }));
      }
      await svc.flushWritable();
      assert.equal(ts.v, 1_700_000_005_000, 'checkpoint follows the flushed writable file');
      await svc.flush();
      assert.equal(ts.v, 1_700_000_005_000, 'a full flush (as at shutdown) covers the writable file too');
      clock.advance(1000);
      svc.buildIndex(dispatch({ commitLogOffset: 500, keys: 'k5', storeTimestamp: clock.nowMs() }));
      svc.closeAbruptly(); // crash: k5 was never committed
      const again = new IndexService(fs, cfg, clock, cp, silentLogger);
      assert.deepEqual(again.load(false, ts.v), { rebuildFromPhyOffset: null });
      assert.equal(again.indexedUpToPhyOffset, 400, 'recovery re-dispatches from the last flushed message on');
      assert.deepEqual(again.queryOffset('T', 'k4', 32, 0, Number.MAX_SAFE_INTEGER).phyOffsets, [400]);
      assert.deepEqual(again.queryOffset('T', 'k5', 32, 0, Number.MAX_SAFE_INTEGER).phyOffsets, []);
      again.buildIndex(dispatch({ commitLogOffset: 400, keys: 'k4', storeTimestamp: clock.nowMs() })); // re-dispatch: skipped
      again.buildIndex(dispatch({ commitLogOffset: 500, keys: 'k5', storeTimestamp: clock.nowMs() }));
      assert.deepEqual(again.queryOffset('T', 'k4', 32, 0, Number.MAX_SAFE_INTEGER).phyOffsets, [400]);
      assert.deepEqual(again.queryOffset('T', 'k5', 32, 0, Number.MAX_SAFE_INTEGER).phyOffsets, [500]);
      await again.shutdown();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('IndexService writable-file flush under load', () => {
  it('keys indexed while an earlier flush runs do not move the checkpoint past the flushed header (bench: 10 GiB store rebuilt from offset 0 after a crash)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsmq-indexflush2-'));
    try {
      // fdatasync held until released, so the second flushWritable is queued behind the first
      let release: (() => void) | null = null;
      const slowFs = Object.create(fs) as NodeFileSystem;
      slowFs.fdatasync = async (fd: number) => {
        await new Promise<void>((r) => (release = r));
        await fs.fdatasync(fd);
      };
      const clock = new ManualClock(1_700_000_000_000);
      const ts = { v: 0 };
      const cp = { get indexMsgTimestamp() { return ts.v; }, setIndexMsgTimestamp: (t: number) => (ts.v = t), flush: async () => {} };
      const cfg = { indexDir: join(dir, 'index'), maxHashSlotNum: 64, maxIndexNum: 1000, messageIndexEnable: true };
      const svc = new IndexService(slowFs, cfg, clock, cp, silentLogger);
      svc.load(true, 0);
      const put = (i: number): void => {
        clock.advance(1000);
        svc.buildIndex(dispatch({ commitLogOffset: i * 100, keys: `k${i}`, storeTimestamp: clock.nowMs() }));
      };
      put(0);
      const first = svc.flushWritable(); // commits k0 (t+1 s) on the next microtask, fdatasync held
      await new Promise((r) => setImmediate(r));
      put(1);
      const second = svc.flushWritable(); // queued behind the first
      put(2); // indexed before the second flush commits: that commit covers k0..k2
      const releaseNext = async (): Promise<void> => {
        while (!release) await new Promise((r) => setImmediate(r));
        const r = release as () => void;
        release = null;
        r();
      };
      await releaseNext();
      await first;
      assert.equal(ts.v, 1_700_000_001_000, 'first flush: k0');
      await releaseNext();
      await second;
      assert.equal(ts.v, 1_700_000_003_000, 'second flush: the header it committed ends at k2');
      put(3); // never committed
      svc.closeAbruptly();
      const header = Buffer.alloc(40);
      const name = (await import('node:fs')).readdirSync(cfg.indexDir)[0]!;
      const fd = fs.open(join(cfg.indexDir, name), 'r');
      fs.pread(fd, header, 0, 40, 0);
      fs.close(fd);
      assert.equal(Number(header.readBigInt64BE(8)), ts.v, 'on-disk endTimestamp equals the checkpoint');
      const again = new IndexService(fs, cfg, clock, cp, silentLogger);
      assert.deepEqual(again.load(false, ts.v), { rebuildFromPhyOffset: null }, 'the writable file is kept after the crash');
      assert.equal(again.fileCount, 1);
      assert.equal(again.indexedUpToPhyOffset, 200);
      await again.shutdown();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('IndexService after a process crash on this boot (page cache intact)', () => {
  const build = (dir: string) => {
    const clock = new ManualClock(1_700_000_000_000);
    const ts = { v: 0 };
    const cp = { get indexMsgTimestamp() { return ts.v; }, setIndexMsgTimestamp: (t: number) => (ts.v = t), flush: async () => {} };
    const cfg = { indexDir: join(dir, 'index'), maxHashSlotNum: 64, maxIndexNum: 1000, messageIndexEnable: true };
    return { clock, ts, cp, cfg };
  };
  it('a writable file committed after the checkpoint is kept and indexing resumes at its end; without the page cache guarantee it is destroyed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsmq-indexboot-'));
    try {
      const { clock, ts, cp, cfg } = build(dir);
      const svc = new IndexService(fs, cfg, clock, cp, silentLogger);
      svc.load(true, 0);
      for (let i = 0; i < 3; i++) {
        clock.advance(1000);
        svc.buildIndex(dispatch({ commitLogOffset: i * 100, keys: `k${i}`, storeTimestamp: clock.nowMs() }));
      }
      await svc.flushWritable(); // checkpoint: k2 (t+3 s)
      for (let i = 3; i < 6; i++) {
        clock.advance(1000);
        svc.buildIndex(dispatch({ commitLogOffset: i * 100, keys: `k${i % 2}`, storeTimestamp: clock.nowMs() }));
      }
      const end = await (svc as unknown as { files: IndexFile[] }).files[0]!.flush(); // header committed (k5), crash before the checkpoint moved
      assert.equal(end, 1_700_000_006_000);
      svc.closeAbruptly();
      assert.equal(ts.v, 1_700_000_003_000);
      const kept = new IndexService(fs, cfg, clock, cp, silentLogger);
      assert.deepEqual(kept.load(false, ts.v, true), { rebuildFromPhyOffset: null });
      assert.equal(kept.fileCount, 1);
      assert.equal(kept.indexedUpToPhyOffset, 500, 'resumes after k5');
      assert.deepEqual(kept.queryOffset('T', 'k1', 32, 0, Number.MAX_SAFE_INTEGER).phyOffsets, [500, 300, 100], 'the whole chain of k1');
      kept.closeAbruptly();
      const destroyed = new IndexService(fs, cfg, clock, cp, silentLogger);
      assert.deepEqual(destroyed.load(false, ts.v, false), { rebuildFromPhyOffset: 0 }, 'power loss or unknown: rebuilt from the file start');
      assert.equal(destroyed.fileCount, 0);
      destroyed.closeAbruptly();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a commit cut between the slot table and the header (slots newer than the header) is destroyed even on this boot (the double-write gap noted in session 1)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsmq-indexboot2-'));
    try {
      const { clock, ts, cp, cfg } = build(dir);
      const svc = new IndexService(fs, cfg, clock, cp, silentLogger);
      svc.load(true, 0);
      clock.advance(1000);
      svc.buildIndex(dispatch({ commitLogOffset: 0, keys: 'a', storeTimestamp: clock.nowMs() }));
      await svc.flushWritable();
      clock.advance(1000);
      svc.buildIndex(dispatch({ commitLogOffset: 100, keys: 'b', storeTimestamp: clock.nowMs() }));
      const file = (svc as unknown as { files: IndexFile[] }).files[0]!;
      const headerBefore = Buffer.alloc(40);
      const name = (await import('node:fs')).readdirSync(cfg.indexDir)[0]!;
      const p = join(cfg.indexDir, name);
      const rfd = fs.open(p, 'r');
      fs.pread(rfd, headerBefore, 0, 40, 0);
      fs.close(rfd);
      file.commit(); // entries, slots and header in the page cache ...
      const wfd = fs.open(p, 'r+');
      fs.pwrite(wfd, headerBefore, 0, 40, 0); // ... but the header write never happened (killed in between)
      fs.close(wfd);
      svc.closeAbruptly();
      // the old header ends at 'a' (= the checkpoint), so the file is not newer than the
      // checkpoint, but the slot of 'b' points past its indexCount: rebuilt, whatever the boot
      assert.equal(ts.v, 1_700_000_001_000);
      const again = new IndexService(fs, cfg, clock, cp, silentLogger);
      assert.deepEqual(again.load(false, ts.v, true), { rebuildFromPhyOffset: 0 });
      assert.equal(again.fileCount, 0);
      again.closeAbruptly();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('IndexFile entry buffering', () => {
  it('more entries than one write buffer (3,276) are written and found again, before and after commit', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsmq-index-buf-'));
    try {
      const f = IndexFile.create(fs, join(dir, 'f'), 997, 10_000);
      for (let i = 0; i < 8000; i++) assert.equal(f.putKey(`key-${i}`, i * 100, 1_700_000_000_000 + i), true);
      for (const i of [0, 3275, 3276, 3277, 6551, 6552, 7999]) {
        const out: number[] = [];
        f.selectPhyOffsets(out, `key-${i}`, 1, 0, Number.MAX_SAFE_INTEGER);
        assert.deepEqual(out, [i * 100], `key-${i}`);
      }
      f.close();
      const g = IndexFile.open(fs, join(dir, 'f'), 997, 10_000, false);
      assert.equal(g.header.indexCount, 8001);
      const out: number[] = [];
      g.selectPhyOffsets(out, 'key-7999', 1, 0, Number.MAX_SAFE_INTEGER);
      assert.deepEqual(out, [799_900]);
      g.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('index key hash without concatenation', () => {
  it('continueJavaHash(hash(topic#), key) equals String.hashCode(topic#key) for ASCII, non-ASCII and surrogate pairs', async () => {
    const { continueJavaHash, indexHashOf } = await import('../../../src/store/index/index-file.js');
    const { javaStringHashCode } = await import('../../../src/common/message/java-hash.js');
    for (const [topic, key] of [['TopicTest', 'OrderID188'], ['T', ''], ['主题', 'ключ'], ['t', '😀x'], ['%RETRY%g', 'k'.repeat(300)]] as const) {
      const whole = javaStringHashCode(`${topic}#${key}`);
      assert.equal(continueJavaHash(javaStringHashCode(`${topic}#`), key), whole, `${topic}#${key}`);
      assert.equal(indexHashOf(whole), indexKeyHash(`${topic}#${key}`));
    }
    assert.equal(indexKeyHash('TopicTest#OrderID188'), 1231271670);
    assert.equal(indexHashOf(-2147483648), 0);
  });
});

describe('IndexService.warmSlots (the read-ahead hint before a batch is indexed)', () => {
  it('gives files byte-identical to indexing without the hint, and takes the UNIQ_KEY hashes it computed only for the records it was told about, in order', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const dirs = [mkdtempSync(join(tmpdir(), 'tsmq-warm-a-')), mkdtempSync(join(tmpdir(), 'tsmq-warm-b-'))];
    try {
      const services = dirs.map((d) => {
        const ts = { v: 0 };
        return new IndexService(
          fs,
          { indexDir: join(d, 'index'), maxHashSlotNum: 16, maxIndexNum: 20, messageIndexEnable: true },
          clock,
          { get indexMsgTimestamp() { return ts.v; }, setIndexMsgTimestamp: (t: number) => (ts.v = t), flush: async () => {} },
          silentLogger,
        );
      });
      for (const s of services) s.load(true, 0);
      // batches of records as the dispatch queue holds them: a record without UNIQ_KEY, one with
      // KEYS too, a rolled-back one (never indexed), a re-dispatched one (skipped), and more
      // entries than one file holds (19 per file), so the index rolls inside a batch
      const batches: DispatchRequest[][] = [];
      let offset = 0;
      for (let b = 0; b < 4; b++) {
        const batch: DispatchRequest[] = [];
        for (let i = 0; i < 8; i++) {
          const n = b * 8 + i;
          batch.push(dispatch({
            commitLogOffset: offset,
            uniqKey: i === 3 ? null : `UNIQ${n.toString(16).padStart(28, '0')}`,
            keys: i === 5 ? `order-${n} order-x` : i === 3 ? `only-keys-${n}` : '',
            sysFlag: i === 6 ? 0xc : 0, // TRANSACTION_ROLLBACK_TYPE on the 7th
            storeTimestamp: clock.nowMs() + n,
          }));
          offset += 100;
        }
        batches.push(batch);
      }
      const [plain, hinted] = services as [IndexService, IndexService];
      for (const batch of batches) for (const r of batch) plain.buildIndex(r);
      for (const [bi, batch] of batches.entries()) {
        hinted.warmSlots(batch, bi === 2 ? 2 : 0, batch.length); // batch 2: the first two were not in the hint
        for (const r of batch) hinted.buildIndex(r);
        if (bi === 1) hinted.buildIndex(batch[7]!); // a re-dispatch of the last one: skipped, as without the hint
      }
      // batches 0 (before any index file exists), 1 and 3: 6 records each with a UNIQ_KEY that is
      // indexed (one has none, one is rolled back); batch 2: the 4 of those the hint covered (its
      // first two records were indexed with their own hashes, then the hinted ones matched)
      assert.equal(hinted.warmHashesUsed, 22);
      assert.ok(plain.fileCount >= 2, 'the index rolled');
      await plain.shutdown();
      await hinted.shutdown();
      const [na, nb] = dirs.map((d) => readdirSync(join(d, 'index')).sort());
      assert.equal(na!.length, nb!.length);
      for (let i = 0; i < na!.length; i++) {
        assert.ok(readFileSync(join(dirs[0]!, 'index', na![i]!)).equals(readFileSync(join(dirs[1]!, 'index', nb![i]!))), `index file ${i} differs`);
      }
    } finally {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  });
});
