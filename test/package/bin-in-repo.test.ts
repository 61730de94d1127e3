/**
 * README "Quick start": after `npm install` in a fresh clone, `npx tsmq <command>` runs the repo's
 * own bin (package.json "bin": dist/cli/main.js) directly, so that file must be executable. npm
 * sets the mode of bin files only when it installs, before `prepare` has built dist/, so
 * scripts/build-if-stale.mjs (run by `prepare`, `npm start`, `npm run tsmq`) sets it; a fresh
 * clone got "sh: 1: tsmq: Permission denied" before.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = join(repo, 'dist', 'cli', 'main.js');

test('build-if-stale makes dist/cli/main.js executable (also when dist/ is up to date) and `npx tsmq` runs it', { timeout: 300_000 }, async () => {
  await run(process.execPath, [join(repo, 'scripts', 'build-if-stale.mjs'), '--quiet'], { cwd: repo });
  chmodSync(bin, 0o644); // what a fresh clone has after `npm install`
  await run(process.execPath, [join(repo, 'scripts', 'build-if-stale.mjs'), '--quiet'], { cwd: repo });
  assert.equal(statSync(bin).mode & 0o777, 0o755);
  const { stdout } = await run('npx', ['--no-install', 'tsmq'], { cwd: repo, env: { ...process.env, NO_COLOR: '1' } });
  assert.match(stdout, /tsmq start/, stdout);
  assert.match(stdout, /admin/, stdout);
});
