/**
 * One topic's broker-side configuration (mirrors RocketMQ `TopicConfig`), as stored in
 * `config/topics.json` and sent to nameservers in REGISTER_BROKER.
 */
import { asNumber, asObject } from '../config-file/config-manager.js';

export type TopicFilterType = 'SINGLE_TAG' | 'MULTI_TAG';

export interface TopicConfig {
  topicName: string;
  readQueueNums: number;
  writeQueueNums: number;
  /** PermName bits: 4 read, 2 write, 1 inherit. */
  perm: number;
  topicFilterType: TopicFilterType;
  topicSysFlag: number;
  order: boolean;
  attributes: Record<string, string>;
}

/** Apache's `TopicConfig(name)` defaults: 16 read / 16 write queues, perm 6. */
export const DEFAULT_READ_QUEUE_NUMS = 16;
export const DEFAULT_WRITE_QUEUE_NUMS = 16;

export function newTopicConfig(topicName: string, fields: Partial<Omit<TopicConfig, 'topicName'>> = {}): TopicConfig {
  return {
    topicName,
    readQueueNums: fields.readQueueNums ?? DEFAULT_READ_QUEUE_NUMS,
    writeQueueNums: fields.writeQueueNums ?? DEFAULT_WRITE_QUEUE_NUMS,
    perm: fields.perm ?? 6,
    topicFilterType: fields.topicFilterType ?? 'SINGLE_TAG',
    topicSysFlag: fields.topicSysFlag ?? 0,
    order: fields.order ?? false,
    attributes: fields.attributes ?? {},
  };
}

/** Decodes one `topicConfigTable` entry. @throws Error naming the bad field. */
export function decodeTopicConfig(name: string, value: unknown): TopicConfig {
  const o = asObject(value, `topic ${name}`);
  const filter = o.topicFilterType === 'MULTI_TAG' ? 'MULTI_TAG' : 'SINGLE_TAG';
  const attributes: Record<string, string> = {};
  if (o.attributes && typeof o.attributes === 'object') {
    for (const [k, v] of Object.entries(o.attributes as Record<string, unknown>)) attributes[k] = String(v);
  }
  return {
    topicName: typeof o.topicName === 'string' ? o.topicName : name,
    readQueueNums: asNumber(o.readQueueNums ?? DEFAULT_READ_QUEUE_NUMS, `topic ${name} readQueueNums`),
    writeQueueNums: asNumber(o.writeQueueNums ?? DEFAULT_WRITE_QUEUE_NUMS, `topic ${name} writeQueueNums`),
    perm: asNumber(o.perm ?? 6, `topic ${name} perm`),
    topicFilterType: filter,
    topicSysFlag: asNumber(o.topicSysFlag ?? 0, `topic ${name} topicSysFlag`),
    order: o.order === true || o.order === 'true',
    attributes,
  };
}
