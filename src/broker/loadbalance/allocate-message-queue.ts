/**
 * Queue allocation strategies a broker runs for QUERY_ASSIGNMENT (the same arithmetic as Apache's
 * client-side `AllocateMessageQueueAveragely` "AVG" and `AllocateMessageQueueAveragelyByCircle`
 * "AVG_BY_CIRCLE"), over queues sorted by topic, broker, queue id and client ids sorted as strings.
 */
import type { MessageQueueRef } from '../processors/message-queue-json.js';

export type AllocateStrategy = (currentCid: string, mqAll: MessageQueueRef[], cidAll: string[]) => MessageQueueRef[];

/** Contiguous blocks; the first `mqAll.length % cidAll.length` clients get one more. */
export const allocateAveragely: AllocateStrategy = (currentCid, mqAll, cidAll) => {
  const index = cidAll.indexOf(currentCid);
  if (index < 0 || mqAll.length === 0) return [];
  const mod = mqAll.length % cidAll.length;
  const averageSize = mqAll.length <= cidAll.length ? 1 : mod > 0 && index < mod ? Math.floor(mqAll.length / cidAll.length) + 1 : Math.floor(mqAll.length / cidAll.length);
  const startIndex = mod > 0 && index < mod ? index * averageSize : index * averageSize + mod;
  const range = Math.min(averageSize, mqAll.length - startIndex);
  const out: MessageQueueRef[] = [];
  for (let i = 0; i < range; i++) out.push(mqAll[(startIndex + i) % mqAll.length]!);
  return out;
};

/** Every `cidAll.length`-th queue starting at the client's index. */
export const allocateAveragelyByCircle: AllocateStrategy = (currentCid, mqAll, cidAll) => {
  const index = cidAll.indexOf(currentCid);
  if (index < 0) return [];
  const out: MessageQueueRef[] = [];
  for (let i = index; i < mqAll.length; i += cidAll.length) out.push(mqAll[i]!);
  return out;
};

/** Strategy by the name clients send (`AllocateMessageQueueStrategy.getName()`). */
export const ALLOCATE_STRATEGIES: ReadonlyMap<string, AllocateStrategy> = new Map([
  ['AVG', allocateAveragely],
  ['AVG_BY_CIRCLE', allocateAveragelyByCircle],
]);
