/**
 * TimerMessageService: moves timer messages through the durable wheel (src/store/timer) and
 * delivers them when due (mirrors Apache 5.x `TimerMessageStore`'s enqueue/dequeue services,
 * single-threaded: Node runs one loop per role, I/O in between).
 *
 * Flow (rmq_sys_wheel_timer = TIMER_TOPIC, queue 0, written by the put hook, timer-put-hook.ts):
 *   enqueue   reads TIMER_TOPIC from currQueueOffset; per message the delayed time is TIMER_OUT_MS
 *             (messages of tsmq ≤ 0.1 without it: TIMER_DELIVER_MS). Already due (before the
 *             wheel's write time) → delivered at once with TIMER_ENQUEUE_MS = Long.MAX_VALUE.
 *             Further out than timerRollWindowSlot → a ROLL unit at write time + window (or half
 *             the window when the rest would be short), re-put to TIMER_TOPIC when it comes up.
 *             A message with TIMER_DEL_UNIQKEY is a DELETE unit (recall marker).
 *             The queue offset is committed once the units are in the log and direct deliveries
 *             are stored.
 *   dequeue   once a slot has fully passed (slot start + precision ≤ now) its units are read
 *             (oldest first); deletion markers collect "<REAL_TOPIC>+<UNIQ_KEY>" keys; every
 *             other unit's message is put on REAL_TOPIC / REAL_QID with TIMER_ENQUEUE_MS = unit
 *             write time and TIMER_DEQUEUE_MS = now added, every other property kept as Apache
 *             stores it (see convert(); the store derives the tags code from TAGS), unless its
 *             key was collected (recalled). Then the read time moves on. With a store that can
 *             append prepared records (putPreparedMessages), the messages are converted and
 *             encoded ahead by the prefetch (timer-prefetch.ts, slots due within
 *             timerPrefetchWindowMs, within timerPrefetchMaxBytes) or at due time block by
 *             block, and appended in blocks (deliverPrepared); TIMER_DEQUEUE_MS is the block's
 *             append time. One-by-one puts remain for what cannot be prepared or stored.
 *   checkpoint every timerFlushIntervalMs and at shutdown (TimerStore.checkpoint): read time and
 *             queue offset committed so far.
 * Delivery is at-least-once: a crash re-delivers the slot being delivered and whatever a slot
 * delivered after the last checkpoint. A clean shutdown finishes the slot in progress first, so
 * a clean restart delivers nothing twice. Failed re-puts are retried (timerEnableRetryUntilSuccess).
 *
 * Roles (Apache `shouldRunningDequeue`, `isRunningEnqueue`, `isRunningDequeue`; docs/failover.md):
 *   master   (shouldRunningDequeue = true) enqueues and dequeues as above.
 *   slave    (false) enqueues its replicated TIMER_TOPIC into its own wheel, but only up to the
 *            master's masterTimerQueueOffset (applyMasterCheckpoint, synced by timer-sync.ts);
 *            messages already due go into the wheel too (nothing is put); never dequeues: its read
 *            time is the master's lastReadTimeMs. The checkpoint keeps both synced values
 *            (lastTimerQueueOffset = min(committed, master's)).
 *   promotion  setShouldRunningDequeue(true): read time = the synced lastReadTimeMs, queue offset
 *            = min(current, master's); the bound is lifted, so TIMER_TOPIC entries the old master
 *            had not committed are read (due ones delivered at once). Slots the old master
 *            delivered after its last synced checkpoint are delivered again (at-least-once; the
 *            window is the checkpoint sync interval plus timerFlushIntervalMs).
 *   demotion   setShouldRunningDequeue(false): the dequeue stops after the slot in progress (a
 *            re-put refused meanwhile is given up, the slot stays undelivered), enqueue is bounded.
 */
import * as path from 'node:path';
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import type { FileSystem } from '../../common/fs/file-system.js';
import type { MessageExt } from '../../common/message/message.js';
import { MessageConst } from '../../common/message/message-const.js';
import { javaStringHashCode } from '../../common/message/java-hash.js';
import { decodeRecord } from '../../common/message/record-codec.js';
import type { MessageStore, PutMessageStatus } from '../../store/message-store.js';
import type { TimerStore } from '../../store/timer/timer-store.js';
import { MAGIC_DEFAULT, MAGIC_DELETE, MAGIC_ROLL, TIMER_MIN_BLANK_BYTES, TIMER_UNIT_SIZE_BYTES, needDelete, needRoll, type TimerUnit } from '../../store/timer/timer-unit.js';
import type { TimerConfig } from './timer-config.js';
import type { TimerMetricsListener } from './timer-metrics.js';
import { TIMER_TOPIC, parseJavaLong } from './timer-put-hook.js';
import { convert } from './timer-conversion.js';
import { TimerPrefetch, type PrefetchedSlot } from './timer-prefetch.js';
import { PrefetchedItems } from './prefetched-items.js';

export { convert } from './timer-conversion.js';

/** Apache `TIMER_BLANK_SLOTS`. */
const TIMER_BLANK_SLOTS = 60;
const ENQUEUE_BATCH = 256;
const ENQUEUE_IDLE_MS = 100;
const SCAN_GROUP = 'CID_SYS_RMQ_TIMER';
/**
 * Prepared deliveries are appended in blocks of at most this many records / bytes, this many
 * blocks awaiting their commit/flush at once: they are appended and dispatched (consumable) at
 * once, their CommitLog writes run on the libuv pool (MappedFile.appendDirect), so up to 64 MiB
 * of the burst may be consumable ahead of the page cache (it is in memory, readers copy it from
 * there). Before the writes left the event loop this was 4.
 */
const PREPARED_BLOCK_RECORDS = 4096;
const PREPARED_BLOCK_BYTES = 4 * 1024 * 1024;
const PREPARED_BLOCKS_IN_FLIGHT = 16;
/** Java Long.MAX_VALUE as Apache writes it into TIMER_ENQUEUE_MS for messages that never entered the wheel. */
export const NEVER_ENQUEUED = '9223372036854775807';
const STORED: ReadonlySet<PutMessageStatus> = new Set(['PUT_OK', 'FLUSH_DISK_TIMEOUT', 'FLUSH_SLAVE_TIMEOUT', 'SLAVE_NOT_AVAILABLE']);
const PERMANENT: ReadonlySet<PutMessageStatus> = new Set(['MESSAGE_ILLEGAL', 'PROPERTIES_SIZE_EXCEEDED', 'WHEEL_TIMER_NOT_ENABLE', 'WHEEL_TIMER_MSG_ILLEGAL']);

export interface TimerMessageServiceOptions {
  timerStore: TimerStore;
  store: Pick<MessageStore, 'getMessage' | 'getMaxOffsetInQueue' | 'getMinOffsetInQueue' | 'lookMessageByOffset' | 'putMessage' | 'selectOneMessageByOffset'> &
    Partial<Pick<MessageStore, 'getCommitLogOffsetInQueue' | 'prepareMessage' | 'putPreparedMessages'>>;
  config: Pick<TimerConfig, 'timerRollWindowSlot' | 'timerFlushIntervalMs' | 'timerEnableRetryUntilSuccess'> & Partial<Pick<TimerConfig, 'timerPrefetchWindowMs' | 'timerPrefetchMaxBytes'>>;
  clock: Clock;
  logger?: Logger;
  /** Re-puts in flight while delivering one slot; default 64. */
  deliverConcurrency?: number;
  /**
   * tsmq ≤ 0.1 kept gRPC timers in `<dir>/progress.json`; when there is no timercheck yet its
   * committedOffset (and done list) say where to resume reading TIMER_TOPIC.
   */
  legacyProgress?: { fs: FileSystem; path: string };
  /** Hears enqueues, wheel units and deliveries (timer-metrics.ts TimerMetrics). */
  metrics?: TimerMetricsListener;
  /**
   * A re-put (delivery to the real topic, or a roll back into rmq_sys_wheel_timer) answered
   * PUT_OK: `topic` it was stored under, its record size. Apache's TimerMessageStore.doPut counts
   * exactly these in the broker stats (incTopicPutNums / incTopicPutSize / incBrokerPutNums).
   * `count` > 1 (prepared blocks): that many re-puts of one topic, `wroteBytes` their sum.
   */
  onPutOk?: (topic: string, wroteBytes: number, count?: number) => void;
}

/** The part of a master's timer checkpoint a slave adopts (Apache `syncTimerCheckPoint`). */
export interface MasterTimerCheckpoint {
  lastReadTimeMs: number;
  masterTimerQueueOffset: number;
  stateVersion: number;
  dataVersionTimestampMs: number;
  dataVersionCounter: number;
}

export interface TimerStats {
  /** Next TIMER_TOPIC queue offset to read, and the committed one. */
  currQueueOffset: number;
  commitQueueOffset: number;
  /** The slot being delivered next (ms). */
  currReadTimeMs: number;
  currWriteTimeMs: number;
  enqueued: number;
  delivered: number;
  deliveredAtEnqueue: number;
  rolled: number;
  recalled: number;
  /** Units whose message could not be read back (retention removed it, or damage). */
  missing: number;
  /** Deliveries dropped after a permanent put failure. */
  dropped: number;
  /** Deliveries (of `delivered` and `rolled`) appended as records prepared ahead (timer-prefetch.ts). */
  deliveredPrepared: number;
  /** Timer store open + recovery, and position recovery at start (ms). */
  timerStoreOpenMs: number;
  positionRecoveryMs: number;
  /** Apache `shouldRunningDequeue`: true on a master (delivers), false on a slave (enqueues only). */
  shouldRunningDequeue: boolean;
  /** TIMER_TOPIC offset the master had committed (a slave enqueues up to it). */
  masterTimerQueueOffset: number;
  /** Master checkpoints adopted (slave), and role changes. */
  masterCheckpointsApplied: number;
  roleChanges: number;
}

export class TimerMessageService {
  private readonly ts: TimerStore;
  private readonly logger: Logger;
  private readonly precisionMs: number;
  private readonly rollWindowSlots: number;
  private currQueueOffset = 0;
  private commitQueueOffset = 0;
  private currReadTimeMs = 0;
  private commitReadTimeMs = 0;
  private currWriteTimeMs = 0;
  private legacyDone: Set<number> | null = null;
  private legacyDoneMax = -1;
  private stopping = false;
  private started = false;
  private readonly loops: Promise<void>[] = [];
  private readonly wakers = new Map<string, () => void>();
  private checkpointing: Promise<void> | null = null;
  /** Something a checkpoint must record happened since the last one (units, deliveries, queue progress). */
  private dirty = true;
  private positionRecoveryMs = 0;
  private readonly counters = { enqueued: 0, delivered: 0, deliveredAtEnqueue: 0, rolled: 0, recalled: 0, missing: 0, dropped: 0, deliveredPrepared: 0, masterCheckpointsApplied: 0, roleChanges: 0 };
  private shouldRunningDequeue = true;
  private masterTimerQueueOffset = 0;
  /** The master's data version as last synced (slave), written into this replica's checkpoint. */
  private syncedDataVersion: { stateVersion: number; timestampMs: number; counter: number } | null = null;
  /** Prepares the slots due soon (null when the store cannot append prepared records). */
  private readonly prefetch: TimerPrefetch | null;

  constructor(private readonly opts: TimerMessageServiceOptions) {
    this.ts = opts.timerStore;
    this.logger = opts.logger ?? silentLogger;
    this.precisionMs = this.ts.precisionMs;
    const slotsTotal = this.ts.wheel.slotsTotal;
    const w = opts.config.timerRollWindowSlot;
    this.rollWindowSlots = w > slotsTotal - TIMER_BLANK_SLOTS || w < 2 ? slotsTotal - TIMER_BLANK_SLOTS : w;
    const { store, config } = opts;
    this.prefetch =
      store.prepareMessage && store.putPreparedMessages
        ? new TimerPrefetch({
            timerStore: this.ts,
            store,
            clock: opts.clock,
            logger: this.logger,
            windowMs: config.timerPrefetchWindowMs ?? 30_000,
            maxBytes: config.timerPrefetchMaxBytes ?? 2 * 1024 * 1024 * 1024,
          })
        : null;
  }

  /**
   * Recovers the read/queue positions from the checkpoint and the timerlog tail, then starts the
   * loops; `shouldRunningDequeue` false on a slave (Apache `start(shouldRunningDequeue)`).
   */
  async start(shouldRunningDequeue = true): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.shouldRunningDequeue = shouldRunningDequeue;
    const t0 = performance.now();
    await this.recoverPositions();
    this.positionRecoveryMs = performance.now() - t0;
    this.loops.push(this.loop('enqueue', () => this.enqueueRound()));
    this.loops.push(this.loop('dequeue', () => this.dequeueRound()));
    const prefetch = this.prefetch;
    // a slave never delivers, so it prepares nothing either (its read time follows the master's)
    if (prefetch?.enabled) this.loops.push(this.loop('prefetch', () => (this.shouldRunningDequeue ? prefetch.round(this.currReadTimeMs) : Promise.resolve(ENQUEUE_IDLE_MS))));
    this.loops.push(this.loop('flush', async () => (await this.checkpoint(), this.opts.config.timerFlushIntervalMs)));
  }

  /**
   * Role change (Apache `changeScheduleServiceStatus` → `syncLastReadTimeMs` +
   * `setShouldRunningDequeue`, and `checkBrokerRole`): true = master, deliver from the synced
   * read time; false = slave, stop delivering and bound the enqueue by the master's offset.
   */
  setShouldRunningDequeue(on: boolean): void {
    if (on === this.shouldRunningDequeue) return;
    this.counters.roleChanges++;
    if (on) {
      this.currQueueOffset = Math.min(this.currQueueOffset, Math.max(this.masterTimerQueueOffset, this.commitQueueOffset));
      this.commitQueueOffset = Math.min(this.commitQueueOffset, this.currQueueOffset);
      this.currReadTimeMs = this.commitReadTimeMs;
      this.syncedDataVersion = null;
    }
    this.shouldRunningDequeue = on;
    if (!on) this.prefetch?.clear(); // a demoted replica delivers nothing: give the prepared records' memory back
    this.dirty = true;
    this.logger.info(`timer: ${on ? 'dequeue starts' : 'dequeue stops'} at read time ${new Date(this.commitReadTimeMs).toISOString()}, queue offset ${this.currQueueOffset}`);
    for (const wake of this.wakers.values()) wake();
  }

  get isShouldRunningDequeue(): boolean {
    return this.shouldRunningDequeue;
  }

  /**
   * Slave: adopts the master's checkpoint (Apache `syncTimerCheckPoint`): read time, the master's
   * TIMER_TOPIC offset (the enqueue bound) and data version. Ignored while delivering (master).
   * Returns whether it was applied.
   */
  applyMasterCheckpoint(cp: MasterTimerCheckpoint): boolean {
    if (this.shouldRunningDequeue) return false;
    this.currReadTimeMs = this.commitReadTimeMs = cp.lastReadTimeMs;
    this.masterTimerQueueOffset = cp.masterTimerQueueOffset;
    this.syncedDataVersion = { stateVersion: cp.stateVersion, timestampMs: cp.dataVersionTimestampMs, counter: cp.dataVersionCounter };
    this.counters.masterCheckpointsApplied++;
    this.dirty = true;
    this.wakers.get('enqueue')?.();
    return true;
  }

  /** A message arrived on TIMER_TOPIC: read it now rather than at the next poll. */
  wakeup(): void {
    this.wakers.get('enqueue')?.();
  }

  /** Stops the loops after the round in progress (a slot being delivered is finished), then checkpoints. */
  async shutdown(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const wake of this.wakers.values()) wake();
    await Promise.allSettled(this.loops);
    this.prefetch?.clear();
    if (this.started) await this.checkpoint();
  }

  get stats(): TimerStats {
    return {
      currQueueOffset: this.currQueueOffset,
      commitQueueOffset: this.commitQueueOffset,
      currReadTimeMs: this.currReadTimeMs,
      currWriteTimeMs: this.currWriteTimeMs,
      ...this.counters,
      timerStoreOpenMs: this.ts.recovery.openMs,
      positionRecoveryMs: this.positionRecoveryMs,
      shouldRunningDequeue: this.shouldRunningDequeue,
      masterTimerQueueOffset: this.masterTimerQueueOffset,
    };
  }

  /**
   * Prefetch (timer-prefetch.ts) counters: slots walked ahead, deliveries prepared ahead, units
   * left to due time by the memory budget, deliveries prepared at due time, busy ms of the
   * prefetch loop, slots started before the window (large ones), slots probed beyond the window
   * (one chunk to measure the time per unit), the smoothed wall time per prepared unit (µs, 0
   * until measured), ms left until due when the last early start happened, bytes held now; null
   * when the store cannot append prepared records.
   */
  get prefetchStats(): { slots: number; prepared: number; overBudget: number; preparedAtDue: number; busyMs: number; startedEarly: number; probes: number; unitUs: number; lastEarlyLeadMs: number; bytesHeld: number } | null {
    return this.prefetch ? { ...this.prefetch.counters, bytesHeld: this.prefetch.bytesHeld } : null;
  }

  /**
   * CommitLog offset from which pending timers still need their messages (Infinity: none), for
   * the store's retention hold: the message of the oldest timerlog unit not yet due, or of the
   * first TIMER_TOPIC entry not yet read into the wheel. A cursor walks the timerlog forward over
   * units whose slot has passed (at most 1,000,000 per call; the hold stays conservative until
   * it catches up), so the cost is amortised over the units written.
   */
  retentionHoldOffset(): number {
    const log = this.ts.log;
    let hold = Number.POSITIVE_INFINITY;
    const { store } = this.opts;
    if (this.commitQueueOffset < store.getMaxOffsetInQueue(TIMER_TOPIC, 0)) {
      const off = store.getCommitLogOffsetInQueue?.(TIMER_TOPIC, 0, this.commitQueueOffset);
      if (off !== undefined && off >= 0) hold = off;
    }
    let pos = Math.max(this.holdCursorPos, log.minOffset);
    for (let scanned = 0; pos + TIMER_UNIT_SIZE_BYTES <= log.maxOffset; scanned++) {
      const u = log.read(pos);
      if (!u) {
        pos = log.minOffset + (Math.floor((pos - log.minOffset) / log.fileSizeBytes) + 1) * log.fileSizeBytes; // segment blank
        continue;
      }
      if (u.delayedTimeMs >= this.commitReadTimeMs || scanned >= 1_000_000) {
        hold = Math.min(hold, u.offsetPy);
        break;
      }
      pos += TIMER_UNIT_SIZE_BYTES;
    }
    this.holdCursorPos = pos;
    return hold;
  }

  private holdCursorPos = 0;

  /** Timers in the wheel not delivered yet (deletion markers subtract). Walks the whole wheel: for tests and admin, not hot paths. */
  pendingCount(): number {
    return this.ts.pendingFrom(this.currReadTimeMs);
  }

  /**
   * Writes the checkpoint with the state at the time of the call. One write at a time: a call
   * made while one is in flight waits for it and then writes again (calls made meanwhile share
   * that second write). Skipped while nothing but empty slots went by: a restart then walks those
   * empty slots again, which delivers nothing.
   */
  checkpoint(): Promise<void> {
    if (this.checkpointing) {
      this.checkpointAgain ??= this.checkpointing
        .catch(() => undefined)
        .then(() => {
          this.checkpointAgain = null;
          return this.checkpoint();
        });
      return this.checkpointAgain;
    }
    if (!this.dirty) return Promise.resolve();
    this.dirty = false;
    // Apache prepareTimerCheckPoint: the master records its own offset and a new data version;
    // a slave keeps the master's (synced) and never claims more than the master committed.
    if (this.shouldRunningDequeue) this.masterTimerQueueOffset = Math.max(this.masterTimerQueueOffset, this.commitQueueOffset);
    const dv = this.syncedDataVersion;
    const run = this.ts
      .checkpoint({
        lastReadTimeMs: this.commitReadTimeMs,
        lastTimerQueueOffset: Math.min(this.commitQueueOffset, this.masterTimerQueueOffset),
        masterTimerQueueOffset: this.masterTimerQueueOffset,
        stateVersion: dv?.stateVersion ?? 0,
        dataVersionTimestampMs: dv?.timestampMs ?? this.opts.clock.nowMs(),
        dataVersionCounter: dv?.counter ?? this.ts.checkpointFile.get().dataVersionCounter + 1,
      })
      .then(() => this.deleteDeliveredLogSegments())
      .catch((e: unknown) => {
        this.dirty = true;
        throw e;
      })
      .finally(() => {
        if (this.checkpointing === run) this.checkpointing = null;
      });
    this.checkpointing = run;
    return run;
  }

  private checkpointAgain: Promise<void> | null = null;

  private formatTimeMs(ms: number): number {
    return Math.floor(ms / this.precisionMs) * this.precisionMs;
  }

  private maybeMoveWriteTime(): void {
    const now = this.formatTimeMs(this.opts.clock.nowMs());
    if (this.currWriteTimeMs < now) this.currWriteTimeMs = now;
  }

  private async recoverPositions(): Promise<void> {
    const { store, clock } = this.opts;
    const cp = this.ts.checkpointFile.get();
    let queueOffset = cp.lastTimerQueueOffset;
    if (!this.ts.recovery.checkpointExisted) queueOffset = Math.max(queueOffset, this.readLegacyProgress());
    const last = this.ts.recovery.lastUnit;
    if (last && this.ts.recovery.unitsReplayed > 0) {
      // Units written after the checkpoint are in the wheel again: resume after the newest one.
      const m = await store.lookMessageByOffset(last.offsetPy);
      if (m && m.topic === TIMER_TOPIC) queueOffset = Math.max(queueOffset, m.queueOffset + 1);
    }
    const min = store.getMinOffsetInQueue(TIMER_TOPIC, 0);
    const max = store.getMaxOffsetInQueue(TIMER_TOPIC, 0);
    if (queueOffset < min || queueOffset > max) {
      this.logger.warn(`timer: queue offset ${queueOffset} is outside [${min}, ${max}] of ${TIMER_TOPIC}; corrected`);
      queueOffset = Math.min(Math.max(queueOffset, min), max);
    }
    this.currQueueOffset = this.commitQueueOffset = queueOffset;
    this.masterTimerQueueOffset = cp.masterTimerQueueOffset;
    const now = clock.nowMs();
    const oldest = this.formatTimeMs(now) - (this.ts.wheel.slotsTotal - TIMER_BLANK_SLOTS) * this.precisionMs;
    const changedFromMs = this.ts.recovery.precisionChangedFromMs;
    const readTimeMs = Math.max(cp.lastReadTimeMs, oldest);
    // a read time written under another precision is aligned to this one (never later: no slot is skipped)
    this.currReadTimeMs = this.commitReadTimeMs = changedFromMs === null ? readTimeMs : this.formatTimeMs(readTimeMs);
    if (changedFromMs !== null) {
      this.logger.warn(`timer: timerPrecisionMs changed from ${changedFromMs} to ${this.precisionMs}; no timer was pending, the timer wheel was emptied for the new precision`);
    }
    this.maybeMoveWriteTime();
    this.logger.info(
      `timer recovered: read time ${new Date(this.currReadTimeMs).toISOString()}, queue offset ${queueOffset}, ${this.ts.recovery.unitsReplayed} units replayed, log end ${this.ts.recovery.logEndPos}`,
    );
  }

  private readLegacyProgress(): number {
    const legacy = this.opts.legacyProgress;
    const raw = legacy?.fs.readFile(legacy.path);
    if (!raw) return 0;
    try {
      const doc = JSON.parse(raw.toString('utf8')) as { committedOffset?: number; done?: number[] };
      this.legacyDone = new Set(doc.done ?? []);
      for (const d of this.legacyDone) if (d > this.legacyDoneMax) this.legacyDoneMax = d;
      return Number(doc.committedOffset) || 0;
    } catch (e) {
      this.logger.warn(`timer: ignoring unreadable ${legacy!.path}: ${(e as Error).message}`);
      return 0;
    }
  }

  /** One enqueue round; returns the ms to wait before the next (0 = at once). */
  private async enqueueRound(): Promise<number> {
    const { store } = this.opts;
    this.maybeMoveWriteTime();
    const min = store.getMinOffsetInQueue(TIMER_TOPIC, 0);
    if (this.currQueueOffset < min) {
      this.logger.warn(`timer: queue offset ${this.currQueueOffset} is below ${TIMER_TOPIC}'s min ${min}; skipping to it`);
      this.currQueueOffset = min;
    }
    if (this.currQueueOffset >= store.getMaxOffsetInQueue(TIMER_TOPIC, 0)) {
      this.commitQueueOffset = this.currQueueOffset;
      return ENQUEUE_IDLE_MS;
    }
    // Apache isRunningEnqueue: a slave takes into its wheel only what the master has committed
    const slave = !this.shouldRunningDequeue;
    const batch = slave ? Math.min(ENQUEUE_BATCH, this.masterTimerQueueOffset - this.currQueueOffset) : ENQUEUE_BATCH;
    if (batch <= 0) return ENQUEUE_IDLE_MS;
    const got = await store.getMessage(SCAN_GROUP, TIMER_TOPIC, 0, this.currQueueOffset, batch, null);
    if (got.status !== 'FOUND' || got.messages.length === 0) {
      if (got.nextBeginOffset > this.currQueueOffset) this.currQueueOffset = this.commitQueueOffset = got.nextBeginOffset;
      return ENQUEUE_IDLE_MS;
    }
    const direct: MessageExt[] = [];
    for (let i = 0; i < got.messages.length; i++) {
      const qo = got.messageQueueOffsets[i]!;
      if (this.legacyDone?.has(qo)) continue;
      let m: MessageExt;
      try {
        m = decodeRecord(got.messages[i]!, 0, { readBody: false });
      } catch (e) {
        this.logger.error(`timer: ${TIMER_TOPIC} entry ${qo} is not a readable record (${(e as Error).message}); skipped`);
        continue;
      }
      const delayedTimeMs = parseJavaLong(m.properties.get(MessageConst.TIMER_OUT_MS)) ?? parseJavaLong(m.properties.get(MessageConst.TIMER_DELIVER_MS)) ?? 0;
      this.opts.metrics?.onEnqueueRead(m.properties.get(MessageConst.REAL_TOPIC), delayedTimeMs, m.bornTimestamp, m.storeTimestamp);
      this.maybeMoveWriteTime();
      if (delayedTimeMs < this.currWriteTimeMs && !slave) direct.push(m);
      else this.doEnqueue(m, delayedTimeMs);
    }
    let aborted = 0;
    await this.runLimited(direct, async (m) => {
      if (m.properties.has(MessageConst.TIMER_DEL_UNIQKEY)) return; // Apache: a due deletion marker is never put
      const full = await store.lookMessageByOffset(m.commitLogOffset);
      if (!full) {
        this.counters.missing++;
        return;
      }
      const outcome = await this.deliver(full, NEVER_ENQUEUED, false);
      if (outcome === 'stored') this.counters.deliveredAtEnqueue++;
      else if (outcome === 'aborted') aborted++;
    });
    if (aborted > 0) return 0; // stopping with a delivery not stored: this batch stays uncommitted and is read again after restart
    this.currQueueOffset = this.commitQueueOffset = got.nextBeginOffset;
    this.dirty = true;
    if (this.legacyDone && this.currQueueOffset > this.legacyDoneMax) this.legacyDone = null;
    return 0;
  }

  /** Apache `doEnqueue`: one unit in the slot of `delayedTimeMs`, or a ROLL unit when it is beyond the roll window. */
  private doEnqueue(m: MessageExt, delayedTimeMs: number): void {
    const writeTimeMs = this.currWriteTimeMs;
    const window = this.rollWindowSlots * this.precisionMs;
    let magic = MAGIC_DEFAULT;
    if (delayedTimeMs - writeTimeMs >= window) {
      magic |= MAGIC_ROLL;
      delayedTimeMs =
        delayedTimeMs - writeTimeMs - window < Math.floor(this.rollWindowSlots / 3) * this.precisionMs
          ? writeTimeMs + Math.floor(this.rollWindowSlots / 2) * this.precisionMs
          : writeTimeMs + window;
    }
    if (m.properties.has(MessageConst.TIMER_DEL_UNIQKEY)) magic |= MAGIC_DELETE;
    const realTopic = m.properties.get(MessageConst.REAL_TOPIC);
    this.ts.enqueue(delayedTimeMs, writeTimeMs, magic, m.commitLogOffset, m.storeSize, realTopic === undefined ? 0 : javaStringHashCode(realTopic));
    this.counters.enqueued++;
    this.opts.metrics?.onWheelUnit(realTopic, (magic & MAGIC_DELETE) !== 0);
  }

  /** One dequeue round: delivers the next passed slot; returns the ms to wait (0 = at once). */
  private async dequeueRound(): Promise<number> {
    this.maybeMoveWriteTime();
    if (!this.shouldRunningDequeue) return ENQUEUE_IDLE_MS; // slave: the read time follows the master's (applyMasterCheckpoint)
    const p = this.precisionMs;
    while (this.currReadTimeMs < this.currWriteTimeMs && !this.ts.wheel.hasSlot(this.currReadTimeMs)) this.currReadTimeMs += p;
    this.commitReadTimeMs = this.currReadTimeMs;
    if (this.currReadTimeMs >= this.currWriteTimeMs) return Math.max(1, this.currReadTimeMs + p - this.opts.clock.nowMs());
    const slotTimeMs = this.currReadTimeMs;
    // a prefetched slot: its units as walked ahead, plus those added since (late timers and recalls)
    const pre = this.prefetch?.take(slotTimeMs) ?? null;
    const units = pre ? this.ts.unitsOfSlot(slotTimeMs, pre.lastPos) : this.ts.unitsOfSlot(slotTimeMs);
    const deleteKeys = new Set<string>(pre?.deleteKeys);
    let normal: TimerUnit[] = [];
    const markers: TimerUnit[] = pre ? [...pre.pendingMarkers] : [];
    for (const u of units) {
      if (needDelete(u.magic) && !needRoll(u.magic)) markers.push(u);
      else normal.push(u);
    }
    for (const u of markers) {
      const marker = await this.opts.store.lookMessageByOffset(u.offsetPy);
      const key = marker?.properties.get(MessageConst.TIMER_DEL_UNIQKEY);
      if (key) deleteKeys.add(key);
    }
    if (this.prefetch && (pre || normal.length > 1)) normal = await this.deliverPrepared(slotTimeMs, pre, normal, deleteKeys);
    let aborted = 0;
    await this.runLimited(normal, async (u) => {
      const m = await this.opts.store.lookMessageByOffset(u.offsetPy);
      if (!m || m.topic !== TIMER_TOPIC) {
        this.counters.missing++;
        this.logger.error(`timer: the message of a unit due ${new Date(u.delayedTimeMs).toISOString()} (CommitLog ${u.offsetPy}) cannot be read; skipped`);
        return;
      }
      const uniq = m.properties.get(MessageConst.UNIQ_KEY);
      const realTopic = m.properties.get(MessageConst.REAL_TOPIC);
      if (uniq !== undefined && deleteKeys.size > 0 && deleteKeys.has(`${realTopic}+${uniq}`)) {
        this.counters.recalled++;
        return;
      }
      if ((await this.deliver(m, String(u.writeTimeMs), needRoll(u.magic))) === 'aborted') aborted++;
    });
    if (aborted > 0) return 0; // stopping: the slot stays undelivered in the checkpoint
    if (this.currReadTimeMs === slotTimeMs) this.currReadTimeMs = slotTimeMs + p;
    this.commitReadTimeMs = this.currReadTimeMs;
    this.dirty = true;
    return 0;
  }

  /**
   * Delivers a slot's normal units through the store's putPreparedMessages: first the rows
   * prepared ahead (`pre`; rows not prepared ahead are prepared now, block by block, with the same
   * large reads), then `normal` (units added after the walk, or all of them when the slot was not
   * prefetched), prepared now the same way. Recalled ones are skipped; TIMER_DEQUEUE_MS is
   * stamped with the time of each block. Returns the units left for the one-by-one path, in slot
   * order: not preparable (unreadable message, no REAL_TOPIC...), or not stored (the store
   * refused the block or part of it; that path retries them).
   */
  private async deliverPrepared(slotTimeMs: number, pre: PrefetchedSlot | null, normal: TimerUnit[], deleteKeys: ReadonlySet<string>): Promise<TimerUnit[]> {
    const prefetch = this.prefetch!;
    const rest: TimerUnit[] = [];
    const inFlight: Promise<void>[] = [];
    const send = (t: PrefetchedItems, rows: number[]): Promise<void> => {
      const nowDigits = Buffer.from(String(this.opts.clock.nowMs()), 'latin1');
      const sent = new Int32Array(rows.length);
      let n = 0;
      for (const i of rows) {
        if (t.stamp(i, nowDigits)) sent[n++] = i;
        else {
          rest.push(t.unit(i));
          t.release(i);
        }
      }
      if (n === 0) return Promise.resolve();
      return this.opts.store.putPreparedMessages!(t.columns(sent, n)).then((r) => {
        const stored = STORED.has(r.status) ? n : r.appended;
        // metrics counted per REAL_TOPIC for the block (one timing-count change per message)
        let topic: string | null = null;
        let count = 0;
        const metrics = this.opts.metrics;
        const putOk = r.status === 'PUT_OK' || !STORED.has(r.status); // the records appended before a failure were each PUT_OK
        // broker stats per run of one stored topic (one call per message in Apache's doPut)
        const onPutOk = putOk ? this.opts.onPutOk : undefined;
        let putTopic: string | null = null;
        let putCount = 0;
        let putBytes = 0;
        for (let k = 0; k < n; k++) {
          const i = sent[k]!;
          if (k < stored) {
            if (onPutOk) {
              const recTopic = t.topic[i]!;
              if (recTopic !== putTopic) {
                if (putTopic !== null) onPutOk(putTopic, putBytes, putCount);
                putTopic = recTopic;
                putCount = 0;
                putBytes = 0;
              }
              putCount++;
              putBytes += t.size[i]!;
            }
            if (needRoll(t.magic[i]!)) this.counters.rolled++;
            else this.counters.delivered++;
            this.counters.deliveredPrepared++;
            const real = t.rollRealTopic.get(i) ?? t.topic[i]!;
            if (real !== topic) {
              if (topic !== null) metrics?.onDequeue(topic, true, count);
              topic = real;
              count = 0;
            }
            count++;
          } else rest.push(t.unit(i));
          t.release(i); // memory goes back as blocks are stored
        }
        if (topic !== null) metrics?.onDequeue(topic, true, count);
        if (putTopic !== null) onPutOk!(putTopic, putBytes, putCount);
        if (stored < n) this.logger.warn(`timer: ${n - stored} prepared deliveries not stored (${r.status}: ${r.remark ?? ''}); delivering them one by one`);
      });
    };
    const tables: PrefetchedItems[] = [];
    if (pre) tables.push(pre.items);
    if (normal.length > 0) tables.push(PrefetchedItems.ofUnits(normal));
    for (const t of tables) {
      let batch: number[] = [];
      let batchBytes = 0;
      const flush = async (): Promise<void> => {
        if (batch.length === 0) return;
        inFlight.push(send(t, batch));
        batch = [];
        batchBytes = 0;
        if (inFlight.length >= PREPARED_BLOCKS_IN_FLIGHT) await inFlight.shift();
        await new Promise((r) => setImmediate(r)); // let I/O and other requests in between blocks
      };
      for (let from = 0; from < t.length; from += PREPARED_BLOCK_RECORDS) {
        const to = Math.min(t.length, from + PREPARED_BLOCK_RECORDS);
        await prefetch.prepareNow(slotTimeMs, t, from, to);
        for (let i = from; i < to; i++) {
          if (!t.isPrepared(i)) {
            rest.push(t.unit(i));
            continue;
          }
          if (deleteKeys.size > 0 && deleteKeys.has(t.recallKey(i) ?? '')) {
            this.counters.recalled++;
            t.release(i);
            continue;
          }
          batch.push(i);
          batchBytes += t.size[i]!;
          if (batch.length >= PREPARED_BLOCK_RECORDS || batchBytes >= PREPARED_BLOCK_BYTES) await flush();
        }
      }
      await flush();
    }
    await Promise.all(inFlight);
    return rest;
  }

  /** Re-puts a due (or rolled) message, retrying transient failures; 'aborted' when stopping interrupted the retries. */
  private async deliver(m: MessageExt, enqueueTime: string, roll: boolean): Promise<'stored' | 'dropped' | 'aborted'> {
    const msg = convert(m, enqueueTime, roll, this.opts.clock.nowMs());
    if (!msg) {
      this.counters.dropped++;
      this.logger.error(`timer: message ${m.msgId} has no usable REAL_TOPIC/REAL_QID; dropped`);
      return 'dropped';
    }
    for (let attempt = 1; ; attempt++) {
      const r = await this.opts.store.putMessage(msg);
      if (STORED.has(r.status)) {
        if (r.status === 'PUT_OK' && r.appendResult) this.opts.onPutOk?.(msg.topic, r.appendResult.wroteBytes);
        if (roll) this.counters.rolled++;
        else this.counters.delivered++;
        this.opts.metrics?.onDequeue(m.properties.get(MessageConst.REAL_TOPIC), enqueueTime !== NEVER_ENQUEUED);
        return 'stored';
      }
      if (PERMANENT.has(r.status)) {
        this.counters.dropped++;
        this.opts.metrics?.onDequeue(m.properties.get(MessageConst.REAL_TOPIC), enqueueTime !== NEVER_ENQUEUED);
        this.logger.error(`timer: ${msg.topic} refused message ${m.msgId} (${r.status}: ${r.remark ?? ''}); dropped`);
        return 'dropped';
      }
      if (!this.opts.config.timerEnableRetryUntilSuccess && attempt >= 3) {
        this.counters.dropped++;
        this.logger.error(`timer: re-put of ${m.msgId} failed ${attempt} times (${r.status}); dropped`);
        return 'dropped';
      }
      if (this.stopping || !this.shouldRunningDequeue) return 'aborted'; // stopping, or demoted: this replica may not write
      this.logger.warn(`timer: re-put of ${m.msgId} to ${msg.topic} failed (${r.status}); retrying`);
      await new Promise((res) => setTimeout(res, Math.max(50, (500 * this.precisionMs) / 1000)));
    }
  }

  /** Timerlog segments whose every unit is delivered (written more than a roll window + 1 slot before the read time) are deleted. */
  private deleteDeliveredLogSegments(): void {
    const log = this.ts.log;
    const horizon = (this.rollWindowSlots + 1) * this.precisionMs;
    for (;;) {
      const first = log.minOffset;
      const nextSegment = first + log.fileSizeBytes;
      if (nextSegment >= log.maxOffset || nextSegment > (this.ts.checkpointFile.get().lastTimerLogFlushPos)) return;
      const lastIndex = Math.floor((log.fileSizeBytes - TIMER_UNIT_SIZE_BYTES - TIMER_MIN_BLANK_BYTES) / TIMER_UNIT_SIZE_BYTES);
      const lastUnit = log.read(first + lastIndex * TIMER_UNIT_SIZE_BYTES);
      if (!lastUnit || lastUnit.writeTimeMs + horizon > this.commitReadTimeMs) return;
      if (log.deleteSegmentsBefore(nextSegment) === 0) return;
    }
  }

  private async runLimited<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < items.length) await fn(items[next++]!);
    };
    const n = Math.min(items.length, this.opts.deliverConcurrency ?? 64);
    await Promise.all(Array.from({ length: n }, worker));
  }

  private async loop(name: string, round: () => Promise<number>): Promise<void> {
    while (!this.stopping) {
      let waitMs: number;
      try {
        waitMs = await round();
      } catch (e) {
        this.logger.error(`timer ${name} round failed: ${(e as Error).message}`);
        waitMs = 100;
      }
      if (waitMs > 0 && !this.stopping) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(() => {
            this.wakers.delete(name);
            resolve();
          }, waitMs);
          this.wakers.set(name, () => {
            clearTimeout(t);
            this.wakers.delete(name);
            resolve();
          });
        });
      }
    }
  }
}

/** `<storePathRootDir>/timer/progress.json` of tsmq's former in-memory gRPC timer service. */
export function legacyProgressPath(storePathRootDir: string): string {
  return path.join(storePathRootDir, 'timer', 'progress.json');
}
