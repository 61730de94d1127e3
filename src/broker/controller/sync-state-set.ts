/**
 * The master's sync state set (Apache RocketMQ 5 `AutoSwitchHAService` SyncStateSet, facts only;
 * docs/failover.md) and the SYNC send wait it drives.
 *
 * - Membership (replica ids, the master included) is written to etcd by the master only
 *   (`writeRecord`, guarded by the master's epoch). The election (election-policy.ts) trusts
 *   that record, so the local set used for acks is always a SUPERSET of what etcd says:
 *     shrink: etcd first, then locally;  expand: locally first (sends now wait for the newcomer),
 *     then, once the newcomer acked everything the master held at that moment, etcd.
 * - A member leaves when it has not held everything the master held one check earlier for
 *   `syncStateSetMaxOutOfSyncTimeMs` (Apache haMaxTimeSlaveNotCatchup) or is disconnected that long.
 * - A connected replica (controller hello) joins when it is within JOIN_GAP_BYTES of the
 *   master's max offset and past the start of the master's epoch; one that left for being out of
 *   sync must first ack the master's max offset at its removal (a SIGSTOPped replica keeps its
 *   TCP connection and stays close behind, but acks nothing new: Apache re-adds a replica only
 *   on an ack report that reaches its confirm offset, so it stays out too).
 * - `handleHA(nextOffset)` (a SYNC send): with allAckInSyncStateSet, PUT_OK once every other
 *   member acked `nextOffset`, FLUSH_SLAVE_TIMEOUT after slaveTimeout; without it, PUT_OK at once.
 *   The master's fence is checked before and after the wait: a master whose lease may have
 *   expired never answers PUT_OK (SLAVE_NOT_AVAILABLE with the fence's reason instead).
 * - `confirmOffset()` (Apache `CommitLog.getConfirmOffset` on a controller-mode master, facts
 *   only): the CommitLog offset consumers may read up to. The master's max offset when the set
 *   (local view, joining members included) is the master alone or allAckInSyncStateSet=false;
 *   otherwise the smallest ack of the other members, unchanged while a member is not connected
 *   (Apache keeps its value then too). Never lowered (a newcomer below it does not take back
 *   what the others confirmed) and frozen while the master is fenced. Every change found after
 *   an ack or a membership change is told to `onConfirmChanged` BEFORE waiting sends are
 *   answered, so a message is consumable when its producer hears SEND_OK.
 */
import type { Logger } from '../../common/logging/logger.js';
import type { HAService, HandleHAResult } from '../../store/ha/ha-service.js';
import type { ReplicaAck } from '../../store/put/put-message-service.js';
import type { ConfirmSource } from '../../store/ha/confirm-offset.js';
import type { SyncStateSetRecord } from './etcd-group-store.js';

/** A replica this close to the master's max offset may join (bytes; tsmq constant). */
export const JOIN_GAP_BYTES = 1024 * 1024;

export interface SyncStateSetOptions {
  selfId: number;
  masterEpoch: number;
  /** CommitLog offset where the master's epoch starts. */
  epochStartOffset: number;
  ha: HAService;
  maxOffset: () => number;
  /** Writes the record to etcd; false when this master's epoch is over. */
  writeRecord: (r: SyncStateSetRecord) => Promise<boolean>;
  allAckInSyncStateSet: boolean;
  maxOutOfSyncMs: number;
  slaveTimeoutMs: number;
  /** Why this master must not acknowledge now, or null. */
  fence: () => string | null;
  /** The confirm offset moved (the store drives dispatch to it and wakes the HA loops). */
  onConfirmChanged?: () => void;
  logger: Logger;
}

interface Waiter {
  nextOffset: number;
  resolve: (r: HandleHAResult) => void;
  timer: NodeJS.Timeout;
}

export class SyncStateSet implements ReplicaAck, ConfirmSource {
  /** Members used for acks (⊇ the etcd record). */
  private readonly members = new Set<number>();
  /** Members confirmed in etcd. */
  private confirmed: number[];
  private syncStateSetEpoch = 0;
  /** Replica id → master max offset it must ack before the join is written to etcd. */
  private readonly joining = new Map<number, number>();
  private readonly lastInSyncMs = new Map<number, number>();
  /** Replica id → master max offset when it left for being out of sync: it must ack that much to rejoin. */
  private readonly leftAtMaxOffset = new Map<number, number>();
  private readonly waiters = new Set<Waiter>();
  private maxAtLastCheck = 0;
  private checking = false;
  private stopped = false;
  private readonly startedMs = Date.now();
  /** Last confirm offset computed (bytes; never lowered). */
  private confirmOffsetBytes = 0;
  private readonly onAck = (): void => this.evaluate();

  constructor(private readonly o: SyncStateSetOptions) {
    this.members.add(o.selfId);
    this.confirmed = [o.selfId];
    this.confirmOffsetBytes = o.maxOffset();
    o.ha.addAckListener(this.onAck);
  }

  /** Writes the initial record ({master}); false when the epoch is already over. */
  async init(): Promise<boolean> {
    this.maxAtLastCheck = this.o.maxOffset();
    return this.o.writeRecord(this.record(this.confirmed));
  }

  private record(members: number[]): SyncStateSetRecord {
    this.syncStateSetEpoch++;
    return { masterReplicaId: this.o.selfId, masterEpoch: this.o.masterEpoch, syncStateSetEpoch: this.syncStateSetEpoch, members: [...members].sort((a, b) => a - b) };
  }

  /** Members confirmed in etcd. */
  confirmedMembers(): number[] {
    return [...this.confirmed];
  }

  /** Highest CommitLog offset replica `replicaId` acknowledged on its HA link (-1 = not connected). */
  ackOf(replicaId: number): number {
    return this.o.ha.ackOfReplica(replicaId);
  }

  notifyAppended(): void {
    this.o.ha.notifyAppended();
  }

  handleHA(nextOffset: number): HandleHAResult | Promise<HandleHAResult> {
    const fenced = this.o.fence();
    if (fenced !== null) return { status: 'SLAVE_NOT_AVAILABLE', remark: fenced };
    if (!this.o.allAckInSyncStateSet || this.allAcked(nextOffset)) return { status: 'PUT_OK' };
    return new Promise((resolve) => {
      const w: Waiter = {
        nextOffset,
        resolve: (r) => {
          clearTimeout(w.timer);
          this.waiters.delete(w);
          resolve(r);
        },
        timer: setTimeout(() => w.resolve({ status: 'FLUSH_SLAVE_TIMEOUT', remark: `sync state set ${[...this.members].join(',')} did not all ack offset ${nextOffset} within slaveTimeout ${this.o.slaveTimeoutMs} ms` }), this.o.slaveTimeoutMs),
      };
      this.waiters.add(w);
    });
  }

  /** See the file comment. CommitLog bytes. */
  confirmOffset(): number {
    if (this.stopped || this.o.fence() !== null) return this.confirmOffsetBytes;
    const max = this.o.maxOffset();
    let c = max;
    if (this.o.allAckInSyncStateSet && this.members.size > 1) {
      for (const id of this.members) {
        if (id === this.o.selfId) continue;
        const ack = this.o.ha.ackOfReplica(id);
        if (ack < 0) return this.confirmOffsetBytes; // a member without a connection: keep the value
        c = Math.min(c, ack);
      }
    }
    if (c > this.confirmOffsetBytes) this.confirmOffsetBytes = c;
    return this.confirmOffsetBytes;
  }

  private allAcked(offset: number): boolean {
    for (const id of this.members) if (id !== this.o.selfId && this.o.ha.ackOfReplica(id) < offset) return false;
    return true;
  }

  /** Re-checks the confirm offset, then waiting sends (after an ack or a membership change). */
  private evaluate(): void {
    const before = this.confirmOffsetBytes;
    if (this.confirmOffset() !== before) this.o.onConfirmChanged?.();
    for (const w of [...this.waiters]) {
      if (!this.allAcked(w.nextOffset)) continue;
      const fenced = this.o.fence();
      w.resolve(fenced === null ? { status: 'PUT_OK' } : { status: 'SLAVE_NOT_AVAILABLE', remark: fenced });
    }
  }

  /** One membership check (ControllerMode calls it periodically). */
  async check(): Promise<void> {
    if (this.checking || this.stopped) return;
    this.checking = true;
    try {
      await this.checkOnce();
    } catch (e) {
      this.o.logger.warn(`sync state set check failed: ${(e as Error).message}`);
    } finally {
      this.checking = false;
    }
  }

  private async checkOnce(): Promise<void> {
    const now = Date.now();
    const max = this.o.maxOffset();
    const prevMax = this.maxAtLastCheck;
    this.maxAtLastCheck = max;
    for (const id of this.members) if (id !== this.o.selfId && this.o.ha.ackOfReplica(id) >= prevMax) this.lastInSyncMs.set(id, now);

    // shrink: etcd first
    const out = [...this.members].filter((id) => id !== this.o.selfId && now - (this.lastInSyncMs.get(id) ?? this.startedMs) > this.o.maxOutOfSyncMs);
    if (out.length > 0) {
      const next = this.confirmed.filter((id) => !out.includes(id));
      if (next.length !== this.confirmed.length) {
        if (!(await this.o.writeRecord(this.record(next)))) return;
        this.confirmed = next;
      }
      for (const id of out) {
        this.members.delete(id);
        this.joining.delete(id);
        this.leftAtMaxOffset.set(id, max);
      }
      this.o.logger.warn(`sync state set: replicas ${out.join(',')} out of sync for more than ${this.o.maxOutOfSyncMs} ms; members now ${[...this.members].join(',')}`);
      this.evaluate();
    }

    // expand: locally first, etcd once the newcomer holds everything the master held then
    for (const id of this.o.ha.connectedReplicaIds()) {
      if (this.members.has(id)) continue;
      const ack = this.o.ha.ackOfReplica(id);
      if (ack >= this.o.epochStartOffset && ack >= max - JOIN_GAP_BYTES && ack >= (this.leftAtMaxOffset.get(id) ?? 0)) {
        this.leftAtMaxOffset.delete(id);
        this.members.add(id);
        this.joining.set(id, max);
        this.lastInSyncMs.set(id, now);
      }
    }
    for (const [id, need] of [...this.joining]) {
      if (this.o.ha.ackOfReplica(id) < need) continue;
      const next = [...new Set([...this.confirmed, id])];
      if (!(await this.o.writeRecord(this.record(next)))) return;
      this.confirmed = next;
      this.joining.delete(id);
      this.o.logger.info(`sync state set: replica ${id} joined; members ${next.join(',')}`);
    }
  }

  /** Fails the waiting sends (the master steps down) and detaches from the HA service. */
  stop(reason: string): void {
    this.stopped = true;
    this.o.ha.removeAckListener(this.onAck);
    for (const w of [...this.waiters]) w.resolve({ status: 'SLAVE_NOT_AVAILABLE', remark: reason });
  }
}
