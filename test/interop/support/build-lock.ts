/**
 * A cross-process lock for building an interop peer once (Java jars, the Go binary): several test
 * files, in one process or several, may ask for the same build at the same time.
 *
 * The lock is a directory (`mkdir` is atomic); a lock older than `staleMs` (default 10 min) is
 * taken as left behind by a killed build and removed. Throws when the lock cannot be had within
 * `waitMs` (default 10 min).
 */
import { mkdirSync, rmSync, statSync } from 'node:fs';

export async function withBuildLock<T>(lockDir: string, fn: () => Promise<T>, opts: { staleMs?: number; waitMs?: number } = {}): Promise<T> {
  const staleMs = opts.staleMs ?? 10 * 60_000;
  const deadline = Date.now() + (opts.waitMs ?? 10 * 60_000);
  for (;;) {
    try {
      mkdirSync(lockDir);
      break;
    } catch {
      try {
        if (Date.now() - statSync(lockDir).mtimeMs > staleMs) rmSync(lockDir, { recursive: true, force: true });
      } catch {
        /* the lock vanished meanwhile */
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for the build lock ${lockDir}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}
