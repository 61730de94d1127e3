/**
 * Cap on the queue count of one topic (`maxTopicQueueNums`, default 4096), checked where a
 * client or admin tool sets queue numbers (UPDATE_AND_CREATE_TOPIC).
 *
 * Apache RocketMQ has no cap: UpdateTopic accepts any int, and a topic of 1,000,000 queues then
 * makes every per-queue walk (topic stats, route, rebalance, offsets) that long; on tsmq topic
 * stats took ~80 s for 10^6 queues and 2.6 s (an 11 MB answer) for 10^5, i.e. ~26 us per queue.
 * 4096 keeps such walks near 0.1 s while staying far above what Apache deployments use (the
 * default is 8 for TBW102 and 16 for `mqadmin updateTopic`; queues are usually sized to consumer
 * counts, tens to hundreds).
 */

/** tsmq default of `maxTopicQueueNums`. */
export const DEFAULT_MAX_TOPIC_QUEUE_NUMS = 4096;

/** Null when both counts are within 0..max; else the remark for the refusal. */
export function checkTopicQueueNums(topic: string, readQueueNums: number, writeQueueNums: number, max: number): string | null {
  const largest = Math.max(readQueueNums, writeQueueNums);
  if (largest <= max) return null;
  return `topic ${topic}: ${largest} queues requested (readQueueNums=${readQueueNums}, writeQueueNums=${writeQueueNums}), the broker allows at most ${max} per topic (maxTopicQueueNums)`;
}

/**
 * Null when a subscription group's retryQueueNums is an integer within 0..max; else the remark.
 * The group's retry topic `%RETRY%<group>` is created with that many queues at the first
 * heartbeat or send-back, so it is held to the topic cap too (Apache checks neither).
 */
export function checkRetryQueueNums(group: string, retryQueueNums: number, max: number): string | null {
  if (Number.isInteger(retryQueueNums) && retryQueueNums >= 0 && retryQueueNums <= max) return null;
  return `group ${group}: retryQueueNums ${retryQueueNums} is not within 0..${max}; its retry topic %RETRY%${group} gets that many queues and the broker allows at most ${max} per topic (maxTopicQueueNums)`;
}
