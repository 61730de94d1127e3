/**
 * A replica (brokerRole SLAVE, classic or controller mode) learning the config of a topic it
 * holds replicated messages of, instead of answering TOPIC_NOT_EXIST (17) until the next
 * periodic slave sync (docs/ha.md "Topics on a slave").
 *
 * Apache 5.3.3 (facts): PullMessageProcessor answers TOPIC_NOT_EXIST for any topic missing from
 * the TopicConfigManager, also on a slave that holds the topic's ConsumeQueue; the slave gets the
 * master's topic table only from SlaveSynchronize.syncAll (every 10 s in 4.9, checked every 3 s
 * but run once a minute in 5.x), so for that long after a topic is auto-created on the master
 * a consumer reading from the slave (slaveReadEnable, or after the master died) fails. tsmq
 * closes that window the way the slave sync already works, on demand:
 *
 * - `onDispatched(topic)`: a replicated message of an unknown topic was dispatched to this
 *   replica's ConsumeQueue → the master's topic table is fetched now (GET_ALL_TOPIC_CONFIG,
 *   SlaveSynchronize.syncTopicConfig; one round serves every topic met meanwhile).
 * - `resolve(topic)` (pull of an unknown topic): same sync, awaited; when the master cannot be
 *   asked (unknown, dead, error) and this replica has ConsumeQueues of the topic, the config is
 *   created from them (queues = highest queue id + 1, perm read+write, like start-up's
 *   `recoverFromConsumeQueues`) so the replicated messages stay readable after a master death.
 *   When the master answered and does not have the topic, it stays unknown (TOPIC_NOT_EXIST).
 *
 * Only while this replica is a SLAVE; a master resolves nothing here. System topics (delay,
 * timer, transaction half...) do not trigger a sync when dispatched. Attempts per topic are
 * spaced by at least RETRY_INTERVAL_MS (an unknown topic of a dead or deleting master does not
 * send a GET_ALL_TOPIC_CONFIG per pull).
 */
import type { Logger } from '../../common/logging/logger.js';
import type { BrokerContext } from '../broker-context.js';
import type { TopicConfig } from '../topic/topic-config.js';
import { isSystemTopic } from '../../common/message/topic-validator.js';

/** Minimum time between two on-demand attempts for the same topic (ms). */
export const RETRY_INTERVAL_MS = 1000;
/** Bound of the per-topic attempt table (cleared when exceeded). */
const MAX_TRACKED_TOPICS = 10_000;

export interface ReplicaTopicLearnerOptions {
  ctx: BrokerContext;
  /** One topic-config round from the master: true = the master answered and its table is applied. */
  syncTopicConfig: () => Promise<boolean>;
  logger: Logger;
}

export class ReplicaTopicLearner {
  private readonly lastAttemptMs = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<TopicConfig | undefined>>();
  private learned = 0;

  constructor(private readonly o: ReplicaTopicLearnerOptions) {}

  /** A message of `topic` was dispatched here: on a SLAVE without that topic, learn it in the background. */
  onDispatched(topic: string): void {
    const ctx = this.o.ctx;
    if (ctx.config.brokerRole !== 'SLAVE' || ctx.topicConfigManager.selectTopicConfig(topic) || isSystemTopic(topic)) return;
    void this.resolve(topic);
  }

  /**
   * The config of `topic`: the local one, or on a SLAVE the one learned as described in the file
   * comment (undefined: still unknown). Never rejects.
   */
  resolve(topic: string): Promise<TopicConfig | undefined> {
    const { ctx } = this.o;
    const local = ctx.topicConfigManager.selectTopicConfig(topic);
    if (local || ctx.config.brokerRole !== 'SLAVE') return Promise.resolve(local);
    const running = this.inFlight.get(topic);
    if (running) return running;
    const now = ctx.clock.nowMs();
    const last = this.lastAttemptMs.get(topic);
    if (last !== undefined && now - last < RETRY_INTERVAL_MS) return Promise.resolve(undefined);
    if (this.lastAttemptMs.size >= MAX_TRACKED_TOPICS) this.lastAttemptMs.clear();
    this.lastAttemptMs.set(topic, now);
    const p = this.learn(topic).finally(() => this.inFlight.delete(topic));
    this.inFlight.set(topic, p);
    return p;
  }

  /** Topics created here from ConsumeQueues because the master could not be asked (stats, tests). */
  createdFromConsumeQueues(): number {
    return this.learned;
  }

  private async learn(topic: string): Promise<TopicConfig | undefined> {
    const { ctx, logger } = this.o;
    let masterAnswered = false;
    try {
      masterAnswered = await this.o.syncTopicConfig();
    } catch (e) {
      logger.warn(`topic ${topic}: on-demand topic sync failed: ${(e as Error).message}`);
    }
    const synced = ctx.topicConfigManager.selectTopicConfig(topic);
    if (synced || masterAnswered || ctx.config.brokerRole !== 'SLAVE') return synced;
    const queues = ctx.store.getTopicQueueTable().get(topic);
    if (!queues || queues.size === 0) return undefined;
    const tc = ctx.topicConfigManager.recreateFromConsumeQueues(topic, queues);
    if (tc) {
      this.learned++;
      logger.warn(`topic ${topic}: the master could not be asked; serving its replicated messages with a config from the ConsumeQueues (${tc.readQueueNums} queues)`);
    }
    return tc;
  }
}
