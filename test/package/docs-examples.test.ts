/**
 * The code blocks of docs/library.md and README.md run as written (issue 18). Every ```js block
 * whose first line is `// <name>.mjs` is saved under that name in a temp dir inside the repo
 * (so `import 'tsmq'` resolves to this package through its `exports`, as it does for a user) and
 * run; `*.test.mjs` blocks run under `node --test`. The README's ali-ons quick start talks to
 * 127.0.0.1:9876, which the test replaces with an in-process broker's nameserver (the only edit).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startBroker, type StartedBroker } from '../../src/index.js';

const run = promisify(execFile);
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = mkdtempSync(join(repo, '.tsmq-test-docs-'));
const env = { ...process.env };
delete env.NODE_TEST_CONTEXT; // set by the outer runner; a child `node --test` would refuse to run files

/** `// name.mjs` → code, for every such ```js block of a markdown file. */
function codeBlocks(file: string): Map<string, string> {
  const text = readFileSync(join(repo, file), 'utf8');
  const blocks = new Map<string, string>();
  for (const m of text.matchAll(/```js\n(\/\/ ([\w.-]+\.mjs)\b[^\n]*\n[\s\S]*?)```/g)) blocks.set(m[2]!, m[1]!);
  return blocks;
}

function saved(name: string, code: string): string {
  const p = join(dir, name);
  writeFileSync(p, code);
  return p;
}

before(async () => {
  await run(process.execPath, [join(repo, 'scripts', 'build-if-stale.mjs'), '--quiet'], { cwd: repo });
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('docs/library.md has the two examples and the embedded-store one prints what the page says', async () => {
  const blocks = codeBlocks('docs/library.md');
  assert.deepEqual([...blocks.keys()], ['embedded-store.mjs', 'orders.test.mjs']);
  const { stdout } = await run(process.execPath, [saved('embedded-store.mjs', blocks.get('embedded-store.mjs')!)], { cwd: dir, env, timeout: 30_000 });
  const page = readFileSync(join(repo, 'docs/library.md'), 'utf8');
  const printed = /\nprints\n\n```\n([\s\S]*?)```/.exec(page)![1]!;
  assert.equal(stdout, printed);
});

test('docs/library.md: the node:test example with startBroker and ali-ons passes', async () => {
  const code = codeBlocks('docs/library.md').get('orders.test.mjs')!;
  const { stdout } = await run(process.execPath, ['--test', '--test-force-exit', '--test-reporter=tap', saved('orders.test.mjs', code)], { cwd: dir, env, timeout: 60_000 });
  assert.match(stdout, /^ok 1 - a paid order reaches the consumer$/m);
  assert.match(stdout, /^# pass 1$/m);
  assert.match(stdout, /^# fail 0$/m);
});

test('README: the library example runs and prints the put and the addresses', async () => {
  const code = codeBlocks('README.md').get('library.mjs')!;
  const { stdout } = await run(process.execPath, [saved('library.mjs', code)], { cwd: dir, env, timeout: 30_000 });
  const lines = stdout.trim().split('\n');
  assert.equal(lines[0], 'PUT_OK 0 hello');
  assert.match(lines[1]!, /^clients connect to 127\.0\.0\.1:\d+ \(remoting\) or 127\.0\.0\.1:\d+ \(gRPC\)$/);
});

test('README: the ali-ons quick start runs as pasted against a broker and exits by itself', async () => {
  let broker: StartedBroker | null = null;
  try {
    broker = await startBroker();
    const code = codeBlocks('README.md').get('quickstart.mjs')!;
    assert.ok(code.includes("'127.0.0.1:9876'"));
    const file = saved('quickstart.mjs', code.replace("'127.0.0.1:9876'", `'${broker.namesrvAddr}'`));
    const { stdout } = await run(process.execPath, [file], { cwd: dir, env, timeout: 60_000 });
    const sent = /^SEND_OK ([0-9A-F]{32}) 0$/m.exec(stdout);
    assert.ok(sent, stdout);
    assert.match(stdout, new RegExp(`^received [0-9A-F]{32} hello$`, 'm'));
  } finally {
    await broker?.close();
  }
});
