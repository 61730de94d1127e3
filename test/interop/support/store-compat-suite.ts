/**
 * The store-compatibility suite, run once per Apache RocketMQ version (store-compat-4.test.ts,
 * store-compat-5.test.ts):
 *
 * - Apache writes (clean shutdown / JVM halt after dispatch / JVM halt right after the last put),
 *   tsmq's DefaultMessageStore opens the directory and must read exactly what Apache itself
 *   reads from a copy of it (every message field, consume-queue entries, probes, TagA filter,
 *   queryMessage by key, getOffsetInQueueByTime), and everything the writer put.
 * - tsmq appends to that Apache-written store; Apache reads all of it back.
 * - tsmq writes (clean shutdown / SIGKILL), Apache opens the directory and reads; compared with
 *   tsmq's own reading of a copy, and with the put log.
 * - Apache appends to the tsmq-written store; tsmq reads all of it back.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assertRanOk, buildPeer, javaSkipReason, runJava, type BuiltPeer, type PeerName } from './java-peers.js';
import { diffAgainstRecipe, diffQueriesAgainstPuts, diffViews, wherePhysical } from './store-diff.js';
import {
  copyDir,
  javaSizeArgs,
  parseJavaView,
  recipeQueries,
  timeProbesFromPuts,
  tsmqStoreView,
  writePlanFiles,
  type PutLine,
  type StoreSizes,
  type StoreView,
} from './store-views.js';

export interface ApacheStorePeer {
  label: string;
  peer: PeerName;
  writerClass: string;
  readerClass: string;
  /** getOffsetInQueueByTime comparison: 4.x uses another algorithm (nearest neighbour, file mtime). */
  times: 'none' | 'lower' | 'lower+upper';
  /** Put every 50th message on a 140-char topic (V2 records; 5.x only, 4.x rejects topics > 127 chars). */
  longTopics: boolean;
}

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.TSMQ_INTEROP_STORE_MESSAGES ?? 400);
const APPEND = 100;
const SIZES: StoreSizes = {
  commitLogBytes: 64 * 1024,
  consumeQueueBytes: 100 * 20,
  maxHashSlotNum: 1000,
  maxIndexNum: 4000,
};

function putLines(lines: Array<Record<string, unknown>>): PutLine[] {
  return lines.filter((l) => l.type === 'put') as unknown as PutLine[];
}

type TestCtx = { test: (name: string, fn: () => void | Promise<void>) => Promise<void> };

/**
 * Three subtests per comparison so each capability passes or fails on its own: stored content
 * (messages, consume queues, probes, TagA filter), queryMessage (index), getOffsetInQueueByTime.
 */
async function compareViews(
  t: TestCtx,
  title: string,
  theirs: StoreView,
  mine: StoreView,
  times: ApacheStorePeer['times'],
  extra: string[],
  puts: PutLine[],
  longTopics: boolean,
): Promise<void> {
  const base = { commitLogBytes: SIZES.commitLogBytes, times };
  await t.test('messages, consume queues, pull probes and TagA filter are identical', () => {
    report(title, [...extra, ...diffViews(theirs, mine, { ...base, part: 'content' })]);
  });
  await t.test('queryMessage by KEYS and UNIQ_KEY finds the same messages (index files)', () => {
    report(`${title}, queryMessage`, [
      ...diffViews(theirs, mine, { ...base, part: 'query' }),
      ...diffQueriesAgainstPuts(theirs, puts, longTopics),
      ...diffQueriesAgainstPuts(mine, puts, longTopics),
    ]);
  });
  if (times !== 'none') {
    await t.test('getOffsetInQueueByTime (LOWER and UPPER) gives the same queue offsets', () => {
      report(`${title}, getOffsetInQueueByTime`, diffViews(theirs, mine, { ...base, part: 'time' }));
    });
  }
}

function report(title: string, diffs: string[]): void {
  if (diffs.length === 0) return;
  const shown = diffs.slice(0, 60).map((d) => `  - ${d}`).join('\n');
  assert.fail(`${title}: ${diffs.length} difference(s)\n${shown}${diffs.length > 60 ? `\n  ... ${diffs.length - 60} more` : ''}`);
}

/** Runs tsmq-store-writer.ts in a child process; "crash" mode is ended with SIGKILL after its last put. */
function runTsmqWriter(dir: string, from: number, to: number, mode: 'clean' | 'crash', longTopics: boolean): Promise<PutLine[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'tsmq-store-writer.ts'), dir, String(from), String(to), mode, JSON.stringify(SIZES), longTopics ? 'long-topic' : ''], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_TEST_CONTEXT: '' },
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (mode === 'crash' && out.includes('"type":"done"')) child.kill('SIGKILL');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const lines = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
      const done = lines.some((l) => l.type === 'done');
      if (!done || (mode === 'clean' && code !== 0)) {
        reject(new Error(`tsmq writer (${mode}) failed: code ${code} signal ${signal}\n${err.slice(-4000)}`));
        return;
      }
      resolve(putLines(lines));
    });
  });
}

/**
 * Damages the end of a crashed store: flips one body byte (BODYCRC mismatch) of a record in the
 * middle of the newest CommitLog file holding at least 3 records, and zeroes the last 40 bytes of
 * the last record (torn write) when that is another record. Returns the damage done (file, position).
 */
function damageTail(dir: string, puts: PutLine[], commitLogBytes: number): string[] {
  const ok = puts.filter((x) => x.status === 'PUT_OK' && x.wroteOffset !== undefined && x.wroteBytes !== undefined);
  const last = ok[ok.length - 1]!;
  const byFile = new Map<number, PutLine[]>();
  for (const x of ok) {
    const base = Math.floor(x.wroteOffset! / commitLogBytes) * commitLogBytes;
    if (!byFile.has(base)) byFile.set(base, []);
    byFile.get(base)!.push(x);
  }
  const base = [...byFile.keys()].sort((a, b) => b - a).find((b) => byFile.get(b)!.length >= 3);
  assert.ok(base !== undefined, 'no CommitLog file with 3 records');
  // a record with a body, not the first of its file; its body starts at byte 88, +12 per IPv6 host
  const victim = byFile.get(base)!.find((x, k) => k >= 1 && x.i % 8 !== 0);
  assert.ok(victim, 'no record with a body to damage');
  const bodyAt = 88 + (victim.i % 10 === 9 ? 12 : 0) + (victim.i % 29 === 28 ? 12 : 0);
  const out: string[] = [];
  const patch = (phy: number, f: (b: Buffer) => void, len: number): void => {
    const fileBase = Math.floor(phy / commitLogBytes) * commitLogBytes;
    const fd = openSync(join(dir, 'commitlog', String(fileBase).padStart(20, '0')), 'r+');
    try {
      const b = Buffer.alloc(len);
      readSync(fd, b, 0, len, phy - fileBase);
      f(b);
      writeSync(fd, b, 0, len, phy - fileBase);
    } finally {
      closeSync(fd);
    }
  };
  patch(victim.wroteOffset! + bodyAt, (b) => (b[0] = b[0]! ^ 0xff), 1);
  out.push(`flipped body byte of message ${victim.i} at ${wherePhysical(victim.wroteOffset! + bodyAt, commitLogBytes)}`);
  if (last !== victim) {
    patch(last.wroteOffset! + last.wroteBytes! - 40, (b) => b.fill(0), 40);
    out.push(`zeroed 40 bytes of message ${last.i} at ${wherePhysical(last.wroteOffset! + last.wroteBytes! - 40, commitLogBytes)}`);
  }
  return out;
}

export function storeCompatSuite(p: ApacheStorePeer): void {
  const skip = javaSkipReason();
  describe(`store compatibility with Apache RocketMQ ${p.label}`, { skip, timeout: 420_000 }, () => {
    let peer: BuiltPeer;
    let work: string;
    const putLogs = new Map<string, PutLine[]>();
    const sizeArgs = javaSizeArgs(SIZES);

    before(async () => {
      work = mkdtempSync(join(tmpdir(), `tsmq-interop-store-${p.label}-`));
      peer = await buildPeer(p.peer);
    });

    after(() => {
      if (work && !process.env.TSMQ_INTEROP_KEEP) rmSync(work, { recursive: true, force: true });
    });

    async function apacheWrite(dir: string, count: number, mode: string, from = 0): Promise<PutLine[]> {
      const run = await runJava(peer, p.writerClass, [dir, String(count), mode, '--from', String(from), ...(p.longTopics ? ['--long-topic'] : []), ...sizeArgs]);
      assertRanOk(run, `${p.writerClass} ${mode}`);
      assert.ok(run.lines.some((l) => l.type === 'done'), `${p.writerClass} did not finish:\n${run.stderr.slice(-3000)}`);
      return putLines(run.lines);
    }

    async function apacheRead(dir: string, plan: { queries: Array<[string, string]>; times: Array<[string, number, number]> }): Promise<StoreView> {
      const files = writePlanFiles(join(dir + '.plan'), plan);
      const run = await runJava(peer, p.readerClass, [dir, ...sizeArgs, '--queries', files.queriesFile, '--times', files.timesFile]);
      assertRanOk(run, `${p.readerClass} ${dir}`);
      assert.ok(run.lines.some((l) => l.type === 'end'), `${p.readerClass} did not finish:\n${run.stderr.slice(-3000)}`);
      return parseJavaView(run.lines);
    }

    for (const mode of ['clean', 'crash', 'crash-nodispatch'] as const) {
      it(`Apache ${p.label} writes ${N} messages (${mode}); tsmq reads every message exactly as Apache does`, async (t) => {
        const dir = join(work, `apache-${mode}`);
        const puts = await apacheWrite(dir, N, mode);
        putLogs.set(`apache-${mode}`, puts);
        assert.equal(puts.length, N);
        const plan = { queries: recipeQueries(N, p.longTopics), times: timeProbesFromPuts(puts, p.longTopics) };
        const refDir = join(work, `apache-${mode}-ref`);
        copyDir(dir, refDir);
        copyDir(dir, join(work, `apache-${mode}-pristine`));
        const ref = await apacheRead(refDir, plan);
        report(`Apache ${p.label} reading its own store (sanity)`, diffAgainstRecipe(ref, N, puts, SIZES.commitLogBytes, p.longTopics));
        const mine = await tsmqStoreView(dir, SIZES, plan);
        await compareViews(t, `tsmq vs Apache ${p.label} reading the same Apache-written store (${mode})`, ref, mine, p.times, diffAgainstRecipe(mine, N, puts, SIZES.commitLogBytes, p.longTopics), puts, p.longTopics);
      });
    }

    it(`Apache ${p.label} crash store with a corrupted body and a torn last record: tsmq recovers exactly what Apache recovers`, async (t) => {
      const puts = putLogs.get('apache-crash');
      assert.ok(puts, 'the crash Apache-write test must run first');
      const dir = join(work, 'apache-corrupt');
      copyDir(join(work, 'apache-crash-pristine'), dir);
      const damage = damageTail(dir, puts, SIZES.commitLogBytes);
      t.diagnostic(damage.join('; '));
      const plan = { queries: recipeQueries(N, p.longTopics), times: timeProbesFromPuts(puts, p.longTopics) };
      const refDir = join(work, 'apache-corrupt-ref');
      copyDir(dir, refDir);
      const ref = await apacheRead(refDir, plan);
      const mine = await tsmqStoreView(dir, SIZES, plan);
      assert.ok(ref.msgs.size < N, `Apache ${p.label} still reads ${ref.msgs.size} messages after the damage`);
      await compareViews(t, `tsmq vs Apache ${p.label} recovering a damaged store`, ref, mine, p.times, [], [], p.longTopics);
    });

    it(`tsmq appends ${APPEND} messages to the Apache ${p.label} store; Apache reads all ${N + APPEND}`, async (t) => {
      const dir = join(work, 'apache-clean'); // read (and cleanly closed) by tsmq in the first test
      const apachePuts = putLogs.get('apache-clean');
      assert.ok(apachePuts, 'the clean Apache-write test must run first');
      const tsmqPuts = await runTsmqWriter(dir, N, N + APPEND, 'clean', p.longTopics);
      const puts = [...apachePuts, ...tsmqPuts];
      const plan = { queries: recipeQueries(N + APPEND, p.longTopics), times: timeProbesFromPuts(puts, p.longTopics) };
      const mineDir = join(work, 'apache-clean-tsmq-copy');
      copyDir(dir, mineDir);
      const theirs = await apacheRead(dir, plan);
      const mine = await tsmqStoreView(mineDir, SIZES, plan);
      await compareViews(t, `tsmq vs Apache ${p.label} on an Apache store continued by tsmq`, theirs, mine, p.times, diffAgainstRecipe(theirs, N + APPEND, puts, SIZES.commitLogBytes, p.longTopics), puts, p.longTopics);
    });

    for (const mode of ['clean', 'crash'] as const) {
      it(`tsmq writes ${N} messages (${mode === 'crash' ? 'SIGKILL' : 'clean shutdown'}); Apache ${p.label} reads every message exactly as tsmq does`, async (t) => {
        const dir = join(work, `tsmq-${mode}`);
        const puts = await runTsmqWriter(dir, 0, N, mode, p.longTopics);
        putLogs.set(`tsmq-${mode}`, puts);
        assert.equal(puts.length, N);
        const plan = { queries: recipeQueries(N, p.longTopics), times: timeProbesFromPuts(puts, p.longTopics) };
        const mineDir = join(work, `tsmq-${mode}-copy`);
        copyDir(dir, mineDir);
        const mine = await tsmqStoreView(mineDir, SIZES, plan);
        const theirs = await apacheRead(dir, plan);
        await compareViews(t, `tsmq vs Apache ${p.label} reading a tsmq-written store (${mode})`, theirs, mine, p.times, [
          ...diffAgainstRecipe(mine, N, puts, SIZES.commitLogBytes, p.longTopics),
          ...diffAgainstRecipe(theirs, N, puts, SIZES.commitLogBytes, p.longTopics),
        ], puts, p.longTopics);
      });
    }

    it(`Apache ${p.label} appends ${APPEND} messages to the tsmq store; tsmq reads all ${N + APPEND}`, async (t) => {
      const dir = join(work, 'tsmq-clean'); // already opened and closed by Apache in the previous test
      const tsmqPuts = putLogs.get('tsmq-clean');
      assert.ok(tsmqPuts, 'the clean tsmq-write test must run first');
      const apachePuts = await apacheWrite(dir, APPEND, 'clean', N);
      const puts = [...tsmqPuts, ...apachePuts];
      const plan = { queries: recipeQueries(N + APPEND, p.longTopics), times: timeProbesFromPuts(puts, p.longTopics) };
      const refDir = join(work, 'tsmq-clean-apache-copy');
      copyDir(dir, refDir);
      const theirs = await apacheRead(refDir, plan);
      const mine = await tsmqStoreView(dir, SIZES, plan);
      await compareViews(t, `tsmq vs Apache ${p.label} on a tsmq store continued by Apache`, theirs, mine, p.times, diffAgainstRecipe(mine, N + APPEND, puts, SIZES.commitLogBytes, p.longTopics), puts, p.longTopics);
    });
  });
}
