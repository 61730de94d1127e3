/**
 * What the transaction service needs from the broker (small interface so it can be tested with a
 * fake store); `transactionBrokerOf(ctx)` adapts the real BrokerContext.
 */
import type { MessageInner, SocketAddress } from '../../common/message/message.js';
import type { MessageStore, PutMessageResult } from '../../store/message-store.js';
import type { BrokerContext } from '../broker-context.js';

export interface TransactionBroker {
  readonly storeHost: SocketAddress;
  readonly store: Pick<MessageStore, 'getMessage' | 'getMaxOffsetInQueue' | 'getMinOffsetInQueue' | 'lookMessageByOffset'>;
  /**
   * The broker's put path (hooks, then the store) for a committed message: counted in the broker
   * statistics under its real topic but not in the metrics' messages/throughput in (Apache
   * EndTransactionProcessor.sendFinalMessage: incTopicPutNums only; the send was counted as its half).
   */
  putCommittedMessage(msg: MessageInner): Promise<PutMessageResult>;
  /**
   * Straight to the store, no put hooks, counted as Apache's SendMessageProcessor counts a
   * transactional send: broker statistics and rocketmq_messages_in_total / throughput_in under the
   * half topic (RMQ_SYS_TRANS_HALF_TOPIC, Apache reads the topic after the half rewrite) with
   * message_type Transaction.
   */
  putHalfMessage(msg: MessageInner): Promise<PutMessageResult>;
  /** Straight to the store, no put hooks, not counted: op and check-max-time records of system topics. */
  putSystemMessage(msg: MessageInner): Promise<PutMessageResult>;
  /** Creates a system topic with `queueNums` queues (perm read+write) when missing. */
  ensureTopic(topic: string, queueNums: number): void;
  /** Check progress on the half queue (Apache keeps it as group CID_RMQ_SYS_TRANS's offset). */
  loadProgress(topic: string): number;
  saveProgress(topic: string, offset: number): void;
  /** Counts a committed or rolled back message of `topic` (broker statistics); `bornTimestampMs`: the half message's born time. */
  recordEnd?(topic: string, resolution: 'COMMIT' | 'ROLLBACK', bornTimestampMs: number): void;
}

/** Apache's system group for transaction check progress. */
export const TRANS_CHECK_GROUP = 'CID_RMQ_SYS_TRANS';

export function transactionBrokerOf(ctx: BrokerContext): TransactionBroker {
  return {
    get storeHost() {
      return ctx.storeHost;
    },
    store: ctx.store,
    putCommittedMessage: (msg) => ctx.putMessage(msg, 'commit'),
    putHalfMessage: async (msg) => {
      const result = await ctx.store.putMessage(msg);
      const a = result.appendResult;
      if (a) {
        ctx.brokerStats.recordPut(msg.topic, 1, a.wroteBytes);
        ctx.brokerStats.listener?.onPut(msg.topic, 'transaction', 1, a.wroteBytes);
      } else ctx.brokerStats.recordPutFailed();
      return result;
    },
    putSystemMessage: (msg) => ctx.store.putMessage(msg),
    ensureTopic: (topic, queueNums) => void ctx.topicConfigManager.createTopicInSendMessageBackMethod(topic, queueNums, 6, 0),
    loadProgress: (topic) => ctx.consumerOffsetManager.queryOffset(TRANS_CHECK_GROUP, topic, 0),
    saveProgress: (topic, offset) => void ctx.consumerOffsetManager.commitOffset('transaction-check', TRANS_CHECK_GROUP, topic, 0, offset),
    recordEnd: (topic, resolution, bornTimestampMs) => ctx.brokerStats.recordTransactionEnd(topic, resolution, ctx.clock.nowMs() - bornTimestampMs),
  };
}
