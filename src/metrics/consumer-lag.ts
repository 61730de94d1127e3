/**
 * Consumer lag per (topic, group), as Apache 5.3.3's ConsumerLagCalculator computes it, for the
 * lag gauges (broker-metrics.ts) and the web console. Per queue the group holds a committed
 * offset for:
 *   lag      = messages in [committed, max)       lag latency: ms since the first of them was stored
 *   inflight = messages in [committed, pull end)
 *   ready    = messages in [pull end, max)        queueing latency: ms since the first of them was stored
 * summed over the queues (latencies: the oldest). "Messages in [from, to)" is `to − from`, or, with
 * the broker key estimateAccumulation (default true, as Apache) for a group online with a tag
 * subscription other than "*", the entries whose ConsumeQueue tags code the subscription passes
 * (Apache calculateMessageCount / ConsumeQueue.estimateMessageCount: at most 20,000 entries are
 * scanned, and once more than 5,000 matched, or the 20,000 were scanned, the count is extrapolated
 * over the range, match × (to − from) / scanned). SQL92 subscriptions count every message (Apache's
 * ConsumeQueue stage passes them all without its bit map).
 * System groups CID_RMQ_SYS_* and topics without a config are skipped; `%RETRY%` topics are
 * included (the metrics leave them out or label them, metrics/broker-metrics.ts lagLabels).
 */
import type { BrokerController } from '../broker/broker-controller.js';
import type { MessageFilter, MessageStore } from '../store/message-store.js';
import { createTagMessageFilter, isSubscribeAll } from '../broker/filter/subscription-data.js';
import { isTagType } from '../broker/filter/expression-filter.js';

/** Apache MessageStoreConfig.maxConsumeQueueScan default: entries scanned at most per count. */
export const MAX_CONSUME_QUEUE_SCAN = 20_000;
/** Apache MessageStoreConfig.sampleCountThreshold default: matches after which the count is extrapolated. */
export const SAMPLE_COUNT_THRESHOLD = 5_000;

/** Offsets of one (topic, group) summed over its queues. */
export interface GroupTopicLag {
  topic: string;
  group: string;
  lagMessages: number;
  inflightMessages: number;
  readyMessages: number;
  /** ms since the oldest unconsumed message was stored (0 when nothing is behind). */
  lagLatencyMs: number;
  /** ms since the oldest message not yet pulled was stored (0 when every message was pulled). */
  queueingLatencyMs: number;
}

/**
 * Lag of every (topic, group) the broker holds committed offsets for; see the file comment.
 * `estimate` false counts `to − from` always (the web console, whose per-queue table shows plain
 * offset differences as Apache's consumeStats do); default: the broker's estimateAccumulation.
 */
export async function consumerLags(broker: BrokerController, nowMs: number, estimate = broker.ctx.config.estimateAccumulation): Promise<GroupTopicLag[]> {
  const ctx = broker.ctx;
  const out: GroupTopicLag[] = [];
  for (const key of ctx.consumerOffsetManager.keys()) {
    const at = key.indexOf('@');
    const topic = key.slice(0, at);
    const group = key.slice(at + 1);
    if (group.startsWith('CID_RMQ_SYS_')) continue;
    const tc = ctx.topicConfigManager.selectTopicConfig(topic);
    if (!tc) continue;
    const filter = estimate ? tagFilterOf(ctx.consumerManager.findSubscriptionData(group, topic)) : null;
    const count = (queueId: number, from: number, to: number): number =>
      filter && to > from ? estimateMessageCount(ctx.store, topic, queueId, from, to, filter) : Math.max(0, to - from);
    let lag = 0;
    let inflight = 0;
    let ready = 0;
    let oldest = Number.POSITIVE_INFINITY;
    let oldestUnpulled = Number.POSITIVE_INFINITY;
    for (const [queueId, committed] of ctx.consumerOffsetManager.queryOffsets(group, topic)) {
      const max = Math.max(0, ctx.store.getMaxOffsetInQueue(topic, queueId));
      const consumer = Math.max(0, Math.min(committed, max));
      const pulled = Math.min(max, Math.max(consumer, ctx.consumerOffsetManager.queryPullOffset(group, topic, queueId)));
      lag += count(queueId, consumer, max);
      inflight += count(queueId, consumer, pulled);
      ready += count(queueId, pulled, max);
      let consumerTs = -1;
      if (max > consumer) {
        consumerTs = await ctx.store.getMessageStoreTimeStamp(topic, queueId, consumer);
        if (consumerTs > 0) oldest = Math.min(oldest, consumerTs);
      }
      if (max > pulled) {
        const ts = pulled === consumer ? consumerTs : await ctx.store.getMessageStoreTimeStamp(topic, queueId, pulled);
        if (ts > 0) oldestUnpulled = Math.min(oldestUnpulled, ts);
      }
    }
    const since = (ts: number): number => (Number.isFinite(ts) ? Math.max(0, nowMs - ts) : 0);
    out.push({ topic, group, lagMessages: lag, inflightMessages: inflight, readyMessages: ready, lagLatencyMs: since(oldest), queueingLatencyMs: since(oldestUnpulled) });
  }
  return out;
}

/** The ConsumeQueue filter of an online group's subscription when Apache estimates with it (tag type, not "*"); else null. */
function tagFilterOf(sub: Parameters<typeof createTagMessageFilter>[0]): MessageFilter | null {
  if (!sub || !isTagType(sub.expressionType) || isSubscribeAll(sub)) return null;
  return createTagMessageFilter(sub);
}

/**
 * Entries of queue `queueId` of `topic` in [from, to) that `filter` passes on their tags code
 * (Apache DefaultMessageStore.estimateMessageCount): a range starting below the queue's min offset
 * is moved up to it, keeping its length (as Apache); a queue without a ConsumeQueue counts 0; a
 * store that cannot list entries, or a range with none left, counts to − from; more than
 * SAMPLE_COUNT_THRESHOLD matches or MAX_CONSUME_QUEUE_SCAN scanned entries end the scan and the
 * count is extrapolated, match × (to − from) / scanned, rounded down.
 */
export function estimateMessageCount(store: MessageStore, topic: string, queueId: number, from: number, to: number, filter: MessageFilter): number {
  let start = Math.max(0, from);
  let end = to;
  if (start >= end) return 0;
  const min = store.getMinOffsetInQueue(topic, queueId);
  if (start < min) {
    const length = end - start;
    start = min;
    end = start + length;
  }
  if (!store.getConsumeQueueEntries) return end - start;
  const entries = store.getConsumeQueueEntries(topic, queueId, start, Math.min(end - start, MAX_CONSUME_QUEUE_SCAN));
  if (entries === null) return 0;
  if (entries.length === 0) return end - start;
  let match = 0;
  let scanned = 0;
  let sampled = false;
  for (const e of entries) {
    if (e.queueOffset >= end) break;
    if (filter.isMatchedByConsumeQueue(e.tagsCode)) match++;
    scanned++;
    if (scanned >= MAX_CONSUME_QUEUE_SCAN || match > SAMPLE_COUNT_THRESHOLD) {
      sampled = true;
      break;
    }
  }
  return sampled ? Math.floor((match * (end - start)) / scanned) : match;
}
