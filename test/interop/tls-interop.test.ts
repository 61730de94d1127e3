/**
 * TLS judged by Apache RocketMQ's Java client 4.9.8 with `-Dtls.enable=true` (its default
 * `tls.test.mode.enable=true` trusts any server certificate): `tsmq start` with
 * `tls.server.mode=enforcing` and a self-signed certificate, so the nameserver, the broker remoting
 * port and the broker's own registration all speak TLS only. A DefaultMQProducer sends (sync,
 * async, oneway, batch, delay, ordered) and a DefaultLitePullConsumer reads every message back;
 * nothing can pass in plain text on an enforcing port, so success proves the TLS path. A plain
 * Java client is refused (no route: its connection to the nameserver fails).
 * Skips when `java` or `mvn` is missing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TsmqProcess } from '../support/tsmq-process.js';
import { assertRanOk, buildPeer, javaSkipReason, runJava, type BuiltPeer, type JavaRun } from './support/java-peers.js';
import { ensureSelfSignedCertificate } from '../../src/common/tls/self-signed-certificate.js';

const TOPIC = 'IopTlsTopic';
const N = 5;
const ORDER_IDS = 2;
const PER_ORDER = 2;
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
const ALL_KEYS = [
  ...['sync', 'async', 'oneway', 'batch'].flatMap((m) => range(N).map((i) => `${m}-${i}`)),
  'delay-0',
  ...range(PER_ORDER).flatMap((s) => range(ORDER_IDS).map((id) => `order-${id}-${s}`)),
].sort();
type Line = Record<string, unknown>;
const linesOf = (run: JavaRun, type: string): Line[] => run.lines.filter((l) => l.type === type);
const explain = (run: JavaRun): string => `\nerrors: ${JSON.stringify(linesOf(run, 'error')).slice(0, 2000)}\nstderr: ${run.stderr.slice(-1500)}`;

describe('TLS (tls.server.mode=enforcing) against the Apache RocketMQ 4.9.8 Java client with -Dtls.enable=true', { skip: javaSkipReason(), timeout: 240_000 }, () => {
  let storeDir: string;
  let broker: TsmqProcess;
  let peer: BuiltPeer;

  before(async () => {
    peer = await buildPeer('rocketmq4');
    storeDir = mkdtempSync(join(tmpdir(), 'tsmq-interop-tls-'));
    const cert = await ensureSelfSignedCertificate(join(storeDir, 'tls'));
    broker = await TsmqProcess.start({
      storeDir,
      options: {
        'tls.server.mode': 'enforcing',
        'tls.server.certPath': cert.certPath,
        'tls.server.keyPath': cert.keyPath,
        'tls.enable': 'true', // the broker's registration with the (enforcing) nameserver
        mappedFileSizeCommitLog: String(4 * 1024 * 1024),
        messageDelayLevel: Array.from({ length: 18 }, () => '1s').join(' '),
      },
    });
  });

  after(async () => {
    await broker?.stop();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  const java = (cmd: string, opts: Record<string, string | number>, jvmArgs: string[], timeoutMs = 60_000): Promise<JavaRun> =>
    runJava(peer, 'tsmq.interop.ClientPeer', [broker.namesrvAddr, cmd, ...Object.entries(opts).map(([k, v]) => `${k}=${v}`)], { timeoutMs, jvmArgs });

  it('producer and lite pull consumer over TLS: every send SEND_OK, every message read back intact', async () => {
    const prod = await java('produce', { topic: TOPIC, n: N, orderIds: ORDER_IDS, perOrder: PER_ORDER, delayLevel: 1, group: 'PID_IOP_TLS' }, ['-Dtls.enable=true']);
    assertRanOk(prod, 'ClientPeer produce (TLS)');
    const ok = linesOf(prod, 'sent').filter((l) => l.status === 'SEND_OK' || l.mode === 'oneway');
    assert.equal(ok.filter((l) => l.mode === 'sync').length, N, `sync sends${explain(prod)}`);
    assert.equal(ok.filter((l) => l.mode === 'order').length, ORDER_IDS * PER_ORDER, `ordered sends${explain(prod)}`);
    assert.equal(ok.filter((l) => l.mode === 'batch')[0]?.count, N, `batch send${explain(prod)}`);
    const pull = await java('lite-pull', { topic: TOPIC, group: 'GID_IOP_TLS', expect: ALL_KEYS.length, timeoutMs: 20_000 }, ['-Dtls.enable=true']);
    assertRanOk(pull, 'ClientPeer lite-pull (TLS)');
    const recv = linesOf(pull, 'recv');
    assert.deepEqual(recv.map((r) => r.key as string).sort(), ALL_KEYS, `keys read back${explain(pull)}`);
    assert.deepEqual(recv.filter((r) => r.bodyOk !== true).map((r) => r.key), [], 'bodies differ');
  });

  it('a plain (no TLS) Java producer gets nothing through an enforcing port', async () => {
    const run = await java('produce', { topic: TOPIC, n: 1, orderIds: 0, perOrder: 0, group: 'PID_IOP_PLAIN' }, [], 60_000);
    assertRanOk(run, 'ClientPeer produce (plain)');
    assert.equal(linesOf(run, 'sent').filter((l) => l.status === 'SEND_OK').length, 0, `a plain send succeeded${explain(run)}`);
    assert.ok(linesOf(run, 'error').length > 0, `no error reported${explain(run)}`);
  });
});
