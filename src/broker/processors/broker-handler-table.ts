/**
 * The broker's complete remoting handler table, assembled for BrokerController's constructor
 * from the per-area tables, in this order (a later table replaces an earlier one's code, except
 * where noted):
 *
 * 1. processor-table.ts: send, pull, offsets, admin, END_TRANSACTION... with the admin runtime
 *    info (broker properties, store directories, HA stats);
 * 2. pop-processor-table.ts: POP_MESSAGE & co. over the broker's one PopService (loads
 *    config/messageRequestMode.json);
 * 3. ha/slave-sync-handlers.ts: GET_ALL_CONSUMER_OFFSET, GET_ALL_DELAY_OFFSET,
 *    GET_ALL_SUBSCRIPTIONGROUP_CONFIG, only for codes not yet registered;
 * 4. auth/auth-admin-processors.ts: ACL 2.0 user and ACL admin codes;
 * 5. RECALL_MESSAGE (370) over the RecallMessageService;
 * 6. static topics (static-topic/): 513 and the lo-aware 351, then the send, pull and offset
 *    handlers wrapped to map logic queues to physical ones.
 *
 * The controller admin codes (controller/replication-role.ts) are registered on the server at
 * start(), not here. Nothing here starts or stops.
 * @throws ConfigError for a bad pop key, ConfigFileCorruptError for an unreadable mode file.
 */
import * as path from 'node:path';
import type { FileSystem } from '../../common/fs/file-system.js';
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { commitLogDir, resolveStoreConfig } from '../../store/store-config.js';
import { buildAuthAdminHandlers } from '../auth/auth-admin-processors.js';
import type { AuthMetadataManager } from '../auth/auth-metadata-manager.js';
import type { BrokerContext } from '../broker-context.js';
import { BrokerProperties } from '../config-file/broker-properties.js';
import type { BrokerHAStats } from '../ha/broker-ha.js';
import { buildSlaveSyncHandlers } from '../ha/slave-sync-handlers.js';
import type { PopService } from '../pop/pop-service.js';
import type { ScheduleMessageService } from '../schedule/schedule-message-service.js';
import { recallMessageHandler } from '../timer/recall-message-processor.js';
import type { RecallMessageService } from '../timer/recall-message-service.js';
import type { TransactionalMessageService } from '../transaction/transactional-message-service.js';
import { buildStaticTopicAdminHandlers } from '../static-topic/static-topic-admin-handlers.js';
import { wrapStaticTopicHandlers } from '../static-topic/static-topic-handlers.js';
import type { StaticTopicForwarder } from '../static-topic/static-topic-forwarder.js';
import { buildPopProcessorTable } from './pop-processor-table.js';
import { wrapPopResetHandlers } from './pop-reset-handlers.js';
import { buildProcessorTable } from './processor-table.js';
import type { PullMessageProcessor } from './pull-message-processor.js';

export interface BrokerHandlerDeps {
  ctx: BrokerContext;
  /** Raw broker.conf keys (broker properties, store directories, pop keys). */
  rawConfig: Record<string, string>;
  /** The pull processor the long-polling service also holds. */
  pull: PullMessageProcessor;
  transactions: TransactionalMessageService;
  popService: PopService;
  schedule: ScheduleMessageService;
  authMetadata: AuthMetadataManager;
  recall: RecallMessageService;
  /** Replication stats for GET_BROKER_HA_STATUS / runtime info; null without replication. */
  haStats: () => BrokerHAStats | null;
  /** Controller mode: the CommitLog confirm offset for runtime info; null outside controller mode. */
  confirmOffset?: () => number | null;
  /** True once the broker is shutting down: parked pops answer at once. */
  stopping: () => boolean;
  /** File system for config/messageRequestMode.json (tests). */
  fs?: FileSystem;
  /** Reads static-topic items hosted on other brokers; without it such reads answer SYSTEM_ERROR. */
  staticTopicForwarder?: StaticTopicForwarder;
}

/** Request code → handler for every remoting request the broker serves (see the file comment). */
export function buildBrokerHandlerTable(deps: BrokerHandlerDeps): Map<number, RequestHandler> {
  const { ctx, rawConfig } = deps;
  const storeConfig = resolveStoreConfig(rawConfig);
  const handlers = buildProcessorTable(ctx, deps.pull, deps.transactions, {
    properties: new BrokerProperties(ctx.config, { ...rawConfig }, ctx.clock),
    runtime: {
      commitLogDir: commitLogDir(storeConfig),
      consumeQueueDir: path.join(storeConfig.storePathRootDir, 'consumequeue'),
      haStats: deps.haStats,
      haMaxGapNotInSyncBytes: storeConfig.haMaxGapNotInSync,
      scheduleRunningStats: () => deps.schedule.buildRunningStats(),
      ...(deps.confirmOffset ? { confirmOffset: deps.confirmOffset } : {}),
    },
  });
  const popHandlers = buildPopProcessorTable(ctx, deps.popService, { rawConfig, stopping: deps.stopping, ...(deps.fs ? { fs: deps.fs } : {}) });
  for (const [code, h] of popHandlers) handlers.set(code, h);
  wrapPopResetHandlers(handlers, ctx, deps.popService);
  for (const [code, h] of buildSlaveSyncHandlers(ctx, deps.schedule)) if (!handlers.has(code)) handlers.set(code, h);
  for (const [code, h] of buildAuthAdminHandlers(deps.authMetadata, ctx.logger)) handlers.set(code, h);
  handlers.set(RequestCode.RECALL_MESSAGE, recallMessageHandler(deps.recall, ctx.config.regionId));
  const mappings = ctx.topicQueueMappingManager;
  for (const [code, h] of buildStaticTopicAdminHandlers({ topics: ctx.topicConfigManager, mappings, logger: ctx.logger })) handlers.set(code, h);
  const forwarder = deps.staticTopicForwarder;
  wrapStaticTopicHandlers(handlers, { mappings, ...(forwarder ? { forward: (bname, request) => forwarder.forward(bname, request) } : {}) });
  return handlers;
}
