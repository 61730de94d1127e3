/**
 * A static topic's logic queues as one broker hosts them (Apache RIP-21
 * `TopicQueueMappingDetail`): for each logic ("global") queue id this broker has ever served,
 * its items, oldest generation first; the last item is the current leader.
 *
 * JSON (fastjson getter order; 513 body, 351 `mappingDetail`, topicQueueMapping.json):
 *   {"bname":"broker-a","currIdMap":{},"dirty":false,"epoch":1733090000000,
 *    "hostedQueues":{"0":[LogicQueueMappingItem...]},"scope":"__global__","topic":"T",
 *    "totalQueues":8}
 * The route form (`TopicQueueMappingInfo`, registered with the nameserver and served in
 * topicQueueMappingByBroker) drops hostedQueues and fills currIdMap {logicId: physicalId} with
 * the queues whose leader is on this broker (Apache TopicQueueMappingDetail.cloneAsMappingInfo).
 */
import { asNumber, asObject } from '../config-file/config-manager.js';
import { checkItemOffsets, decodeMappingItem, encodeMappingItem, type LogicQueueMappingItem } from './logic-queue-mapping-item.js';

/** Apache MixAll.METADATA_SCOPE_GLOBAL. */
export const METADATA_SCOPE_GLOBAL = '__global__';
/** Apache MixAll.LOGICAL_QUEUE_MOCK_BROKER_PREFIX: clients name a static topic's queues `__syslo__<scope without leading __>`. */
export const LOGICAL_QUEUE_MOCK_BROKER_PREFIX = '__syslo__';

/** The fields the broker's detail and the route form share (Apache TopicQueueMappingInfo without currIdMap). */
export interface TopicQueueMappingHeader {
  topic: string;
  scope: string;
  totalQueues: number;
  bname: string;
  /** Fences stale data: a change with a smaller epoch is refused. */
  epoch: number;
  dirty: boolean;
}

/** The broker's mapping of one topic (Apache TopicQueueMappingDetail). */
export interface TopicQueueMappingDetail extends TopicQueueMappingHeader {
  /** logic queue id → items, oldest generation first. */
  hostedQueues: Map<number, LogicQueueMappingItem[]>;
}

/** The route form (Apache TopicQueueMappingInfo). */
export interface TopicQueueMappingInfo extends TopicQueueMappingHeader {
  /** logic queue id → physical queue id on `bname`. */
  currIdMap: Map<number, number>;
}

/** Decodes a detail (513 body, 351 mappingDetail, topicQueueMapping.json entry). @throws Error naming the bad field. */
export function decodeMappingDetail(value: unknown, what = 'mapping detail'): TopicQueueMappingDetail {
  const o = asObject(value, what);
  if (typeof o.topic !== 'string' || o.topic === '') throw new Error(`${what}.topic is missing`);
  if (typeof o.bname !== 'string' || o.bname === '') throw new Error(`${what}.bname is missing`);
  const hostedQueues = new Map<number, LogicQueueMappingItem[]>();
  const hq = asObject(o.hostedQueues ?? {}, `${what}.hostedQueues`);
  for (const [k, v] of Object.entries(hq)) {
    const id = Number(k);
    if (!Number.isInteger(id) || id < 0) throw new Error(`${what}.hostedQueues key ${JSON.stringify(k)} is not a queue id`);
    if (!Array.isArray(v)) throw new Error(`${what}.hostedQueues[${k}] is not a list`);
    hostedQueues.set(id, v.map((it, n) => decodeMappingItem(it, `${what}.hostedQueues[${k}][${n}]`)));
  }
  return {
    topic: o.topic,
    scope: typeof o.scope === 'string' ? o.scope : METADATA_SCOPE_GLOBAL,
    totalQueues: asNumber(o.totalQueues ?? 0, `${what}.totalQueues`),
    bname: o.bname,
    epoch: asNumber(o.epoch ?? 0, `${what}.epoch`),
    dirty: o.dirty === true,
    hostedQueues,
  };
}

/** The detail as Apache serializes it (currIdMap is empty in Apache's stored details too). */
export function encodeMappingDetail(d: TopicQueueMappingDetail): Record<string, unknown> {
  const hostedQueues: Record<string, unknown> = {};
  for (const id of [...d.hostedQueues.keys()].sort((a, b) => a - b)) hostedQueues[String(id)] = d.hostedQueues.get(id)!.map(encodeMappingItem);
  return { bname: d.bname, currIdMap: {}, dirty: d.dirty, epoch: d.epoch, hostedQueues, scope: d.scope, topic: d.topic, totalQueues: d.totalQueues };
}

/** The current leader item of logic queue `globalId`, or null when this broker never hosted it. */
export function leaderItem(d: TopicQueueMappingDetail, globalId: number): LogicQueueMappingItem | null {
  const items = d.hostedQueues.get(globalId);
  return items && items.length > 0 ? items[items.length - 1]! : null;
}

/** The route form: currIdMap lists the logic queues whose leader item is on this broker. */
export function toMappingInfo(d: TopicQueueMappingDetail): TopicQueueMappingInfo {
  const currIdMap = new Map<number, number>();
  for (const [id, items] of d.hostedQueues) {
    const leader = items[items.length - 1];
    if (leader && leader.bname === d.bname) currIdMap.set(id, leader.queueId);
  }
  return { topic: d.topic, scope: d.scope, totalQueues: d.totalQueues, bname: d.bname, epoch: d.epoch, dirty: d.dirty, currIdMap };
}

/** TopicQueueMappingInfo JSON (fastjson order), as registered with the nameserver. */
export function encodeMappingInfo(i: TopicQueueMappingInfo): Record<string, unknown> {
  const currIdMap: Record<string, number> = {};
  for (const id of [...i.currIdMap.keys()].sort((a, b) => a - b)) currIdMap[String(id)] = i.currIdMap.get(id)!;
  return { bname: i.bname, currIdMap, dirty: i.dirty, epoch: i.epoch, scope: i.scope, topic: i.topic, totalQueues: i.totalQueues };
}

/**
 * Merges `next` into what this broker holds (`old`, may be null), with Apache's
 * TopicQueueMappingManager.updateTopicQueueMapping rules; returns the detail to keep:
 * - every item list must pass checkItemOffsets;
 * - force: old logic queues missing from `next` are kept, nothing else is checked;
 * - else a smaller epoch or another scope is refused; logic queues missing from `next` are kept
 *   when the epoch grew and refused when it is equal; with an equal epoch a queue's leader may
 *   not change.
 * @throws Error with Apache's message.
 */
export function mergeMappingDetail(old: TopicQueueMappingDetail | null, next: TopicQueueMappingDetail, force: boolean): TopicQueueMappingDetail {
  for (const items of next.hostedQueues.values()) checkItemOffsets(items);
  if (!old) return next;
  const merged: TopicQueueMappingDetail = { ...next, hostedQueues: new Map(next.hostedQueues) };
  if (force) {
    for (const [id, items] of old.hostedQueues) if (!merged.hostedQueues.has(id)) merged.hostedQueues.set(id, items);
    return merged;
  }
  if (next.epoch < old.epoch) throw new Error(`Can't accept data with small epoch ${next.epoch} < ${old.epoch}`);
  if (next.scope !== old.scope) throw new Error(`Can't accept data with unmatched scope ${next.scope} != ${old.scope}`);
  const epochEqual = next.epoch === old.epoch;
  for (const [id, oldItems] of old.hostedQueues) {
    const newItems = merged.hostedQueues.get(id);
    if (!newItems) {
      if (epochEqual) throw new Error('Cannot accept equal epoch with null data');
      merged.hostedQueues.set(id, oldItems);
      continue;
    }
    if (oldItems.length > 0 && newItems.length === 0) throw new Error('The new item list is null or empty');
    if (epochEqual && oldItems.length > 0) {
      const a = oldItems[oldItems.length - 1]!;
      const b = newItems[newItems.length - 1]!;
      if (a.gen !== b.gen || a.bname !== b.bname || a.queueId !== b.queueId || a.startOffset !== b.startOffset) throw new Error('The new leader is different but epoch equal');
    }
  }
  return merged;
}
