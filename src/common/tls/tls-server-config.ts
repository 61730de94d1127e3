/**
 * TLS settings of a server port (broker remoting, nameserver, HA, gRPC), under Apache RocketMQ's
 * names (`TlsSystemConfig`, there JVM system properties; in tsmq `key=value` lines of broker.conf /
 * namesrv.conf or `-o key=value`):
 *
 *   tls.server.mode              disabled | permissive | enforcing
 *                                disabled: plain TCP only. enforcing: TLS only (a plain client's
 *                                bytes fail the handshake and its connection is closed).
 *                                permissive: both on the same port; the first byte decides
 *                                (0x16, a TLS handshake record, means TLS), as Apache's
 *                                NettyRemotingServer does.
 *   tls.server.certPath          PEM certificate (chain) of the server
 *   tls.server.keyPath           PEM private key (PKCS#8 or PKCS#1)
 *   tls.server.keyPassword       password of an encrypted key (empty: not encrypted)
 *   tls.server.need.client.auth  none | optional | require: ask clients for a certificate
 *   tls.server.trustCertPath     PEM CA certificates client certificates must chain to
 *
 * **Difference from Apache:** Apache's default mode is `permissive` and, with
 * `tls.test.mode.enable=true` (its default), it serves a throwaway self-signed certificate made at
 * every start. tsmq's default is `disabled`; TLS is on only when asked for, with certificate files
 * (`tsmq start --tls` makes a self-signed pair for local use). A mode other than `disabled`
 * without `tls.server.certPath`/`tls.server.keyPath` is a config error, as is an unreadable file.
 */
import { readFileSync } from 'node:fs';
import { createSecureContext, type SecureContext } from 'node:tls';
import { ConfigError } from '../config/config-spec.js';

export type TlsServerMode = 'disabled' | 'permissive' | 'enforcing';
export type TlsClientAuth = 'none' | 'optional' | 'require';

export const TLS_SERVER_CONFIG_KEYS = {
  mode: 'tls.server.mode',
  certPath: 'tls.server.certPath',
  keyPath: 'tls.server.keyPath',
  keyPassword: 'tls.server.keyPassword',
  needClientAuth: 'tls.server.need.client.auth',
  trustCertPath: 'tls.server.trustCertPath',
} as const;

/** What a server needs to speak TLS: the mode and a ready secure context (null when disabled). */
export interface TlsServerSettings {
  mode: TlsServerMode;
  /** null exactly when mode is 'disabled'. */
  secureContext: SecureContext | null;
  /** Ask the client for a certificate; `require` also refuses clients without a valid one. */
  clientAuth: TlsClientAuth;
  /** PEM text of the certificate and key (gRPC's credentials take them as buffers), when enabled. */
  certPem: Buffer | null;
  keyPem: Buffer | null;
  /** PEM text of the CA certificates for client certificates, when configured. */
  trustPem: Buffer | null;
}

export const TLS_DISABLED: TlsServerSettings = Object.freeze({
  mode: 'disabled', secureContext: null, clientAuth: 'none', certPem: null, keyPem: null, trustPem: null,
});

function oneOf<T extends string>(raw: Record<string, string>, key: string, allowed: readonly T[], dflt: T): T {
  const v = raw[key]?.trim();
  if (v === undefined || v === '') return dflt;
  const lower = v.toLowerCase();
  const hit = allowed.find((a) => a === lower);
  if (!hit) throw new ConfigError(key, v, `not one of ${allowed.join(', ')}`);
  return hit;
}

function readPem(key: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new ConfigError(key, path, `cannot be read: ${(e as Error).message}`);
  }
}

/**
 * Reads the `tls.server.*` keys of a raw config and loads the certificate files.
 * @throws ConfigError for an unknown mode, a missing or unreadable file, or a certificate/key
 *   that does not load (wrong password, key not matching the certificate).
 */
export function resolveTlsServerSettings(raw: Record<string, string>): TlsServerSettings {
  const K = TLS_SERVER_CONFIG_KEYS;
  const mode = oneOf<TlsServerMode>(raw, K.mode, ['disabled', 'permissive', 'enforcing'], 'disabled');
  if (mode === 'disabled') return TLS_DISABLED;
  const clientAuth = oneOf<TlsClientAuth>(raw, K.needClientAuth, ['none', 'optional', 'require'], 'none');
  const certPath = raw[K.certPath]?.trim();
  const keyPath = raw[K.keyPath]?.trim();
  if (!certPath || !keyPath) {
    throw new ConfigError(K.mode, mode, `needs ${K.certPath} and ${K.keyPath} (PEM files; tsmq start --tls makes a self-signed pair)`);
  }
  const certPem = readPem(K.certPath, certPath);
  const keyPem = readPem(K.keyPath, keyPath);
  const trustPath = raw[K.trustCertPath]?.trim();
  const trustPem = trustPath ? readPem(K.trustCertPath, trustPath) : null;
  const passphrase = raw[K.keyPassword] || undefined;
  let secureContext: SecureContext;
  try {
    secureContext = createSecureContext({ cert: certPem, key: keyPem, passphrase, ...(trustPem ? { ca: trustPem } : {}) });
  } catch (e) {
    throw new ConfigError(K.certPath, certPath, `certificate and key ${keyPath} do not load: ${(e as Error).message}`);
  }
  return { mode, secureContext, clientAuth, certPem, keyPem, trustPem };
}
