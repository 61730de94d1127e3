/**
 * Assembles the broker's timer messages (src/broker/timer, RocketMQ 5.x `TimerMessageStore`)
 * for BrokerController, in three steps that follow the broker's create() order:
 *
 * 1. openTimerStore(): after the message store is open, opens the durable timer store
 *    (<storePathRootDir>/timerwheel, timerlog/, config/timercheck; recovery), or null when
 *    timerWheelEnable=false.
 * 2. timerPutHookOf(): the send path's hook (BrokerContext.timerPutHook); it reads the wheel's
 *    slot counts for timerCongestNumEachSlot (0 without a timer store).
 * 3. createTimerService(): once the topics are loaded, creates the system topic
 *    rmq_sys_wheel_timer (1 queue, read-write), the delivery service, and holds back CommitLog
 *    files that still carry pending timers (store retention hold).
 *
 * Start/stop (owned by BrokerController and the replication role): the service starts on a
 * master after the schedule service; shutdown stops the service (finishes the slot being
 * delivered, checkpoints), clears the retention hold, then closes the timer store.
 */
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import type { FileSystem } from '../../common/fs/file-system.js';
import type { MessageStore } from '../../store/message-store.js';
import { TimerStore } from '../../store/timer/timer-store.js';
import { PermName } from '../broker-config.js';
import type { TopicConfigManager } from '../topic/topic-config-manager.js';
import type { TimerConfig } from './timer-config.js';
import { TIMER_TOPIC, TimerPutHook } from './timer-put-hook.js';
import { TimerMessageService, legacyProgressPath } from './timer-message-service.js';
import { TimerMetrics, timerMetricsPath } from './timer-metrics.js';

export interface TimerStoreLocation {
  storePathRootDir: string;
  fs: FileSystem;
  /** Slots per half timer wheel (tests; default Apache's 7 days of slots). */
  slotsTotal?: number;
}

/** Opens (and recovers) the timer store; null when timerWheelEnable=false. @throws on unreadable timer files. */
export function openTimerStore(config: TimerConfig, at: TimerStoreLocation): TimerStore | null {
  if (!config.timerWheelEnable) return null;
  return TimerStore.open({
    storePathRootDir: at.storePathRootDir,
    fs: at.fs,
    precisionMs: config.timerPrecisionMs,
    timerLogFileSizeBytes: config.mappedFileSizeTimerLog,
    ...(at.slotsTotal !== undefined ? { slotsTotal: at.slotsTotal } : {}),
  });
}

/** The send path's timer hook; congestion is read from the wheel (0 without a timer store). */
export function timerPutHookOf(config: TimerConfig, clock: Clock, timerStore: TimerStore | null): TimerPutHook {
  const wheel = timerStore?.wheel ?? null;
  return new TimerPutHook({ config, clock, congestNumOf: (ms) => wheel?.getSlot(ms).num ?? 0 });
}

export interface TimerServiceDeps {
  timerStore: TimerStore | null;
  store: MessageStore;
  topics: TopicConfigManager;
  config: TimerConfig;
  clock: Clock;
  logger: Logger;
  fs: FileSystem;
  storePathRootDir: string;
  /** Counts a re-put the timer stored (PUT_OK) in the broker stats, as Apache's doPut does. */
  onPutOk?: (topic: string, wroteBytes: number, count?: number) => void;
}

/** The delivery service and Apache's TimerMetrics (config/timermetrics), both null without a timer store. */
export interface TimerServiceParts {
  service: TimerMessageService | null;
  metrics: TimerMetrics | null;
}

/**
 * Creates the timer topic, loads config/timermetrics (a corrupt file is logged and replaced by
 * empty metrics; a deleted topic's timer series are forgotten, TimerMetrics.forgetTopic) and creates
 * the delivery service (not started).
 */
export function createTimerService(deps: TimerServiceDeps): TimerServiceParts {
  const { timerStore, store } = deps;
  if (!timerStore) return { service: null, metrics: null };
  const metrics = new TimerMetrics(timerMetricsPath(deps.storePathRootDir), deps.clock, { logger: deps.logger, fs: deps.fs });
  metrics.loadOrEmpty((m) => deps.logger.error(m));
  // a deleted topic's timer series go with it ('' = a touch of every topic, nothing deleted)
  deps.topics.onChange((topic) => {
    if (topic !== '' && !deps.topics.selectTopicConfig(topic)) metrics.forgetTopic(topic);
  });
  deps.topics.createTopicInSendMessageBackMethod(TIMER_TOPIC, 1, PermName.PERM_READ | PermName.PERM_WRITE, 0);
  const service = new TimerMessageService({
    timerStore,
    store,
    config: deps.config,
    clock: deps.clock,
    logger: deps.logger.child({ component: 'timer' }),
    legacyProgress: { fs: deps.fs, path: legacyProgressPath(deps.storePathRootDir) },
    metrics,
    ...(deps.onPutOk ? { onPutOk: deps.onPutOk } : {}),
  });
  store.setRetentionHold?.(() => service.retentionHoldOffset()); // CommitLog files holding pending timers are kept
  return { service, metrics };
}
