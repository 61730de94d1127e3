/**
 * The services every request processor may use, built once by BrokerController (or by a test)
 * and passed to the processor factories. Holds no logic of its own except `putMessage`, the
 * single door through which the broker writes client messages (put hooks, then the store).
 */
import * as path from 'node:path';
import type { Clock } from '../common/time/clock.js';
import type { Logger } from '../common/logging/logger.js';
import type { MessageInner, SocketAddress } from '../common/message/message.js';
import type { EncodedBatch } from '../common/message/encoded-batch.js';
import { socketAddressOf } from '../common/message/msgid.js';
import type { MessageStore, PutMessageResult, PutMessagesResult } from '../store/message-store.js';
import type { BrokerConfig } from './broker-config.js';
import type { TopicConfigManager } from './topic/topic-config-manager.js';
import type { ConsumerOffsetManager } from './offset/consumer-offset-manager.js';
import type { SubscriptionGroupManager } from './subscription/subscription-group-manager.js';
import type { ConsumerManager } from './client/consumer-manager.js';
import type { ProducerManager } from './client/producer-manager.js';
import type { DelayLevelTable } from './schedule/delay-level-table.js';
import { applyScheduleRewrite } from './send/schedule-put-hook.js';
import type { TimerPutHook } from './timer/timer-put-hook.js';
import { FilterWarnings } from './filter/filter-warnings.js';
import { TopicQueueMappingManager } from './static-topic/topic-queue-mapping-manager.js';
import { BrokerStatsManager } from './stats/broker-stats-manager.js';
import { TopicValidator } from '../common/message/topic-validator.js';
import { isRetryOrDlqTopic, metricsMessageType } from './stats/metrics-labels.js';
import type { MetricsMessageType } from './stats/broker-stats-listener.js';

/** Who puts a message through BrokerContext.putMessage (what it counts in the stats). */
export type PutOrigin = 'send' | 'commit' | 'internal' | 'sendBack';

export interface BrokerContextInit {
  config: BrokerConfig;
  store: MessageStore;
  clock: Clock;
  logger: Logger;
  topicConfigManager: TopicConfigManager;
  consumerOffsetManager: ConsumerOffsetManager;
  subscriptionGroupManager: SubscriptionGroupManager;
  consumerManager: ConsumerManager;
  producerManager: ProducerManager;
  delayLevels: DelayLevelTable;
  /** Random source in [0, 1) for queue picks (tests pass a fixed one). */
  random?: () => number;
  /** Put/get counters; default a new BrokerStatsManager on `clock` (started by the controller). */
  brokerStats?: BrokerStatsManager;
  /** Timer-message rewrite (src/broker/timer); without it TIMER_* properties are stored as is. */
  timerPutHook?: TimerPutHook;
  /** Static topics (config/topicQueueMapping.json); default an empty one on that path, not loaded. */
  topicQueueMappingManager?: TopicQueueMappingManager;
}

export class BrokerContext {
  readonly config: BrokerConfig;
  readonly store: MessageStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly topicConfigManager: TopicConfigManager;
  readonly consumerOffsetManager: ConsumerOffsetManager;
  readonly subscriptionGroupManager: SubscriptionGroupManager;
  readonly consumerManager: ConsumerManager;
  readonly producerManager: ProducerManager;
  readonly delayLevels: DelayLevelTable;
  readonly random: () => number;
  /** Rate-limited warnings about filter expressions the broker cannot use. */
  readonly filterWarnings: FilterWarnings;
  /** Per-topic / per-group put and get rates (src/broker/stats). */
  readonly brokerStats: BrokerStatsManager;
  readonly timerPutHook: TimerPutHook | null;
  /** Static topics hosted here (src/broker/static-topic). */
  readonly topicQueueMappingManager: TopicQueueMappingManager;
  private listenPort: number;
  private cachedStoreHost: SocketAddress | null = null;

  constructor(init: BrokerContextInit) {
    this.config = init.config;
    this.store = init.store;
    this.clock = init.clock;
    this.logger = init.logger;
    this.topicConfigManager = init.topicConfigManager;
    this.consumerOffsetManager = init.consumerOffsetManager;
    this.subscriptionGroupManager = init.subscriptionGroupManager;
    this.consumerManager = init.consumerManager;
    this.producerManager = init.producerManager;
    this.delayLevels = init.delayLevels;
    this.random = init.random ?? Math.random;
    this.filterWarnings = new FilterWarnings(init.clock, init.logger);
    this.brokerStats = init.brokerStats ?? new BrokerStatsManager(init.clock, init.config.brokerClusterName, init.config.enableDetailStat);
    this.timerPutHook = init.timerPutHook ?? null;
    this.topicQueueMappingManager = init.topicQueueMappingManager
      ?? new TopicQueueMappingManager(path.join(init.config.storePathRootDir, 'config', 'topicQueueMapping.json'), { clock: init.clock, logger: init.logger, brokerName: init.config.brokerName });
    this.listenPort = init.config.listenPort;
  }

  /** Sets the port actually listened on (listenPort 0 picks one at start). */
  setListenPort(port: number): void {
    this.listenPort = port;
    this.cachedStoreHost = null;
  }

  /** `brokerIP1:port`, the address published to nameservers. */
  get brokerAddr(): string {
    return `${this.config.brokerIP1}:${this.listenPort}`;
  }

  /** Store host written into every record (brokerIP1 + listen port). */
  get storeHost(): SocketAddress {
    this.cachedStoreHost ??= socketAddressOf(this.config.brokerIP1, this.listenPort);
    return this.cachedStoreHost;
  }

  /** Random int in [0, n). */
  randomInt(n: number): number {
    return n <= 1 ? 0 : Math.min(n - 1, Math.floor(this.random() * n));
  }

  /**
   * Broker put path: timer rewrite then delay-level rewrite (5.x put hooks, HookUtils
   * .handleScheduleMessage; a refused timer message is answered with the WHEEL_TIMER_* status and
   * not stored), then the store. When the message's topic
   * was just created by a request (auto-creation, UPDATE_AND_CREATE_TOPIC) and its config is not
   * on disk yet, the answer also waits for that write (run beside the append, not after it), so
   * an acknowledged message never belongs to a topic a crash forgets. A failed config write is
   * logged and does not fail the put: recovery re-derives topics from the ConsumeQueue directory.
   * A stored message is counted in `brokerStats` (TOPIC_PUT_NUMS/SIZE) under the topic it was
   * stored under, as Apache's SendMessageProcessor reads the message's topic after the put hooks
   * rewrote it: a delay-level send under SCHEDULE_TOPIC_XXXX, a timer send under
   * rmq_sys_wheel_timer (the delivery later counts under the real topic); a refused one as a failed put.
   * `origin` 'send' (a producer's send: the remoting and gRPC send processors) also counts it in
   * the metrics' messages/throughput in, as Apache's SendMessageProcessor does: under the topic it
   * was stored under (after the timer / delay rewrite), with the message type of the properties the
   * client sent (metrics-labels.ts), never for a `%RETRY%` / `%DLQ%` topic. 'commit' (the final
   * message of END_TRANSACTION: Apache counts a transactional send once, as its half) and
   * 'internal' (pop dead-lettering, recall: Apache counts no messages in for them) do not.
   * 'sendBack' (CONSUMER_SEND_MSG_BACK) is counted by `recordSendBackPut` instead: topic stats only
   * when stored under SCHEDULE_TOPIC_XXXX, never BROKER_PUT_NUMS, no messages in.
   * A 'send' or 'sendBack' stored under SCHEDULE_TOPIC_XXXX also counts in QUEUE_PUT_NUMS/SIZE of
   * `SCHEDULE_TOPIC_XXXX@<delay level - 1>` (with enableDetailStat, as Apache 5.3.3).
   */
  putMessage(msg: MessageInner, origin: PutOrigin = 'internal'): Promise<PutMessageResult> {
    const topic = msg.topic; // as sent: its config must be durable before the answer
    const listener = origin === 'send' ? this.brokerStats.listener : null;
    const messageType = listener ? metricsMessageType(msg.properties) : 'normal';
    const configWrite = this.topicConfigManager.durable(topic);
    const refused = this.timerPutHook?.apply(msg);
    if (refused) return configWrite ? this.alsoAwait(Promise.resolve(refused), configWrite) : Promise.resolve(refused);
    applyScheduleRewrite(msg, this.delayLevels);
    const put = this.store.putMessage(msg).then((result) => {
      this.recordPutOutcome(msg, origin, messageType, result);
      return result;
    });
    return configWrite ? this.alsoAwait(put, configWrite) : put;
  }

  /**
   * `putMessage` told through callbacks instead of a promise (the remoting single send's path: no
   * promise per put when the store has MessageStore.putMessageWithCallback): the same hooks,
   * durability wait for a just-created topic's config, stats and result, given to `done(result)`
   * exactly once — synchronously when known at once (a refusal), else later. An internal error (a
   * bug; refusals are results) is thrown when it happens during the call, else given to
   * `fail(err)`, where `putMessage` would reject. `done` and `fail` must not throw.
   */
  putMessageWithCallback(msg: MessageInner, origin: PutOrigin, done: (result: PutMessageResult) => void, fail: (err: unknown) => void): void {
    const store = this.store;
    if (store.putMessageWithCallback === undefined || this.topicConfigManager.durable(msg.topic) !== null) {
      this.putMessage(msg, origin).then(done, fail);
      return;
    }
    const messageType = origin === 'send' && this.brokerStats.listener ? metricsMessageType(msg.properties) : 'normal';
    const refused = this.timerPutHook?.apply(msg);
    if (refused) {
      done(refused);
      return;
    }
    applyScheduleRewrite(msg, this.delayLevels);
    store.putMessageWithCallback(
      msg,
      (result, put) => {
        try {
          this.recordPutOutcome(put, origin, messageType, result);
        } catch (e) {
          fail(e);
          return;
        }
        done(result);
      },
      fail, // told (err, msg): the message is not needed here
    );
  }

  /**
   * The stats of a put (see `putMessage`): `msg` as stored (after the hooks), `messageType` of the
   * properties as sent.
   */
  private recordPutOutcome(msg: MessageInner, origin: PutOrigin, messageType: MetricsMessageType, result: PutMessageResult): void {
    const a = result.appendResult;
    if (!a) {
      this.brokerStats.recordPutFailed();
      return;
    }
    if (origin === 'sendBack') this.brokerStats.recordSendBackPut(msg.topic, a.wroteBytes); // after the hooks
    else this.brokerStats.recordPut(msg.topic, 1, a.wroteBytes); // after the hooks
    // per-queue stats: Apache 5.3.3 counts only sends / send-backs stored under SCHEDULE_TOPIC_XXXX
    if (msg.topic === TopicValidator.RMQ_SYS_SCHEDULE_TOPIC && (origin === 'send' || origin === 'sendBack')) this.brokerStats.recordQueuePut(msg.topic, msg.queueId, 1, a.wroteBytes);
    const listener = origin === 'send' ? this.brokerStats.listener : null;
    if (listener && !isRetryOrDlqTopic(msg.topic)) listener.onPut(msg.topic, messageType, 1, a.wroteBytes);
  }

  /** `put`'s result, answered once `configWrite` settled too (its failure is only logged). */
  private async alsoAwait<T>(put: Promise<T>, configWrite: Promise<void>): Promise<T> {
    await configWrite.catch((e: Error) => this.logger.error(`answering a put whose topic config is not durable: ${e.message}`));
    return put;
  }

  /**
   * Broker batch put: one atomic append (MessageStore.putMessages), answered after the topic's
   * config is durable as for `putMessage`. No delay-level rewrite: a batch may not carry DELAY
   * (the send processor refuses it first, as Apache's CommitLog does). A stored batch counts as
   * one put call of its message count in `brokerStats` under the topic stored (Apache
   * incTopicPutNums(topic, num, 1); rmq_sys_wheel_timer for a batch of timers),
   * and in the metrics as a send of its first message's type (callers are the send processors).
   */
  putMessages(msgs: readonly MessageInner[]): Promise<PutMessagesResult> {
    const topic = msgs.length > 0 ? msgs[0]!.topic : '';
    const configWrite = msgs.length > 0 ? this.topicConfigManager.durable(topic) : null;
    const messageProperties = msgs.length > 0 ? new Map(msgs[0]!.properties) : new Map<string, string>(); // as sent, before the hooks
    const refused = this.applyTimerHookToBatch(msgs);
    const put = refused
      ? Promise.resolve(refused)
      : this.store.putMessages(msgs).then((result) => {
          // appended (stored, whatever the wait's outcome) when the summary is there: it spans all
          // msgs (appendResults, made on demand, is not read here)
          const summary = result.appendResult;
          if (summary !== undefined && msgs.length > 0) {
            const sizeBytes = summary.wroteBytes;
            const stored = msgs[0]!.topic; // after the timer hook (Apache counts the stored topic)
            this.brokerStats.recordPut(stored, msgs.length, sizeBytes);
            if (!isRetryOrDlqTopic(stored)) this.brokerStats.listener?.onPut(stored, metricsMessageType(messageProperties), msgs.length, sizeBytes);
          } else this.brokerStats.recordPutFailed();
          return result;
        });
    return configWrite ? this.alsoAwait(put, configWrite) : put;
  }

  /** Whether the store takes batches on the byte path (`putEncodedBatch`). */
  get putsEncodedBatches(): boolean {
    return typeof this.store.putEncodedBatch === 'function';
  }

  /**
   * putMessages for a batch on the byte path (common/message/encoded-batch.ts), when
   * `putsEncodedBatches`. The scan sent every batch with a timer or delay property elsewhere, so
   * the timer hook has nothing to do and the metrics type is "normal"; otherwise as putMessages.
   */
  putEncodedBatch(batch: EncodedBatch): Promise<PutMessagesResult> {
    const topic = batch.topic;
    const configWrite = this.topicConfigManager.durable(topic);
    const put = this.store.putEncodedBatch!(batch).then((result) => {
      const summary = result.appendResult;
      if (summary !== undefined) {
        const sizeBytes = summary.wroteBytes;
        this.brokerStats.recordPut(topic, batch.count, sizeBytes);
        if (!isRetryOrDlqTopic(topic)) this.brokerStats.listener?.onPut(topic, 'normal', batch.count, sizeBytes);
      } else this.brokerStats.recordPutFailed();
      return result;
    });
    return configWrite ? this.alsoAwait(put, configWrite) : put;
  }

  /**
   * Timers in a batch: each item goes through the timer hook (so a batch of timer messages is
   * one atomic block in rmq_sys_wheel_timer, each item filed in the wheel at its own time). A
   * batch mixing timer and plain items would span two queues and could not be atomic: it is
   * refused whole (MESSAGE_ILLEGAL), as is a batch with one item the hook refuses.
   */
  private applyTimerHookToBatch(msgs: readonly MessageInner[]): PutMessagesResult | null {
    if (!this.timerPutHook || msgs.length === 0) return null;
    for (let i = 0; i < msgs.length; i++) {
      const refused = this.timerPutHook.apply(msgs[i]!);
      if (refused) return { ...refused, remark: `batch message ${i}: ${refused.remark ?? refused.status}` };
    }
    const first = msgs[0]!;
    if (msgs.some((m) => m.topic !== first.topic || m.queueId !== first.queueId)) {
      return { status: 'MESSAGE_ILLEGAL', remark: 'a batch may not mix timer messages (TIMER_DELIVER_MS, TIMER_DELAY_SEC, TIMER_DELAY_MS) with plain ones: it could not be stored as one block' };
    }
    return null;
  }
}
