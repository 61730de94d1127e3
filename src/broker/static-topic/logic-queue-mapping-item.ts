/**
 * One generation of a static topic's logic queue (Apache RIP-21 `LogicQueueMappingItem`): the
 * physical queue `queueId` of broker `bname` serves the logic offsets from `logicOffset` on.
 *
 * JSON (fastjson getter order, as Apache writes it in topicQueueMapping.json, 351 and 513):
 *   {"bname":"broker-a","endOffset":-1,"gen":0,"logicOffset":0,"queueId":3,"startOffset":0,
 *    "timeOfEnd":-1,"timeOfStart":-1}
 * Offsets are consume-queue offsets (message counts). `logicOffset` -1 = not decided yet (a new
 * leader right after remapping); `endOffset` -1 = open (the item still takes writes).
 */
import { asNumber, asObject } from '../config-file/config-manager.js';

export interface LogicQueueMappingItem {
  gen: number;
  queueId: number;
  bname: string;
  logicOffset: number;
  startOffset: number;
  endOffset: number;
  timeOfStart: number;
  timeOfEnd: number;
}

/** Decodes one item. @throws Error naming the bad field. */
export function decodeMappingItem(value: unknown, what: string): LogicQueueMappingItem {
  const o = asObject(value, what);
  if (typeof o.bname !== 'string' || o.bname === '') throw new Error(`${what}.bname is missing`);
  return {
    gen: asNumber(o.gen ?? 0, `${what}.gen`),
    queueId: asNumber(o.queueId ?? 0, `${what}.queueId`),
    bname: o.bname,
    logicOffset: asNumber(o.logicOffset ?? 0, `${what}.logicOffset`),
    startOffset: asNumber(o.startOffset ?? 0, `${what}.startOffset`),
    endOffset: asNumber(o.endOffset ?? -1, `${what}.endOffset`),
    timeOfStart: asNumber(o.timeOfStart ?? -1, `${what}.timeOfStart`),
    timeOfEnd: asNumber(o.timeOfEnd ?? -1, `${what}.timeOfEnd`),
  };
}

/** The item as Apache serializes it (keys in fastjson's alphabetical order). */
export function encodeMappingItem(i: LogicQueueMappingItem): Record<string, unknown> {
  return {
    bname: i.bname,
    endOffset: i.endOffset,
    gen: i.gen,
    logicOffset: i.logicOffset,
    queueId: i.queueId,
    startOffset: i.startOffset,
    timeOfEnd: i.timeOfEnd,
    timeOfStart: i.timeOfStart,
  };
}

/** Logic offset of physical offset `phy` in this item (Apache computeStaticQueueOffsetStrictly). */
export function toLogicOffsetStrictly(i: LogicQueueMappingItem, phy: number): number {
  if (phy < i.startOffset) return i.logicOffset;
  return i.logicOffset + (phy - i.startOffset);
}

/**
 * Like toLogicOffsetStrictly, but -1 for an undecided item and capped at a decided end
 * (Apache computeStaticQueueOffsetLoosely).
 */
export function toLogicOffsetLoosely(i: LogicQueueMappingItem, phy: number): number {
  if (i.logicOffset < 0) return -1;
  if (phy < i.startOffset) return i.logicOffset;
  if (i.endOffset >= i.startOffset && i.endOffset < phy) return i.logicOffset + (i.endOffset - i.startOffset);
  return i.logicOffset + (phy - i.startOffset);
}

/** Physical offset of logic offset `logic` (Apache computePhysicalQueueOffset). */
export function toPhysicalOffset(i: LogicQueueMappingItem, logic: number): number {
  return logic - i.logicOffset + i.startOffset;
}

/** Highest logic offset the item is known to cover (Apache computeMaxStaticQueueOffset). */
export function maxLogicOffset(i: LogicQueueMappingItem): number {
  return i.endOffset >= i.startOffset ? i.logicOffset + i.endOffset - i.startOffset : i.logicOffset;
}

/** True once the item was closed with an end offset (Apache checkIfEndOffsetDecided). */
export function endOffsetDecided(i: LogicQueueMappingItem): boolean {
  return i.endOffset > i.startOffset;
}

/** Logic minus physical offset: what a client adds to a pulled message's queue offset (offsetDelta). */
export function offsetDelta(i: LogicQueueMappingItem): number {
  return i.logicOffset - i.startOffset;
}

/**
 * The item serving logic offset `logic`: the latest one whose logicOffset <= logic, else the
 * earliest (out of range below); items with an undecided (-1) logicOffset are skipped when
 * `ignoreNegative` (Apache TopicQueueMappingUtils.findLogicQueueMappingItem). Null for no items.
 */
export function findItemForLogicOffset(items: readonly LogicQueueMappingItem[], logic: number, ignoreNegative = true): LogicQueueMappingItem | null {
  for (let k = items.length - 1; k >= 0; k--) {
    const it = items[k]!;
    if (ignoreNegative && it.logicOffset < 0) continue;
    if (logic >= it.logicOffset) return it;
  }
  for (const it of items) if (!(ignoreNegative && it.logicOffset < 0)) return it;
  return null;
}

/** The item after `current` (by generation), null at the end or when it is undecided (Apache findNext). */
export function findNextItem(items: readonly LogicQueueMappingItem[], current: LogicQueueMappingItem): LogicQueueMappingItem | null {
  const k = items.findIndex((it) => it.gen === current.gen);
  if (k < 0 || k === items.length - 1) return null;
  const next = items[k + 1]!;
  return next.logicOffset < 0 ? null : next;
}

/**
 * Apache checkLogicQueueMappingItemOffset: non-negative ids and start offsets, generations
 * strictly increasing, only the latest item may be undecided, logic ranges increasing.
 * @throws Error with Apache's message.
 */
export function checkItemOffsets(items: readonly LogicQueueMappingItem[]): void {
  let lastGen = -1;
  let lastOffset = -1;
  for (let k = items.length - 1; k >= 0; k--) {
    const it = items[k]!;
    if (it.startOffset < 0 || it.gen < 0 || it.queueId < 0) throw new Error('The field is illegal, should not be negative');
    if (items.length >= 2 && k <= items.length - 2 && it.logicOffset < 0) throw new Error('The non-latest item has negative logic offset');
    if (lastGen !== -1 && it.gen >= lastGen) throw new Error('The gen does not increase monotonically');
    if (it.endOffset !== -1 && it.endOffset < it.startOffset) throw new Error('The endOffset is smaller than the start offset');
    if (lastOffset !== -1 && it.logicOffset !== -1) {
      if (it.logicOffset >= lastOffset) throw new Error('The base logic offset does not increase monotonically');
      if (maxLogicOffset(it) >= lastOffset) throw new Error('The max logic offset does not increase monotonically');
    }
    lastGen = it.gen;
    lastOffset = it.logicOffset;
  }
}
