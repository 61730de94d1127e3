/**
 * TLS of the connections a broker opens itself (to the nameserver, slave → master), under Apache
 * RocketMQ's client keys (`TlsSystemConfig`; JVM system properties there, broker.conf keys here):
 *
 *   tls.enable               true: connect with TLS (default false)
 *   tls.client.authServer    true: verify the server certificate against tls.client.trustCertPath
 *                            (or the system CAs); false (Apache's test-mode behaviour, the default):
 *                            accept any server certificate
 *   tls.client.trustCertPath PEM CA certificates for the server's certificate
 *   tls.client.certPath / tls.client.keyPath / tls.client.keyPassword
 *                            the client's own certificate, for servers with
 *                            tls.server.need.client.auth=require
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { ConfigError } from '../config/config-spec.js';

export const TLS_CLIENT_CONFIG_KEYS = {
  enable: 'tls.enable',
  authServer: 'tls.client.authServer',
  trustCertPath: 'tls.client.trustCertPath',
  certPath: 'tls.client.certPath',
  keyPath: 'tls.client.keyPath',
  keyPassword: 'tls.client.keyPassword',
} as const;

export type TlsClientOptions = Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'passphrase' | 'rejectUnauthorized'>;

function bool(raw: Record<string, string>, key: string): boolean {
  const v = raw[key]?.trim().toLowerCase();
  if (v === undefined || v === '' || v === 'false') return false;
  if (v === 'true') return true;
  throw new ConfigError(key, raw[key]!, 'expected true or false');
}

function file(raw: Record<string, string>, key: string): Buffer | undefined {
  const p = raw[key]?.trim();
  if (!p) return undefined;
  try {
    return readFileSync(p);
  } catch (e) {
    throw new ConfigError(key, p, `cannot be read: ${(e as Error).message}`);
  }
}

/** The TLS options for RemotingClient, or undefined when `tls.enable` is not true. @throws ConfigError */
export function resolveTlsClientOptions(raw: Record<string, string>): TlsClientOptions | undefined {
  const K = TLS_CLIENT_CONFIG_KEYS;
  if (!bool(raw, K.enable)) return undefined;
  const ca = file(raw, K.trustCertPath);
  const cert = file(raw, K.certPath);
  const key = file(raw, K.keyPath);
  const passphrase = raw[K.keyPassword] || undefined;
  return {
    rejectUnauthorized: bool(raw, K.authServer),
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(passphrase ? { passphrase } : {}),
  };
}
