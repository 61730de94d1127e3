/**
 * A second `tsmq start` on a busy port (issue 18, first hour): instead of a bare EADDRINUSE it
 * names the port's role and setting, the process holding it (pid and command line, found through
 * /proc on Linux) and whether that process also holds the store; exit code 1. And `-n` means a
 * nameserver address in `tsmq start` as in `tsmq broker` / mqbroker (a bare port still works).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { embeddedNamesrvPort } from '../../../src/cli/commands/start.js';
import { brokerPortRoles, findPortHolder, portInUseMessage } from '../../../src/cli/port-holder.js';
import { resolveMetricsConfig } from '../../../src/metrics/metrics-config.js';
import { procProbe } from '../../../src/store/recovery/process-identity.js';
import { formatLockRecord, ownLockRecord } from '../../../src/store/recovery/store-files.js';
import { removeDir, tempDir } from '../../support/store-fixtures.js';

const main = fileURLToPath(new URL('../../../src/cli/main.ts', import.meta.url));
const work = tempDir('tsmq-port-in-use-');
let busy: Server;
let busyPort: number;

async function listen(): Promise<Server> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return s;
}
const portOf = (s: Server): number => (s.address() as { port: number }).port;

before(async () => {
  busy = await listen();
  busyPort = portOf(busy);
});
after(() => {
  busy.close();
  removeDir(work);
});

test('findPortHolder finds this process listening on the port (Linux /proc)', { skip: process.platform !== 'linux' }, () => {
  const h = findPortHolder(busyPort);
  assert.equal(h?.pid, process.pid);
  assert.match(h!.command, /node/);
});

test('tsmq start with the nameserver port taken: names the port, -n, the holder pid and that it holds the store; exit 1', { skip: process.platform !== 'linux' }, async () => {
  const store = join(work, 'store');
  mkdirSync(store, { recursive: true });
  writeFileSync(join(store, 'lock'), formatLockRecord(ownLockRecord(procProbe, process.pid))); // this process "holds" the store
  const free = [await listen(), await listen()];
  const [p, grpc] = free.map(portOf);
  await Promise.all(free.map((s) => new Promise((r) => s.close(r))));
  const r = spawnSync(process.execPath, ['--import', 'tsx', main, 'start', '--store', store, '-n', String(busyPort), '-p', String(p), '-o', `grpcListenPort=${grpc}`], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 1, r.stderr);
  const msg = r.stderr.split('\n').filter((l) => !l.startsWith('{')).join('\n');
  assert.match(msg, new RegExp(`^tsmq start: port ${busyPort} \\(nameserver; set by -n 127\\.0\\.0\\.1:<port>\\) is already in use by process ${process.pid} \\(.*node.*\\), which also holds the store ${store.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.$`, 'm'));
  assert.match(msg, new RegExp(`^Ports of tsmq start: nameserver ${busyPort} \\(-n 127\\.0\\.0\\.1:<port>\\), broker remoting ${p} \\(-p <port> or listenPort=<port>\\), HA replication ${p! + 1} .*, gRPC ${grpc} .*, console 8080 \\(-o consolePort=<port>, -1 for none\\), metrics 5557 \\(-o metricsPromExporterPort=<port>, -1 for none\\); a second instance`, 'm'));
  assert.doesNotMatch(r.stderr, /^listen EADDRINUSE/m);
});

test('tsmq broker with the remoting port taken: names listenPort / -p and the holder', { skip: process.platform !== 'linux' }, () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', main, 'broker', '--store', join(work, 'b'), '-n', '127.0.0.1:1', '-p', String(busyPort)], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`^tsmq broker: port ${busyPort} \\(broker remoting; set by -p <port> or listenPort=<port>\\) is already in use by process ${process.pid} `, 'm'));
});

test('tsmq start with a configured console or metrics port taken: names it and its setting, exit 1', { skip: process.platform !== 'linux' }, async () => {
  for (const [key, what] of [['consolePort', 'console'], ['metricsPromExporterPort', 'metrics']] as const) {
    const free = [await listen(), await listen(), await listen()];
    const [n, p, grpc] = free.map(portOf);
    await Promise.all(free.map((s) => new Promise((r) => s.close(r))));
    const other = key === 'consolePort' ? 'metricsPromExporterPort=-1' : 'consolePort=-1';
    const r = spawnSync(process.execPath, ['--import', 'tsx', main, 'start', '--store', join(work, `s-${what}`), '-n', String(n), '-p', String(p), '-o', `grpcListenPort=${grpc}`, '-o', `${key}=${busyPort}`, '-o', other], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`^tsmq start: port ${busyPort} \\(${what}; set by -o ${key}=<port>, -1 for none\\) is already in use by process ${process.pid} `, 'm'));
    assert.doesNotMatch(r.stderr, /^Ports of tsmq start: .*(console 8080|metrics 5557)/m, 'the port turned off (-1) is not listed');
  }
});

test('brokerPortRoles: console and metrics are listed when on (tsmq start defaults 8080, 5557); -1 or DISABLE leaves them out', () => {
  const names = (cfg: Record<string, string>): string[] => brokerPortRoles(cfg, { listenFlag: '-p', grpc: true }).map((r) => `${r.what} ${r.port}`);
  assert.deepEqual(names({ listenPort: '10911', consolePort: '8080', metricsExporterType: 'PROM' }), ['broker remoting 10911', 'HA replication 10912', 'gRPC 8081', 'console 8080', 'metrics 5557']);
  assert.deepEqual(names({ consolePort: '9090', metricsExporterType: 'PROM', metricsPromExporterPort: '5558' }).slice(3), ['console 9090', 'metrics 5558']);
  assert.deepEqual(names({ consolePort: '-1', metricsExporterType: 'PROM', metricsPromExporterPort: '-1' }).slice(3), []);
  assert.deepEqual(names({ metricsExporterType: 'DISABLE', metricsPromExporterPort: '5558' }).slice(3), [], 'tsmq broker defaults: neither');
});

test('metricsPromExporterPort=-1 turns the exporter off (as consolePort=-1); metricsExporterType=DISABLE still does; -2 is refused', () => {
  assert.equal(resolveMetricsConfig({ metricsExporterType: 'PROM', metricsPromExporterPort: '-1' }).enabled, false);
  assert.equal(resolveMetricsConfig({ metricsExporterType: 'PROM', metricsPromExporterPort: '0' }).enabled, true);
  assert.equal(resolveMetricsConfig({ metricsExporterType: 'PROM' }).port, 5557);
  assert.equal(resolveMetricsConfig({ metricsExporterType: 'DISABLE', metricsPromExporterPort: '5557' }).enabled, false);
  assert.throws(() => resolveMetricsConfig({ metricsPromExporterPort: '-2' }), /metricsPromExporterPort=-2.*a port in 0\.\.65535, or -1 for no metrics exporter/);
});

test('the message without /proc access says how to find the holder', () => {
  const err = Object.assign(new Error(`listen EADDRINUSE: address already in use 127.0.0.1:9876`), { code: 'EADDRINUSE', port: 9876 });
  const m = portInUseMessage(err, 'tsmq start', [{ port: 9876, what: 'nameserver', setting: '-n 127.0.0.1:<port>' }], undefined, () => null);
  assert.match(m, /^tsmq start: port 9876 \(nameserver; set by -n 127\.0\.0\.1:<port>\) is already in use by another process .*ss -ltnp 'sport = :9876'/);
  const grpc = new Error('No address added out of total 1 resolved errors: [listen EADDRINUSE: address already in use 127.0.0.1:8081]');
  assert.match(portInUseMessage(grpc, 'tsmq start', [{ port: 8081, what: 'gRPC', setting: 'grpcListenPort' }], undefined, () => ({ pid: 42, command: 'java -cp rocketmq-proxy.jar' })), /^tsmq start: port 8081 \(gRPC; set by grpcListenPort\) is already in use by process 42 \(java -cp rocketmq-proxy\.jar\)\.\nA broker or nameserver is already running there: stop it \(kill 42\)/);
});

test('-n in tsmq start is a nameserver address like mqbroker -n (bare port accepted); a list or a remote host points to tsmq broker', () => {
  assert.equal(embeddedNamesrvPort('127.0.0.1:9877'), 9877);
  assert.equal(embeddedNamesrvPort('localhost:9878'), 9878);
  assert.equal(embeddedNamesrvPort('9879'), 9879);
  assert.throws(() => embeddedNamesrvPort('10.0.0.1:9876;10.0.0.2:9876'), /run `tsmq broker -n '10\.0\.0\.1:9876;10\.0\.0\.2:9876'`/);
  assert.throws(() => embeddedNamesrvPort('10.0.0.1:9876'), /listens on 127\.0\.0\.1 only; give -n 127\.0\.0\.1:9876, or run `tsmq broker -n 10\.0\.0\.1:9876`/);
  const help = spawnSync(process.execPath, ['--import', 'tsx', main, 'start', '--help'], { encoding: 'utf8' }).stdout;
  assert.match(help, /-n, --namesrv-addr <host:port>\s+the embedded nameserver's address/);
  assert.match(help.replace(/\s+/g, ' '), /To join existing nameservers instead, run `tsmq broker -n <addr;addr>`/);
  const brokerHelp = spawnSync(process.execPath, ['--import', 'tsx', main, 'broker', '--help'], { encoding: 'utf8' }).stdout;
  assert.match(brokerHelp.replace(/\s+/g, ' '), /-n, --namesrv-addr <addr> nameserver address list host:port;host:port to register with, as mqbroker -n/);
});
