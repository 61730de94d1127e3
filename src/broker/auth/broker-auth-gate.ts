/**
 * The broker remoting port's ACL 2.0 gate (Apache `AuthenticationProcessor`/`AuthorizationProcessor`
 * in front of every request processor), assembled for BrokerController:
 *
 * - brokerRequestGate(): authentication/authorization checked before every remoting handler,
 *   with the broker's resource contexts (remoting-auth-contexts.ts) and a rate-limited refusal
 *   log (with `refusalHint`'s explanation, e.g. an ACL 1.0 white address); null when authenticationEnabled and authorizationEnabled are both false. Built when the
 *   remoting server is created (start()).
 * - warnIfOpenWithoutAuth(): after start, a warning when the port is reachable from other hosts
 *   (not loopback) and authenticationEnabled=false.
 *
 * The users and ACLs (AuthMetadataManager, config/users.json and acls.json) are opened in create()
 * and shared with the gRPC front; nothing here needs stopping.
 */
import type { AuthConfig } from '../../auth/auth-config.js';
import { RemotingAuthGate, type RemotingAuthGateOptions } from '../../auth/remoting-auth-gate.js';
import type { Logger } from '../../common/logging/logger.js';
import { RateLimitedLog } from '../../common/logging/rate-limited-log.js';
import { isLoopback } from '../../common/net/loopback.js';
import type { AuthMetadataManager } from './auth-metadata-manager.js';
import { brokerAuthContexts } from './remoting-auth-contexts.js';

/** The gate for the remoting server, or null when both authentication and authorization are off. */
export function brokerRequestGate(config: AuthConfig, metadata: AuthMetadataManager, brokerClusterName: string, logger: Logger, refusalHint?: RemotingAuthGateOptions['refusalHint']): RemotingAuthGate | null {
  const gate = new RemotingAuthGate({
    config,
    metadata,
    contextsOf: brokerAuthContexts(brokerClusterName),
    refusalLog: new RateLimitedLog(logger),
    name: 'broker',
    ...(refusalHint ? { refusalHint } : {}),
  });
  return gate.enabled ? gate : null;
}

/** What an open port lets anyone do, and the key that binds it to loopback, per listener kind. */
const OPEN_PORT_TEXT = {
  remoting: { name: 'broker remoting port', can: 'send, consume, delete topics and reset offsets', bindKey: 'bindAddress' },
  grpc: { name: 'gRPC port', can: 'send and consume', bindKey: 'grpcListenHost' },
} as const;

/**
 * Logs a warning when `host:port` is reachable from other hosts (not a loopback address) while
 * authenticationEnabled=false. `kind` names the listener: the broker's remoting port (fix:
 * bindAddress=127.0.0.1) or the gRPC front's (fix: grpcListenHost=127.0.0.1).
 */
export function warnIfOpenWithoutAuth(host: string, port: number, config: Pick<AuthConfig, 'authenticationEnabled'>, logger: Logger, kind: keyof typeof OPEN_PORT_TEXT = 'remoting'): void {
  if (!isLoopback(host) && !config.authenticationEnabled) {
    const t = OPEN_PORT_TEXT[kind];
    logger.warn(`${t.name} ${host}:${port} is reachable from other hosts and authenticationEnabled=false: anyone who can reach it can ${t.can}; set authenticationEnabled=true and authorizationEnabled=true (docs/security.md) or ${t.bindKey}=127.0.0.1`);
  }
}
