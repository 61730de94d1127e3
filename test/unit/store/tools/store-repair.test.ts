/**
 * `tsmq store repair` on each corruption shape of the recovery tests (corruption.test.ts,
 * recovery.test.ts B02/B03/B05/B06/B10, power-loss.test.ts's "CommitLog tail lost while its
 * ConsumeQueue entries were flushed"): `verify` names the defect with its exact file and offset,
 * the dry run lists the cut/rebuild with file and offset and changes nothing, `--apply` backs up
 * every byte it cuts, `verify` is then clean, and a store opens the repaired directory with the
 * offsets abnormal recovery would give (and takes the next message where it should).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { ManualClock } from '../../../../src/common/time/clock.js';
import { offsetToFileName } from '../../../../src/store/mapped-file/file-names.js';
import { completeStoreConfig } from '../../../../src/store/store-config.js';
import { applyRepair, planRepair, type RepairPlan } from '../../../../src/store/tools/store-repair.js';
import { verifyStore, type StoreProblem } from '../../../../src/store/tools/store-verify.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../../support/store-fixtures.js';

const CL0 = 'commitlog/00000000000000000000';

function patch(file: string, pos: number, bytes: Buffer): void {
  const fd = fs.openSync(file, 'r+');
  fs.writeSync(fd, bytes, 0, bytes.length, pos);
  fs.closeSync(fd);
}

/** Hash of every file under the root but the lock file (what a dry run must not change). */
function treeHash(root: string): string {
  const h = createHash('sha1');
  const walk = (d: string): void => {
    for (const n of fs.readdirSync(d).sort()) {
      const p = path.join(d, n);
      if (p === path.join(root, 'lock')) continue;
      if (fs.statSync(p).isDirectory()) walk(p);
      else h.update(path.relative(root, p)).update(fs.readFileSync(p));
    }
  };
  walk(root);
  return h.digest('hex');
}

interface Shape {
  root: string;
  /** The first problem verify must report. */
  problem: Pick<StoreProblem, 'file' | 'offset'> & { message: RegExp };
  /** Checks on the plan (dry run). */
  plan: (p: RepairPlan) => void;
}

/** verify → dry run (no change) → apply (backups hold the cut bytes) → verify clean. */
function repairRoundTrip(s: Shape): RepairPlan {
  const config = completeStoreConfig(smallConfig(s.root));
  const before = verifyStore(s.root, config).problems;
  assert.ok(before.length > 0, 'verify finds the damage');
  assert.deepEqual([before[0]!.file, before[0]!.offset], [s.problem.file, s.problem.offset], JSON.stringify(before, null, 1));
  assert.match(before[0]!.message, s.problem.message);
  const hash = treeHash(s.root);
  const plan = planRepair(s.root, config);
  s.plan(plan);
  assert.equal(treeHash(s.root), hash, 'the dry run changes nothing');
  const cutBytes = new Map<string, Buffer>();
  for (const a of plan.actions) {
    if (a.kind !== 'cut') continue;
    const b = Buffer.alloc(a.lengthBytes);
    const fd = fs.openSync(path.join(s.root, a.file), 'r');
    fs.readSync(fd, b, 0, a.lengthBytes, a.offset);
    fs.closeSync(fd);
    cutBytes.set(`${a.file}.at-${a.offset}`, b);
  }
  const applied = applyRepair(s.root, config, new Date(2026, 0, 2, 3, 4, 5));
  assert.equal(applied.backupDir, path.join(s.root, 'repair-backup-20260102-030405'));
  for (const [name, bytes] of cutBytes) assert.ok(fs.readFileSync(path.join(applied.backupDir!, name)).equals(bytes), `backup ${name} holds the cut bytes`);
  for (const a of plan.actions) if (a.kind === 'delete') assert.ok(fs.existsSync(path.join(applied.backupDir!, a.file)), `${a.file} moved to the backup`);
  const manifest = JSON.parse(fs.readFileSync(path.join(applied.backupDir!, 'manifest.json'), 'utf8')) as RepairPlan;
  assert.equal(manifest.actions.length, plan.actions.length);
  assert.deepEqual(verifyStore(s.root, config).problems, [], 'verify is clean after the repair');
  assert.equal(planRepair(s.root, config).actions.length, 0, 'a second repair has nothing to do');
  return plan;
}

async function writeN(root: string, n: number, opts: { topicOf?: (i: number) => string; queueOf?: (i: number) => number; bodyBytes?: number } = {}) {
  const clock = new ManualClock(1_700_000_000_000);
  const store = await openStore(smallConfig(root), { clock });
  const out: Array<{ offset: number; size: number; queueOffset: number }> = [];
  for (let i = 0; i < n; i++) {
    clock.set(1_700_000_000_000 + i * 1000);
    const r = await store.putMessage(makeMessage({ topic: opts.topicOf?.(i) ?? 'T', queueId: opts.queueOf?.(i) ?? 0, keys: `k${i}`, tags: 'TagA', body: Buffer.alloc(opts.bodyBytes ?? 200, 97 + (i % 26)) }));
    out.push({ offset: r.appendResult!.wroteOffset, size: r.appendResult!.wroteBytes, queueOffset: r.appendResult!.queueOffset });
  }
  return { store, recs: out };
}

/** Opens the repaired store: CommitLog end, queue ends, every key found, next put placed. */
async function assertOpens(root: string, expect: { maxPhy: number; queues: Array<[string, number, number]>; keys: string[] }): Promise<void> {
  const store = await openStore(smallConfig(root));
  try {
    assert.equal(store.getMaxPhyOffset(), expect.maxPhy);
    for (const [topic, q, max] of expect.queues) assert.equal(store.getMaxOffsetInQueue(topic, q), max, `${topic}/${q}`);
    for (const key of expect.keys) {
      const topic = expect.queues[0]![0];
      const found = await store.queryMessage(topic, key, 32, 0, Number.MAX_SAFE_INTEGER);
      assert.equal(found.messages.length, 1, `key ${key}`);
    }
    const [topic, q, max] = expect.queues[0]!;
    const r = await store.putMessage(makeMessage({ topic, queueId: q, body: 'after repair' }));
    assert.deepEqual([r.appendResult!.wroteOffset, r.appendResult!.queueOffset], [expect.maxPhy, max]);
  } finally {
    await store.shutdown();
  }
}

const SHAPES: Array<[string, (size: number) => number]> = [
  ['inside the size field', () => 2],
  ['inside the header', () => 40],
  ['inside the body', () => 91 + 100],
  ['inside the properties', (size) => size - 3],
];

for (const [shape, cutAt] of SHAPES) {
  test(`torn tail ${shape}: verify names it, repair cuts the CommitLog and queue, the store opens at msg 4`, async () => {
    const root = tempDir();
    try {
      const { store, recs } = await writeN(root, 5);
      store.closeAbruptly();
      const fifth = recs[4]!;
      const cut = cutAt(fifth.size);
      patch(path.join(root, CL0), fifth.offset + cut, Buffer.alloc(fifth.size - cut));
      const wholeRecordGone = cut < 4; // the TOTALSIZE is zero: the CommitLog just ends there
      repairRoundTrip({
        root,
        problem: wholeRecordGone
          ? { file: 'consumequeue/T/0/00000000000000000000', offset: 80, message: new RegExp(`entry 4 points at physical offset ${fifth.offset}, past the end of the CommitLog data \\(${fifth.offset}\\)`) }
          : { file: CL0, offset: fifth.offset, message: /invalid record/ },
        plan: (p) => {
          assert.equal(p.commitLogEnd, fifth.offset);
          const clCut = p.actions.find((a) => a.kind === 'cut' && a.file === CL0) as { offset: number; lengthBytes: number } | undefined;
          // the bytes before the cut up to the last non-zero one (a TOTALSIZE < 64 KiB starts with 2 zero bytes: nothing left)
          const kept = fs.readFileSync(path.join(root, CL0)).subarray(fifth.offset, fifth.offset + cut);
          let dirty = kept.length;
          while (dirty > 0 && kept[dirty - 1] === 0) dirty--;
          if (wholeRecordGone) assert.equal(clCut, undefined, 'nothing left of the fifth record to cut');
          else assert.deepEqual(clCut && [clCut.offset, clCut.lengthBytes], [fifth.offset, dirty]);
          assert.ok(p.actions.some((a) => a.kind === 'cut' && a.file === 'consumequeue/T/0/00000000000000000000' && a.offset === 80 && a.lengthBytes === 20));
        },
      });
      await assertOpens(root, { maxPhy: fifth.offset, queues: [['T', 0, 4]], keys: ['k0', 'k3'] });
    } finally {
      removeDir(root);
    }
  });
}

test('a record copied from another offset (valid CRC, wrong PHYSICALOFFSET) and a flipped body byte (B10): cut at the record', async () => {
  for (const damage of ['copy', 'crc'] as const) {
    const root = tempDir();
    try {
      const { store, recs } = await writeN(root, 8);
      await store.shutdown(); // the index file is committed (a crash leaves its header at 0 entries)
      fs.writeFileSync(path.join(root, 'abort'), '1');
      const file = path.join(root, CL0);
      const victim = recs[4]!;
      if (damage === 'copy') patch(file, victim.offset, fs.readFileSync(file).subarray(recs[1]!.offset, recs[1]!.offset + recs[1]!.size));
      else patch(file, victim.offset + 100, Buffer.from([fs.readFileSync(file)[victim.offset + 100]! ^ 0xff]));
      const plan = repairRoundTrip({
        root,
        problem: { file: CL0, offset: victim.offset, message: damage === 'copy' ? /PHYSICALOFFSET|offset/i : /CRC/i },
        plan: (p) => {
          assert.equal(p.commitLogEnd, victim.offset);
          const end = recs[7]!.offset + recs[7]!.size;
          assert.ok(p.actions.some((a) => a.kind === 'cut' && a.file === CL0 && a.offset === victim.offset && a.lengthBytes === end - victim.offset));
        },
      });
      assert.ok(plan.actions.some((a) => a.kind === 'delete' && a.file.startsWith('index/')), 'index entries of msgs 4-7 point past the end: the file is dropped');
      assert.match(plan.notes.join('\n'), /rebuilds the deleted index files from the CommitLog/);
      await assertOpens(root, { maxPhy: victim.offset, queues: [['T', 0, 4]], keys: ['k0', 'k3'] });
    } finally {
      removeDir(root);
    }
  }
});

test('an index file cut short: verify names it, repair deletes it, the store rebuilds it and every key is found', async () => {
  const root = tempDir();
  try {
    const { store, recs } = await writeN(root, 8);
    await store.shutdown();
    const [name] = fs.readdirSync(path.join(root, 'index'));
    fs.truncateSync(path.join(root, 'index', name!), 1000);
    repairRoundTrip({
      root,
      problem: { file: `index/${name}`, offset: 0, message: /file is 1000 bytes/ },
      plan: (p) => assert.deepEqual(p.actions.map((a) => [a.kind, a.file]), [['delete', `index/${name}`]]),
    });
    const last = recs[7]!;
    await assertOpens(root, { maxPhy: last.offset + last.size, queues: [['T', 0, 8]], keys: ['k0', 'k5', 'k7'] });
  } finally {
    removeDir(root);
  }
});

test('B03 newest ConsumeQueue file deleted: verify names where the queue ends, repair rebuilds entries 20-24 from the CommitLog', async () => {
  const root = tempDir();
  try {
    const { store, recs } = await writeN(root, 25, { bodyBytes: 100 });
    store.closeAbruptly();
    fs.unlinkSync(path.join(root, 'consumequeue/T/0', offsetToFileName(400)));
    repairRoundTrip({
      root,
      problem: { file: `consumequeue/T/0/${offsetToFileName(400)}`, offset: 0, message: /the queue ends at 20 but the CommitLog holds its records up to queue offset 24/ },
      plan: (p) => {
        const r = p.actions.find((a) => a.kind === 'rebuild');
        assert.ok(r && r.kind === 'rebuild');
        assert.deepEqual([r.file, r.offset, r.fromQueueOffset, r.toQueueOffset], [`consumequeue/T/0/${offsetToFileName(400)}`, 0, 20, 25]);
      },
    });
    const last = recs[24]!;
    await assertOpens(root, { maxPhy: last.offset + last.size, queues: [['T', 0, 25]], keys: ['k20', 'k24'] });
  } finally {
    removeDir(root);
  }
});

test('a ConsumeQueue file longer than its segment size: the store refuses it naming the file and `tsmq store repair`; repair trims it (tail backed up) and the store opens with every entry', async () => {
  const root = tempDir();
  try {
    const { store, recs } = await writeN(root, 25, { bodyBytes: 100 });
    await store.shutdown();
    const first = path.join(root, 'consumequeue/T/0', offsetToFileName(0));
    fs.appendFileSync(first, Buffer.from([1, 2, 3, 4, 5, 6, 7]));
    await assert.rejects(openStore(smallConfig(root)), (e: Error) => e.message.includes(`segment ${first} has length 207`) && e.message.includes('tsmq store repair --store'));
    const plan = repairRoundTrip({
      root,
      problem: { file: `consumequeue/T/0/${offsetToFileName(0)}`, offset: 0, message: /file is 207 bytes, expected 200/ },
      plan: (p) => {
        const t = p.actions.find((a) => a.kind === 'trim');
        assert.ok(t && t.kind === 'trim', JSON.stringify(p.actions));
        assert.deepEqual([t.file, t.offset, t.lengthBytes], [`consumequeue/T/0/${offsetToFileName(0)}`, 200, 7]);
        assert.equal(p.actions.filter((a) => a.kind === 'rebuild').length, 0, 'no entry was lost, none to rebuild');
      },
    });
    assert.equal(fs.statSync(first).size, 200);
    const backup = fs.readdirSync(root).find((n) => n.startsWith('repair-backup-'))!;
    assert.deepEqual([...fs.readFileSync(path.join(root, backup, `consumequeue/T/0/${offsetToFileName(0)}.at-200`))], [1, 2, 3, 4, 5, 6, 7]);
    assert.equal(plan.actions.length, 1);
    const last = recs[24]!;
    await assertOpens(root, { maxPhy: last.offset + last.size, queues: [['T', 0, 25]], keys: ['k0', 'k19', 'k24'] });
  } finally {
    removeDir(root);
  }
});

test('one queue directory deleted after a clean stop: a clean start does not serve that queue (as Apache: it re-dispatches from the highest queue position); verify says so and names repair, which rebuilds it', async () => {
  const root = tempDir();
  try {
    // 21 messages: the last one is in queue 0, so nothing of queue 1 lies past queue 0's end
    const { store, recs } = await writeN(root, 21, { bodyBytes: 100, queueOf: (i) => i % 2 });
    await store.shutdown();
    fs.rmSync(path.join(root, 'consumequeue/T/1'), { recursive: true });
    const reopened = await openStore(smallConfig(root));
    try {
      assert.equal(reopened.getMaxOffsetInQueue('T', 1), 0, 'the known gap: a clean start leaves the queue empty');
      assert.equal(reopened.getMaxOffsetInQueue('T', 0), 11);
    } finally {
      await reopened.shutdown();
    }
    repairRoundTrip({
      root,
      problem: { file: `consumequeue/T/1/${offsetToFileName(0)}`, offset: 0, message: /^no ConsumeQueue for T\/1 but the CommitLog holds its records up to queue offset 9; the broker re-dispatches only from .*clean start.*`tsmq store repair --apply` rebuilds them$/ },
      plan: (p) => {
        const r = p.actions.find((a) => a.kind === 'rebuild');
        assert.ok(r && r.kind === 'rebuild');
        assert.deepEqual([r.topic, r.queueId, r.fromQueueOffset, r.toQueueOffset], ['T', 1, 0, 10]);
      },
    });
    const last = recs[20]!;
    await assertOpens(root, { maxPhy: last.offset + last.size, queues: [['T', 1, 10], ['T', 0, 11]], keys: ['k1', 'k19'] });
  } finally {
    removeDir(root);
  }
});

test('B05 / power loss under ASYNC_FLUSH: CommitLog tail lost after msg 6 while queue entries and checkpoint cover msg 10', async () => {
  const root = tempDir();
  try {
    const { store, recs } = await writeN(root, 10, { bodyBytes: 150 });
    await store.shutdown();
    fs.writeFileSync(path.join(root, 'abort'), '1');
    const end6 = recs[5]!.offset + recs[5]!.size;
    const base = end6 - (end6 % 4096);
    patch(path.join(root, 'commitlog', offsetToFileName(base)), end6 - base, Buffer.alloc(4096 - (end6 - base)));
    for (const n of fs.readdirSync(path.join(root, 'commitlog'))) if (Number(n) > base) fs.unlinkSync(path.join(root, 'commitlog', n));
    const plan = repairRoundTrip({
      root,
      problem: { file: 'consumequeue/T/0/00000000000000000000', offset: 120, message: /entry 6 points at physical offset \d+, past the end/ },
      plan: (p) => {
        assert.equal(p.commitLogEnd, end6);
        assert.ok(p.actions.some((a) => a.kind === 'cut' && a.file === 'consumequeue/T/0/00000000000000000000' && a.offset === 120 && a.lengthBytes === 80));
        const cp = p.actions.filter((a) => a.kind === 'checkpoint').map((a) => a.kind === 'checkpoint' && [a.field, a.to]);
        assert.deepEqual(cp.slice(0, 2), [
          ['physicMsgTimestamp', 1_700_000_005_000],
          ['logicsMsgTimestamp', 1_700_000_005_000],
        ]);
      },
    });
    assert.ok(plan.actions.some((a) => a.kind === 'checkpoint' && a.field === 'confirmPhyOffset' && a.to === end6));
    await assertOpens(root, { maxPhy: end6, queues: [['T', 0, 6]], keys: ['k0', 'k5'] });
  } finally {
    removeDir(root);
  }
});

test('B02 CommitLog lost the tail holding T while T/0 had rolled to an empty ConsumeQueue file; B06 all ConsumeQueues of A deleted', async () => {
  const root = tempDir();
  try {
    const { store, recs } = await writeN(root, 16, { topicOf: (i) => (i < 3 ? 'U' : i < 9 ? 'A' : 'T'), bodyBytes: 300 });
    store.closeAbruptly();
    const tStart = recs[9]!.offset;
    fs.writeFileSync(path.join(root, 'consumequeue/T/0', offsetToFileName(200)), Buffer.alloc(200));
    for (const n of fs.readdirSync(path.join(root, 'commitlog'))) {
      const from = Math.max(0, tStart - Number(n));
      if (from < 4096) patch(path.join(root, 'commitlog', n), from, Buffer.alloc(4096 - from));
    }
    fs.rmSync(path.join(root, 'consumequeue/A'), { recursive: true });
    const tCq = 'consumequeue/T/0/00000000000000000000';
    const plan = repairRoundTrip({
      root,
      problem: { file: tCq, offset: 0, message: new RegExp(`entry 0 points at physical offset ${tStart}, past the end of the CommitLog data \\(${tStart}\\)`) },
      plan: (p) => {
        assert.equal(p.commitLogEnd, tStart);
        assert.ok(p.actions.some((a) => a.kind === 'cut' && a.file === tCq && a.offset === 0), JSON.stringify(p.actions));
        assert.ok(p.actions.some((a) => a.kind === 'rebuild' && a.topic === 'A' && a.fromQueueOffset === 0 && a.toQueueOffset === 6));
        assert.ok(verifyStore(root, completeStoreConfig(smallConfig(root))).problems.some((x) => x.file === 'consumequeue/A/0/00000000000000000000' && x.offset === 0 && /no ConsumeQueue for A\/0 .* up to queue offset 5/.test(x.message)));
      },
    });
    assert.ok(plan.actions.some((a) => a.kind === 'delete' && a.file === `consumequeue/T/0/${offsetToFileName(200)}`));
    const again = await openStore(smallConfig(root));
    try {
      assert.equal(again.getMaxPhyOffset(), tStart);
      assert.deepEqual([again.getMaxOffsetInQueue('U', 0), again.getMaxOffsetInQueue('A', 0), again.getMaxOffsetInQueue('T', 0)], [3, 6, 0]);
      const g = await again.getMessage('g', 'A', 0, 0, 32);
      assert.equal(g.messages.length, 6);
    } finally {
      await again.shutdown();
    }
  } finally {
    removeDir(root);
  }
});

test('prepared transaction records own no ConsumeQueue unit: verify is clean, repair rebuilds only the committed ones', async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    const prepared = 0x4; // MessageSysFlag.TRANSACTION_PREPARED_TYPE
    for (let i = 0; i < 6; i++) await store.putMessage(makeMessage({ keys: `k${i}`, sysFlag: i % 2 === 1 ? prepared : 0 }));
    await store.shutdown();
    const config = completeStoreConfig(smallConfig(root));
    assert.deepEqual(verifyStore(root, config).problems, []);
    assert.deepEqual(planRepair(root, config).actions, []);
    fs.rmSync(path.join(root, 'consumequeue'), { recursive: true });
    const plan = planRepair(root, config);
    assert.deepEqual(plan.actions.map((a) => a.kind === 'rebuild' && [a.topic, a.fromQueueOffset, a.toQueueOffset]), [['T', 0, 3]]);
    applyRepair(root, config);
    assert.deepEqual(verifyStore(root, config).problems, []);
    const again = await openStore(smallConfig(root));
    try {
      assert.equal(again.getMaxOffsetInQueue('T', 0), 3);
    } finally {
      await again.shutdown();
    }
  } finally {
    removeDir(root);
  }
});

test('a clean store: the plan is empty and --apply changes nothing (no backup directory)', async () => {
  const root = tempDir();
  try {
    const { store } = await writeN(root, 4);
    await store.shutdown();
    const config = completeStoreConfig(smallConfig(root));
    const hash = treeHash(root);
    const p = applyRepair(root, config);
    assert.deepEqual(p.actions, []);
    assert.equal(p.backupDir, undefined);
    assert.deepEqual(fs.readdirSync(root).filter((n) => n.startsWith('repair-backup')), []);
    assert.equal(treeHash(root), hash);
  } finally {
    removeDir(root);
  }
});
