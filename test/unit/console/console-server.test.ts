/**
 * The console server before the broker exists (recovering + progress), its refusal to bind a
 * non-loopback address without authentication, and Basic authentication against the ACL users.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConsoleServer, ConsoleRefusedError } from '../../../src/console/console-server.js';
import { checkConsoleAuth } from '../../../src/console/console-auth.js';
import { resolveAuthConfig } from '../../../src/auth/auth-config.js';
import type { AuthMetadataManager } from '../../../src/broker/auth/auth-metadata-manager.js';
import { silentLogger } from '../../../src/common/logging/logger.js';

describe('console server', () => {
  it('answers "recovering" with the recovery progress until the broker is set, 503 on the data API', async () => {
    const c = await ConsoleServer.start({ config: { port: 0, host: '127.0.0.1', allowUnauthenticated: false }, logger: silentLogger });
    try {
      let s = (await (await fetch(`${c.url}/api/status`)).json()) as { state: string; recovery: unknown };
      assert.deepEqual(s, { state: 'recovering', recovery: null });
      c.setRecoveryProgress({ phase: 'CommitLog abnormal recovery scan', scannedBytes: 512, totalBytes: 2048, bytesPerSecond: 256, etaMs: 6000 });
      s = (await (await fetch(`${c.url}/api/status`)).json()) as { state: string; recovery: unknown };
      assert.deepEqual(s, { state: 'recovering', recovery: { phase: 'CommitLog abnormal recovery scan', scannedBytes: 512, totalBytes: 2048, bytesPerSecond: 256, etaMs: 6000 } });
      const topics = await fetch(`${c.url}/api/topics`);
      assert.equal(topics.status, 503);
      const page = await fetch(`${c.url}/`);
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.match(html, /<title>tsmq console<\/title>/);
      // An icon in the page, so a browser does not ask for /favicon.ico (a 404 error in its console on every load).
      assert.match(html, /<link rel="icon" href="data:,">/);
    } finally {
      await c.close();
    }
  });

  it('refuses a non-loopback bind with authentication off unless consoleAllowUnauthenticated', async () => {
    await assert.rejects(
      ConsoleServer.start({ config: { port: 0, host: '0.0.0.0', allowUnauthenticated: false }, logger: silentLogger }),
      (e: Error) => e instanceof ConsoleRefusedError && /authenticationEnabled=false/.test(e.message),
    );
    const c = await ConsoleServer.start({ config: { port: 0, host: '0.0.0.0', allowUnauthenticated: true }, logger: silentLogger });
    await c.close();
    const authed = await ConsoleServer.start({ config: { port: 0, host: '0.0.0.0', allowUnauthenticated: false }, logger: silentLogger, auth: { config: resolveAuthConfig({ authenticationEnabled: 'true' }), metadata: null } });
    try {
      const res = await fetch(`http://127.0.0.1:${authed.port}/api/status`);
      assert.equal(res.status, 503, 'no users loaded yet: nobody gets in');
    } finally {
      await authed.close();
    }
  });

  it('with authentication on, only an enabled Super user with the right password gets in', () => {
    const users: Record<string, { username: string; password: string; userType: 'Super' | 'Normal'; userStatus: 'enable' | 'disable' }> = {
      admin: { username: 'admin', password: 's3cret', userType: 'Super', userStatus: 'enable' },
      bob: { username: 'bob', password: 'pw', userType: 'Normal', userStatus: 'enable' },
      old: { username: 'old', password: 'pw', userType: 'Super', userStatus: 'disable' },
    };
    const md = { getUser: (n: string) => users[n] } as unknown as AuthMetadataManager;
    const basic = (u: string, p: string): string => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
    assert.deepEqual(checkConsoleAuth(true, md, basic('admin', 's3cret')), { ok: true, user: 'admin' });
    assert.equal(checkConsoleAuth(true, md, basic('admin', 'wrong')).ok, false);
    assert.equal(checkConsoleAuth(true, md, basic('bob', 'pw')).ok, false);
    assert.equal(checkConsoleAuth(true, md, basic('old', 'pw')).ok, false);
    assert.equal(checkConsoleAuth(true, md, undefined).ok, false);
    assert.deepEqual(checkConsoleAuth(false, md, undefined), { ok: true, user: null });
  });
});
