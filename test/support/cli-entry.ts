/**
 * How test harnesses start the tsmq CLI in a child process: `node dist/cli/main.js` when the
 * build is current (scripts/build-if-stale.mjs --check exits 0: every source older than the
 * last build, none added or removed), else the sources through tsx (`node --import tsx
 * src/cli/main.ts`). The build starts about 3× faster (a nameserver 3.0–3.6 s vs 8.8–11 s at
 * load 25), so loaded machines time out less; both run the same sources. `TSMQ_TEST_FROM_SRC=1`
 * forces tsx. The check runs once per test process.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let cached: string[] | null = null;

/** Node arguments that run the CLI (append the CLI's own arguments). */
export function cliEntryArgs(): string[] {
  if (cached !== null) return cached;
  const fresh = process.env.TSMQ_TEST_FROM_SRC !== '1'
    && spawnSync(process.execPath, [join(repoRoot, 'scripts', 'build-if-stale.mjs'), '--check'], { cwd: repoRoot, stdio: 'ignore' }).status === 0;
  cached = fresh ? [join(repoRoot, 'dist', 'cli', 'main.js')] : ['--import', 'tsx', join(repoRoot, 'src', 'cli', 'main.ts')];
  return cached;
}
