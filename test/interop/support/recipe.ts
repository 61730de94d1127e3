/**
 * The deterministic message recipe shared with the Java peers
 * (test/interop/java/src/shared/java/tsmq/interop/common/Recipe.java): message i of a run has
 * exactly the same topic, queue, tags, keys, UNIQ_KEY, body, flag, hosts and timestamps on
 * both sides. docs/interop.md documents the rules.
 */
import type { MessageInner, SocketAddress } from '../../../src/common/message/message.js';

export const RECIPE_TOPICS = ['IopTopicA', 'IopTopicB', 'IopTopicC'] as const;
export const RECIPE_QUEUE_NUMS = [4, 2, 1] as const;
export const RECIPE_BODY_SIZES = [0, 1, 17, 250, 1023, 4000, 9000, 30000] as const;
/** 140 chars (> 127): Apache 5.x writes such records with the V2 magic and a 2-byte topic length. */
export const RECIPE_LONG_TOPIC = `%RETRY%IopLongGroup${'L'.repeat(121)}`;

/** `longTopics` (5.x runs only): every message i % 50 == 49 goes to RECIPE_LONG_TOPIC, queue 0. */
const isLong = (i: number, longTopics: boolean): boolean => longTopics && i % 50 === 49;

export function recipeTopic(i: number, longTopics = false): string {
  return isLong(i, longTopics) ? RECIPE_LONG_TOPIC : RECIPE_TOPICS[i % 3]!;
}

export function recipeQueueId(i: number, longTopics = false): number {
  return isLong(i, longTopics) ? 0 : Math.floor(i / 3) % RECIPE_QUEUE_NUMS[i % 3]!;
}

export function recipeTags(i: number): string | null {
  return i % 7 === 6 ? null : `Tag${'ABCD'[Math.floor(i / 2) % 4]}`;
}

export function recipeKeys(i: number): string {
  return `k${i}${i % 5 === 0 ? ` hot${i % 4}` : ''}`;
}

export function recipeUniqKey(i: number): string {
  return `0A0000010000ABCD${i.toString(16).toUpperCase().padStart(16, '0')}`;
}

export function recipeBody(i: number): Buffer {
  const b = Buffer.alloc(RECIPE_BODY_SIZES[i % 8]!);
  for (let j = 0; j < b.length; j++) b[j] = (i * 131 + j * 7 + (j >> 8)) & 0xff;
  return b;
}

export function recipeBornHost(i: number): SocketAddress {
  if (i % 10 === 9) {
    const ip = Buffer.alloc(16);
    ip[0] = 0xfd;
    ip[14] = (i >> 8) & 0xff;
    ip[15] = i & 0xff;
    return { ip, port: 50000 + (i % 1000) };
  }
  return { ip: Buffer.from([10, i % 7, i % 251, (i * 13) % 256]), port: 40000 + (i % 20000) };
}

export function recipeStoreHost(i: number): SocketAddress {
  if (i % 29 === 28) {
    const ip = Buffer.alloc(16);
    ip[15] = 1;
    return { ip, port: 10911 };
  }
  return { ip: Buffer.from([127, 0, 0, 1]), port: 10911 };
}

export function recipeProperties(i: number): Map<string, string> {
  const p = new Map<string, string>();
  const tags = recipeTags(i);
  if (tags !== null) p.set('TAGS', tags);
  p.set('KEYS', recipeKeys(i));
  p.set('UNIQ_KEY', recipeUniqKey(i));
  p.set('seq', String(i));
  p.set('pad', 'x'.repeat(1 + (i % 9)));
  return p;
}

/** Message i as the broker would hand it to the store. */
export function recipeMessage(i: number, longTopics = false): MessageInner {
  return {
    topic: recipeTopic(i, longTopics),
    queueId: recipeQueueId(i, longTopics),
    flag: i % 3,
    body: recipeBody(i),
    properties: recipeProperties(i),
    sysFlag: 0,
    bornTimestamp: 1_700_000_000_000 + i * 1000,
    bornHost: recipeBornHost(i),
    storeHost: recipeStoreHost(i),
    reconsumeTimes: i % 6 === 5 ? 3 : 0,
    preparedTransactionOffset: 0,
  };
}

/** "ip:port" as the Java peers print it: dotted IPv4, or "[8 hex groups, no compression]:port". */
export function hostString(a: SocketAddress): string {
  if (a.ip.length === 4) return `${a.ip[0]}.${a.ip[1]}.${a.ip[2]}.${a.ip[3]}:${a.port}`;
  const groups: string[] = [];
  for (let k = 0; k < 16; k += 2) groups.push(a.ip.readUInt16BE(k).toString(16));
  return `[${groups.join(':')}]:${a.port}`;
}
