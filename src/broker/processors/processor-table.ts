/**
 * The broker's request code → handler table (the one place processors are registered).
 * Codes ali-ons sends: 34, 35, 38, 14, 15, 30, 29, 11, 310, 36 (spec A4); the rest serve
 * admin tools and Java clients.
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import type { BrokerContext } from '../broker-context.js';
import { ClientManageProcessor } from './client-manage-processor.js';
import { ReplyMessageProcessor } from './reply-message-processor.js';
import { OffsetProcessors } from './offset-processors.js';
import type { PullMessageProcessor } from './pull-message-processor.js';
import { QueryMessageProcessors } from './query-message-processors.js';
import { SendBackProcessor } from './send-back-processor.js';
import { SendMessageProcessor } from './send-message-processor.js';
import { TopicAdminProcessors } from './topic-admin-processors.js';
import { AdminStatsProcessors } from './admin-stats-processors.js';
import { LockBatchProcessors } from './lock-batch-processors.js';
import { ResetOffsetProcessor } from './reset-offset-processor.js';
import { EndTransactionProcessor } from '../transaction/end-transaction-processor.js';
import type { TransactionalMessageService } from '../transaction/transactional-message-service.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import * as path from 'node:path';
import { BrokerProperties } from '../config-file/broker-properties.js';
import { BrokerConfigProcessors } from './broker-config-processors.js';
import { BrokerRuntimeProcessors, type RuntimeInfoDeps } from './broker-runtime-processors.js';
import { ColdDataFlowCtrProcessors } from './cold-data-flow-ctr-processor.js';
import { commitLogReadAheadHandler } from './commitlog-read-ahead-processor.js';
import { resetMasterFlushOffsetHandler, type MasterFlushOffsetTarget } from './master-flush-offset-processor.js';
import { ClientConnectionProcessors } from './client-connection-processors.js';
import { ConsumerAdminProcessors } from './consumer-admin-processors.js';
import { SubscriptionGroupProcessors } from './subscription-group-processors.js';
import { queryConsumeQueueHandler } from './query-consume-queue-processor.js';
import { timedCreate } from './create-execution-timing.js';

/** What the admin processors need besides the context (the controller passes the real ones). */
export interface AdminDeps {
  properties: BrokerProperties;
  runtime: RuntimeInfoDeps;
}

/** Defaults for in-process tests: raw config empty, paths under storePathRootDir, no HA. */
export function defaultAdminDeps(ctx: BrokerContext): AdminDeps {
  const root = ctx.config.storePathRootDir;
  return {
    properties: new BrokerProperties(ctx.config, {}, ctx.clock),
    runtime: { commitLogDir: path.join(root, 'commitlog'), consumeQueueDir: path.join(root, 'consumequeue'), haStats: () => null, haMaxGapNotInSyncBytes: 256 * 1024 * 1024 },
  };
}

/** Builds every broker handler; `pull` is passed in because the long-polling service also holds it. */
export function buildProcessorTable(
  ctx: BrokerContext,
  pull: PullMessageProcessor,
  transactions: TransactionalMessageService | null = null,
  admin: AdminDeps = defaultAdminDeps(ctx),
): Map<number, RequestHandler> {
  const client = new ClientManageProcessor(ctx);
  const offsets = new OffsetProcessors(ctx);
  const send = new SendMessageProcessor(ctx, transactions);
  const sendBack = new SendBackProcessor(ctx);
  const replies = new ReplyMessageProcessor(ctx, send);
  const topics = new TopicAdminProcessors(ctx);
  const query = new QueryMessageProcessors(ctx);
  const locks = new LockBatchProcessors(ctx);
  const stats = new AdminStatsProcessors(ctx);
  const reset = new ResetOffsetProcessor(ctx);
  const runtime = new BrokerRuntimeProcessors(ctx, admin.runtime);
  const brokerConfig = new BrokerConfigProcessors(ctx, admin.properties);
  const connections = new ClientConnectionProcessors(ctx);
  const consumerAdmin = new ConsumerAdminProcessors(ctx);
  const groups = new SubscriptionGroupProcessors(ctx);
  const coldData = new ColdDataFlowCtrProcessors(() => admin.properties.allConfigs(), ctx.logger);
  const table = new Map<number, RequestHandler>([
    [RequestCode.HEART_BEAT, client.heartbeat],
    [RequestCode.UNREGISTER_CLIENT, client.unregisterClient],
    [RequestCode.GET_CONSUMER_LIST_BY_GROUP, client.getConsumerListByGroup],
    [RequestCode.CHECK_CLIENT_CONFIG, client.checkClientConfig],
    [RequestCode.QUERY_CONSUMER_OFFSET, offsets.queryConsumerOffset],
    [RequestCode.UPDATE_CONSUMER_OFFSET, offsets.updateConsumerOffset],
    [RequestCode.GET_MAX_OFFSET, offsets.getMaxOffset],
    [RequestCode.GET_MIN_OFFSET, offsets.getMinOffset],
    [RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, offsets.searchOffsetByTimestamp],
    [RequestCode.GET_EARLIEST_MSG_STORETIME, offsets.getEarliestMsgStoretime],
    [RequestCode.SEND_MESSAGE, send.handler],
    [RequestCode.SEND_MESSAGE_V2, send.handler],
    [RequestCode.SEND_BATCH_MESSAGE, send.handler],
    [RequestCode.SEND_REPLY_MESSAGE, replies.handler],
    [RequestCode.SEND_REPLY_MESSAGE_V2, replies.handler],
    [RequestCode.PULL_MESSAGE, pull.handler],
    // 5.x DefaultLitePullConsumer pulls with LITE_PULL_MESSAGE (sysFlag bit 4); Apache serves it
    // with the same PullMessageProcessor (on its own thread pool).
    [RequestCode.LITE_PULL_MESSAGE, pull.handler],
    [RequestCode.CONSUMER_SEND_MSG_BACK, sendBack.handler],
    [RequestCode.UPDATE_AND_CREATE_TOPIC, timedCreate(ctx.brokerStats, 'topic', topics.updateAndCreateTopic)],
    [RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, timedCreate(ctx.brokerStats, 'topicList', topics.updateAndCreateTopicList)],
    [RequestCode.GET_ALL_TOPIC_CONFIG, topics.getAllTopicConfig],
    [RequestCode.DELETE_TOPIC_IN_BROKER, topics.deleteTopicInBroker],
    [RequestCode.QUERY_MESSAGE, query.queryMessage],
    [RequestCode.VIEW_MESSAGE_BY_ID, query.viewMessageById],
    [RequestCode.LOCK_BATCH_MQ, locks.lockBatchMQ],
    [RequestCode.UNLOCK_BATCH_MQ, locks.unlockBatchMQ],
    [RequestCode.GET_TOPIC_STATS_INFO, stats.getTopicStatsInfo],
    [RequestCode.GET_CONSUME_STATS, stats.getConsumeStats],
    [RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, reset.handler],
    [RequestCode.GET_TOPIC_CONFIG, topics.getTopicConfig],
    [RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER, topics.getSystemTopicList],
    [RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE, topics.cleanExpiredConsumeQueue],
    [RequestCode.CLEAN_UNUSED_TOPIC, topics.cleanUnusedTopic],
    [RequestCode.QUERY_CONSUME_QUEUE, queryConsumeQueueHandler(ctx)],
    [RequestCode.VIEW_BROKER_STATS_DATA, stats.viewBrokerStatsData],
    [RequestCode.GET_BROKER_CONSUME_STATS, stats.getBrokerConsumeStats],
    [RequestCode.GET_BROKER_RUNTIME_INFO, runtime.getRuntimeInfo],
    [RequestCode.GET_BROKER_HA_STATUS, runtime.getHaStatus],
    [RequestCode.GET_BROKER_CONFIG, brokerConfig.getBrokerConfig],
    [RequestCode.UPDATE_BROKER_CONFIG, brokerConfig.updateBrokerConfig],
    [RequestCode.UPDATE_COLD_DATA_FLOW_CTR_CONFIG, coldData.updateGroupConfig],
    [RequestCode.REMOVE_COLD_DATA_FLOW_CTR_CONFIG, coldData.removeGroupConfig],
    [RequestCode.GET_COLD_DATA_FLOW_CTR_INFO, coldData.getInfo],
    [RequestCode.SET_COMMITLOG_READ_MODE, commitLogReadAheadHandler(admin.properties)],
    [RequestCode.RESET_MASTER_FLUSH_OFFSET, resetMasterFlushOffsetHandler(() => ctx.config.brokerId, ctx.store as MasterFlushOffsetTarget)],
    // 200056 POP_ROLLBACK (`mqadmin exportPopRecord`): Apache moves pop checkpoints from its
    // RocksDB pop store (popConsumerKVServiceInit=true) back to the file store; with the default
    // false it answers SUCCESS doing nothing. tsmq keeps pop state only in files: nothing to move.
    [RequestCode.POP_ROLLBACK, ({ request }) => createResponseCommand(request, ResponseCode.SUCCESS, null)],
    [RequestCode.GET_CONSUMER_CONNECTION_LIST, connections.getConsumerConnectionList],
    [RequestCode.GET_PRODUCER_CONNECTION_LIST, connections.getProducerConnectionList],
    [RequestCode.GET_ALL_PRODUCER_INFO, connections.getAllProducerInfo],
    [RequestCode.GET_CONSUMER_RUNNING_INFO, connections.getConsumerRunningInfo],
    [RequestCode.CONSUME_MESSAGE_DIRECTLY, connections.consumeMessageDirectly],
    [RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, consumerAdmin.queryTopicConsumeByWho],
    [RequestCode.QUERY_TOPICS_BY_CONSUMER, consumerAdmin.queryTopicsByConsumer],
    [RequestCode.CLONE_GROUP_OFFSET, consumerAdmin.cloneGroupOffset],
    [RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, timedCreate(ctx.brokerStats, 'group', groups.updateAndCreate)],
    [RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST, timedCreate(ctx.brokerStats, 'group', groups.updateAndCreateList)],
    [RequestCode.DELETE_SUBSCRIPTIONGROUP, groups.delete],
    [RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, groups.get],
    // Admin: run a CommitLog cleaning pass now (RocketMQ executeDeleteFilesManually).
    [
      RequestCode.DELETE_EXPIRED_COMMITLOG,
      async ({ request }) => {
        await ctx.store.executeDeleteFilesManually?.();
        return createResponseCommand(request, ResponseCode.SUCCESS, null);
      },
    ],
  ]);
  if (transactions) table.set(RequestCode.END_TRANSACTION, new EndTransactionProcessor(transactions, ctx.logger).handler);
  return table;
}
