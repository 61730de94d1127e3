#!/usr/bin/env node
// Builds dist/ (tsc -p tsconfig.build.json) only when it is missing or older than the sources,
// so `npm start` and `npm run tsmq` start from the prepared build instead of recompiling every
// time. "Older" = a file under src/, tsconfig*.json or package.json changed after the last build,
// or a source file was added or removed (the stamp lists them; removal also clears dist/).
// `--quiet` prints nothing when the build is fresh; a build prints one line on stderr.
// `--force` builds even when dist/ is up to date (`npm run build`: so it leaves the stamp current
// and the next `npm start` does not build the same sources again).
// `--check` builds nothing and prints nothing: exit code 0 when dist/ is up to date, 2 when not
// (examples/failover/failover-demo.mjs runs the built CLI then, tsx otherwise).
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stampPath = join(root, 'dist', '.build-stamp');
const files = [];
function walk(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) walk(p);
    else if (name.endsWith('.ts')) files.push({ p, mtimeMs: st.mtimeMs });
  }
}
walk(join(root, 'src'));
for (const f of ['tsconfig.json', 'tsconfig.build.json', 'package.json']) files.push({ p: join(root, f), mtimeMs: statSync(join(root, f)).mtimeMs });
const list = files.map((f) => f.p.slice(root.length + 1)).sort().join('\n');
const newest = Math.max(...files.map((f) => f.mtimeMs));

let reason = null;
if (!existsSync(stampPath)) reason = 'no build yet';
else {
  const stamp = statSync(stampPath);
  const previous = readFileSync(stampPath, 'utf8');
  if (previous !== list) reason = 'source files added or removed';
  else if (newest > stamp.mtimeMs) reason = 'sources changed';
}
if (process.argv.includes('--check')) process.exit(reason === null ? 0 : 2);
if (reason === null && process.argv.includes('--force')) reason = 'requested';
// package.json's "bin" (dist/cli/main.js) must be executable: `npx tsmq` in this repo runs it
// directly, and npm sets the mode of bin files only at install time, before `prepare` builds them
// (a fresh clone then got "sh: 1: tsmq: Permission denied").
const binPath = join(root, 'dist', 'cli', 'main.js');
function makeBinExecutable() {
  if (existsSync(binPath) && (statSync(binPath).mode & 0o111) !== 0o111) chmodSync(binPath, statSync(binPath).mode | 0o755);
}
if (reason === null) {
  makeBinExecutable();
  if (!process.argv.includes('--quiet')) console.error('dist/ is up to date');
  process.exit(0);
}
if (reason === 'source files added or removed') rmSync(join(root, 'dist'), { recursive: true, force: true });
console.error(`building dist/ (${reason})`);
let tsc;
try {
  tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
} catch {
  console.error('cannot build: typescript is not installed (run npm install)');
  process.exit(1);
}
const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
if (r.status !== 0) process.exit(r.status ?? 1);
const copy = spawnSync(process.execPath, [join(root, 'scripts', 'copy-console-web.mjs')], { stdio: 'inherit', cwd: root });
if (copy.status !== 0) process.exit(copy.status ?? 1);
makeBinExecutable();
writeFileSync(stampPath, list);
