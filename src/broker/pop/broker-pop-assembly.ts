/**
 * Assembles pop consumption (RocketMQ 5.x POP, docs/internals/pop.md) for BrokerController:
 *
 * 1. openPopState(): during create(), after the metadata files are loaded, opens the durable pop
 *    state in <storePathRootDir>/pop (checkpoints, acks, revive progress; replays its log).
 * 2. createPopService(): once the BrokerContext exists, the one PopService both fronts use
 *    (remoting POP_MESSAGE & co., gRPC ReceiveMessage & co.).
 *
 * 3. takeOverApachePops(): at broker start on a master, before pops are served, imports the pops
 *    an Apache 5.x broker left in flight on this store (apache-revive-import.ts);
 *    settleApachePops() at stop commits the revive offsets past what arrived meanwhile.
 *
 * Stop order (owned by BrokerController): parked pops are answered (waitQueue.notifyAll) before
 * the remoting server stops; the pop state is closed (flush + compaction) after the timer and
 * transaction services stop, before offsets and metadata are persisted.
 * @throws ConfigError for a bad pop key (resolvePopConfig).
 */
import * as path from 'node:path';
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import type { FileSystem } from '../../common/fs/file-system.js';
import type { BrokerContext } from '../broker-context.js';
import { commitApacheReviveOffsets, importApacheRevive, type ApacheReviveImportResult } from './apache-revive-import.js';
import { popBrokerOf } from './pop-broker.js';
import { apacheReviveTopic } from './apache-revive-records.js';
import { resolvePopConfig } from './pop-config.js';
import { PopService } from './pop-service.js';
import { PopStateStore } from './pop-state-store.js';

export interface PopStateLocation {
  /** Raw broker.conf keys (popFlushIntervalMs, popSyncFlush, popCompactLogBytes...). */
  rawConfig: Record<string, string>;
  storePathRootDir: string;
  fs: FileSystem;
  clock: Clock;
  logger: Logger;
}

/** Opens <storePathRootDir>/pop. */
export function openPopState(at: PopStateLocation): PopStateStore {
  const popConfig = resolvePopConfig(at.rawConfig);
  return PopStateStore.open({
    dir: path.join(at.storePathRootDir, 'pop'),
    fs: at.fs,
    clock: at.clock,
    logger: at.logger,
    flushIntervalMs: popConfig.popFlushIntervalMs,
    syncFlush: popConfig.popSyncFlush,
    compactLogBytes: popConfig.popCompactLogBytes,
  });
}

/**
 * The broker's PopService over the opened state; the pop state of a deleted topic, and of a group
 * whose offsets are deleted, is forgotten (PopService.forgetTopic / forgetGroup).
 */
export function createPopService(ctx: BrokerContext, state: PopStateStore, rawConfig: Record<string, string>): PopService {
  const service = new PopService({ broker: popBrokerOf(ctx), state, config: resolvePopConfig(rawConfig), clock: ctx.clock, logger: ctx.logger });
  ctx.topicConfigManager.onChange((topic) => {
    // '' = a touch of every topic, nothing deleted
    if (topic === '' || ctx.topicConfigManager.selectTopicConfig(topic)) return;
    service.forgetTopic(topic).then(
      (n) => n > 0 && ctx.logger.info(`pop state of deleted topic ${topic} forgotten (${n} queue states)`),
      (e: Error) => ctx.logger.error(`forgetting the pop state of deleted topic ${topic} failed: ${e.message}`),
    );
  });
  ctx.consumerOffsetManager.onGroupRemoved((group) => {
    service.forgetGroup(group).then(
      (n) => n > 0 && ctx.logger.info(`pop state of group ${group} forgotten with its offsets (${n} queue states)`),
      (e: Error) => ctx.logger.error(`forgetting the pop state of group ${group} failed: ${e.message}`),
    );
  });
  return service;
}

/** Imports Apache's in-flight pops (revive topic of `brokerClusterName`) into the opened pop state. */
export function takeOverApachePops(ctx: BrokerContext, state: PopStateStore, rawConfig: Record<string, string>): Promise<ApacheReviveImportResult> {
  const broker = popBrokerOf(ctx);
  return importApacheRevive({
    store: ctx.store,
    state,
    clusterName: ctx.config.brokerClusterName,
    reviveTopicKnown: ctx.topicConfigManager.selectTopicConfig(apacheReviveTopic(ctx.config.brokerClusterName)) !== undefined,
    reviveQueueNum: resolvePopConfig(rawConfig).reviveQueueNum,
    timerWindowMs: resolvePopConfig(rawConfig).popApacheImportWindowMs,
    committedOffset: broker.committedOffset,
    commitOffset: broker.commitOffset,
    clock: ctx.clock,
    logger: ctx.logger,
  });
}

/** At broker stop (master): the revive group's offsets to the revive queues' ends (see commitApacheReviveOffsets). */
export function settleApachePops(ctx: BrokerContext, rawConfig: Record<string, string>): number {
  const broker = popBrokerOf(ctx);
  return commitApacheReviveOffsets({
    store: ctx.store,
    clusterName: ctx.config.brokerClusterName,
    reviveQueueNum: resolvePopConfig(rawConfig).reviveQueueNum,
    committedOffset: broker.committedOffset,
    commitOffset: broker.commitOffset,
  });
}
