/**
 * Resolution of a request on a static topic's logic queue (mirrors Apache
 * `TopicQueueMappingManager.buildTopicQueueMappingContext`): which items serve the logic queue
 * here and whether this broker holds its current leader item.
 */
import type { ExtFieldValue } from '../../remoting/protocol/remoting-command.js';
import type { LogicQueueMappingItem } from './logic-queue-mapping-item.js';
import type { TopicQueueMappingDetail } from './topic-queue-mapping-detail.js';
import type { TopicQueueMappingManager } from './topic-queue-mapping-manager.js';

export interface StaticQueueContext {
  topic: string;
  globalId: number;
  detail: TopicQueueMappingDetail;
  /** Oldest generation first; empty when this broker never hosted the logic queue. */
  items: LogicQueueMappingItem[];
  /** The latest item, when it is on this broker. */
  leader: LogicQueueMappingItem | null;
}

/**
 * The logic-queue context of a request, or null when it is not for a static topic here:
 * the topic has no mapping, or `lo` is explicitly false (a request another broker already
 * rewrote and forwarded, Apache's convention). `selectOneWhenMiss` (sends): a negative queue id
 * takes the first hosted logic queue.
 */
export function resolveStaticQueue(
  mappings: TopicQueueMappingManager,
  topic: string,
  queueId: number,
  lo: ExtFieldValue | undefined,
  selectOneWhenMiss = false,
): StaticQueueContext | null {
  if (mappings.isEmpty || lo === false || lo === 'false') return null;
  const detail = mappings.get(topic);
  if (!detail) return null;
  let globalId = queueId;
  if (globalId < 0 && selectOneWhenMiss) {
    const first = detail.hostedQueues.keys().next();
    if (!first.done) globalId = first.value;
  }
  const items = globalId >= 0 ? detail.hostedQueues.get(globalId) ?? [] : [];
  const last = items.length > 0 ? items[items.length - 1]! : null;
  return { topic, globalId, detail, items, leader: last && last.bname === detail.bname ? last : null };
}

/** Apache's remark for a logic queue whose leader is not here. */
export function notLeaderRemark(c: StaticQueueContext): string {
  return `${c.topic}-${c.globalId} does not exit in request process of current broker ${c.detail.bname}`;
}
