/**
 * Takes over the pops an Apache RocketMQ 5.x broker had in flight when it was swapped for tsmq on
 * the same store (docs/migration.md, docs/internals/pop.md "Taking over Apache's pops").
 *
 * Apache moves a group's consume offset past the popped messages at pop time and keeps what is
 * not acked yet as checkpoint / ack messages of `rmq_sys_REVIVE_LOG_<brokerClusterName>`
 * (apache-revive-records.ts), which its PopReviveService reads from the offsets of
 * `CID_RMQ_SYS_REVIVE_GROUP`. Since 5.x those messages are timer messages (a checkpoint is due at
 * its revive time − 1 s, an ack at the revive time), so at a swap most of them still sit in the
 * timer topic `rmq_sys_wheel_timer` (property REAL_TOPIC = the revive topic); tsmq's timer delivers
 * them into the revive topic later.
 *
 * `importApacheRevive()` runs once at broker start, on a master, before pops are served:
 * 1. reads every revive queue (`reviveQueueNum`, default 8) from the revive group's committed
 *    offset to its end, and the timer topic's messages for the revive topic stored within the last
 *    `popApacheImportWindowMs` (default 1 h) that are not in the revive topic yet (same checkpoint /
 *    ack key); records before the committed offset (already revived by Apache) are left alone;
 * 2. pairs checkpoints with their acks; the offsets of a checkpoint that are neither in its bit
 *    map nor acked are in flight;
 * 3. writes them into tsmq's pop state as deliveries (attempt 1, invisible until the checkpoint's
 *    popTime + invisibleTime, so tsmq redelivers them then, or at the next pop if that is past,
 *    and a 5.x client's ack with its Apache extra info still matches); the group's ack offset
 *    goes down to the lowest such offset and the offsets between it and the group's committed
 *    offset that are not in flight are recorded as acked (Apache had handed them out and they
 *    were acked);
 * 4. commits the revive group's offsets to each revive queue's end (again at broker stop,
 *    `commitApacheReviveOffsets`, past the timer copies that arrived meanwhile).
 *
 * Cost bound: the timer-topic scan (step 1) is what a store with many pending timers pays at
 * start, so it runs only where Apache can have written since tsmq last looked: tsmq records the
 * timer queue's end as the revive group's offset on `rmq_sys_wheel_timer` queue 0 after the
 * import and at stop, and the next import starts there; without that record, only when the
 * store's topic table has the revive topic (Apache's broker creates it at start; tsmq never
 * does) — a pure tsmq store with 10 M pending timers reads nothing. Apache never reads that
 * offset entry.
 *
 * Idempotent: an offset is imported only where tsmq's state has no entry and it is not below the
 * state's ack offset, so a second start (or revive messages the timer delivers after the commit)
 * changes nothing. Orderly pops are not in the revive topic (Apache keeps them in
 * consumerOrderInfo.json and commits the offset at ack), so they need no import.
 * Bad records are logged and skipped; the broker keeps starting.
 */
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import { MessageConst } from '../../common/message/message-const.js';
import { decodeRecord } from '../../common/message/record-codec.js';
import { readRecordProperty } from '../../common/message/record-property.js';
import type { MessageStore } from '../../store/message-store.js';
import {
  APACHE_REVIVE_GROUP,
  apacheReviveTopic,
  checkPointKey,
  decodeApacheReviveRecord,
  type ApacheAck,
  type ApacheCheckPoint,
  type ApacheReviveRecord,
} from './apache-revive-records.js';
import type { PopStateStore } from './pop-state-store.js';
import type { PopRecord } from './pop-state-table.js';

/** Apache `TimerMessageStore.TIMER_TOPIC`. */
const APACHE_TIMER_TOPIC = 'rmq_sys_wheel_timer';
const READ_CHUNK = 64;
/** Most acked entries written between one queue's lowest in-flight offset and its committed offset. */
const MAX_FILL = 1_000_000;

export interface ApacheReviveImportOptions {
  store: Pick<MessageStore, 'getMessage' | 'getMaxOffsetInQueue' | 'getMinOffsetInQueue' | 'getOffsetInQueueByTime'>;
  state: PopStateStore;
  /** `brokerClusterName`: names the revive topic. */
  clusterName: string;
  /** Apache `reviveQueueNum` (default 8). */
  reviveQueueNum: number;
  /** How far back (ms of store time) the timer topic is searched for pending revive messages. */
  timerWindowMs: number;
  /** Whether the broker's topic table has the revive topic (an Apache broker ran on this store). */
  reviveTopicKnown: boolean;
  /** Committed consumer offset, -1 when none. */
  committedOffset(group: string, topic: string, queueId: number): number;
  commitOffset(group: string, topic: string, queueId: number, offset: number): void;
  clock: Clock;
  logger: Logger;
}

export interface ApacheReviveImportResult {
  /** Revive-topic plus pending timer messages decoded as checkpoints / acks. */
  recordsRead: number;
  checkPoints: number;
  /** Offsets written into tsmq's pop state as in-flight deliveries. */
  imported: number;
  /** In-flight offsets that could not be imported (below tsmq's ack offset for the group). */
  skipped: number;
}

/** See the file comment. Never throws for bad data (logs it); throws only if the pop state cannot be written. */
export async function importApacheRevive(o: ApacheReviveImportOptions): Promise<ApacheReviveImportResult> {
  const reviveTopic = apacheReviveTopic(o.clusterName);
  const result: ApacheReviveImportResult = { recordsRead: 0, checkPoints: 0, imported: 0, skipped: 0 };
  const pending: ApacheReviveRecord[] = [];
  const seenKeys = new Set<string>();
  const ends = new Map<number, number>();
  const since = o.clock.nowMs() - o.timerWindowMs;

  for (let qid = 0; qid < o.reviveQueueNum; qid++) {
    const max = o.store.getMaxOffsetInQueue(reviveTopic, qid);
    if (max <= 0) continue;
    ends.set(qid, max);
    const committed = o.committedOffset(APACHE_REVIVE_GROUP, reviveTopic, qid);
    const from = Math.max(o.store.getMinOffsetInQueue(reviveTopic, qid), committed >= 0 ? committed : 0);
    // what is before the committed offset was revived by Apache: only its keys are needed (to tell
    // timer copies apart), from the same window as the timer search
    const windowFrom = Math.min(from, Math.max(o.store.getMinOffsetInQueue(reviveTopic, qid), await o.store.getOffsetInQueueByTime(reviveTopic, qid, since)));
    await scan(o, reviveTopic, qid, windowFrom, max, (rec, offset) => {
      seenKeys.add(recordKey(rec));
      if (offset >= from) pending.push(rec);
    });
  }
  const timerEnd = o.store.getMaxOffsetInQueue(APACHE_TIMER_TOPIC, 0);
  const timerSeen = o.committedOffset(APACHE_REVIVE_GROUP, APACHE_TIMER_TOPIC, 0);
  if (timerEnd > 0 && (timerSeen >= 0 || o.reviveTopicKnown || ends.size > 0)) {
    const tmin = o.store.getMinOffsetInQueue(APACHE_TIMER_TOPIC, 0);
    const from = Math.max(tmin, timerSeen, await o.store.getOffsetInQueueByTime(APACHE_TIMER_TOPIC, 0, since));
    await scan(o, APACHE_TIMER_TOPIC, 0, from, timerEnd, (rec) => {
      if (!seenKeys.has(recordKey(rec))) pending.push(rec);
    }, reviveTopic);
  }
  if (timerEnd > 0) o.commitOffset(APACHE_REVIVE_GROUP, APACHE_TIMER_TOPIC, 0, timerEnd);
  result.recordsRead = pending.length;

  const cks = new Map<string, ApacheCheckPoint>();
  const acks: ApacheAck[] = [];
  for (const r of pending) {
    if (r.kind === 'ck') cks.set(checkPointKey(r.ck), r.ck);
    else acks.push(r.ack);
  }
  result.checkPoints = cks.size;
  for (const a of acks) {
    const ck = cks.get(checkPointKey(a));
    if (ck) for (const off of a.offsets) ck.acked.add(off);
  }
  // in flight per (group, topic, queue): offset → invisible-until (the latest checkpoint wins)
  const inFlight = new Map<string, { group: string; topic: string; queueId: number; offsets: Map<number, number> }>();
  for (const ck of cks.values()) {
    const key = `${ck.group}\u0001${ck.topic}\u0001${ck.queueId}`;
    let q = inFlight.get(key);
    if (!q) inFlight.set(key, (q = { group: ck.group, topic: ck.topic, queueId: ck.queueId, offsets: new Map() }));
    for (const off of ck.offsets) {
      if (ck.acked.has(off)) continue;
      const until = ck.popTimeMs + ck.invisibleTimeMs;
      q.offsets.set(off, Math.max(q.offsets.get(off) ?? 0, until));
    }
  }
  // an ack of a later checkpoint (ChangeInvisibleTime re-checkpoints a message) does not ack an
  // earlier one: only acks paired above count.
  for (const q of inFlight.values()) {
    if (q.offsets.size === 0) continue;
    const r = await importQueue(o, q.group, q.topic, q.queueId, q.offsets);
    result.imported += r.imported;
    result.skipped += r.skipped;
  }
  for (const [qid, end] of ends) o.commitOffset(APACHE_REVIVE_GROUP, reviveTopic, qid, end);
  if (result.recordsRead > 0) {
    o.logger.info(`pop: took over Apache's pops in flight from ${reviveTopic}: ${result.recordsRead} records, ${result.checkPoints} checkpoints, ${result.imported} messages in flight imported, ${result.skipped} not importable`);
  }
  return result;
}

/**
 * Commits the revive group's offsets to each revive queue's end (at broker stop, on a master).
 * The revive messages that arrive while tsmq runs are Apache's timer leftovers the start import
 * already took over (tsmq writes no revive topic), so Apache, if started on the store again,
 * does not revive them a second time. Returns how many queues moved.
 */
export function commitApacheReviveOffsets(o: Pick<ApacheReviveImportOptions, 'store' | 'clusterName' | 'reviveQueueNum' | 'committedOffset' | 'commitOffset'>): number {
  const reviveTopic = apacheReviveTopic(o.clusterName);
  let moved = 0;
  // how far the timer topic was seen (the next start's import begins there, see the file comment)
  const timerEnd = o.store.getMaxOffsetInQueue(APACHE_TIMER_TOPIC, 0);
  if (timerEnd > 0 && o.committedOffset(APACHE_REVIVE_GROUP, APACHE_TIMER_TOPIC, 0) < timerEnd) o.commitOffset(APACHE_REVIVE_GROUP, APACHE_TIMER_TOPIC, 0, timerEnd);
  for (let qid = 0; qid < o.reviveQueueNum; qid++) {
    const max = o.store.getMaxOffsetInQueue(reviveTopic, qid);
    if (max > 0 && o.committedOffset(APACHE_REVIVE_GROUP, reviveTopic, qid) < max) {
      o.commitOffset(APACHE_REVIVE_GROUP, reviveTopic, qid, max);
      moved++;
    }
  }
  return moved;
}

function recordKey(r: ApacheReviveRecord): string {
  return r.kind === 'ck' ? `ck:${checkPointKey(r.ck)}` : `ack:${checkPointKey(r.ack)}:${r.ack.offsets.join(',')}`;
}

/**
 * Reads [from, to) of a queue and hands every decodable revive record to `each`. With
 * `realTopic`, only messages whose REAL_TOPIC property is it (the timer topic).
 */
async function scan(o: ApacheReviveImportOptions, topic: string, queueId: number, from: number, to: number, each: (rec: ApacheReviveRecord, offset: number) => void, realTopic?: string): Promise<void> {
  let offset = from;
  while (offset < to) {
    const got = await o.store.getMessage(APACHE_REVIVE_GROUP, topic, queueId, offset, READ_CHUNK, null);
    for (let i = 0; i < got.messages.length; i++) {
      const at = got.messageQueueOffsets[i]!;
      try {
        // the timer topic holds every pending timer: look at REAL_TOPIC in the bytes before decoding
        if (realTopic !== undefined && readRecordProperty(got.messages[i]!, 0, MessageConst.REAL_TOPIC) !== realTopic) continue;
        const m = decodeRecord(got.messages[i]!, 0);
        const rec = decodeApacheReviveRecord(m.properties.get(MessageConst.TAGS), m.body);
        if (rec) each(rec, at);
      } catch (e) {
        o.logger.warn(`pop: skipped ${topic} queue ${queueId} offset ${at}: ${(e as Error).message}`);
      }
    }
    if (got.nextBeginOffset <= offset) break;
    offset = got.nextBeginOffset;
  }
}

async function importQueue(o: ApacheReviveImportOptions, group: string, topic: string, queueId: number, offsets: Map<number, number>): Promise<{ imported: number; skipped: number }> {
  const st = o.state.table.get(group, topic, queueId);
  const ackOffset = st?.ackOffset ?? -1;
  let skipped = 0;
  const todo = [...offsets].filter(([off]) => {
    if (st && (off < ackOffset || st.entries.has(off))) {
      if (off < ackOffset) skipped++;
      return false;
    }
    return true;
  });
  if (todo.length === 0) {
    if (skipped > 0) o.logger.warn(`pop: ${skipped} of Apache's in-flight messages of ${group} on ${topic} queue ${queueId} are below tsmq's ack offset ${ackOffset}: not imported`);
    return { imported: 0, skipped };
  }
  todo.sort((a, b) => a[0] - b[0]);
  const low = todo[0]![0];
  const high = todo[todo.length - 1]![0];
  const committed = o.committedOffset(group, topic, queueId);
  const doneUpTo = Math.max(committed, high + 1);
  const recs: PopRecord[] = [];
  // where the group resumes: the lowest in-flight offset, or the committed offset if that lags
  // behind it (Apache commits the pop offset asynchronously; what is between was not handed out)
  const start = committed >= 0 ? Math.min(committed, low) : low;
  if (!st || start > ackOffset) recs.push({ type: 'MOVE', group, topic, queueId, offset: start });
  const held = new Set(todo.map(([off]) => off));
  const fillFrom = st ? Math.max(low, ackOffset) : low;
  if (doneUpTo - fillFrom > MAX_FILL) {
    o.logger.warn(`pop: ${group} on ${topic} queue ${queueId}: ${doneUpTo - fillFrom} offsets between Apache's oldest in-flight message and the committed offset; not imported`);
    return { imported: 0, skipped: skipped + todo.length };
  }
  const version = o.state.nextVersion();
  for (let off = fillFrom; off < doneUpTo; off++) {
    if (held.has(off) || st?.entries.has(off)) continue;
    recs.push({ type: 'ACK', group, topic, queueId, offset: off, version });
  }
  for (const [off, until] of todo) {
    recs.push({ type: 'POP', group, topic, queueId, offset: off, attempts: 1, invisibleUntilMs: until, version: o.state.nextVersion() });
  }
  await o.state.record(...recs);
  const after = o.state.table.get(group, topic, queueId)!.ackOffset;
  if (after !== committed) o.commitOffset(group, topic, queueId, after);
  if (skipped > 0) o.logger.warn(`pop: ${skipped} of Apache's in-flight messages of ${group} on ${topic} queue ${queueId} are below tsmq's ack offset ${ackOffset}: not imported`);
  return { imported: todo.length, skipped };
}
