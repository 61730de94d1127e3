/**
 * The config keys each command understands, and the start-up warning for the others: RocketMQ
 * ignores unknown broker.conf keys silently; tsmq ignores them too but logs one warning per key,
 * naming a close known key when there is one (`listenport` → `listenPort`).
 */
import { findUnknownKeys, knownKeyNames, unknownKeyWarning } from '../common/config/config-spec.js';
import type { Logger } from '../common/logging/logger.js';
import { BROKER_CONFIG_SPEC } from '../broker/broker-config.js';
import { HA_RAW_CONFIG_KEYS } from '../broker/ha/broker-ha.js';
import { CONTROLLER_CONFIG_SPEC } from '../broker/controller/controller-config.js';
import { POP_CONFIG_SPEC } from '../broker/pop/pop-config.js';
import { TRANSACTION_CONFIG_SPEC } from '../broker/transaction/transaction-config.js';
import { GRPC_CONFIG_SPEC } from '../grpc/grpc-config.js';
import { TIMER_CONFIG_SPEC } from '../broker/timer/timer-config.js';
import { storeConfigSpec } from '../store/store-config.js';
import { REGISTRATION_LIMITS_SPEC } from '../namesrv/route/registration-limits.js';
import { REMOTING_SERVER_CONFIG_SPEC } from '../remoting/transport/remoting-server-config.js';
import { AUTH_CONFIG_SPEC } from '../auth/auth-config.js';
import { METRICS_CONFIG_SPEC } from '../metrics/metrics-config.js';
import { CONSOLE_CONFIG_SPEC } from '../console/console-config.js';
import { TLS_SERVER_CONFIG_KEYS } from '../common/tls/tls-server-config.js';
import { TLS_CLIENT_CONFIG_KEYS } from '../common/tls/tls-client-config.js';

/** Every key (and alias) `tsmq broker` / `tsmq start` read from broker.conf and `-o`. */
export function brokerConfigKeys(): Set<string> {
  const keys = new Set<string>(['brokerConfigPath', ...HA_RAW_CONFIG_KEYS, ...Object.values(TLS_SERVER_CONFIG_KEYS), ...Object.values(TLS_CLIENT_CONFIG_KEYS)]);
  for (const spec of [BROKER_CONFIG_SPEC, CONTROLLER_CONFIG_SPEC, storeConfigSpec, POP_CONFIG_SPEC, TRANSACTION_CONFIG_SPEC, TIMER_CONFIG_SPEC, GRPC_CONFIG_SPEC, REMOTING_SERVER_CONFIG_SPEC, AUTH_CONFIG_SPEC, METRICS_CONFIG_SPEC, CONSOLE_CONFIG_SPEC]) {
    for (const k of knownKeyNames(spec)) keys.add(k);
  }
  return keys;
}

/** Keys `tsmq namesrv` reads. */
export function namesrvConfigKeys(): Set<string> {
  return new Set(['listenPort', 'host', ...knownKeyNames(REMOTING_SERVER_CONFIG_SPEC), ...knownKeyNames(REGISTRATION_LIMITS_SPEC), ...Object.values(TLS_SERVER_CONFIG_KEYS)]);
}

/** Logs one warning per key of `cfg` that `known` lacks; returns the messages. */
export function warnUnknownConfigKeys(cfg: Record<string, string>, known: Set<string>, logger: Logger): string[] {
  const messages = findUnknownKeys(cfg, known).map(unknownKeyWarning);
  for (const m of messages) logger.warn(m);
  return messages;
}
