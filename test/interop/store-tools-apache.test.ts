/**
 * `tsmq store verify|stat|repair` on stores written by Apache RocketMQ 4.9.8's own
 * DefaultMessageStore (the interop suite's ApacheStoreWriter peer), judged by Apache's store
 * reading the result (ApacheStoreReader):
 *
 * - clean shutdown: verify finds nothing; stat's CommitLog range and per-queue min/max offsets
 *   are exactly what Apache reads;
 * - JVM halt right after the last put (crash-nodispatch), then every ConsumeQueue deleted
 *   (dispatch may or may not have caught up before the halt; this makes it certain): verify names
 *   each queue the CommitLog holds; repair --apply writes all their units; verify is clean;
 *   Apache reads every message put through them;
 * - JVM halt plus a flipped body byte: verify names the record's file and offset; repair --apply
 *   cuts there; verify is clean; Apache and tsmq open it at the damaged record's offset with
 *   exactly the messages before it.
 *
 * One peer build, one JVM per write/read (~2 s each). Skips without java/mvn.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { completeStoreConfig } from '../../src/store/store-config.js';
import { applyRepair, planRepair } from '../../src/store/tools/store-repair.js';
import { statStore } from '../../src/store/tools/store-stat.js';
import { verifyStore } from '../../src/store/tools/store-verify.js';
import { assertRanOk, buildPeer, javaSkipReason, runJava, type BuiltPeer } from './support/java-peers.js';
import { copyDir, javaSizeArgs, parseJavaView, tsmqStoreView, writePlanFiles, type PutLine, type StoreSizes, type StoreView } from './support/store-views.js';

const N = 200;
const SIZES: StoreSizes = { commitLogBytes: 64 * 1024, consumeQueueBytes: 100 * 20, maxHashSlotNum: 1000, maxIndexNum: 4000 };
const config = (root: string) =>
  completeStoreConfig({ storePathRootDir: root, mappedFileSizeCommitLog: SIZES.commitLogBytes, mappedFileSizeConsumeQueue: SIZES.consumeQueueBytes, maxHashSlotNum: 1000, maxIndexNum: 4000 });

describe('tsmq store tools on Apache RocketMQ 4.9.8 stores', { skip: javaSkipReason(), timeout: 300_000 }, () => {
  let peer: BuiltPeer;
  let work: string;
  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'tsmq-store-tools-apache-'));
    peer = await buildPeer('rocketmq4');
  });
  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  async function apacheWrite(dir: string, mode: string): Promise<PutLine[]> {
    const run = await runJava(peer, 'tsmq.interop.ApacheStoreWriter', [dir, String(N), mode, '--from', '0', ...javaSizeArgs(SIZES)]);
    assertRanOk(run, `ApacheStoreWriter ${mode}`);
    return run.lines.filter((l) => l.type === 'put') as unknown as PutLine[];
  }

  /** Apache's reading of a copy of `dir` (its recovery must not touch the original). */
  async function apacheRead(dir: string): Promise<StoreView> {
    const copy = `${dir}-apache-read`;
    copyDir(dir, copy);
    const files = writePlanFiles(`${copy}.plan`, { queries: [], times: [] });
    const run = await runJava(peer, 'tsmq.interop.ApacheStoreReader', [copy, ...javaSizeArgs(SIZES), '--queries', files.queriesFile, '--times', files.timesFile]);
    assertRanOk(run, `ApacheStoreReader ${dir}`);
    return parseJavaView(run.lines);
  }

  it('clean shutdown: verify is clean; stat gives the CommitLog range and every queue min/max Apache reads', async () => {
    const dir = join(work, 'clean');
    const puts = await apacheWrite(dir, 'clean');
    assert.equal(puts.length, N);
    const v = verifyStore(dir, config(dir));
    assert.deepEqual(v.problems, []);
    assert.equal(v.records, N);
    const s = statStore(dir, config(dir));
    const theirs = await apacheRead(dir);
    assert.deepEqual([s.commitLog.minPhysicalOffset, s.commitLog.maxPhysicalOffset], [theirs.minPhyOffset, theirs.maxPhyOffset]);
    const mine = new Map(s.queues.map((q) => [`${q.topic}/${q.queueId}`, { minOffset: q.minOffset, maxOffset: q.maxOffset }]));
    // (Apache's reader also probes the empty SCHEDULE_TOPIC_XXXX queues, which have no files)
    const apache = new Map([...theirs.queues].filter(([, q]) => q.maxOffset > 0).map(([k, q]) => [k, { minOffset: q.minOffset, maxOffset: q.maxOffset }]));
    assert.deepEqual(mine, apache);
    assert.equal(s.commitLog.lastStoreTimestampMs, Math.max(...puts.map((p) => p.storeTimestamp ?? 0)));
  });

  it('JVM halt after the last put, ConsumeQueues deleted: verify names each queue, repair rebuilds them, Apache reads all 200', async () => {
    const dir = join(work, 'nodispatch');
    const puts = await apacheWrite(dir, 'crash-nodispatch');
    assert.equal(puts.length, N);
    const clean = join(work, 'clean');
    const queues = statStore(clean, config(clean)).queues.length; // same recipe as the clean store
    rmSync(join(dir, 'consumequeue'), { recursive: true });
    const before = verifyStore(dir, config(dir)).problems;
    assert.equal(before.length, queues, JSON.stringify(before.slice(0, 5)));
    for (const p of before) assert.match(`${p.file} @ ${p.offset}: ${p.message}`, /^consumequeue\/([^/]+)\/(\d+)\/00000000000000000000 @ 0: no ConsumeQueue for \1\/\2 but the CommitLog holds its records/);
    const plan = planRepair(dir, config(dir));
    const rebuilt = plan.actions.reduce((n, a) => n + (a.kind === 'rebuild' ? a.toQueueOffset - a.fromQueueOffset : 0), 0);
    assert.equal(rebuilt, N);
    applyRepair(dir, config(dir));
    assert.deepEqual(verifyStore(dir, config(dir)).problems, []);
    const theirs = await apacheRead(dir);
    assert.equal(theirs.msgs.size, N, 'Apache reads every message through the rebuilt ConsumeQueues');
    const mine = await tsmqStoreView(join(work, 'nodispatch'), SIZES, { queries: [], times: [] });
    assert.equal(mine.msgs.size, N);
  });

  it('JVM halt + a flipped body byte: verify names the record, repair cuts there, Apache and tsmq open it at that offset', async () => {
    const dir = join(work, 'corrupt');
    const puts = (await apacheWrite(dir, 'crash')).filter((p) => p.status === 'PUT_OK');
    // a message at about 60 % of the log with a body and IPv4 hosts (the recipe: i % 8 == 0 has no body, i % 10 == 9 and i % 29 == 28 use IPv6)
    const victim = puts.slice(Math.floor(puts.length * 0.6)).find((p) => p.i % 8 !== 0 && p.i % 10 !== 9 && p.i % 29 !== 28)!;
    const base = Math.floor(victim.wroteOffset! / SIZES.commitLogBytes) * SIZES.commitLogBytes;
    const file = `commitlog/${String(base).padStart(20, '0')}`;
    const fd = openSync(join(dir, file), 'r+');
    const b = Buffer.alloc(victim.wroteBytes!);
    readSync(fd, b, 0, b.length, victim.wroteOffset! - base);
    // flip the first body byte (BODYLENGTH at 84 with IPv4 hosts, the body right after it)
    const bodyLenAt = 84;
    const bodyLen = b.readInt32BE(bodyLenAt);
    assert.ok(bodyLen > 0 && bodyLen < b.length, `body length ${bodyLen}`);
    writeSync(fd, Buffer.from([b[bodyLenAt + 4]! ^ 0xff]), 0, 1, victim.wroteOffset! - base + bodyLenAt + 4);
    closeSync(fd);
    const problems = verifyStore(dir, config(dir)).problems;
    assert.deepEqual([problems[0]!.file, problems[0]!.offset], [file, victim.wroteOffset! - base]);
    assert.match(problems[0]!.message, /CRC/);
    const plan = applyRepair(dir, config(dir));
    assert.equal(plan.commitLogEnd, victim.wroteOffset);
    assert.deepEqual(verifyStore(dir, config(dir)).problems, []);
    const before = puts.filter((p) => p.wroteOffset! < victim.wroteOffset!).length;
    const theirs = await apacheRead(dir);
    assert.equal(theirs.maxPhyOffset, victim.wroteOffset);
    assert.equal(theirs.msgs.size, before);
    const mine = await tsmqStoreView(dir, SIZES, { queries: [], times: [] });
    assert.equal(mine.maxPhyOffset, victim.wroteOffset);
    assert.equal(mine.msgs.size, before);
  });
});
