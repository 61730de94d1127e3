/**
 * `tsmq store stat|dump|repair` as a user runs them (issue 18): stat's per-queue offsets and
 * store times, dump's records/units/index entries/checkpoint at exact offsets (text and JSON),
 * repair's dry run (exit 2, lists file @ offset, changes nothing) then --apply (exit 0, backup),
 * after which verify exits 0; a store held by a live process is refused with exit 1.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ManualClock } from '../../../../src/common/time/clock.js';
import { formatLockRecord, ownLockRecord } from '../../../../src/store/recovery/store-files.js';
import { procProbe } from '../../../../src/store/recovery/process-identity.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../../support/store-fixtures.js';

const root = tempDir('tsmq-store-cli-');
const T0 = 1_700_000_000_000;
const placed: Array<{ phy: number; size: number; topic: string; queueId: number; queueOffset: number }> = [];
const main = fileURLToPath(new URL('../../../../src/cli/main.ts', import.meta.url));
const SIZES = ['-o', 'mappedFileSizeCommitLog=4096', '-o', 'mappedFileSizeConsumeQueue=200', '-o', 'maxHashSlotNum=1000', '-o', 'maxIndexNum=4000'];
const cli = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', main, 'store', ...args, '--store', root, ...SIZES], { encoding: 'utf8', timeout: 60_000 });

before(async () => {
  const clock = new ManualClock(T0);
  const store = await openStore(smallConfig(root), { clock });
  for (let i = 0; i < 30; i++) {
    clock.set(T0 + i * 1000);
    const topic = i % 3 === 0 ? 'Orders' : 'T';
    const r = await store.putMessage(makeMessage({ topic, queueId: i % 2, keys: `k${i}`, tags: 'TagA', body: `body ${i}` }));
    placed.push({ phy: r.appendResult!.wroteOffset, size: r.appendResult!.wroteBytes, topic, queueId: i % 2, queueOffset: r.appendResult!.queueOffset });
  }
  await store.shutdown();
});
after(() => removeDir(root));

test('stat --json: CommitLog range, topics, per-queue min/max offsets and first/last store times', () => {
  const r = cli('stat', '--json');
  assert.equal(r.status, 0, r.stderr);
  const s = JSON.parse(r.stdout);
  const last = placed[29]!;
  assert.deepEqual([s.commitLog.minPhysicalOffset, s.commitLog.maxPhysicalOffset, s.commitLog.firstStoreTimestampMs, s.commitLog.lastStoreTimestampMs], [0, last.phy + last.size, T0, T0 + 29_000]);
  assert.equal(s.topics, 2);
  const q = (topic: string, id: number) => s.queues.find((x: { topic: string; queueId: number }) => x.topic === topic && x.queueId === id);
  // Orders: i = 0, 3, ..., 27 → queue 0 gets i = 0, 6, 12, 18, 24; T/1: i = 1, 5, 7, 11, ..., 29
  assert.deepEqual([q('Orders', 0).minOffset, q('Orders', 0).maxOffset, q('Orders', 0).minStoreTimestampMs, q('Orders', 0).maxStoreTimestampMs], [0, 5, T0, T0 + 24_000]);
  const t1 = placed.filter((p) => p.topic === 'T' && p.queueId === 1);
  assert.deepEqual([q('T', 1).maxOffset, q('T', 1).minStoreTimestampMs, q('T', 1).maxStoreTimestampMs], [t1.length, T0 + 1000, T0 + 29_000]);
  assert.equal(s.indexFiles[0].indexCount, 31);
  assert.equal(s.checkpoint.confirmPhyOffset, last.phy + last.size);
});

test('dump commitlog / consumequeue / index / checkpoint show the records and units at their exact offsets', () => {
  const m7 = placed[7]!;
  const r = cli('dump', 'commitlog', '--from', String(m7.phy), '--count', '2', '--json');
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, 2);
  assert.deepEqual([lines[0].physicalOffset, lines[0].storeSizeBytes, lines[0].topic, lines[0].queueId, lines[0].queueOffset, lines[0].properties.KEYS, lines[0].bodyPreview, lines[0].storeTimestampMs], [m7.phy, m7.size, 'T', 1, m7.queueOffset, 'k7', 'body 7', T0 + 7000]);
  assert.equal(lines[1].physicalOffset, placed[8]!.phy);
  const bad = cli('dump', 'commitlog', '--from', String(m7.phy + 1), '--count', '1');
  assert.match(bad.stdout, new RegExp(`^${m7.phy + 1} commitlog/00000000000000000000 @ ${m7.phy + 1}: INVALID: `));
  const cq = cli('dump', 'consumequeue', '--topic', 'T', '--queue', '1', '--from', String(m7.queueOffset), '--count', '1');
  assert.equal(cq.stdout.trim(), `${m7.queueOffset} consumequeue/T/1/00000000000000000000 @ ${m7.queueOffset * 20}: physical offset ${m7.phy}, ${m7.size} B, tagsCode ${2598919}`);
  const idx = JSON.parse(cli('dump', 'index', '--from', '8', '--count', '1', '--json').stdout);
  assert.equal(idx.header.indexCount, 31);
  assert.deepEqual([idx.entries[0].entry, idx.entries[0].physicalOffset, idx.entries[0].offset], [8, m7.phy, 40 + 1000 * 4 + 8 * 20]);
  const cp = cli('dump', 'checkpoint');
  assert.match(cp.stdout, new RegExp(`^confirmPhyOffset ${placed[29]!.phy + placed[29]!.size}$`, 'm'));
});

test('repair: the dry run exits 2 listing file @ offset and changes nothing; --apply fixes it, verify exits 0; a live holder is refused', async () => {
  const m20 = placed[20]!;
  const file = join(root, 'commitlog/00000000000000000000');
  const bodyAt = readFileSync(file).indexOf('body 20', m20.phy);
  assert.ok(bodyAt > m20.phy && bodyAt < m20.phy + m20.size);
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.from('B'), 0, 1, bodyAt); // BODYCRC mismatch
  closeSync(fd);
  const v = cli('verify');
  assert.equal(v.status, 2);
  assert.match(v.stdout, new RegExp(`^commitlog/00000000000000000000 @ ${m20.phy}: invalid record`, 'm'));
  const dry = cli('repair');
  assert.equal(dry.status, 2, dry.stderr);
  assert.match(dry.stdout, new RegExp(`^cut     commitlog/00000000000000000000 @ ${m20.phy}: zero \\d+ byte\\(s\\)`, 'm'));
  const t0 = placed.filter((p) => p.topic === 'T' && p.queueId === 0).length;
  assert.equal(m20.topic, 'T');
  assert.match(dry.stdout, new RegExp(`^cut     consumequeue/T/0/00000000000000000000 @ ${m20.queueOffset * 20}: zero ${(t0 - m20.queueOffset) * 20} byte\\(s\\)`, 'm'));
  assert.match(dry.stdout, /Nothing changed: add --apply/);
  assert.equal(cli('verify').status, 2, 'the dry run changed nothing');

  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  try {
    await new Promise((r) => setTimeout(r, 100));
    writeFileSync(join(root, 'lock'), formatLockRecord(ownLockRecord(procProbe, child.pid!)));
    const held = cli('repair', '--apply');
    assert.equal(held.status, 1);
    assert.match(held.stderr, new RegExp(`process ${child.pid}`));
    for (const cmd of ['stat', 'dump']) assert.equal(cli(cmd, ...(cmd === 'dump' ? ['checkpoint'] : [])).status, 1, `${cmd} refuses a held store`);
  } finally {
    child.kill();
    await new Promise((r) => child.once('exit', r));
  }
  const applied = cli('repair', '--apply');
  assert.equal(applied.status, 0, applied.stderr + applied.stdout);
  const backup = readdirSync(root).find((n) => n.startsWith('repair-backup-'));
  assert.ok(backup && existsSync(join(root, backup, 'manifest.json')));
  assert.match(applied.stdout, new RegExp(`the CommitLog ends at ${m20.phy}; backup in ${join(root, backup)}`));
  const after = cli('verify');
  assert.equal(after.status, 0, after.stdout);
  const store = await openStore(smallConfig(root));
  try {
    assert.equal(store.getMaxPhyOffset(), m20.phy);
    assert.equal(store.getMaxOffsetInQueue('T', 0), placed.slice(0, 20).filter((p) => p.topic === 'T' && p.queueId === 0).length);
  } finally {
    await store.shutdown();
  }
});

test('a --store that is not a directory is an error (exit 1), not an empty clean store', () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', main, 'store', 'verify', '--store', join(root, 'no-such-dir')], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 1);
  assert.match(r.stderr, new RegExp(`no store at ${join(root, 'no-such-dir')}: not a directory`));
});
