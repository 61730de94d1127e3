/**
 * The `tsmq` command line as a user runs it (child processes): no hidden default command, and
 * the broker's start-up output (unknown-key warnings, banner with the real binds and the
 * effective brokerId).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { connect, createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../support/free-port.js';
import { removeDir, tempDir } from '../../support/store-fixtures.js';

const main = fileURLToPath(new URL('../../../src/cli/main.ts', import.meta.url));
const env = { ...process.env, NODE_TEST_CONTEXT: '', TSMQ_LOG_LEVEL: 'warn' };

function runCli(args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', main, ...args], { env, encoding: 'utf8', timeout: 60_000 });
}

/** How this host shows a listen() without a host: `*` (IPv6 any, dual stack) or 0.0.0.0. */
async function wildcardHost(): Promise<string> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, () => r()));
  const host = (srv.address() as AddressInfo).address;
  await new Promise((r) => srv.close(r));
  return host === '::' ? '*' : host;
}

test('an unknown command is an error listing the commands; a close one is suggested', () => {
  const bogus = runCli(['bogus']);
  assert.equal(bogus.status, 1);
  assert.equal(bogus.stdout, '');
  const [first, second] = bogus.stderr.split('\n');
  assert.equal(first, "error: unknown command 'bogus'");
  assert.match(second!, /^commands: start, namesrv, broker, admin\b.* \(tsmq --help describes them\)$/);
  const typo = runCli(['strat']);
  assert.equal(typo.status, 1);
  assert.equal(typo.stderr.split('\n')[0], "error: unknown command 'strat' (did you mean start?)");
});

test('bare tsmq prints the help on stdout, starts nothing and exits 0', () => {
  const bare = runCli([]);
  assert.equal(bare.status, 0);
  assert.equal(bare.stderr, '');
  assert.match(bare.stdout, /^Usage: tsmq \[options\] \[command\]/);
  assert.match(bare.stdout, /\n {2}start \[options\] +run nameserver \+ broker in one process/);
  assert.match(bare.stdout, /`tsmq start` runs a nameserver and a broker in one process/);
});

test('tsmq broker: one warning per unknown key, banner with the real binds and the effective brokerId', { timeout: 90_000 }, async () => {
  const store = tempDir('tsmq-cli-');
  const [port, haPort, grpcPort] = [await freePort(), await freePort(), await freePort()];
  const any = await wildcardHost();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', main, 'broker', '--store', store, '-p', String(port), '-n', '', '-o', `haListenPort=${haPort}`, '-o', `grpcListenPort=${grpcPort}`,
      '-o', 'brokerId=3', '-o', 'unknownKey=1', '-o', 'listenport=10999', '-o', 'brokername=bx'],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    const deadline = Date.now() + 60_000;
    while (!/tsmq broker started.*\n/.test(out)) {
      if (child.exitCode !== null) throw new Error(`broker exited early:\n${out}`);
      if (Date.now() > deadline) throw new Error(`no banner:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const lines = out.split('\n');
    const warnings = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; component: string; msg: string }).filter((l) => l.component === 'config');
    assert.deepEqual(
      warnings.map((w) => [w.level, w.msg]),
      [
        [40, 'config key unknownKey is not used by tsmq and is ignored'],
        [40, 'config key listenport is not used by tsmq and is ignored (did you mean listenPort?)'],
        [40, 'config key brokername is not used by tsmq and is ignored (did you mean brokerName?)'],
      ],
    );
    // every interface and no authentication: one warning naming the fix (docs/security.md)
    assert.ok(lines.some((l) => l.includes(`broker remoting port `) && l.includes(`:${port} is reachable from other hosts and authenticationEnabled=false`) && l.includes('"level":40')), out);
    // the gRPC front of `tsmq broker` binds every interface too (grpcListenHost 0.0.0.0): warned the same way, naming its own key
    const grpcWarnings = lines.filter((l) => l.includes(`gRPC port 0.0.0.0:${grpcPort} is reachable from other hosts and authenticationEnabled=false`) && l.includes('"level":40'));
    assert.equal(grpcWarnings.length, 1, out);
    assert.match(grpcWarnings[0]!, /anyone who can reach it can send and consume; set authenticationEnabled=true and authorizationEnabled=true \(docs\/security.md\) or grpcListenHost=127.0.0.1/);
    const banner = lines.find((l) => l.startsWith('tsmq broker started'));
    assert.equal(
      banner,
      `tsmq broker started: broker broker-a (brokerId 0) listening on ${any}:${port} (clients are given 127.0.0.1:${port}), HA ${any}:${haPort}, ` +
        `gRPC 0.0.0.0:${grpcPort}, store ${store}, flushDiskType ASYNC_FLUSH, nameserver (none: not registering); * and 0.0.0.0 mean every interface`,
    );
  } finally {
    child.kill('SIGTERM');
    assert.equal(await exited, 0, out);
    removeDir(store);
  }
});

test('tsmq start: the banner comes after every listener is bound and after their log lines', { timeout: 90_000 }, async () => {
  const store = tempDir('tsmq-cli-start-');
  const [namesrvPort, port, haPort, grpcPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', main, 'start', '--store', store, '-n', String(namesrvPort), '-p', String(port), '-o', `haListenPort=${haPort}`, '-o', `grpcListenPort=${grpcPort}`],
    { env: { ...env, TSMQ_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let bannerSeen = false;
  let connects: Promise<string[]> | null = null;
  const tryConnect = (p: number): Promise<string> =>
    new Promise((resolve) => {
      const s = connect(p, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(`${p} ok`);
      });
      s.once('error', (e: NodeJS.ErrnoException) => resolve(`${p} ${e.code}`));
    });
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString();
    // connect the moment the banner arrives, as a script waiting for it would
    if (!bannerSeen && /^tsmq started: .*$/m.test(out)) {
      bannerSeen = true;
      connects = Promise.all([namesrvPort, port, haPort, grpcPort].map(tryConnect));
    }
  });
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    const deadline = Date.now() + 60_000;
    while (!bannerSeen) {
      if (child.exitCode !== null) throw new Error(`start exited early:\n${out}`);
      if (Date.now() > deadline) throw new Error(`no banner:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.deepEqual(await connects, [`${namesrvPort} ok`, `${port} ok`, `${haPort} ok`, `${grpcPort} ok`]);
    const lines = out.split('\n');
    const bannerAt = lines.findIndex((l) => l.startsWith('tsmq started: '));
    const msgs = lines.slice(0, bannerAt).filter((l) => l.startsWith('{')).map((l) => (JSON.parse(l) as { msg?: string }).msg ?? '');
    for (const listening of [
      `namesrv remoting server listening on 127.0.0.1:${namesrvPort}`,
      `broker remoting server listening on `,
      'HA service listening',
      `gRPC front listening on 127.0.0.1:${grpcPort}`,
    ]) {
      assert.ok(msgs.some((m) => m.startsWith(listening)), `"${listening}" logged before the banner:\n${lines.slice(0, bannerAt + 1).join('\n')}`);
    }
    // safe default (docs/security.md): every broker port on loopback, and the banner says how to open them
    assert.match(lines[bannerAt]!, new RegExp(`^tsmq started: nameserver 127\\.0\\.0\\.1:${namesrvPort}, broker broker-a \\(brokerId 0\\) listening on 127\\.0\\.0\\.1:${port} .*HA 127\\.0\\.0\\.1:${haPort}, gRPC 127\\.0\\.0\\.1:${grpcPort}, `));
    assert.match(lines[bannerAt]!, /only this host can connect \(to open: -o bindAddress=0\.0\.0\.0 -o grpcListenHost=0\.0\.0\.0, with authenticationEnabled=true; docs\/security\.md\)/);
    assert.ok(!msgs.some((m) => m.includes('authenticationEnabled=false')), 'no open-port warning on loopback');
  } finally {
    child.kill('SIGTERM');
    assert.equal(await exited, 0, out);
    removeDir(store);
  }
});

test('a fractional port is refused: it must be a whole number', () => {
  const namesrv = runCli(['namesrv', '-p', '9876.5']);
  assert.equal(namesrv.status, 1);
  assert.equal(namesrv.stderr.trim(), 'invalid config listenPort=9876.5: must be a whole number (a port in 0..65535)');
  const broker = runCli(['broker', '-n', '', '-p', '10921.5', '--store', '/nonexistent-tsmq-test-store']);
  assert.equal(broker.status, 1);
  assert.equal(broker.stderr.trim(), 'invalid config listenPort=10921.5: must be a whole number (a port in 0..65535)');
});
