/**
 * examples/ha/ha-produce.mjs prints each send's status with the reason (issue 18, first hour): a
 * SYNC_MASTER of broker-a without a slave answers SLAVE_NOT_AVAILABLE — each line says so and
 * why, the summary counts it, the exit code is 1; once the SLAVE of broker-a replicates, the same
 * command prints SEND_OK for every send and exits 0. ali-ons against in-process brokers.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBroker, type StartedBroker } from '../../../src/lib/start-broker.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const script = join(root, 'examples/ha/ha-produce.mjs');

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** Runs the example (asynchronously: the brokers live in this process). */
function produce(nameSrv: string, count: number): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [script, nameSrv, String(count)], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const timer = setTimeout(() => child.kill(), 60_000);
  return new Promise((resolve) =>
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    }),
  );
}

describe('examples/ha/ha-produce.mjs', { timeout: 120_000 }, () => {
  let master: StartedBroker;
  let slave: StartedBroker | undefined;
  let haPort: number;
  before(async () => {
    haPort = await freePort();
    master = await startBroker({ grpc: false, brokerConfig: { bindAddress: '127.0.0.1', brokerName: 'broker-a', brokerRole: 'SYNC_MASTER', haListenPort: String(haPort), slaveTimeout: '3000' } });
  });
  after(async () => {
    await slave?.close();
    await master?.close();
  });

  it('SYNC_MASTER without a slave: every send line says SLAVE_NOT_AVAILABLE and why; exit 1', async () => {
    const r = await produce(master.namesrvAddr!, 3);
    assert.equal(r.status, 1, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 4, r.stdout);
    for (let i = 0; i < 3; i++) assert.match(lines[i]!, new RegExp(`^#${i} SLAVE_NOT_AVAILABLE \\(broker-a queue \\d+ offset \\d+, msgId [0-9A-F]{32}\\): stored on the master only: the SYNC_MASTER has no slave in sync \\(start the slave`));
    assert.equal(lines[3], 'produced 0 of 3 with SEND_OK (SLAVE_NOT_AVAILABLE 3)');
  });

  it('with the slave replicating: SEND_OK for every send; exit 0', async () => {
    slave = await startBroker({
      namesrv: false,
      grpc: false,
      brokerConfig: { bindAddress: '127.0.0.1', namesrvAddr: master.namesrvAddr!, brokerName: 'broker-a', brokerId: '1', brokerRole: 'SLAVE', haMasterAddress: `127.0.0.1:${haPort}` },
    });
    let r = await produce(master.namesrvAddr!, 1);
    for (let i = 0; i < 20 && r.status !== 0; i++) {
      await new Promise((res) => setTimeout(res, 500)); // the slave connects and catches up
      r = await produce(master.namesrvAddr!, 1);
    }
    r = await produce(master.namesrvAddr!, 3);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^#0 SEND_OK \(broker-a queue \d+ offset \d+, msgId [0-9A-F]{32}\)$/m);
    assert.match(r.stdout, /^produced 3 of 3 with SEND_OK \(SEND_OK 3\)$/m);
  });
});
