/**
 * The store lock names its holder by pid + start time + boot id (src/store/recovery/store-files.ts):
 * a dead pid, a zombie, a reused pid and a lock from before a reboot are stale; a real live holder
 * is refused with "MQ already started: store <root> is locked by process <pid>".
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { nodeFileSystem } from '../../../src/common/fs/node-file-system.js';
import { createProcProbe, parseProcStat, procProbe, type ProcessProbe } from '../../../src/store/recovery/process-identity.js';
import { formatLockRecord, judgeLockRecord, parseLockRecord, StoreLock, StoreLockedError } from '../../../src/store/recovery/store-files.js';
import { openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';

const linux = fs.existsSync('/proc/self/stat') && fs.existsSync('/proc/sys/kernel/random/boot_id');
const bootId = linux ? fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() : '';

function startTimeOf(pid: number): string {
  return parseProcStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))!.startTime;
}

function stateOf(pid: number): string | null {
  try {
    return parseProcStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))!.state;
  } catch {
    return null;
  }
}

async function until(cond: () => boolean, what: string | (() => string), timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timeout waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function sleeper(): ChildProcess {
  return spawn('sleep', ['30'], { stdio: 'ignore' });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

function writeLock(root: string, text: string): void {
  fs.mkdirSync(root, { recursive: true });
  fs.writeFileSync(path.join(root, 'lock'), text);
}

test('parseProcStat: state (field 3) and starttime (field 22), comm with spaces and parentheses', () => {
  const line = '3546 (we ird) (x) R 3543 3543 1162 0 -1 4194304 94 0 2 0 0 0 0 0 20 0 1 0 1162722 3133440 362 18446744073709551615';
  assert.deepEqual(parseProcStat(line), { state: 'R', startTime: '1162722' });
  assert.equal(parseProcStat('garbage'), null);
});

test('lock file: written as pid/startTime/bootId/recovered lines; an older record without recovered, an old bare pid and a released "lock" parse', () => {
  assert.equal(formatLockRecord({ pid: 42, startTime: '777', bootId: 'b-1', recovered: false }), 'pid=42\nstartTime=777\nbootId=b-1\nrecovered=false\n');
  assert.deepEqual(parseLockRecord('pid=42\nstartTime=777\nbootId=b-1\nrecovered=true\n'), { pid: 42, startTime: '777', bootId: 'b-1', recovered: true });
  assert.equal(formatLockRecord({ pid: 42, startTime: '777', bootId: 'b-1' }), 'pid=42\nstartTime=777\nbootId=b-1\n');
  assert.deepEqual(parseLockRecord('pid=42\nstartTime=777\nbootId=b-1\n'), { pid: 42, startTime: '777', bootId: 'b-1', recovered: null });
  assert.deepEqual(parseLockRecord('17190'), { pid: 17190, startTime: null, bootId: null, recovered: null });
  assert.equal(parseLockRecord('lock'), null);
  assert.equal(parseLockRecord(''), null);
});

test('lock written by a live store holds this process identity; released it says "lock"', { skip: !linux }, async () => {
  const root = tempDir();
  try {
    const store = await openStore(smallConfig(root));
    const text = fs.readFileSync(path.join(root, 'lock'), 'utf8');
    assert.equal(text, `pid=${process.pid}\nstartTime=${startTimeOf(process.pid)}\nbootId=${bootId}\nrecovered=true\n`);
    await store.shutdown();
    assert.equal(fs.readFileSync(path.join(root, 'lock'), 'utf8'), 'lock');
  } finally {
    removeDir(root);
  }
});

test('stale lock: the pid no longer exists ⇒ the store opens and the lock is rewritten', { skip: !linux }, async () => {
  const root = tempDir();
  try {
    const child = spawn('true', [], { stdio: 'ignore' });
    const pid = child.pid!;
    await new Promise((r) => child.once('exit', r));
    await until(() => stateOf(pid) === null, `pid ${pid} to disappear`);
    writeLock(root, formatLockRecord({ pid, startTime: '12345', bootId }));
    assert.deepEqual(judgeLockRecord(parseLockRecord(fs.readFileSync(path.join(root, 'lock'), 'utf8')), procProbe), {
      held: false,
      stale: `lock of process ${pid}: no such process`,
    });
    const store = await openStore(smallConfig(root));
    assert.match(fs.readFileSync(path.join(root, 'lock'), 'utf8'), new RegExp(`^pid=${process.pid}\\n`));
    await store.shutdown();
  } finally {
    removeDir(root);
  }
});

test('stale lock: the pid is a zombie (a killed broker not yet reaped) ⇒ the store opens', { skip: !linux }, async () => {
  const root = tempDir();
  // `sleep 0` becomes a zombie: its parent execs `sleep 30`, which never reaps it. On a loaded
  // machine the child may not have run yet; wait up to 30 s (CI suites ran this at load 30).
  const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const zombie = await new Promise<number>((resolve) => parent.stdout!.once('data', (b: Buffer) => resolve(Number(b.toString().trim()))));
    await until(() => stateOf(zombie) === 'Z', () => `pid ${zombie} to be a zombie (state now ${stateOf(zombie)})`, 30_000);
    writeLock(root, formatLockRecord({ pid: zombie, startTime: startTimeOf(zombie), bootId }));
    assert.deepEqual(judgeLockRecord(parseLockRecord(fs.readFileSync(path.join(root, 'lock'), 'utf8')), procProbe), {
      held: false,
      stale: `lock of process ${zombie}: process ${zombie} is a zombie (state Z)`,
    });
    const store = await openStore(smallConfig(root));
    await store.shutdown();
  } finally {
    await stop(parent);
    removeDir(root);
  }
});

test('stale lock: the pid is alive but started at another time (pid reused) ⇒ the store opens', { skip: !linux }, async () => {
  const root = tempDir();
  const other = sleeper();
  try {
    const pid = other.pid!;
    await until(() => stateOf(pid) !== null, 'the sleeper to start');
    const real = startTimeOf(pid);
    const lockSays = String(Number(real) - 1);
    writeLock(root, formatLockRecord({ pid, startTime: lockSays, bootId }));
    assert.deepEqual(judgeLockRecord(parseLockRecord(fs.readFileSync(path.join(root, 'lock'), 'utf8')), procProbe), {
      held: false,
      stale: `lock of process ${pid}: pid now belongs to another process (start time ${real}, lock says ${lockSays})`,
    });
    const store = await openStore(smallConfig(root));
    await store.shutdown();
  } finally {
    await stop(other);
    removeDir(root);
  }
});

test('stale lock: written during another boot (even with the same pid and start time) ⇒ the store opens', { skip: !linux }, async () => {
  const root = tempDir();
  const other = sleeper();
  try {
    const pid = other.pid!;
    await until(() => stateOf(pid) !== null, 'the sleeper to start');
    writeLock(root, formatLockRecord({ pid, startTime: startTimeOf(pid), bootId: 'another-boot' }));
    assert.deepEqual(judgeLockRecord(parseLockRecord(fs.readFileSync(path.join(root, 'lock'), 'utf8')), procProbe), {
      held: false,
      stale: `lock of process ${pid} was taken before a reboot (boot id another-boot)`,
    });
    const store = await openStore(smallConfig(root));
    await store.shutdown();
  } finally {
    await stop(other);
    removeDir(root);
  }
});

test('a live holder (same pid, start time and boot id) is refused with the exact message', { skip: !linux }, async () => {
  const root = tempDir();
  const holder = sleeper();
  try {
    const pid = holder.pid!;
    await until(() => stateOf(pid) !== null, 'the holder to start');
    const record = formatLockRecord({ pid, startTime: startTimeOf(pid), bootId });
    writeLock(root, record);
    await assert.rejects(openStore(smallConfig(root)), (e: Error) => {
      assert.ok(e instanceof StoreLockedError);
      assert.equal(e.message, `MQ already started: store ${path.resolve(root)} is locked by process ${pid}`);
      return true;
    });
    assert.equal(fs.readFileSync(path.join(root, 'lock'), 'utf8'), record, 'the holder keeps its lock');
  } finally {
    await stop(holder);
    removeDir(root);
  }
});

test('an older lock holding only a pid: another program there is stale, a live node process is refused with a hint', { skip: !linux }, async () => {
  const root = tempDir();
  const other = sleeper();
  const node = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
  try {
    await until(() => stateOf(other.pid!) !== null && stateOf(node.pid!) !== null, 'the children to start');
    assert.deepEqual(judgeLockRecord(parseLockRecord(String(other.pid)), procProbe), {
      held: false,
      stale: `lock of process ${other.pid}: that pid now runs sleep, not ${path.basename(process.execPath)}`,
    });
    writeLock(root, String(other.pid));
    StoreLock.acquire(nodeFileSystem, root, path.join(root, 'lock')).release();
    writeLock(root, String(node.pid));
    assert.throws(
      () => StoreLock.acquire(nodeFileSystem, root, path.join(root, 'lock')),
      (e: Error) => {
        assert.equal(
          e.message,
          `MQ already started: store ${path.resolve(root)} is locked by process ${node.pid} (its identity cannot be verified; if no broker runs as process ${node.pid}, delete ${path.join(root, 'lock')})`,
        );
        return true;
      },
    );
  } finally {
    await stop(other);
    await stop(node);
    removeDir(root);
  }
});

test('without /proc: a live pid holds the lock unverified, a dead one is stale', () => {
  const probe = createProcProbe('/nonexistent-proc');
  assert.equal(probe.bootId(), null);
  assert.deepEqual(probe.inspect(process.pid), { kind: 'running', startTime: null, program: null });
  assert.deepEqual(judgeLockRecord({ pid: process.ppid, startTime: '5', bootId: 'x' }, probe), { held: true, pid: process.ppid, verified: false });
  const gone: ProcessProbe = { bootId: () => null, inspect: () => ({ kind: 'gone', why: 'no such process' }) };
  assert.deepEqual(judgeLockRecord({ pid: 999_999, startTime: null, bootId: null }, gone), { held: false, stale: 'lock of process 999999: no such process' });
  assert.deepEqual(judgeLockRecord({ pid: process.pid, startTime: null, bootId: null }, probe), {
    held: false,
    stale: `lock of process ${process.pid} (this process) from an earlier open`,
  });
});

test('previousHolderSameBoot: a crashed holder of this boot that had recovered ⇒ true; one that was still recovering, another boot, a released lock or none ⇒ false', { skip: !linux }, async () => {
  const root = tempDir();
  try {
    const lockPath = path.join(root, 'lock');
    const cases: Array<[string | null, boolean]> = [
      [formatLockRecord({ pid: 999_999_999, startTime: '1', bootId }), true], // dead pid of this boot: a crash (older record without `recovered`)
      [formatLockRecord({ pid: 999_999_999, startTime: '1', bootId, recovered: true }), true], // it had finished its recovery
      // it died or failed while recovering (e.g. after a power loss, on a full disk): the files
      // it had not repaired yet are what the power loss left (store simulation seed 579)
      [formatLockRecord({ pid: 999_999_999, startTime: '1', bootId, recovered: false }), false],
      [formatLockRecord({ pid: 999_999_999, startTime: '1', bootId: 'another-boot' }), false],
      ['lock', false], // released at a clean shutdown
      ['4242', false], // old pid-only record: the boot is unknown
      [null, false],
    ];
    for (const [text, expected] of cases) {
      fs.rmSync(lockPath, { force: true });
      if (text !== null) writeLock(root, text);
      else fs.mkdirSync(root, { recursive: true });
      const lock = StoreLock.acquire(nodeFileSystem, root, lockPath, procProbe);
      assert.equal(lock.previousHolderSameBoot, expected, `previous record ${JSON.stringify(text)}`);
      lock.release();
    }
  } finally {
    removeDir(root);
  }
});

test('the lock record says recovered=false while the store recovers and recovered=true once it is open', { skip: !linux }, async () => {
  const root = tempDir();
  try {
    const lockPath = path.join(root, 'lock');
    fs.mkdirSync(root, { recursive: true });
    const lock = StoreLock.acquire(nodeFileSystem, root, lockPath, procProbe);
    assert.deepEqual(parseLockRecord(fs.readFileSync(lockPath, 'utf8')), { pid: process.pid, startTime: startTimeOf(process.pid), bootId, recovered: false });
    lock.markRecovered();
    assert.deepEqual(parseLockRecord(fs.readFileSync(lockPath, 'utf8')), { pid: process.pid, startTime: startTimeOf(process.pid), bootId, recovered: true });
    lock.release();
    const store = await openStore(smallConfig(root));
    try {
      assert.equal(parseLockRecord(fs.readFileSync(lockPath, 'utf8'))?.recovered, true, 'an opened store has finished its recovery');
    } finally {
      await store.shutdown();
    }
  } finally {
    removeDir(root);
  }
});
