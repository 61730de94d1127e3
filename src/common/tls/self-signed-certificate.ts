/**
 * Self-signed certificate for local TLS (`tsmq start --tls`), made with the `selfsigned` library:
 * RSA 2048 key, SHA-256 signature, subject CN=tsmq-local, subject alternative names `localhost`,
 * 127.0.0.1 and ::1, valid 365 days. Clients must trust it explicitly (Apache's Java client in its
 * default `tls.test.mode.enable=true` trusts any certificate; Node: `ca: <the cert file>`).
 *
 * Not for production: a real deployment gets its certificate from a CA and points
 * `tls.server.certPath` / `tls.server.keyPath` at it.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { generate } from 'selfsigned';

export interface CertificateFiles {
  /** PEM certificate. */
  certPath: string;
  /** PEM private key (PKCS#8), file mode 0600. */
  keyPath: string;
  /** True when this call made them (false: the existing, still valid pair was kept). */
  created: boolean;
}

/** Remaining validity under which an existing certificate is replaced, ms (7 days). */
const RENEW_BEFORE_MS = 7 * 24 * 3600 * 1000;

/**
 * Returns `tsmq-local.crt` / `tsmq-local.key` in `dir`, making them when missing, unreadable or
 * expiring within 7 days. Files are written to a temp name and renamed, so a crash leaves no torn
 * pair. @throws on a file system error.
 */
export async function ensureSelfSignedCertificate(dir: string, nowMs = Date.now()): Promise<CertificateFiles> {
  const certPath = join(dir, 'tsmq-local.crt');
  const keyPath = join(dir, 'tsmq-local.key');
  if (existsSync(certPath) && existsSync(keyPath)) {
    try {
      const cert = new X509Certificate(readFileSync(certPath));
      if (Date.parse(cert.validTo) - nowMs > RENEW_BEFORE_MS) return { certPath, keyPath, created: false };
    } catch {
      // unreadable: make a new pair
    }
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pems = await generate([{ name: 'commonName', value: 'tsmq-local' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: new Date(nowMs - 60_000),
    notAfterDate: new Date(nowMs + 365 * 24 * 3600 * 1000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
    ],
  });
  writeFileSync(`${keyPath}.tmp`, pems.private, { mode: 0o600 });
  writeFileSync(`${certPath}.tmp`, pems.cert);
  renameSync(`${keyPath}.tmp`, keyPath);
  renameSync(`${certPath}.tmp`, certPath);
  return { certPath, keyPath, created: true };
}
