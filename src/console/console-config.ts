/**
 * Web console keys (tsmq's own; Apache ships its console as the separate RocketMQ Dashboard):
 *   consolePort                 HTTP port of the console; -1 (default for `tsmq broker`) = off,
 *                               `tsmq start` uses 8080; 0 = any free port.
 *   consoleListenHost           bind address, default 127.0.0.1 (only this host).
 *   consoleAllowUnauthenticated true lets the console bind a non-loopback address while
 *                               authenticationEnabled=false (anyone reaching it can delete topics
 *                               and reset offsets); without it such a start is refused.
 * With authenticationEnabled=true every request must carry HTTP Basic credentials of an enabled
 * Super user of the ACL 2.0 metadata (docs/security.md).
 */
import { resolveConfig, wholeNumberIn, type ConfigKey, type ConfigValue } from '../common/config/config-spec.js';

function key<T extends ConfigValue>(k: ConfigKey<T>): ConfigKey<ConfigValue> & { default: T } {
  return k as unknown as ConfigKey<ConfigValue> & { default: T };
}

export const CONSOLE_CONFIG_SPEC = {
  consolePort: key<number>({ name: 'consolePort', type: 'number', default: -1, doc: 'web console port (-1 = off, 0 = any free port)', validate: wholeNumberIn(-1, 65535, 'a port in 0..65535, or -1 for no console') }),
  consoleListenHost: key<string>({ name: 'consoleListenHost', type: 'string', default: '127.0.0.1', doc: 'address the web console binds' }),
  consoleAllowUnauthenticated: key<boolean>({ name: 'consoleAllowUnauthenticated', type: 'boolean', default: false, doc: 'allow a non-loopback console with authenticationEnabled=false' }),
} as const;

export interface ConsoleConfig {
  port: number;
  host: string;
  allowUnauthenticated: boolean;
}

/** @throws ConfigError on a bad value. */
export function resolveConsoleConfig(raw: Record<string, string>): ConsoleConfig {
  const c = resolveConfig(CONSOLE_CONFIG_SPEC, raw);
  return { port: c.consolePort, host: c.consoleListenHost, allowUnauthenticated: c.consoleAllowUnauthenticated };
}
