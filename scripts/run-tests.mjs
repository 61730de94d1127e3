#!/usr/bin/env node
// Finds every *.test.ts under the given folders (default: test/) and runs them with
// Node's built-in test runner, loading TypeScript through tsx. Node 20's --test takes
// no globs, so the file list is built here.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const roots = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const passThrough = process.argv.slice(2).filter((a) => a.startsWith('--'));
const files = [];
function walk(dir) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.ts')) files.push(p);
  }
}
for (const r of roots.length ? roots : ['test']) {
  if (statSync(r).isFile()) files.push(r); else walk(r);
}
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const concurrency = process.env.TSMQ_TEST_CONCURRENCY ?? '2';
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-force-exit', `--test-concurrency=${concurrency}`, ...passThrough, ...files], {
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
