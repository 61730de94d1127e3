/**
 * The package as a user gets it (issue 18): `npm pack`, install the tarball into a fresh project in
 * a temp dir (from the npm cache: --prefer-offline), then, from that project only (no path into
 * the repo), run an embedded store and an in-process broker with ali-ons, type-check a TypeScript
 * consumer of the published declarations and run the `tsmq` bin.
 */
import { before, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const fixtures = join(repo, 'test', 'package', 'fixtures');
const work = mkdtempSync(join(tmpdir(), 'tsmq-pack-'));
const app = join(work, 'app');
const aliOnsVersion = (JSON.parse(readFileSync(join(repo, 'node_modules', 'ali-ons', 'package.json'), 'utf8')) as { version: string }).version;

before(async () => {
  await run(process.execPath, [join(repo, 'scripts', 'build-if-stale.mjs'), '--quiet'], { cwd: repo });
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: repo, maxBuffer: 64 << 20 });
  const tarball = join(work, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename);
  await run('mkdir', [app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'tsmq-user-app', private: true, type: 'module' }));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball, `ali-ons@${aliOnsVersion}`], { cwd: app, maxBuffer: 64 << 20 });
  copyFileSync(join(fixtures, 'consumer-app.mjs'), join(app, 'consumer-app.mjs'));
  copyFileSync(join(fixtures, 'typed-app.ts'), join(app, 'typed-app.ts'));
});

after(() => rmSync(work, { recursive: true, force: true }));

test('the packed tarball holds the build and the guide, not the sources or tests', async () => {
  const pkg = JSON.parse(readFileSync(join(app, 'node_modules', 'tsmq', 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
  assert.deepEqual(Object.keys(pkg.exports), ['.', './package.json']);
  const { stdout } = await run('tar', ['-tzf', join(work, 'tsmq-0.1.0.tgz')]);
  const files = stdout.split('\n');
  assert.ok(files.includes('package/dist/index.js') && files.includes('package/dist/index.d.ts') && files.includes('package/docs/library.md'));
  assert.equal(files.filter((f) => f.startsWith('package/src/') || f.startsWith('package/test/') || f.endsWith('.map')).length, 0);
});

test('an installed app runs an embedded store and a broker with ali-ons through `import "tsmq"` only', async () => {
  const { stdout } = await run(process.execPath, ['consumer-app.mjs'], { cwd: app, timeout: 60_000 });
  const out = JSON.parse(stdout.trim().split('\n').pop()!) as {
    store: { put: { status: string; queueOffset: number; physicalOffset: number; msgId: string }; consumed: string[]; byKey: string[]; maxOffset: number };
    broker: { namesrvAddr: string; sent: string[]; received: string[]; inStore: number };
  };
  assert.equal(out.store.put.status, 'PUT_OK');
  assert.equal(out.store.put.queueOffset, 0);
  assert.equal(out.store.put.physicalOffset, 0);
  assert.match(out.store.put.msgId, /^[0-9A-F]{32}$/);
  assert.deepEqual(out.store.consumed, ['first', 'second', 'third']);
  assert.deepEqual(out.store.byKey, ['first']);
  assert.equal(out.store.maxOffset, 3);
  assert.match(out.broker.namesrvAddr, /^127\.0\.0\.1:\d+$/);
  assert.notEqual(out.broker.namesrvAddr, '127.0.0.1:9876');
  assert.deepEqual(out.broker.sent, Array(5).fill('SEND_OK'));
  assert.deepEqual(out.broker.received, ['msg-0', 'msg-1', 'msg-2', 'msg-3', 'msg-4']);
  assert.equal(out.broker.inStore, 5);
});

test('the published type declarations type-check a TypeScript user, and internals are not exported', async () => {
  const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
  const common = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--skipLibCheck', '--typeRoots', join(repo, 'node_modules', '@types'), '--types', 'node'];
  await run(process.execPath, [tsc, ...common, 'typed-app.ts'], { cwd: app });
  writeFileSync(join(app, 'internal.ts'), "import { DefaultMessageStore } from 'tsmq/dist/store/default-message-store.js';\nexport const x = DefaultMessageStore;\n");
  const bad = await run(process.execPath, [tsc, ...common, 'internal.ts'], { cwd: app }).then(
    () => null,
    (e: { stdout: string }) => e.stdout,
  );
  assert.ok(bad !== null && /tsmq\/dist\/store\/default-message-store\.js/.test(bad), `deep import should fail: ${bad}`);
});

test('the installed `tsmq` bin runs: no arguments prints the help and exits 0', async () => {
  const { stdout } = await run(join(app, 'node_modules', '.bin', 'tsmq'), [], { cwd: app });
  assert.match(stdout, /Usage: tsmq/);
  assert.match(stdout, /start/);
});
