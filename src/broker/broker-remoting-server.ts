/**
 * Builds the broker's remoting server for BrokerController.start() (not yet listening):
 * listenPort / bindAddress, the remoting limits of broker.conf (remoting-server-config.ts),
 * `tls.server.*`, the ACL 2.0 request gate (auth/broker-auth-gate.ts; none when both switches are
 * off), then the handler tables in the given order (a later table replaces an earlier one's code),
 * ACL 1.0's retired codes 50-54 (auth/acl-v1-retired-codes.ts: still not supported, with what to use instead),
 * the rocketmq_rpc_latency_milliseconds observer when a stats listener is set, and the channel-close hook
 * that drops the channel's consumers and producers.
 *
 * BrokerController starts it after this and stops it after answering held pulls and parked pops.
 */
import type { Logger } from '../common/logging/logger.js';
import type { TlsServerSettings } from '../common/tls/tls-server-config.js';
import type { AuthConfig } from '../auth/auth-config.js';
import type { RemotingAuthGateOptions } from '../auth/remoting-auth-gate.js';
import type { RequestHandler } from '../remoting/processor/request-processor.js';
import { RemotingServer } from '../remoting/transport/remoting-server.js';
import { resolveRemotingServerLimits } from '../remoting/transport/remoting-server-config.js';
import type { AuthMetadataManager } from './auth/auth-metadata-manager.js';
import { ACL_V1_RETIRED_CODES } from './auth/acl-v1-retired-codes.js';
import { brokerRequestGate } from './auth/broker-auth-gate.js';
import type { BrokerConfig } from './broker-config.js';
import type { BrokerContext } from './broker-context.js';

export interface BrokerRemotingServerDeps {
  config: BrokerConfig;
  /** Raw broker.conf keys (remoting limits). */
  rawConfig: Record<string, string>;
  ctx: BrokerContext;
  logger: Logger;
  tls: TlsServerSettings;
  authConfig: AuthConfig;
  authMetadata: AuthMetadataManager;
  /** Explains refusals in the log (ACL 1.0 white addresses after a migration); none when absent. */
  authRefusalHint?: RemotingAuthGateOptions['refusalHint'];
  /** Handler tables, registered in this order. */
  handlerTables: Iterable<Iterable<[number, RequestHandler]>>;
}

/** A configured, not yet started, broker remoting server (see the file comment). */
export function createBrokerRemotingServer(deps: BrokerRemotingServerDeps): RemotingServer {
  const { config, ctx } = deps;
  const requestGate = brokerRequestGate(deps.authConfig, deps.authMetadata, config.brokerClusterName, deps.logger, deps.authRefusalHint);
  const server = new RemotingServer({
    listenPort: config.listenPort,
    ...(config.bindAddress ? { host: config.bindAddress } : {}),
    logger: deps.logger,
    name: 'broker',
    ...resolveRemotingServerLimits(deps.rawConfig),
    ...(requestGate ? { requestGate } : {}),
    tls: deps.tls,
  });
  for (const table of deps.handlerTables) for (const [code, handler] of table) server.registerProcessor(code, handler);
  for (const [code, why] of ACL_V1_RETIRED_CODES) server.retireCode(code, why);
  // rocketmq_rpc_latency_milliseconds: timed by the dispatch itself when a stats listener is set before start()
  const statsListener = ctx.brokerStats.listener;
  if (statsListener) server.setResponseObserver((code, responseCode, ms, oneway) => statsListener.onRpc(code, responseCode, ms, oneway, false));
  server.onChannelClose((ch) => {
    ctx.consumerManager.doChannelCloseEvent(ch);
    ctx.producerManager.doChannelCloseEvent(ch);
  });
  return server;
}
