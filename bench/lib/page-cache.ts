/**
 * The page-cache fill that precedes each broker start of bench/vs-apache and of the timer burst (bench/timer).
 *
 * On this VM the host backs guest memory lazily and takes freed memory back (virtio-balloon free-page
 * reporting, bench/README.md "This VM's memory"): a page-cache page made from a page that has been
 * free for more than a few seconds costs the writer ~2 CPU-s per GiB of kernel time (measured: 1.8–2.15
 * s/GiB for new file data, 0.26 s/GiB when the pages were freed a moment before, 0.07 s/GiB to
 * overwrite cached pages). A broker that writes 150–300 MB/s pays that for every new CommitLog page
 * until the machine's free memory is used up (≈ 2.3 µs of kernel time per 1 KiB message); from then
 * on the kernel reclaims old page-cache pages, which the host still backs (bench/results/
 * warmup-2026-12-02.md: about 35–40 % of the 60 s → 180 s speed-up of both brokers on a quiet
 * machine). A 2 GiB file written and deleted before the start did not help: its pages were free
 * again, and handed back, by the time the broker wrote.
 *
 * So before each broker start the harness reads a sparse file as large as the machine's free memory
 * (ext4 fills the page cache with zeroed pages: every free page gets touched, nothing is written to
 * disk) and keeps it until the broker has stopped. Those clean pages are the oldest in the page cache,
 * so the broker's writes reclaim them first, as a long-running broker's writes reclaim old CommitLog
 * pages: the broker starts in the state it would reach after its writes had filled the memory.
 */
import { closeSync, openSync, readFileSync, ftruncateSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';

const MiB = 1 << 20;

/** /proc/meminfo MemFree in bytes. */
export function memFreeBytes(): number {
  const m = /^MemFree:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

export interface PageCacheFill {
  /** the sparse file read (delete it once the broker stopped: its pages then become free) */
  path: string;
  /** bytes read into the page cache */
  bytes: number;
  seconds: number;
  /** MemFree before and after, bytes */
  freeBefore: number;
  freeAfter: number;
}

/**
 * Reads a sparse file of MemFree bytes (rounded down to MiB) under `dir` (the caller's temp dir, removed
 * with it after the broker stopped) with `readers` parallel readers of 1 MiB reads.
 */
export async function fillPageCache(dir: string, readers = 2): Promise<PageCacheFill> {
  const freeBefore = memFreeBytes();
  const bytes = Math.floor(freeBefore / MiB) * MiB;
  const path = join(dir, 'page-cache-fill');
  const fd = openSync(path, 'w+');
  try {
    ftruncateSync(fd, bytes);
  } finally {
    closeSync(fd);
  }
  const t0 = Date.now();
  const chunks = bytes / MiB;
  const per = Math.ceil(chunks / readers);
  await Promise.all(
    Array.from({ length: readers }, async (_, r) => {
      const fh = await open(path, 'r');
      const buf = Buffer.allocUnsafe(MiB);
      try {
        for (let c = r * per; c < Math.min(chunks, (r + 1) * per); c++) await fh.read(buf, 0, MiB, c * MiB);
      } finally {
        await fh.close();
      }
    }),
  );
  return { path, bytes, seconds: Math.round((Date.now() - t0) / 100) / 10, freeBefore, freeAfter: memFreeBytes() };
}
