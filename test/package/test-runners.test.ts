/**
 * docs/library.md "Jest and Vitest": the node:test example (orders.test.mjs) runs under Vitest
 * and under Jest's ESM mode with exactly the edits the page describes. The repo installs neither
 * (docs/library.md says why), so this runs only where they are installed: in the directory named
 * by TSMQ_TEST_RUNNERS_DIR (`npm i vitest jest ali-ons` there), else skipped with that reason.
 * `tsmq` is linked into that directory's node_modules (this repo, built), as an installed package.
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const runners = process.env.TSMQ_TEST_RUNNERS_DIR;
const has = (pkg: string): boolean => runners !== undefined && existsSync(join(runners, 'node_modules', pkg, 'package.json'));
const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' };
delete env.NODE_TEST_CONTEXT;

function skipReason(runner: string): string | false {
  if (!runners) return `TSMQ_TEST_RUNNERS_DIR not set (a directory with \`npm i vitest jest ali-ons\`)`;
  if (!has(runner)) return `${runner} is not installed in ${runners}`;
  if (!has('ali-ons')) return `ali-ons is not installed in ${runners}`;
  return false;
}

/** The page's node:test example. */
function ordersExample(): string {
  const page = readFileSync(join(repo, 'docs/library.md'), 'utf8');
  const m = /```js\n(\/\/ orders\.test\.mjs[\s\S]*?)```/.exec(page);
  assert.ok(m, 'docs/library.md has orders.test.mjs');
  return m[1]!;
}

describe('docs/library.md example under Vitest and Jest (when installed)', { timeout: 180_000 }, () => {
  let dir: string;
  before(async () => {
    if (!runners) return;
    await run(process.execPath, [join(repo, 'scripts', 'build-if-stale.mjs'), '--quiet'], { cwd: repo });
    const link = join(runners, 'node_modules', 'tsmq');
    if (existsSync(link) && lstatSync(link).isSymbolicLink()) rmSync(link);
    if (!existsSync(link)) symlinkSync(repo, link, 'dir');
    dir = mkdtempSync(join(runners, 'tsmq-runner-test-'));
  });

  it('Vitest: node:test imports replaced by vitest ones, as the page says; the test passes', { skip: skipReason('vitest') }, async () => {
    const code = ordersExample().replace(`import { test, before, after } from 'node:test';`, `import { test, beforeAll as before, afterAll as after } from 'vitest';`);
    assert.match(code, /from 'vitest'/);
    writeFileSync(join(dir, 'orders.test.mjs'), code);
    const r = await run(process.execPath, [join(runners!, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--root', dir, 'orders.test.mjs'], { cwd: dir, env, timeout: 120_000 }).catch((e: { stdout: string; stderr: string }) => e);
    const out = `${r.stdout}\n${r.stderr}`;
    assert.match(out, /Tests\s+1 passed \(1\)/, out);
  });

  it('Jest (node --experimental-vm-modules, --forceExit): the same test passes', { skip: skipReason('jest') }, async () => {
    const code = ordersExample().replace(`import { test, before, after } from 'node:test';`, `import { test, beforeAll as before, afterAll as after } from '@jest/globals';`);
    writeFileSync(join(dir, 'orders.test.mjs'), code);
    writeFileSync(join(dir, 'jest.config.json'), JSON.stringify({ testMatch: ['**/*.test.mjs'], transform: {}, testTimeout: 60_000 }));
    const r = await run(process.execPath, ['--experimental-vm-modules', join(runners!, 'node_modules', 'jest', 'bin', 'jest.js'), '--rootDir', dir, '--config', join(dir, 'jest.config.json'), '--forceExit'], { cwd: dir, env, timeout: 120_000 }).catch((e: { stdout: string; stderr: string }) => e);
    const out = `${r.stdout}\n${r.stderr}`;
    assert.match(out, /Tests:\s+1 passed, 1 total/, out);
  });
});
