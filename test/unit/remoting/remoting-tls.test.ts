/**
 * TLS on the remoting server (tls.server.mode disabled / permissive / enforcing), judged by Node's
 * tls through RemotingClient, with a certificate from ensureSelfSignedCertificate (one per file).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { RemotingServer } from '../../../src/remoting/transport/remoting-server.js';
import { RemotingClient } from '../../../src/remoting/transport/remoting-client.js';
import { createRequestCommand, createResponseCommand } from '../../../src/remoting/protocol/commands.js';
import { ResponseCode } from '../../../src/remoting/codes/response-code.js';
import { resolveTlsServerSettings, type TlsServerSettings } from '../../../src/common/tls/tls-server-config.js';
import { ensureSelfSignedCertificate, type CertificateFiles } from '../../../src/common/tls/self-signed-certificate.js';
import { ConfigError } from '../../../src/common/config/config-spec.js';
import { CaptureLogger } from '../../support/capture-logger.js';
import { tryTlsHandshake } from '../../support/tls-hello.js';

let dir = '';
let cert: CertificateFiles;
let ca: Buffer;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tsmq-tls-'));
  cert = await ensureSelfSignedCertificate(dir);
  ca = readFileSync(cert.certPath);
});
after(() => rmSync(dir, { recursive: true, force: true }));

function settings(mode: string, extra: Record<string, string> = {}): TlsServerSettings {
  return resolveTlsServerSettings({ 'tls.server.mode': mode, 'tls.server.certPath': cert.certPath, 'tls.server.keyPath': cert.keyPath, ...extra });
}

async function echoServer(tlsSettings: TlsServerSettings, frameReadTimeoutMs?: number): Promise<RemotingServer> {
  const server = new RemotingServer({ listenPort: 0, host: '127.0.0.1', name: 'tls-test', tls: tlsSettings, frameReadTimeoutMs });
  server.registerProcessor(105, ({ request, channel }) =>
    createResponseCommand(request, ResponseCode.SUCCESS, `from ${channel.remoteAddress}`, { topic: String(request.extFields?.topic) }, request.body));
  await server.start();
  return server;
}

async function roundTrip(client: RemotingClient, port: number, topic: string): Promise<string> {
  const body = Buffer.alloc(300_000, 7); // larger than one TLS record and one TCP read
  const r = await client.invokeSync(`127.0.0.1:${port}`, createRequestCommand(105, { topic }, body), 3000);
  assert.equal(r.code, ResponseCode.SUCCESS);
  assert.ok(r.body?.equals(body), 'body came back intact');
  return String(r.extFields?.topic);
}

test('self-signed certificate: CN tsmq-local, SAN localhost and 127.0.0.1, a year long, reused on the next call', async () => {
  const x = new X509Certificate(ca);
  assert.match(x.subject, /CN=tsmq-local/);
  assert.match(x.subjectAltName ?? '', /DNS:localhost/);
  assert.match(x.subjectAltName ?? '', /IP Address:127\.0\.0\.1/);
  const days = (Date.parse(x.validTo) - Date.now()) / 86_400_000;
  assert.ok(days > 360 && days < 366, `valid ${days} days`);
  assert.equal(cert.created, true);
  const again = await ensureSelfSignedCertificate(dir);
  assert.equal(again.created, false);
  assert.ok(readFileSync(again.certPath).equals(ca), 'same certificate');
});

test('permissive: plain and TLS clients are both served on the same port; the certificate verifies for 127.0.0.1', async (t) => {
  const server = await echoServer(settings('permissive'));
  t.after(() => server.shutdown());
  const plain = new RemotingClient();
  const secure = new RemotingClient({ tls: { ca, rejectUnauthorized: true } });
  t.after(() => plain.close());
  t.after(() => secure.close());
  assert.equal(await roundTrip(plain, server.port, 'plain'), 'plain');
  assert.equal(await roundTrip(secure, server.port, 'secure'), 'secure');
  assert.equal(server.channels.length, 2);
});

test('enforcing: TLS clients are served; a plain client gets no answer and its connection is closed', async (t) => {
  const server = await echoServer(settings('enforcing'));
  t.after(() => server.shutdown());
  const secure = new RemotingClient({ tls: { rejectUnauthorized: false } });
  t.after(() => secure.close());
  assert.equal(await roundTrip(secure, server.port, 'secure'), 'secure');
  const plain = new RemotingClient();
  t.after(() => plain.close());
  await assert.rejects(plain.invokeSync(`127.0.0.1:${server.port}`, createRequestCommand(105, { topic: 'x' }), 1500), /closed|timed out|timeout/i);
  await sleep(50);
  assert.equal(server.channels.length, 1, 'only the TLS connection is left');
  assert.equal(await roundTrip(secure, server.port, 'still'), 'still');
});

test('disabled (the default): a TLS client is closed with one warning per interval naming it and the fix; plain clients are served', async (t) => {
  const logger = new CaptureLogger();
  const server = new RemotingServer({ listenPort: 0, host: '127.0.0.1', name: 'tls-test', tls: resolveTlsServerSettings({}), logger, badInputLogIntervalMs: 400 });
  server.registerProcessor(105, ({ request }) => createResponseCommand(request, ResponseCode.SUCCESS, null, { topic: String(request.extFields?.topic) }, request.body));
  await server.start();
  t.after(() => server.shutdown());
  const secure = new RemotingClient({ tls: { rejectUnauthorized: false }, connectTimeoutMs: 1500 });
  t.after(() => secure.close());
  await assert.rejects(secure.invokeSync(`127.0.0.1:${server.port}`, createRequestCommand(105, { topic: 'x' }), 1500));
  const attempts = [await tryTlsHandshake(server.port), await tryTlsHandshake(server.port)];
  for (const a of attempts) assert.equal(a.secureConnected, false);
  const warned = (): string[] => logger.matching('warn', 'TLS handshake from');
  assert.equal(warned().length, 1, warned().join('\n'));
  assert.match(warned()[0]!, /on the plaintext remoting port \(tls\.server\.mode=disabled\), connection closed: .*setUseTLS\(false\).*tls\.server\.mode=permissive .* or enforcing/);
  assert.equal(logger.matching('warn', 'exceeds the limit').length, 0, 'no frame-size error instead');
  await sleep(450);
  const later = await tryTlsHandshake(server.port);
  assert.equal(warned().length, 2, 'the next interval logs again');
  assert.match(warned()[1]!, new RegExp(`TLS handshake from 127\\.0\\.0\\.1:${later.localPort} .*\\(\\+2 similar suppressed\\)$`));
  await sleep(50);
  assert.equal(server.channels.length, 0);
  const plain = new RemotingClient();
  t.after(() => plain.close());
  assert.equal(await roundTrip(plain, server.port, 'plain'), 'plain');
});

test('permissive: a peer that closes before its first byte, sends garbage after 0x16, or stalls its handshake leaves nothing behind', async (t) => {
  // the handshake deadline is serverFrameReadTimeoutMs
  const server = await echoServer(settings('permissive'), 300);
  t.after(() => server.shutdown());
  const s1 = net.connect(server.port, '127.0.0.1');
  await new Promise((r) => s1.once('connect', r));
  s1.destroy();
  for (const first of [
    Buffer.from([0x16, 0x03, 0x01, 0xff, 0xff, 1, 2, 3, 4, 5]), // a record longer than TLS allows: refused at once
    Buffer.from([0x16, 0x03, 0x01, 0x00, 0x40, 1, 2, 3, 4, 5]), // a 64-byte ClientHello that never completes: the deadline
  ]) {
    const s = net.connect(server.port, '127.0.0.1');
    await new Promise((r) => s.once('connect', r));
    const closed = new Promise((r) => s.once('close', r));
    s.on('error', () => {});
    s.resume();
    const t0 = performance.now();
    s.write(first);
    await closed;
    const waitedMs = performance.now() - t0;
    assert.ok(waitedMs < 3000, `closed after ${waitedMs} ms`);
    if (first[4] === 0x40) assert.ok(waitedMs >= 250, `stalled handshake closed after ${waitedMs} ms, before the deadline`);
  }
  await sleep(50);
  assert.equal(server.channels.length, 0);
  const plain = new RemotingClient();
  t.after(() => plain.close());
  assert.equal(await roundTrip(plain, server.port, 'after'), 'after');
});

test('peers that reset (RST) the connection in the middle of a TLS handshake, in both modes, cost only their own connection', async (t) => {
  for (const mode of ['permissive', 'enforcing']) {
    const server = await echoServer(settings(mode));
    t.after(() => server.shutdown());
    for (let i = 0; i < 20; i++) {
      const s = net.connect(server.port, '127.0.0.1');
      s.on('error', () => {});
      await new Promise((r) => s.once('connect', r));
      // the first bytes of a real ClientHello, then a reset
      s.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]));
      await sleep(i % 3);
      s.resetAndDestroy();
    }
    await sleep(100);
    assert.equal(server.channels.length, 0, mode);
    const secure = new RemotingClient({ tls: { ca, rejectUnauthorized: true } });
    t.after(() => secure.close());
    assert.equal(await roundTrip(secure, server.port, mode), mode);
  }
});

test('tls.server.need.client.auth=require: a client without a certificate is refused, one with a trusted certificate is served', async (t) => {
  const server = await echoServer(settings('enforcing', { 'tls.server.need.client.auth': 'require', 'tls.server.trustCertPath': cert.certPath }));
  t.after(() => server.shutdown());
  const anonymous = new RemotingClient({ tls: { rejectUnauthorized: false } });
  t.after(() => anonymous.close());
  await assert.rejects(anonymous.invokeSync(`127.0.0.1:${server.port}`, createRequestCommand(105, { topic: 'x' }), 1500));
  const key = readFileSync(cert.keyPath);
  const withCert = new RemotingClient({ tls: { ca, cert: ca, key, rejectUnauthorized: true } });
  t.after(() => withCert.close());
  assert.equal(await roundTrip(withCert, server.port, 'mutual'), 'mutual');
});

test('tls.server.* config errors name the key: unknown mode, missing paths, unreadable file, mismatched key', () => {
  assert.throws(() => resolveTlsServerSettings({ 'tls.server.mode': 'sometimes' }), (e: Error) => e instanceof ConfigError && /tls\.server\.mode=sometimes.*disabled, permissive, enforcing/.test(e.message));
  assert.throws(() => resolveTlsServerSettings({ 'tls.server.mode': 'enforcing' }), (e: Error) => e instanceof ConfigError && /needs tls\.server\.certPath and tls\.server\.keyPath/.test(e.message));
  assert.throws(() => settings('permissive', { 'tls.server.keyPath': join(dir, 'nope.key') }), (e: Error) => e instanceof ConfigError && /tls\.server\.keyPath=.*nope\.key.*cannot be read/.test(e.message));
  const otherKey = join(dir, 'other.key');
  writeFileSync(otherKey, readFileSync(cert.certPath)); // a certificate where the key should be
  assert.throws(() => settings('permissive', { 'tls.server.keyPath': otherKey }), (e: Error) => e instanceof ConfigError && /do not load/.test(e.message));
  assert.equal(resolveTlsServerSettings({ 'tls.server.mode': 'DISABLED' }).mode, 'disabled');
});
