/**
 * Assembles the broker's nameserver registration (Apache `BrokerController.registerBrokerAll`
 * and its periodic task) for BrokerController:
 *
 * - create(): null when namesrvAddr is empty; otherwise a RemotingClient (tls.client.*, requests
 *   signed with innerClientAuthenticationCredentials), a BrokerOuterApi over every nameserver
 *   and a NamesrvRegistrar that registers every topic every registerNameServerPeriod ms and,
 *   on a topic create/update, only the changed topics (Apache registerIncrementBrokerData).
 *   The identity's haServerAddr and the registration-reply hook come from the replication role.
 * - start(): the first registration, awaited once (failures are logged, not fatal).
 * - Stop order (owned by BrokerController): unregister() first in shutdown; closeClient() near
 *   the end, after the metadata files are persisted.
 *
 * The topic table sent is the whole topic config (or the changed topics); when the broker is
 * not read-write, every topic's perm is ANDed with brokerPermission (Apache 5.3.3
 * registerBrokerAll / registerIncrementBrokerData; Apache 4.9 replaced it by brokerPermission,
 * which turned a read-only topic of a write-only broker into a write-only one).
 */
import type { Logger } from '../../common/logging/logger.js';
import { resolveTlsClientOptions } from '../../common/tls/tls-client-config.js';
import type { AuthConfig } from '../../auth/auth-config.js';
import { RemotingClient } from '../../remoting/transport/remoting-client.js';
import { innerRequestSigner } from '../auth/inner-request-signer.js';
import { PermName, splitNamesrvAddr, type BrokerConfig } from '../broker-config.js';
import type { BrokerContext } from '../broker-context.js';
import { BrokerOuterApi, type RegisterOutcome } from './broker-outer-api.js';
import { NamesrvRegistrar } from './namesrv-registrar.js';

export interface NamesrvRegistrationDeps {
  config: BrokerConfig;
  /** Raw broker.conf keys (tls.client.*). */
  rawConfig: Record<string, string>;
  ctx: BrokerContext;
  authConfig: AuthConfig;
  logger: Logger;
  /** `host:port` of this broker's HA server, as registered. */
  haServerAddr: () => string;
  /** Hears every registration round's outcomes (a slave learns its master from them). */
  onRegistered: (outcomes: RegisterOutcome[]) => void;
}

export class NamesrvRegistration {
  private constructor(
    private readonly client: RemotingClient,
    private readonly registrar: NamesrvRegistrar,
  ) {}

  /** Builds the client and registrar (nothing sent yet); null when namesrvAddr is empty. */
  static create(deps: NamesrvRegistrationDeps): NamesrvRegistration | null {
    const { config, ctx } = deps;
    const namesrvAddrs = splitNamesrvAddr(config.namesrvAddr);
    if (namesrvAddrs.length === 0) return null;
    const clientTls = resolveTlsClientOptions(deps.rawConfig);
    const client = new RemotingClient({ logger: deps.logger, ...(clientTls ? { tls: clientTls } : {}), ...innerRequestSigner(deps.authConfig) });
    const api = new BrokerOuterApi(client, namesrvAddrs, config.registerBrokerTimeoutMills, deps.logger);
    const registrar = new NamesrvRegistrar({
      api,
      identity: () => ({
        clusterName: config.brokerClusterName,
        brokerName: config.brokerName,
        brokerAddr: ctx.brokerAddr,
        brokerId: config.brokerId,
        haServerAddr: deps.haServerAddr(),
      }),
      topics: () => topicsForRegistration(config, ctx),
      topicsIncrement: (names) => topicsIncrementForRegistration(config, ctx, names),
      periodMs: config.registerNameServerPeriod,
      logger: deps.logger,
      onRegistered: deps.onRegistered,
    });
    ctx.topicConfigManager.onChange((topic) => {
      // '' = touch (brokerPermission, a promoted replica's recovered topics): everything again.
      // A deleted topic sends nothing (Apache: DELETE_TOPIC_IN_NAMESRV removes the route; the
      // next periodic registration carries the new dataVersion).
      // The increment's promise is returned: UPDATE_AND_CREATE_TOPIC waits for it (bounded).
      if (topic === '') void registrar.registerNow();
      else if (ctx.topicConfigManager.selectTopicConfig(topic)) return registrar.registerTopics([topic]);
      return undefined;
    });
    return new NamesrvRegistration(client, registrar);
  }

  /** First registration (awaited) and the periodic re-registration. */
  async start(): Promise<void> {
    await this.registrar.start();
  }

  /** Registers again now (a role change, a topic change). */
  registerNow(): void {
    void this.registrar.registerNow();
  }

  /** Stops re-registering and unregisters from every nameserver. */
  unregister(): Promise<void> {
    return this.registrar.shutdown();
  }

  /** Closes the nameserver connections (after unregister and the final persists). */
  closeClient(): Promise<void> {
    return this.client.close();
  }
}

/** Topic table for REGISTER_BROKER; perms are ANDed with brokerPermission when the broker is not read-write (Apache 5.3.3). */
function topicsForRegistration(config: BrokerConfig, ctx: BrokerContext): object {
  const perm = config.brokerPermission;
  const rw = PermName.isReadable(perm) && PermName.isWriteable(perm);
  const wrapper = ctx.topicConfigManager.buildSerializeWrapper(rw ? undefined : perm);
  // Apache TopicConfigAndMappingSerializeWrapper: the static topics' route form
  return ctx.topicQueueMappingManager.isEmpty ? wrapper : { ...wrapper, topicQueueMappingInfoMap: ctx.topicQueueMappingManager.mappingInfoMap() };
}

/** The changed topics only (Apache registerIncrementBrokerData); null when none exists any more. */
function topicsIncrementForRegistration(config: BrokerConfig, ctx: BrokerContext, names: string[]): object | null {
  const perm = config.brokerPermission;
  const rw = PermName.isReadable(perm) && PermName.isWriteable(perm);
  const wrapper = ctx.topicConfigManager.buildIncrementWrapper(names, rw ? undefined : perm);
  if (!wrapper || ctx.topicQueueMappingManager.isEmpty) return wrapper;
  const mapping = ctx.topicQueueMappingManager.mappingInfoMapOf(names);
  return Object.keys(mapping).length === 0 ? wrapper : { ...wrapper, topicQueueMappingInfoMap: mapping };
}
