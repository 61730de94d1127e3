/**
 * What pop consumption needs from the broker, as a small interface so the pop service can be
 * unit-tested with a fake store. `popBrokerOf(ctx)` adapts the real BrokerContext.
 */
import type { MessageInner } from '../../common/message/message.js';
import type { SocketAddress } from '../../common/message/message.js';
import { dlqTopicOf } from '../../common/message/topic-validator.js';
import type { MessageStore, PutMessageResult } from '../../store/message-store.js';
import { PermName } from '../broker-config.js';
import type { BrokerContext } from '../broker-context.js';

export interface PopBroker {
  readonly brokerName: string;
  readonly storeHost: SocketAddress;
  readonly store: Pick<MessageStore, 'getMessage' | 'getMaxOffsetInQueue' | 'getMinOffsetInQueue' | 'lookMessageByOffset'>;
  /** The broker's put path (hooks, then the store). */
  putMessage(msg: MessageInner): Promise<PutMessageResult>;
  /** Readable queue count of a topic, undefined when the topic does not exist. */
  readQueueNums(topic: string): number | undefined;
  /** Creates `%DLQ%<group>` (1 queue, read+write) when missing; returns its name. */
  ensureDlqTopic(group: string): string;
  /** Max deliveries before a message goes to the DLQ: group retryMaxTimes + 1 (Apache proxy). */
  maxDeliveryAttempts(group: string): number;
  /** Committed consumer offset of the group, -1 when none. */
  committedOffset(group: string, topic: string, queueId: number): number;
  /** Mirrors the pop ack offset into the consumer offset table (admin tools, remoting consumers). */
  commitOffset(group: string, topic: string, queueId: number, offset: number): void;
  /**
   * Makes the committed consumer offsets durable now (consumerOffset.json) instead of at the next
   * periodic flush. Optional (fakes). @throws the write error.
   */
  persistOffsets?(): Promise<void>;
  /**
   * `msgNum` messages of `topic` (`sizeBytes` record bytes) were handed to a pop of `group`, from
   * one queue: the broker's statistics count them as Apache's PopMessageProcessor does
   * (GROUP_GET_NUMS/SIZE, BROKER_GET_NUMS, hence rocketmq_messages_out_total and
   * rocketmq_throughput_out_total). Optional (fakes).
   */
  recordPopped?(group: string, topic: string, msgNum: number, sizeBytes: number): void;
  /**
   * A message of `topic` went to `group`'s DLQ after its last delivery attempt: counted as Apache
   * counts the dead-lettering send-back its 5.x clients and proxy make for pop consumers
   * (DLQ_PUT_NUMS, rocketmq_send_to_dlq_messages_total). Optional (fakes).
   */
  recordDeadLettered?(group: string, topic: string): void;
}

/** DLQ topics have one queue (Apache `DLQ_NUMS_PER_GROUP`). */
const DLQ_QUEUE_NUMS = 1;

export function popBrokerOf(ctx: BrokerContext): PopBroker {
  return {
    brokerName: ctx.config.brokerName,
    get storeHost() {
      return ctx.storeHost;
    },
    store: ctx.store,
    putMessage: (msg) => ctx.putMessage(msg),
    readQueueNums: (topic) => {
      const tc = ctx.topicConfigManager.selectTopicConfig(topic);
      return tc && PermName.isReadable(tc.perm) ? tc.readQueueNums : tc ? 0 : undefined;
    },
    ensureDlqTopic: (group) => {
      const topic = dlqTopicOf(group);
      ctx.topicConfigManager.createTopicInSendMessageBackMethod(topic, DLQ_QUEUE_NUMS, PermName.PERM_READ | PermName.PERM_WRITE, 0);
      return topic;
    },
    maxDeliveryAttempts: (group) => {
      const sgc = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(group);
      return (sgc?.retryMaxTimes ?? ctx.config.retryMaxTimes) + 1;
    },
    committedOffset: (group, topic, queueId) => ctx.consumerOffsetManager.queryOffset(group, topic, queueId),
    commitOffset: (group, topic, queueId, offset) => void ctx.consumerOffsetManager.commitOffset('pop', group, topic, queueId, offset),
    persistOffsets: () => ctx.consumerOffsetManager.persist(),
    recordPopped: (group, topic, msgNum, sizeBytes) => ctx.brokerStats.recordGet(group, topic, msgNum, sizeBytes),
    recordDeadLettered: (group, topic) => ctx.brokerStats.recordDlq(group, topic),
  };
}
