/**
 * Delivers delayed messages (mirrors RocketMQ `ScheduleMessageService`, spec §10).
 *
 * Level n (1-based) is served from queue n − 1 of SCHEDULE_TOPIC_XXXX, starting at the level's
 * progress in `<storePathRootDir>/config/delayOffset.json`
 *   {"offsetTable":{"<level>":<next queue offset to deliver>,...},"dataVersion":{...}}
 * One timer per level (first run after 1 s). A run reads entries in queue order; an entry is
 * due at STORETIMESTAMP + the level's delay (the same deliver time the store writes as the CQ
 * tags code; a deliver time more than one delay in the future, i.e. clock skew, counts as now).
 * A due message is re-put to REAL_TOPIC / REAL_QID with its stored properties unchanged (DELAY kept,
 * as Apache's stored copy; see messageTimeUp) and WAIT=false for the put (tags code
 * recomputed from TAGS by the store); the run stops at the first entry not yet due and sleeps
 * until it is (at most 1 s per sleep), 100 ms when the queue is drained, 10 s after a failed put
 * (the same entry is retried). Entries that can never be delivered (undecodable, no REAL_TOPIC,
 * rejected as illegal) are skipped with an error log.
 * Progress is kept within [min, max] of the level's queue: corrected on load and on every run,
 * and each correction is persisted (case B37). Progress is persisted every
 * flushDelayOffsetInterval and at shutdown.
 * Every re-put the store answers PUT_OK is reported to `onPutOk` (the broker counts it in its
 * statistics, as Apache's ScheduleMessageService.PutResultProcess.onSuccess does); a re-put
 * stored with a flush/replica timeout is delivered but not reported, as in Apache.
 */
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import type { MessageExt, MessageInner } from '../../common/message/message.js';
import { MessageConst } from '../../common/message/message-const.js';
import { decodeRecord } from '../../common/message/record-codec.js';
import { encodeProperties } from '../../common/message/properties.js';
import { TopicValidator } from '../../common/message/topic-validator.js';
import type { MessageStore, PutMessageStatus } from '../../store/message-store.js';
import { ConfigManager, asNumber, asObject, type ConfigManagerOptions } from '../config-file/config-manager.js';
import { DataVersion } from '../config-file/data-version.js';
import { DelayLevelTable } from './delay-level-table.js';

export const FIRST_DELAY_TIME_MS = 1000;
export const DELAY_FOR_A_WHILE_MS = 100;
export const DELAY_FOR_A_PERIOD_MS = 10_000;
const MAX_SLEEP_MS = 1000;
const PULL_BATCH = 32;
const SCHEDULE_GROUP = 'SCHEDULE_MESSAGE_SERVICE';
const STORED: ReadonlySet<PutMessageStatus> = new Set(['PUT_OK', 'FLUSH_DISK_TIMEOUT', 'FLUSH_SLAVE_TIMEOUT', 'SLAVE_NOT_AVAILABLE']);
const PERMANENT_FAILURES: ReadonlySet<PutMessageStatus> = new Set(['MESSAGE_ILLEGAL', 'PROPERTIES_SIZE_EXCEEDED']);

export interface ScheduleMessageServiceOptions extends ConfigManagerOptions {
  store: MessageStore;
  delayLevels: DelayLevelTable;
  clock: Clock;
  flushDelayOffsetIntervalMs?: number;
  /** Called once per delivery the store answered PUT_OK; must not throw. */
  onPutOk?: (delivery: ScheduleDelivery) => void;
}

/** One delivered delayed message: the topic it was re-put to, its delay level (1-based) and its record size in bytes. */
export interface ScheduleDelivery {
  topic: string;
  delayLevel: number;
  wroteBytes: number;
}

export class ScheduleMessageService extends ConfigManager {
  private offsetTable = new Map<number, number>();
  readonly dataVersion: DataVersion;
  private readonly store: MessageStore;
  private readonly levels: DelayLevelTable;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private readonly running = new Map<number, Promise<void>>();
  private flushTimer: NodeJS.Timeout | null = null;
  private started = false;

  constructor(filePath: string, private readonly opts: ScheduleMessageServiceOptions) {
    super(filePath, opts);
    this.store = opts.store;
    this.levels = opts.delayLevels;
    this.clock = opts.clock;
    this.logger = opts.logger ?? silentLogger;
    this.dataVersion = new DataVersion(opts.clock);
  }

  /** Next queue offset to deliver for a level (0 when never stored). */
  offsetOf(level: number): number {
    return this.offsetTable.get(level) ?? 0;
  }

  /**
   * Runtime info entries (Apache `buildRunningStats`, GET_BROKER_RUNTIME_INFO / mqadmin
   * brokerStatus): `scheduleMessageOffset_<level>` = "<next offset to deliver>,<max offset of the
   * level's queue>" for every level with recorded progress (levels never delivered nor corrected
   * have none, as in Apache's offsetTable).
   */
  buildRunningStats(): Record<string, string> {
    const stats: Record<string, string> = {};
    for (const [level, offset] of this.offsetTable) {
      const max = this.store.getMaxOffsetInQueue(TopicValidator.RMQ_SYS_SCHEDULE_TOPIC, DelayLevelTable.queueIdOf(level));
      stats[`scheduleMessageOffset_${level}`] = `${offset},${max}`;
    }
    return stats;
  }

  /** Slave: takes the master's delay progress (GET_ALL_DELAY_OFFSET, src/broker/ha) and persists it. */
  replaceOffsetTable(table: ReadonlyMap<number, number>): void {
    this.offsetTable = new Map(table);
    this.persistSoon();
  }

  /** Loads delayOffset.json and corrects every level into its queue's [min, max]. */
  override load(): boolean {
    const found = super.load();
    this.correctDelayOffsets();
    return found;
  }

  /** Clamps each level's progress into [min, max] of its queue; persists when anything changed. Returns the number of corrections. */
  correctDelayOffsets(): number {
    let changed = 0;
    for (const level of this.levels.levels()) if (this.correctLevel(level, false)) changed++;
    if (changed > 0) this.persistSoon();
    return changed;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    for (const level of this.levels.levels()) this.schedule(level, FIRST_DELAY_TIME_MS);
    this.flushTimer = setInterval(() => {
      this.persist().catch((e: Error) => this.logger.error(`persist ${this.filePath} failed: ${e.message}`));
    }, this.opts.flushDelayOffsetIntervalMs ?? 10_000);
    this.flushTimer.unref();
  }

  /** Stops the timers, waits for runs in progress, persists progress. */
  async shutdown(): Promise<void> {
    this.started = false;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    if (this.flushTimer) clearInterval(this.flushTimer);
    this.flushTimer = null;
    await Promise.allSettled([...this.running.values()]);
    await this.persist();
  }

  /**
   * One run for a level: delivers every due message from the level's progress on.
   * Returns the ms to wait before the next run.
   */
  async deliverDueMessages(level: number): Promise<number> {
    const delayMs = this.levels.delayMs(level);
    if (delayMs === undefined) throw new RangeError(`delay level ${level} is not in 1..${this.levels.maxLevel}`);
    const topic = TopicValidator.RMQ_SYS_SCHEDULE_TOPIC;
    const queueId = DelayLevelTable.queueIdOf(level);
    for (;;) {
      this.correctLevel(level);
      const offset = this.offsetOf(level);
      if (offset >= this.store.getMaxOffsetInQueue(topic, queueId)) return DELAY_FOR_A_WHILE_MS;
      const result = await this.store.getMessage(SCHEDULE_GROUP, topic, queueId, offset, PULL_BATCH, null);
      if (result.status !== 'FOUND') {
        if (result.status !== 'OFFSET_OVERFLOW_ONE' && result.nextBeginOffset !== offset) this.setOffset(level, result.nextBeginOffset, true);
        return DELAY_FOR_A_WHILE_MS;
      }
      for (let i = 0; i < result.messages.length; i++) {
        const queueOffset = result.messageQueueOffsets[i]!;
        const wait = await this.deliverOne(level, delayMs, result.messages[i]!, queueOffset);
        if (wait !== null) {
          this.setOffset(level, queueOffset, false);
          return wait;
        }
        this.setOffset(level, queueOffset + 1, false);
      }
      if (result.nextBeginOffset > this.offsetOf(level)) this.setOffset(level, result.nextBeginOffset, false);
    }
  }

  /** Delivers one schedule record if due. Returns null when done with it (delivered or skipped), else the ms to wait. */
  private async deliverOne(level: number, delayMs: number, record: Buffer, queueOffset: number): Promise<number | null> {
    let ext: MessageExt;
    try {
      ext = decodeRecord(record, 0);
    } catch (e) {
      this.logger.error(`delay level ${level}: schedule entry ${queueOffset} is not a readable record (${(e as Error).message}); skipped`);
      return null;
    }
    const now = this.clock.nowMs();
    let deliverAt = ext.storeTimestamp + delayMs;
    if (deliverAt > now + delayMs) deliverAt = now;
    if (deliverAt > now) return Math.min(deliverAt - now, MAX_SLEEP_MS);
    const msg = messageTimeUp(ext);
    if (!msg) {
      this.logger.error(`delay level ${level}: message ${ext.msgId} at schedule offset ${queueOffset} has no REAL_TOPIC/REAL_QID; skipped`);
      return null;
    }
    const put = await this.store.putMessage(msg);
    if (put.status === 'PUT_OK' && put.appendResult) {
      this.opts.onPutOk?.({ topic: msg.topic, delayLevel: level, wroteBytes: put.appendResult.wroteBytes });
    }
    if (STORED.has(put.status)) return null;
    if (PERMANENT_FAILURES.has(put.status)) {
      this.logger.error(`delay level ${level}: message ${ext.msgId} rejected by ${msg.topic} (${put.status}: ${put.remark ?? ''}); skipped`);
      return null;
    }
    this.logger.error(`delay level ${level}: re-put of ${ext.msgId} to ${msg.topic} failed (${put.status}); retrying in ${DELAY_FOR_A_PERIOD_MS} ms`);
    return DELAY_FOR_A_PERIOD_MS;
  }

  private correctLevel(level: number, persistNow = true): boolean {
    const queueId = DelayLevelTable.queueIdOf(level);
    const topic = TopicValidator.RMQ_SYS_SCHEDULE_TOPIC;
    const min = this.store.getMinOffsetInQueue(topic, queueId);
    const max = this.store.getMaxOffsetInQueue(topic, queueId);
    const current = this.offsetOf(level);
    const corrected = Math.min(Math.max(current, min), max);
    if (corrected === current) return false;
    this.logger.warn(`delay level ${level}: progress ${current} is outside [${min}, ${max}] of its schedule queue; corrected to ${corrected}`);
    this.setOffset(level, corrected, persistNow);
    return true;
  }

  private setOffset(level: number, offset: number, persistNow: boolean): void {
    this.offsetTable.set(level, offset);
    if (persistNow) this.persistSoon();
  }

  private persistSoon(): void {
    this.dataVersion.next();
    this.persist().catch((e: Error) => this.logger.error(`persist ${this.filePath} failed: ${e.message}`));
  }

  private schedule(level: number, delayMs: number): void {
    if (!this.started) return;
    const timer = setTimeout(() => {
      this.timers.delete(level);
      const run = this.deliverDueMessages(level)
        .catch((e: Error) => {
          this.logger.error(`delay level ${level} run failed: ${e.message}`);
          return DELAY_FOR_A_PERIOD_MS;
        })
        .then((next) => {
          this.running.delete(level);
          this.schedule(level, next);
        });
      this.running.set(level, run);
    }, delayMs);
    timer.unref();
    this.timers.set(level, timer);
  }

  override encode(): object {
    const offsetTable: Record<string, number> = {};
    for (const [level, offset] of [...this.offsetTable].sort((a, b) => a[0] - b[0])) offsetTable[String(level)] = offset;
    return { offsetTable, dataVersion: this.dataVersion.toJSON() };
  }

  protected override decode(doc: Record<string, unknown>): void {
    const raw = asObject(doc.offsetTable ?? {}, 'offsetTable');
    const table = new Map<number, number>();
    for (const [level, offset] of Object.entries(raw)) table.set(asNumber(level, `delay level "${level}"`), asNumber(offset, `offset of level ${level}`));
    this.offsetTable = table;
    this.dataVersion.assign(doc.dataVersion);
  }
}

/**
 * The message to re-put when a delayed message is due (Apache `messageTimeup`): topic/queue
 * from REAL_TOPIC/REAL_QID, everything else kept (store host too). As in Apache (4.9.7 seen with
 * its client, 5.3.3 by its bytecode), the **stored** properties are the schedule record's as they
 * were, DELAY, REAL_TOPIC/REAL_QID and WAIT included: Apache builds the properties string first and
 * only then clears DELAY and sets WAIT=false in the in-memory map, which its store does not encode
 * again; a consumer sees `getDelayTimeLevel()` = the level. Here `encodedProperties` holds that
 * text and `properties` (DELAY removed, WAIT=false) is what the put decides by.
 * Returns null when REAL_TOPIC or REAL_QID is missing.
 */
export function messageTimeUp(ext: MessageExt): MessageInner | null {
  const topic = ext.properties.get(MessageConst.REAL_TOPIC);
  const qid = ext.properties.get(MessageConst.REAL_QID);
  if (!topic || qid === undefined || !/^\d+$/.test(qid)) return null;
  const properties = new Map(ext.properties);
  properties.delete(MessageConst.DELAY);
  properties.set(MessageConst.WAIT, 'false');
  return {
    topic,
    queueId: Number(qid),
    flag: ext.flag,
    body: ext.body,
    properties,
    sysFlag: ext.sysFlag,
    bornTimestamp: ext.bornTimestamp,
    bornHost: ext.bornHost,
    storeHost: ext.storeHost,
    reconsumeTimes: ext.reconsumeTimes,
    preparedTransactionOffset: 0,
    encodedProperties: encodeProperties(ext.properties),
  };
}
