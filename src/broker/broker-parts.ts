/**
 * Opens everything a broker owns on disk, for BrokerController.create() (RocketMQ
 * `BrokerController.initialize`), in this order:
 *
 *   resolve config (broker, ACL, tls.server.*, tls.client.*, timer keys: a bad key fails here,
 *   before anything is opened) → open the message store (recovery) → open the timer store
 *   (timer/broker-timer-assembly.ts) → load topics, consumer offsets, subscription groups and
 *   delay progress (broker-metadata.ts) → open the pop state (pop/broker-pop-assembly.ts) →
 *   build the BrokerContext (timer put hook included) → create the timer service and its topic →
 *   open the ACL 2.0 users and ACLs (config/users.json, acls.json).
 *
 * On any failure, what was opened is closed again (pop state, timer store, message store) and the
 * error is rethrown. Nothing here starts; BrokerController.shutdown() closes these parts.
 * @throws ConfigError, ConfigFileCorruptError, store open errors.
 */
import * as path from 'node:path';
import type { Clock } from '../common/time/clock.js';
import { systemClock } from '../common/time/clock.js';
import type { Logger } from '../common/logging/logger.js';
import { createLogger } from '../common/logging/logger.js';
import type { FileSystem } from '../common/fs/file-system.js';
import { nodeFileSystem } from '../common/fs/node-file-system.js';
import { resolveTlsServerSettings, type TlsServerSettings } from '../common/tls/tls-server-config.js';
import { resolveTlsClientOptions } from '../common/tls/tls-client-config.js';
import { resolveAuthConfig, type AuthConfig } from '../auth/auth-config.js';
import { aclEnableIgnoredWarning, innerCredentialsFromMigration, migrateAuthFromV1, type AuthMigrationReport } from './auth/auth-migrator.js';
import { whiteAddressRefusalHint } from '../auth/v1/plain-acl-white-address.js';
import type { RemotingAuthGateOptions } from '../auth/remoting-auth-gate.js';
import type { MessageStore } from '../store/message-store.js';
import { DefaultMessageStore } from '../store/default-message-store.js';
import { resolveStoreConfig } from '../store/store-config.js';
import type { TimerStore } from '../store/timer/timer-store.js';
import type { RecoveryProgressListener } from '../store/recovery/recovery-progress.js';
import { resolveBrokerConfig, type BrokerConfig } from './broker-config.js';
import { BrokerContext } from './broker-context.js';
import { loadBrokerMetadata } from './broker-metadata.js';
import type { ScheduleDelivery } from './schedule/schedule-message-service.js';
import { AuthMetadataManager } from './auth/auth-metadata-manager.js';
import { ConsumerManager } from './client/consumer-manager.js';
import { consumerIdsChangeNotifier } from './client/consumer-ids-change-notifier.js';
import { ProducerManager } from './client/producer-manager.js';
import { openPopState } from './pop/broker-pop-assembly.js';
import type { PopStateStore } from './pop/pop-state-store.js';
import { DelayLevelTable } from './schedule/delay-level-table.js';
import type { ScheduleMessageService } from './schedule/schedule-message-service.js';
import { createTimerService, openTimerStore, timerPutHookOf } from './timer/broker-timer-assembly.js';
import { resolveTimerConfig, type TimerConfig } from './timer/timer-config.js';
import type { TimerMessageService } from './timer/timer-message-service.js';
import type { TimerMetrics } from './timer/timer-metrics.js';

export interface BrokerPartsOptions {
  /** Raw broker.conf keys (broker and store keys together). */
  brokerConfig: Record<string, string>;
  clock?: Clock;
  logger?: Logger;
  /** Use this store instead of opening DefaultMessageStore (tests). It is shut down with the broker. */
  store?: MessageStore;
  /** File system for the metadata files (tests). */
  fs?: FileSystem;
  /** Slots per half timer wheel (tests; default Apache's 7 days of slots, a 38.7 MB timerwheel file). */
  timerSlotsTotal?: number;
  /** Hears the store's start-up recovery progress every few seconds (the console shows it). */
  onRecoveryProgress?: RecoveryProgressListener;
}

/** What openBrokerParts() opened and loaded. */
export interface BrokerParts {
  config: BrokerConfig;
  ctx: BrokerContext;
  schedule: ScheduleMessageService;
  popState: PopStateStore;
  /** refusalHint: explains refusals ACL 1.0's white addresses would have let through (after migrateAuthFromV1Enabled). */
  auth: { config: AuthConfig; metadata: AuthMetadataManager; refusalHint: RemotingAuthGateOptions['refusalHint'] | null };
  timer: { config: TimerConfig; store: TimerStore | null; service: TimerMessageService | null; metrics: TimerMetrics | null };
  /** `tls.server.*` of broker.conf. */
  tls: TlsServerSettings;
}

/** Resolves config, opens the store and loads all metadata (see the file comment). */
export async function openBrokerParts(opts: BrokerPartsOptions): Promise<BrokerParts> {
  const config = resolveBrokerConfig(opts.brokerConfig);
  const authConfig = resolveAuthConfig(opts.brokerConfig);
  const tls = resolveTlsServerSettings(opts.brokerConfig);
  resolveTlsClientOptions(opts.brokerConfig); // a bad tls.client.* key fails the start, not the first registration
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger ?? createLogger('broker');
  const delayLevels = new DelayLevelTable(config.messageDelayLevel);
  const timerConfig = resolveTimerConfig(opts.brokerConfig);
  const store =
    opts.store ??
    (await DefaultMessageStore.open(resolveStoreConfig(opts.brokerConfig), {
      clock,
      logger: logger.child({ component: 'store' }),
      ...(opts.fs ? { fs: opts.fs } : {}),
      ...(opts.onRecoveryProgress ? { onRecoveryProgress: opts.onRecoveryProgress } : {}),
    }));
  let popState: PopStateStore | null = null;
  let timerStore: TimerStore | null = null;
  try {
    const root = config.storePathRootDir;
    const fs = opts.fs ?? nodeFileSystem;
    timerStore = openTimerStore(timerConfig, { storePathRootDir: root, fs, ...(opts.timerSlotsTotal !== undefined ? { slotsTotal: opts.timerSlotsTotal } : {}) });
    const { topics, offsets, groups, schedule, mappings } = await loadBrokerMetadata({
      config, store, delayLevels, clock, logger, ...(opts.fs ? { fs: opts.fs } : {}),
      // Apache ScheduleMessageService.PutResultProcess.onSuccess; ctx exists before the service starts delivering
      ...(config.enableScheduleMessageStats ? { onScheduleDelivered: (d: ScheduleDelivery) => ctx.brokerStats.recordScheduleDelivery(d.topic, d.wroteBytes, d.delayLevel) } : {}),
    });
    popState = openPopState({ rawConfig: opts.brokerConfig, storePathRootDir: root, fs, clock, logger });
    const ctx = new BrokerContext({
      config,
      store,
      clock,
      logger,
      topicConfigManager: topics,
      consumerOffsetManager: offsets,
      subscriptionGroupManager: groups,
      consumerManager: new ConsumerManager(clock, config.channelExpiredTimeout, logger, consumerIdsChangeNotifier((g) => groups.get(g))),
      producerManager: new ProducerManager(clock, config.channelExpiredTimeout, logger),
      delayLevels,
      timerPutHook: timerPutHookOf(timerConfig, clock, timerStore),
      topicQueueMappingManager: mappings,
    });
    const timerParts = createTimerService({
      timerStore, store, topics, config: timerConfig, clock, logger, fs, storePathRootDir: root,
      onPutOk: (topic, wroteBytes, count = 1) => ctx.brokerStats.recordPut(topic, count, wroteBytes, count), // Apache TimerMessageStore.doPut; no messages_in metric
    });
    const authMetadata = await AuthMetadataManager.open(path.join(root, 'config'), authConfig, { logger, ...(opts.fs ? { fs: opts.fs } : {}) });
    let auth = authConfig;
    let refusalHint: RemotingAuthGateOptions['refusalHint'] | null = null;
    let migration: AuthMigrationReport | null = null;
    if (authConfig.migrateFromV1) {
      const report = await migrateAuthFromV1(authConfig.migrateFromV1, authMetadata, logger);
      migration = report;
      const white = report.whiteAddresses;
      if (white.global.length > 0 || white.byAccount.size > 0) refusalHint = (ip, ak) => whiteAddressRefusalHint(white, ip, ak);
      const signer = authConfig.innerCredentials || authConfig.initUser ? null : innerCredentialsFromMigration(report, authMetadata);
      if (signer) {
        auth = { ...authConfig, innerCredentials: signer };
        logger.info(`auth: the broker signs its own requests as ${JSON.stringify(signer.accessKey)}, the first admin account of plain_acl.yml (innerClientAuthenticationCredentials chooses another)`);
      }
    }
    if (authConfig.aclEnable) logger.warn(aclEnableIgnoredWarning(migration, authMetadata.listUsers().length));
    return {
      config,
      ctx,
      schedule,
      popState,
      auth: { config: auth, metadata: authMetadata, refusalHint },
      timer: { config: timerConfig, store: timerStore, ...timerParts },
      tls,
    };
  } catch (e) {
    await popState?.close().catch(() => undefined);
    timerStore?.close();
    await store.shutdown().catch(() => undefined);
    throw e;
  }
}
