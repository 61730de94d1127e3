/**
 * Starting on a small disk (issue 19 item 4): pre-writing a segment (warmMapedFileEnable) never
 * fills the disk — the space gate (retention/prewrite-space-gate.ts) keeps usage at or below
 * min(diskSpaceCleanForciblyRatio, diskSpaceWarningLevelRatio) and 2 more segments free, else the
 * segment stays sparse with one warning; a failed pre-write gives its blocks back; a disk that
 * cannot hold even the first segment fails the start with a sentence and leaves no file.
 * Disk space comes from a ManualDiskUsageProbe (bytes), faults from FaultyFileSystem.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { StoreStartError } from '../../../src/store/lifecycle/first-segment.js';
import { ManualDiskUsageProbe } from '../../../src/store/retention/disk-usage-probe.js';
import { formatBytes, prewriteSpaceGate } from '../../../src/store/retention/prewrite-space-gate.js';
import { retentionRatios } from '../../../src/store/retention/retention-policy.js';
import { FaultyFileSystem } from '../../support/faulty-file-system.js';
import { capturingLogger, makeMessage, openStore, removeDir, smallConfig, tempDir, type LogLine } from '../../support/store-fixtures.js';

const MiB = 1024 * 1024;
const SEGMENT = MiB;
const seg = (root: string, n: number): string => path.join(root, 'commitlog', String(n * SEGMENT).padStart(20, '0'));
/** Bytes the file really occupies on disk (st_blocks × 512). */
const allocatedBytes = (p: string): number => fs.statSync(p).blocks * 512;
const warnings = (lines: LogLine[]): string[] => lines.filter((l) => l.level === 'warn').map((l) => l.msg);

async function until(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('prewriteSpaceGate: pre-writes only when usage stays ≤ min(forcibly, warning) and 2 more segments stay free; says why not', () => {
  const probe = new ManualDiskUsageProbe();
  const ratios = retentionRatios({ diskMaxUsedSpaceRatio: 75, diskSpaceWarningLevelRatio: 90, diskSpaceCleanForciblyRatio: 85 });
  const gate = prewriteSpaceGate(probe, ratios);
  const f = '/store/commitlog/00000000000000000000';
  probe.setSpace({ usedBytes: 50 * MiB, usableBytes: 50 * MiB });
  assert.equal(gate(f, 10 * MiB), null, '50% → 60%, 40 MiB left');
  probe.setSpace({ usedBytes: 0.5 * MiB, usableBytes: 2.5 * MiB });
  assert.equal(gate(f, MiB), 'only 2.5 MiB free on the partition of /store/commitlog; pre-writing 1.0 MiB would leave less than 2 more segments (2.0 MiB) free');
  probe.setSpace({ usedBytes: 85 * MiB, usableBytes: 15 * MiB });
  assert.equal(gate(f, MiB), 'pre-writing 1.0 MiB would take disk usage of /store/commitlog from 85% to 86%, above diskSpaceCleanForciblyRatio 85%');
  probe.setSpace({ usedBytes: 906 * MiB, usableBytes: 94 * MiB }); // the 90.6 % of the finding: never while above
  assert.equal(gate(f, MiB), 'disk usage of /store/commitlog is 91%, above diskSpaceCleanForciblyRatio 85%');
  // a warning ratio below the forcibly ratio is the limit then
  const low = prewriteSpaceGate(probe, retentionRatios({ diskMaxUsedSpaceRatio: 75, diskSpaceWarningLevelRatio: 60, diskSpaceCleanForciblyRatio: 85 }));
  probe.setSpace({ usedBytes: 60 * MiB, usableBytes: 40 * MiB });
  assert.equal(low(f, MiB), 'pre-writing 1.0 MiB would take disk usage of /store/commitlog from 60% to 61%, above diskSpaceWarningLevelRatio 60%');
  // ratio only (no byte counts)
  probe.set(0.5);
  assert.equal(gate(f, MiB), null);
  probe.set(0.9);
  assert.equal(gate(f, MiB), 'disk usage of /store/commitlog is 90%, above diskSpaceCleanForciblyRatio 85%');
  probe.set(-1);
  assert.equal(gate(f, MiB), 'the disk usage of /store/commitlog is unknown (statfs failed)');
  assert.deepEqual([formatBytes(512), formatBytes(1536), formatBytes(1 << 30)], ['512 B', '1.5 KiB', '1.0 GiB']);
});

test('start on a small disk: segments stay sparse with one warning, puts work across a roll', async () => {
  const root = tempDir();
  try {
    const probe = new ManualDiskUsageProbe();
    probe.setSpace({ usedBytes: 0.5 * MiB, usableBytes: 2.5 * MiB }); // a 3 MiB disk
    const logger = capturingLogger();
    const store = await openStore(smallConfig(root, { warmMapedFileEnable: true, mappedFileSizeCommitLog: SEGMENT }), { diskUsageProbe: probe, logger });
    assert.equal(fs.statSync(seg(root, 0)).size, SEGMENT, 'the first segment exists at start, full length');
    assert.ok(allocatedBytes(seg(root, 0)) < 64 * 1024, `sparse: ${allocatedBytes(seg(root, 0))} bytes allocated`);
    for (let i = 0; i < 20; i++) assert.equal((await store.putMessage(makeMessage({ body: Buffer.alloc(64 * 1024, i) }))).status, 'PUT_OK');
    assert.ok(store.getMaxPhyOffset() > SEGMENT, 'rolled into the second segment');
    await until(() => fs.existsSync(seg(root, 2)), 'the third segment to be prepared');
    const alloc = store.commitLog.mfq.getAllocator()!;
    assert.equal(alloc.stats.prewritten, 0);
    assert.ok(alloc.stats.leftSparse >= 2, `leftSparse ${alloc.stats.leftSparse}`);
    assert.ok(allocatedBytes(seg(root, 2)) < 64 * 1024, 'the prepared next segment is sparse too');
    assert.deepEqual(warnings(logger.lines), [
      `segment ${seg(root, 0)} is not pre-written (warmMapedFileEnable): only 2.5 MiB free on the partition of ${path.join(root, 'commitlog')}; ` +
        'pre-writing 1.0 MiB would leave less than 2 more segments (2.0 MiB) free; it stays a sparse file, its blocks are allocated as messages arrive',
    ]);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('warm on a roomy disk pre-writes the first segment; the next one is not pre-written once that would cross diskSpaceCleanForciblyRatio', async () => {
  const root = tempDir();
  try {
    const probe = new ManualDiskUsageProbe();
    probe.setSpace({ usedBytes: 70 * MiB, usableBytes: 30 * MiB });
    const logger = capturingLogger();
    const store = await openStore(smallConfig(root, { warmMapedFileEnable: true, mappedFileSizeCommitLog: SEGMENT }), { diskUsageProbe: probe, logger });
    const alloc = store.commitLog.mfq.getAllocator()!;
    assert.equal(alloc.stats.prewritten, 1);
    assert.ok(allocatedBytes(seg(root, 0)) >= SEGMENT, 'the first segment is pre-written (allocated)');
    probe.setSpace({ usedBytes: 85 * MiB, usableBytes: 15 * MiB }); // 85%: one more segment would make 86%
    assert.equal((await store.putMessage(makeMessage())).status, 'PUT_OK', 'writable at 85% (≤ diskSpaceWarningLevelRatio)');
    await until(() => alloc.stats.leftSparse === 1, 'the next segment to be prepared');
    assert.ok(fs.existsSync(seg(root, 1)));
    assert.ok(allocatedBytes(seg(root, 1)) < 64 * 1024, 'the next segment stays sparse');
    assert.equal(alloc.stats.prewritten, 1);
    assert.deepEqual(warnings(logger.lines), [
      `segment ${seg(root, 1)} is not pre-written (warmMapedFileEnable): pre-writing 1.0 MiB would take disk usage of ${path.join(root, 'commitlog')} ` +
        'from 85% to 86%, above diskSpaceCleanForciblyRatio 85%; it stays a sparse file, its blocks are allocated as messages arrive',
    ]);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('a pre-write that fails with ENOSPC gives its blocks back and the segment is used sparse', async () => {
  const root = tempDir();
  try {
    const faulty = new FaultyFileSystem({ asyncWrites: false }); // the pre-writer's synchronous 64 KiB pieces
    let zeroWrites = 0;
    faulty.pathFault = (op, p) => (op === 'pwrite' && p === seg(root, 0) && ++zeroWrites >= 5 ? 'ENOSPC' : null); // 4 × 64 KiB, then full
    const probe = new ManualDiskUsageProbe();
    probe.setSpace({ usedBytes: 10 * MiB, usableBytes: 90 * MiB });
    const logger = capturingLogger();
    const store = await openStore(smallConfig(root, { warmMapedFileEnable: true, mappedFileSizeCommitLog: SEGMENT }), { fs: faulty, diskUsageProbe: probe, logger });
    faulty.pathFault = null;
    assert.equal(zeroWrites, 5);
    assert.ok(allocatedBytes(seg(root, 0)) < 64 * 1024, `released: ${allocatedBytes(seg(root, 0))} bytes allocated`);
    assert.equal(fs.statSync(seg(root, 0)).size, SEGMENT);
    assert.deepEqual(warnings(logger.lines), [
      `pre-writing segment ${seg(root, 0)} failed (disk full: write failed with ENOSPC (injected ENOSPC)); the blocks it took were released, the segment is used as a sparse file`,
    ]);
    const r = await store.putMessage(makeMessage({ body: 'after' }));
    assert.equal(r.status, 'PUT_OK');
    assert.equal(r.appendResult!.wroteOffset, 0);
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('a disk that cannot hold the first segment: the start fails with a sentence, no file is left, the root can be opened later', async () => {
  const root = tempDir();
  try {
    const faulty = new FaultyFileSystem();
    faulty.pathFault = (op, p) => (op === 'ftruncate' && p.includes(`${path.sep}commitlog${path.sep}`) ? 'ENOSPC' : null);
    const probe = new ManualDiskUsageProbe();
    probe.setSpace({ usedBytes: 800 * MiB, usableBytes: 200 * MiB });
    const cfg = smallConfig(root, { mappedFileSizeCommitLog: 1 << 30 });
    const err = await openStore(cfg, { fs: faulty, diskUsageProbe: probe }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(err instanceof StoreStartError, String(err));
    assert.equal(
      err.message,
      `cannot create the first CommitLog segment ${seg(root, 0)} (1.0 GiB, mappedFileSizeCommitLog=1073741824): ` +
        `disk full: write failed with ENOSPC (injected ENOSPC); the partition of ${path.join(root, 'commitlog')} has 200.0 MiB free. ` +
        'Free disk space, or lower mappedFileSizeCommitLog (e.g. mappedFileSizeCommitLog=52428800), and start again.',
    );
    assert.deepEqual(fs.readdirSync(path.join(root, 'commitlog')), [], 'no partial file');
    faulty.pathFault = null;
    const store = await openStore(cfg, { fs: faulty, diskUsageProbe: probe });
    assert.equal((await store.putMessage(makeMessage())).status, 'PUT_OK');
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});
