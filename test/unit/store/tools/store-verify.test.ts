/**
 * `tsmq store verify` finds each planted corruption with the exact file and byte offset
 * (issue 18): a body byte (BODYCRC), the magic code, PHYSICALOFFSET, a truncated segment, a
 * ConsumeQueue entry's size and physical offset, an index entry, the checkpoint; a clean store
 * passes; a store held by a live process is refused. Plus the CLI's exit codes and report.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, openSync, readdirSync, readFileSync, truncateSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatLockRecord, ownLockRecord } from '../../../../src/store/recovery/store-files.js';
import { procProbe } from '../../../../src/store/recovery/process-identity.js';
import { completeStoreConfig } from '../../../../src/store/store-config.js';
import { StoreInUseError, verifyStore, type StoreProblem } from '../../../../src/store/tools/store-verify.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../../support/store-fixtures.js';

const work = tempDir('tsmq-verify-');
const clean = join(work, 'clean');
const config = completeStoreConfig(smallConfig(clean));
const CL0 = 'commitlog/00000000000000000000';
/** Where each message landed: physical offset and size, by body. */
const placed = new Map<string, { phy: number; size: number; queueId: number; queueOffset: number }>();

before(async () => {
  const store = await openStore(smallConfig(clean));
  for (let i = 0; i < 12; i++) {
    const body = `message-body-${i}-${'x'.repeat(20)}`;
    const r = await store.putMessage(makeMessage({ topic: 'T', queueId: i % 2, body, keys: `key-${i}`, tags: 'A' }));
    assert.equal(r.status, 'PUT_OK');
    placed.set(body, { phy: r.appendResult!.wroteOffset, size: r.appendResult!.wroteBytes, queueId: i % 2, queueOffset: r.appendResult!.queueOffset });
  }
  await store.shutdown();
});
after(() => removeDir(work));

let copies = 0;
function copy(): string {
  const dir = join(work, `copy-${copies++}`);
  cpSync(clean, dir, { recursive: true });
  return dir;
}

function patch(file: string, at: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+');
  writeSync(fd, bytes, 0, bytes.length, at);
  closeSync(fd);
}

function message(i: number): { phy: number; size: number; queueId: number; queueOffset: number; body: string } {
  const body = `message-body-${i}-${'x'.repeat(20)}`;
  return { ...placed.get(body)!, body };
}

function problems(dir: string): StoreProblem[] {
  return verifyStore(dir, { ...config }).problems;
}

test('a clean store has no problems and every record, entry and index entry is counted', () => {
  const r = verifyStore(clean, config);
  assert.deepEqual(r.problems, []);
  assert.equal(r.records, 12);
  assert.equal(r.consumeQueueEntries, 12);
  assert.equal(r.indexEntries, 12); // one KEYS entry per message (these messages have no UNIQ_KEY)
});

test('a flipped body byte: BODYCRC mismatch at the record, file and offset exact', () => {
  const dir = copy();
  const m = message(5);
  const file = join(dir, CL0);
  const data = readFileSync(file);
  const at = data.indexOf(m.body) + 3;
  patch(file, at, Buffer.from([data[at]! ^ 0xff]));
  const p = problems(dir);
  assert.equal(p[0]!.file, CL0);
  assert.equal(p[0]!.offset, m.phy);
  assert.match(p[0]!.message, /CRC/i);
});

test('a damaged magic code and a wrong PHYSICALOFFSET are reported at their records', () => {
  const dir = copy();
  const m = message(2);
  patch(join(dir, CL0), m.phy + 4, Buffer.from([0, 0, 0, 1]));
  assert.deepEqual(problems(dir).slice(0, 1).map((p) => [p.file, p.offset]), [[CL0, m.phy]]);
  assert.match(problems(dir)[0]!.message, /magic/i);
  const dir2 = copy();
  const m7 = message(7);
  const wrong = Buffer.alloc(8);
  wrong.writeBigInt64BE(BigInt(m7.phy + 1));
  assert.ok(m7.phy + m7.size <= config.mappedFileSizeCommitLog);
  patch(join(dir2, CL0), m7.phy + 28, wrong);
  const p = problems(dir2);
  assert.deepEqual([p[0]!.file, p[0]!.offset], [CL0, m7.phy]);
  assert.match(p[0]!.message, /PHYSICALOFFSET|physical offset/i);
});

test('a truncated CommitLog segment is reported at offset 0 with its size', () => {
  const dir = copy();
  truncateSync(join(dir, CL0), 4000);
  const p = problems(dir).find((x) => x.file === CL0 && x.offset === 0);
  assert.ok(p, JSON.stringify(problems(dir)));
  assert.match(p.message, /4000 bytes, expected mappedFileSizeCommitLog 4096/);
});

test("a ConsumeQueue entry with a wrong size or a physical offset that is no record start is reported at the entry's byte", () => {
  const dir = copy();
  const m = message(4); // queue 0, queue offset 2
  assert.deepEqual([m.queueId, m.queueOffset], [0, 2]);
  const cq = 'consumequeue/T/0/00000000000000000000';
  const size = Buffer.alloc(4);
  size.writeInt32BE(m.size + 1);
  patch(join(dir, cq), 2 * 20 + 8, size);
  const m3 = message(3); // queue 1, queue offset 1
  const cq1 = 'consumequeue/T/1/00000000000000000000';
  const phy = Buffer.alloc(8);
  phy.writeBigInt64BE(BigInt(m3.phy + 2));
  patch(join(dir, cq1), 1 * 20, phy);
  const p = problems(dir);
  assert.deepEqual(
    p.map((x) => [x.file, x.offset]),
    [
      [cq, 40],
      [cq1, 20],
    ],
  );
  assert.match(p[0]!.message, new RegExp(`entry 2 \\(physical offset ${m.phy}\\): size ${m.size + 1} but the record is ${m.size} bytes`));
  assert.match(p[1]!.message, new RegExp(`entry 1 points at physical offset ${m3.phy + 2}, where no record starts`));
});

test('an index entry pointing between records and a checkpoint ahead of the data are reported', () => {
  const dir = copy();
  const indexName = readdirSync(join(dir, 'index'))[0]!;
  const entriesAt = 40 + config.maxHashSlotNum * 4;
  const at = entriesAt + 1 * 20; // entry 1
  const phy = Buffer.alloc(8);
  phy.writeBigInt64BE(BigInt(message(0).phy + 1));
  patch(join(dir, 'index', indexName), at + 4, phy);
  const future = Buffer.alloc(8);
  future.writeBigInt64BE(BigInt(Date.now() + 3_600_000 * 24 * 365 * 10));
  patch(join(dir, 'checkpoint'), 0, future);
  const p = problems(dir);
  assert.deepEqual(
    p.map((x) => [x.file, x.offset]),
    [
      [`index/${indexName}`, at],
      ['checkpoint', 0],
    ],
  );
  assert.match(p[0]!.message, /entry 1 points at physical offset 1, where no record starts/);
  assert.match(p[1]!.message, /physicMsgTimestamp .* is after the newest record's store time/);
});

test('a store whose lock names a live process is refused; the CLI exits 1 then, 2 with problems, 0 when clean', async () => {
  const dir = copy();
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  try {
    await new Promise((r) => setTimeout(r, 100));
    writeFileSync(join(dir, 'lock'), formatLockRecord(ownLockRecord(procProbe, child.pid!)));
    assert.throws(() => verifyStore(dir, config), (e: unknown) => e instanceof StoreInUseError && e.message.includes(`in use by process ${child.pid}`));
    const main = fileURLToPath(new URL('../../../../src/cli/main.ts', import.meta.url));
    const opts = ['-o', 'mappedFileSizeCommitLog=4096', '-o', 'mappedFileSizeConsumeQueue=200', '-o', 'maxHashSlotNum=1000', '-o', 'maxIndexNum=4000'];
    const cli = (store: string) => spawnSync(process.execPath, ['--import', 'tsx', main, 'store', 'verify', '--store', store, ...opts], { encoding: 'utf8', timeout: 60_000 });
    const held = cli(dir);
    assert.equal(held.status, 1);
    assert.match(held.stderr, /in use by process/);
    child.kill();
    await new Promise((r) => child.once('exit', r));
    const ok = cli(clean);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /^OK: 1 CommitLog file\(s\), 12 record\(s\)/m);
    const bad = copy();
    truncateSync(join(bad, CL0), 4000);
    const r = cli(bad);
    assert.equal(r.status, 2);
    assert.match(r.stdout, new RegExp(`^${CL0} @ 0: file is 4000 bytes`, 'm'));
  } finally {
    child.kill();
  }
});
