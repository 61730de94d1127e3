/**
 * TLS on the HA port (tls.server.mode of the broker, same switch as the remoting port): a slave
 * connecting with TLS replicates byte for byte from an enforcing master; a plain slave gets
 * nothing from it; a permissive master serves both; a plaintext master closes a TLS slave with one
 * warning per interval naming the fix and still serves plain slaves.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ManualClock } from '../../../src/common/time/clock.js';
import type { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import type { StoreConfig } from '../../../src/store/store-config.js';
import { ensureSelfSignedCertificate } from '../../../src/common/tls/self-signed-certificate.js';
import { resolveTlsServerSettings, type TlsServerSettings } from '../../../src/common/tls/tls-server-config.js';
import { firstCommitLogDifference, waitUntil } from '../../support/ha-cluster.js';
import { makeMessage, openStore, removeDir, smallConfig, tempDir } from '../../support/store-fixtures.js';
import { CaptureLogger } from '../../support/capture-logger.js';
import { tryTlsHandshake } from '../../support/tls-hello.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});
let certDir = '';
let tlsOf: (mode: string) => TlsServerSettings;
before(async () => {
  certDir = mkdtempSync(join(tmpdir(), 'tsmq-ha-tls-cert-'));
  const cert = await ensureSelfSignedCertificate(certDir);
  tlsOf = (mode) => resolveTlsServerSettings({ 'tls.server.mode': mode, 'tls.server.certPath': cert.certPath, 'tls.server.keyPath': cert.keyPath });
});
after(() => rmSync(certDir, { recursive: true, force: true }));

async function open(role: StoreConfig['brokerRole'], extra: Partial<StoreConfig> = {}, logger?: CaptureLogger): Promise<{ store: DefaultMessageStore; root: string }> {
  const root = tempDir('tsmq-ha-tls-');
  const store = await openStore(smallConfig(root, { brokerRole: role, ...extra }), { clock: new ManualClock(1_700_000_000_000), ...(logger ? { logger } : {}) });
  cleanups.push(async () => {
    await store.shutdown();
    removeDir(root);
  });
  return { store, root };
}

async function putN(store: DefaultMessageStore, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await store.putMessage(makeMessage({ body: `m-${i}-${'x'.repeat(200)}`, queueId: i % 2, properties: { WAIT: 'false' } }));
    assert.equal(r.status, 'PUT_OK');
  }
}

describe('HA port over TLS', () => {
  it('enforcing master: a TLS slave replicates byte for byte, a plain slave gets nothing', async () => {
    const m = await open('ASYNC_MASTER');
    await putN(m.store, 80);
    const port = (await m.store.startHA({ listenPort: 0, host: '127.0.0.1', tls: tlsOf('enforcing') })).master!.port;
    const plain = await open('SLAVE', { haMasterAddress: `127.0.0.1:${port}` });
    await plain.store.startHA({ listenPort: 0, reconnectIntervalMs: 200 });
    const s = await open('SLAVE', { haMasterAddress: `127.0.0.1:${port}` });
    await s.store.startHA({ listenPort: 0, clientTls: { rejectUnauthorized: false } });
    await waitUntil(() => s.store.getMaxPhyOffset() === m.store.getMaxPhyOffset(), 10_000, () => `slave ${s.store.getMaxPhyOffset()} / master ${m.store.getMaxPhyOffset()}`);
    await putN(m.store, 20);
    await waitUntil(() => s.store.getMaxPhyOffset() === m.store.getMaxPhyOffset(), 10_000, () => 'live tail');
    const max = m.store.getMaxPhyOffset();
    await m.store.commitLog.mfq.flush(0);
    await s.store.commitLog.mfq.flush(0);
    assert.equal(firstCommitLogDifference(m.root, s.root, 0, max), -1);
    await sleep(300);
    assert.equal(plain.store.getMaxPhyOffset(), 0, 'the plain slave received nothing');
  });

  it('permissive master: a TLS slave and a plain slave both replicate', async () => {
    const m = await open('ASYNC_MASTER');
    await putN(m.store, 40);
    const port = (await m.store.startHA({ listenPort: 0, host: '127.0.0.1', tls: tlsOf('permissive') })).master!.port;
    const a = await open('SLAVE', { haMasterAddress: `127.0.0.1:${port}` });
    await a.store.startHA({ listenPort: 0 });
    const b = await open('SLAVE', { haMasterAddress: `127.0.0.1:${port}` });
    await b.store.startHA({ listenPort: 0, clientTls: { rejectUnauthorized: false } });
    const max = m.store.getMaxPhyOffset();
    await waitUntil(() => a.store.getMaxPhyOffset() === max && b.store.getMaxPhyOffset() === max, 10_000, () => `plain ${a.store.getMaxPhyOffset()}, tls ${b.store.getMaxPhyOffset()} / ${max}`);
  });

  it('plaintext master (tls.server.mode=disabled): a TLS slave or client is closed with one warning per interval naming the fix; a plain slave replicates', async () => {
    const logger = new CaptureLogger();
    const m = await open('ASYNC_MASTER', {}, logger);
    await putN(m.store, 40);
    const master = (await m.store.startHA({ listenPort: 0, host: '127.0.0.1' })).master!;
    const port = master.port;
    const tlsSlave = await open('SLAVE', { haMasterAddress: `127.0.0.1:${port}` });
    await tlsSlave.store.startHA({ listenPort: 0, reconnectIntervalMs: 100, clientTls: { rejectUnauthorized: false } });
    const warned = (): string[] => logger.matching('warn', 'TLS handshake from');
    await waitUntil(() => warned().length >= 1, 5_000, () => `no warning; log:\n${logger.lines.map((l) => l.text).join('\n')}`);
    const attempt = await tryTlsHandshake(port);
    assert.equal(attempt.secureConnected, false);
    assert.equal(warned().length, 1, 'one line per interval (10 s) however often the slave retries');
    assert.match(warned()[0]!, /^TLS handshake from 127\.0\.0\.1:\d+ on the plaintext HA port \(tls\.server\.mode=disabled\), connection closed: set tls\.enable=false on the slave, or tls\.server\.mode=permissive .* or enforcing on this master$/);
    assert.equal(logger.matching('warn', 'beyond the master').length, 0, 'the ClientHello is not read as an offset report');
    assert.equal(tlsSlave.store.getMaxPhyOffset(), 0, 'the TLS slave got nothing');
    assert.equal(master.stats().connections.length, 0, 'no HA connection was opened for it');
    const plain = await open('SLAVE', { haMasterAddress: `127.0.0.1:${port}` });
    await plain.store.startHA({ listenPort: 0 });
    const max = m.store.getMaxPhyOffset();
    await waitUntil(() => plain.store.getMaxPhyOffset() === max, 10_000, () => `plain ${plain.store.getMaxPhyOffset()} / ${max}`);
  });
});
