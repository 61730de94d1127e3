/**
 * What this VM's lazily backed memory costs a store writer (bench/lib/page-cache.ts): the
 * embedded tsmq store (ASYNC_FLUSH, the `store-append` load of bench/lib/store-load.ts: 1 KiB
 * bodies, 4 topics × 4 queues, 1024 puts in flight) appends `--messages` into a new temp store,
 * once with the machine's free memory as it is ("fresh": free pages the host may have taken back)
 * and once after page-cache.ts filled the page cache ("filled"), alternately for `--rounds`; per
 * run the process's user and kernel CPU µs per message and MemFree before it. A raw 1 MiB pwrite
 * pass of 1 GiB into a new file, fresh and then right after deleting it, gives the kernel's cost per
 * GiB for comparison.
 *
 * `npx tsx bench/vs-apache/first-touch-probe.ts [--messages 2000000] [--rounds 2] [--dir /tmp]`
 * (run it under `taskset -c 1`; CPU time, not wall time, is the figure on a shared machine)
 */
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_SHAPE, messagePool, openBenchStore, putWindowed } from '../lib/store-load.js';
import { fillPageCache, memFreeBytes } from '../lib/page-cache.js';

const GiB = 2 ** 30;
const MiB = 2 ** 20;

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : def;
}

/** user and kernel CPU-seconds of this process */
function cpu(): { user: number; sys: number } {
  const u = process.cpuUsage();
  return { user: u.user / 1e6, sys: u.system / 1e6 };
}

/** 1 GiB of 1 MiB pwrites into a new file: kernel CPU-s per GiB. */
function rawWrite(path: string): number {
  const block = Buffer.alloc(MiB, 0x5a);
  const fd = openSync(path, 'w');
  const c0 = cpu();
  try {
    for (let i = 0; i < 1024; i++) writeSync(fd, block, 0, MiB, i * MiB);
  } finally {
    closeSync(fd);
  }
  return cpu().sys - c0.sys;
}

async function storeRun(parent: string, label: string, messages: number, fill: boolean): Promise<string> {
  const dir = mkdtempSync(join(parent, 'tsmq-first-touch-'));
  try {
    let filled = '';
    if (fill) {
      const f = await fillPageCache(dir);
      filled = ` (filled ${(f.bytes / GiB).toFixed(1)} GiB in ${f.seconds} s)`;
    }
    const freeBefore = memFreeBytes();
    const store = await openBenchStore(join(dir, 'store'), { flushDiskType: 'ASYNC_FLUSH' });
    const pool = messagePool(DEFAULT_SHAPE);
    const c0 = cpu();
    const run = await putWindowed(store, pool, messages, 1024);
    const c1 = cpu();
    await store.shutdown();
    const us = (s: number): string => ((s / run.ok) * 1e6).toFixed(2);
    return `${label}${filled}: MemFree before ${(freeBefore / GiB).toFixed(1)} GiB, ${run.ok} puts (${(run.recordBytes / GiB).toFixed(2)} GiB of records) in ${(run.elapsedMs / 1000).toFixed(1)} s; CPU µs/msg user ${us(c1.user - c0.user)}, kernel ${us(c1.sys - c0.sys)}, total ${us(c1.user - c0.user + c1.sys - c0.sys)}; MemFree after ${(memFreeBytes() / GiB).toFixed(1)} GiB`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const messages = Number(arg('messages', '2000000'));
  const rounds = Number(arg('rounds', '2'));
  const parent = arg('dir', tmpdir());
  const scratch = mkdtempSync(join(parent, 'tsmq-first-touch-raw-'));
  try {
    const a = join(scratch, 'a');
    const fresh = rawWrite(a);
    unlinkSync(a);
    const reused = rawWrite(join(scratch, 'b'));
    console.log(`raw 1 MiB pwrites, kernel CPU-s per GiB: new file ${fresh.toFixed(2)}; new file right after deleting one (pages just freed) ${reused.toFixed(2)}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  for (let r = 0; r < rounds; r++) {
    // 20 s idle first: pages freed by the previous run are handed back to the host by then
    await new Promise((res) => setTimeout(res, 20_000));
    console.log(await storeRun(parent, `round ${r + 1} fresh `, messages, false));
    console.log(await storeRun(parent, `round ${r + 1} filled`, messages, true));
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
