/**
 * Queue locks of orderly consumers (mirrors RocketMQ `RebalanceLockManager`): per consumer
 * group, each MessageQueue (topic, brokerName, queueId) is held by at most one client id.
 *
 * - `tryLockBatch`: a queue is granted when it is free, already held by the same client (the
 *   lock is refreshed), or held by another client whose lock expired; otherwise it is refused.
 * - A lock lives until its owner unlocks it or `lockMaxLiveTimeMs` (Apache
 *   `rocketmq.broker.rebalance.lockMaxLiveTime`, 60 s) passes without a refresh; orderly
 *   clients refresh every 20 s (`rocketmq.client.rebalance.lockInterval`). A closed connection
 *   does not free its locks (as in Apache): the owner's locks simply expire.
 * - `unlockBatch`: only the owner's unlock releases a queue; other unlocks are ignored.
 * - Any queue is lockable, whether or not its topic or queue id exists here (as in Apache, which
 *   validates nothing). Unlike Apache, which keeps an expired entry until its owner unlocks it (so
 *   a client locking ever new names grows the table without bound), expired entries are swept:
 *   `tryLockBatch` drops every expired lock at most once per `lockMaxLiveTimeMs`, so the table
 *   holds at most the queues locked or refreshed within the last two live times. Answers are the
 *   same as Apache's (an expired entry and no entry both grant the lock).
 * State is in memory only, so a broker restart frees every lock (as in Apache).
 */
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';

/** Apache's default `rocketmq.broker.rebalance.lockMaxLiveTime` (ms). */
export const REBALANCE_LOCK_MAX_LIVE_TIME_MS = 60_000;

/** A queue as lock requests name it (RocketMQ `MessageQueue`: all three fields count). */
export interface LockedQueue {
  topic: string;
  brokerName: string;
  queueId: number;
}

const keyOf = (mq: LockedQueue): string => `${mq.topic}\u0000${mq.brokerName}\u0000${mq.queueId}`;

interface LockEntry {
  clientId: string;
  lastUpdateTimestamp: number;
}

export class RebalanceLockManager {
  /** group → queue key → lock. */
  private readonly table = new Map<string, Map<string, LockEntry>>();
  private readonly logger: Logger;
  private lastSweepMs: number;

  constructor(
    private readonly clock: Clock,
    readonly lockMaxLiveTimeMs = REBALANCE_LOCK_MAX_LIVE_TIME_MS,
    logger?: Logger,
  ) {
    if (!(lockMaxLiveTimeMs > 0)) throw new RangeError(`lockMaxLiveTimeMs must be > 0, got ${lockMaxLiveTimeMs}`);
    this.logger = logger ?? silentLogger;
    this.lastSweepMs = clock.nowMs();
  }

  /** Number of lock entries held (expired ones not yet swept included). */
  get size(): number {
    let n = 0;
    for (const locks of this.table.values()) n += locks.size;
    return n;
  }

  /** Drops every expired lock when the last sweep is `lockMaxLiveTimeMs` old (see the file comment). */
  private sweepExpired(now: number): void {
    if (now - this.lastSweepMs < this.lockMaxLiveTimeMs) return;
    this.lastSweepMs = now;
    for (const [group, locks] of this.table) {
      for (const [key, entry] of locks) if (this.expired(entry, now)) locks.delete(key);
      if (locks.size === 0) this.table.delete(group);
    }
  }

  /** Locks what can be locked for `clientId`; returns the queues it now holds (input order, no duplicates). */
  tryLockBatch(group: string, mqs: Iterable<LockedQueue>, clientId: string): LockedQueue[] {
    const now = this.clock.nowMs();
    this.sweepExpired(now);
    const locked: LockedQueue[] = [];
    const seen = new Set<string>();
    let locks = this.table.get(group);
    for (const mq of mqs) {
      const key = keyOf(mq);
      if (seen.has(key)) continue;
      seen.add(key);
      const entry = locks?.get(key);
      if (entry && entry.clientId !== clientId && !this.expired(entry, now)) {
        this.logger.debug(`lock refused: ${group} ${mq.topic}/${mq.brokerName}/${mq.queueId} is held by ${entry.clientId}, asked by ${clientId}`);
        continue;
      }
      if (entry && entry.clientId !== clientId) {
        this.logger.warn(`lock of ${group} ${mq.topic}/${mq.brokerName}/${mq.queueId} expired for ${entry.clientId}; now held by ${clientId}`);
      }
      if (!locks) {
        locks = new Map();
        this.table.set(group, locks);
      }
      locks.set(key, { clientId, lastUpdateTimestamp: now });
      locked.push(mq);
    }
    return locked;
  }

  /** Releases the queues `clientId` holds; queues held by others (or free) are left alone. */
  unlockBatch(group: string, mqs: Iterable<LockedQueue>, clientId: string): void {
    const locks = this.table.get(group);
    if (!locks) return;
    for (const mq of mqs) {
      const key = keyOf(mq);
      const entry = locks.get(key);
      if (entry && entry.clientId === clientId) {
        locks.delete(key);
      } else if (entry) {
        this.logger.debug(`unlock ignored: ${group} ${mq.topic}/${mq.brokerName}/${mq.queueId} is held by ${entry.clientId}, not ${clientId}`);
      }
    }
    if (locks.size === 0) this.table.delete(group);
  }

  /** True when `clientId` holds a live lock on `mq` (refreshes it, as Apache's isLocked does). */
  isLocked(group: string, mq: LockedQueue, clientId: string): boolean {
    const entry = this.table.get(group)?.get(keyOf(mq));
    const now = this.clock.nowMs();
    if (!entry || entry.clientId !== clientId || this.expired(entry, now)) return false;
    entry.lastUpdateTimestamp = now;
    return true;
  }

  /** Client id holding a live lock on `mq`, or null (does not refresh). */
  lockHolder(group: string, mq: LockedQueue): string | null {
    const entry = this.table.get(group)?.get(keyOf(mq));
    return entry && !this.expired(entry, this.clock.nowMs()) ? entry.clientId : null;
  }

  private expired(entry: LockEntry, now: number): boolean {
    return now - entry.lastUpdateTimestamp > this.lockMaxLiveTimeMs;
  }
}
