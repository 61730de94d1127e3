/**
 * Loads the broker's metadata files from <storePathRootDir>/config for BrokerController.create(),
 * after the message store is open (RocketMQ `BrokerController.initialize` → `*.load()`), in order:
 *
 * 1. topics.json: topics missing from it but present in the consume queues are recovered and
 *    written back;
 * 2. consumerOffset.json: offsets above a queue's max offset are clamped and written back (case B35);
 * 3. subscriptionGroup.json;
 * 4. delayOffset.json: the schedule service's progress, corrected into the schedule queues (case B37);
 * 5. topicQueueMapping.json: the static topics hosted here (static-topic/).
 *
 * Nothing here starts. The managers are persisted by BrokerController.shutdown() (offsets, topics,
 * groups; the schedule service persists its progress when stopped) and periodically
 * (broker-periodic-tasks.ts).
 * @throws ConfigFileCorruptError for an unreadable file; write errors of the write-backs.
 */
import * as path from 'node:path';
import type { Clock } from '../common/time/clock.js';
import type { Logger } from '../common/logging/logger.js';
import type { FileSystem } from '../common/fs/file-system.js';
import type { MessageStore } from '../store/message-store.js';
import type { BrokerConfig } from './broker-config.js';
import { ConsumerOffsetManager } from './offset/consumer-offset-manager.js';
import type { DelayLevelTable } from './schedule/delay-level-table.js';
import { ScheduleMessageService, type ScheduleDelivery } from './schedule/schedule-message-service.js';
import { SubscriptionGroupManager } from './subscription/subscription-group-manager.js';
import { TopicConfigManager } from './topic/topic-config-manager.js';
import { TopicQueueMappingManager } from './static-topic/topic-queue-mapping-manager.js';

export interface BrokerMetadataDeps {
  config: BrokerConfig;
  store: MessageStore;
  delayLevels: DelayLevelTable;
  clock: Clock;
  logger: Logger;
  /** File system for the metadata files (tests). */
  fs?: FileSystem;
  /** Each delivery of the schedule service answered PUT_OK (ScheduleMessageServiceOptions.onPutOk). */
  onScheduleDelivered?: (delivery: ScheduleDelivery) => void;
}

export interface BrokerMetadata {
  topics: TopicConfigManager;
  offsets: ConsumerOffsetManager;
  groups: SubscriptionGroupManager;
  schedule: ScheduleMessageService;
  mappings: TopicQueueMappingManager;
}

/** Loads topics, consumer offsets, subscription groups and delay progress (see the file comment). */
export async function loadBrokerMetadata(deps: BrokerMetadataDeps): Promise<BrokerMetadata> {
  const { config, store, clock, logger, delayLevels } = deps;
  const configDir = path.join(config.storePathRootDir, 'config');
  const fileOpts = { logger, ...(deps.fs ? { fs: deps.fs } : {}) };
  const topics = new TopicConfigManager(path.join(configDir, 'topics.json'), {
    ...fileOpts,
    clock,
    brokerName: config.brokerName,
    brokerClusterName: config.brokerClusterName,
    autoCreateTopicEnable: config.autoCreateTopicEnable,
    autoCreateTopicEnableNow: () => config.autoCreateTopicEnable,
    clusterTopicEnable: config.clusterTopicEnable,
    brokerTopicEnable: config.brokerTopicEnable,
    traceTopicEnable: config.traceTopicEnable,
    delayLevelCount: delayLevels.maxLevel,
    maxTopicQueueNumsNow: () => config.maxTopicQueueNums,
  });
  topics.load();
  if (topics.recoverFromConsumeQueues(store.getTopicQueueTable()).length > 0) await topics.whenPersisted();
  const offsets = new ConsumerOffsetManager(path.join(configDir, 'consumerOffset.json'), { ...fileOpts, clock });
  offsets.load();
  const clamped = offsets.clampAllToStore((t, q) => store.getMaxOffsetInQueue(t, q));
  if (clamped > 0) {
    logger.warn(`${clamped} consumer offsets were above their queue max and were lowered`);
    await offsets.persist();
  }
  const groups = new SubscriptionGroupManager(path.join(configDir, 'subscriptionGroup.json'), {
    ...fileOpts,
    clock,
    autoCreateSubscriptionGroup: config.autoCreateSubscriptionGroup,
    retryMaxTimes: config.retryMaxTimes,
  });
  groups.load();
  const schedule = new ScheduleMessageService(path.join(configDir, 'delayOffset.json'), {
    ...fileOpts,
    store,
    delayLevels,
    clock,
    flushDelayOffsetIntervalMs: config.flushDelayOffsetInterval,
    ...(deps.onScheduleDelivered ? { onPutOk: deps.onScheduleDelivered } : {}),
  });
  schedule.load();
  const mappings = new TopicQueueMappingManager(path.join(configDir, 'topicQueueMapping.json'), { ...fileOpts, clock, brokerName: config.brokerName });
  mappings.load();
  return { topics, offsets, groups, schedule, mappings };
}
