/**
 * `npm run build` (scripts/build-if-stale.mjs --force) leaves dist/ current for build-if-stale,
 * so the `npm start` after it does not build the same sources again (before, `npm run build` ran
 * tsc without writing dist/.build-stamp: after an edit, `npm run build` then `npm start` built
 * twice).
 *
 * `scripts/build-if-stale.mjs --check` answers whether dist/ is up to date without building:
 * exit code 0 when fresh, 2 when missing or stale, nothing printed, nothing written.
 * examples/failover/failover-demo.mjs relies on it to run the built CLI (about 3x faster starts
 * than tsx, which made the demo's 30 s start bound fail on a loaded machine) and never builds.
 * Runs on a copy of the script in a temporary tree (src/, tsconfig*.json, package.json), so the
 * repository's own dist/ is not touched.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function check(root: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build-if-stale.mjs'), '--check'], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

test('--check: 2 without a build, 0 when the stamp is current, 2 after a source changed; never builds', () => {
  const root = mkdtempSync(join(tmpdir(), 'tsmq-bis-check-'));
  try {
    mkdirSync(join(root, 'scripts'));
    mkdirSync(join(root, 'src'));
    copyFileSync(join(repo, 'scripts', 'build-if-stale.mjs'), join(root, 'scripts', 'build-if-stale.mjs'));
    for (const f of ['tsconfig.json', 'tsconfig.build.json', 'package.json']) writeFileSync(join(root, f), '{}\n');
    writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 1;\n');
    const past = new Date(Date.now() - 60_000);
    for (const f of ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'src/a.ts']) utimesSync(join(root, f), past, past);

    assert.deepEqual(check(root), { status: 2, out: '' }, 'no dist/: stale, and nothing printed');
    assert.equal(existsSync(join(root, 'dist')), false, '--check built nothing');

    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, 'dist', '.build-stamp'), ['package.json', 'src/a.ts', 'tsconfig.build.json', 'tsconfig.json'].join('\n'));
    assert.deepEqual(check(root), { status: 0, out: '' }, 'stamp lists the same files and is newer: fresh');

    writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 2;\n');
    const future = new Date(Date.now() + 60_000);
    utimesSync(join(root, 'src', 'a.ts'), future, future);
    assert.deepEqual(check(root), { status: 2, out: '' }, 'a source newer than the stamp: stale');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('npm run build (--force) builds although dist/ is current and leaves the stamp current: the next start does not build', { timeout: 120_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), 'tsmq-bis-force-'));
  try {
    mkdirSync(join(root, 'scripts'));
    mkdirSync(join(root, 'src', 'console', 'web'), { recursive: true });
    for (const f of ['build-if-stale.mjs', 'copy-console-web.mjs']) copyFileSync(join(repo, 'scripts', f), join(root, 'scripts', f));
    symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'), 'dir');
    const build = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { scripts: { build: string } }).scripts.build;
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'bis-force', private: true, type: 'module', scripts: { build } }));
    writeFileSync(join(root, 'tsconfig.json'), '{}\n');
    writeFileSync(join(root, 'tsconfig.build.json'), JSON.stringify({ compilerOptions: { outDir: 'dist', rootDir: 'src', module: 'nodenext', target: 'es2022' }, include: ['src'] }));
    writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 1;\n');
    writeFileSync(join(root, 'src', 'console', 'web', 'index.html'), '<html></html>\n');

    const npmBuild = () => spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, encoding: 'utf8' });
    let r = npmBuild();
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal(readFileSync(join(root, 'dist', 'a.js'), 'utf8').includes('a = 1'), true);
    assert.equal(existsSync(join(root, 'dist', 'console', 'web', 'index.html')), true, 'the console front end is copied');
    assert.deepEqual(check(root), { status: 0, out: '' }, 'after npm run build, build-if-stale (npm start) has nothing to build');

    // an edit, then npm run build: still current for npm start
    writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 2;\n');
    r = npmBuild();
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal(readFileSync(join(root, 'dist', 'a.js'), 'utf8').includes('a = 2'), true);
    assert.deepEqual(check(root), { status: 0, out: '' });

    // dist/ current: --force builds anyway (a deleted output comes back)
    rmSync(join(root, 'dist', 'a.js'));
    r = npmBuild();
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stderr, /building dist\/ \(requested\)/);
    assert.equal(existsSync(join(root, 'dist', 'a.js')), true);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
