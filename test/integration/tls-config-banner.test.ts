/**
 * `tsmq start` with TLS set by Apache's `tls.server.*` keys (an operator's own certificate, no
 * `--tls`): the start banner names the mode and the certificate, as it does for `--tls`.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureSelfSignedCertificate } from '../../src/common/tls/self-signed-certificate.js';
import { TsmqProcess } from '../support/tsmq-process.js';

describe('tsmq start with tls.server.* keys', { timeout: 60_000 }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsmq-tls-banner-'));
  let tsmq: TsmqProcess | null = null;
  after(async () => {
    await tsmq?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('tls.server.mode=permissive with certPath/keyPath: the banner says "TLS permissive (certificate <certPath>)"', async () => {
    const cert = await ensureSelfSignedCertificate(path.join(dir, 'certs'));
    tsmq = await TsmqProcess.start({
      storeDir: path.join(dir, 'store'),
      options: { 'tls.server.mode': 'permissive', 'tls.server.certPath': cert.certPath, 'tls.server.keyPath': cert.keyPath },
    });
    const banner = tsmq.log.split('\n').find((l) => l.startsWith('tsmq started:')) ?? '';
    assert.ok(banner.endsWith(`; TLS permissive (certificate ${cert.certPath})`), banner);
  });
});
