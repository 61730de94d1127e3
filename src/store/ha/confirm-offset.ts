/**
 * The CommitLog confirm offset of controller mode (Apache RocketMQ 5 `CommitLog.getConfirmOffset`,
 * facts only; docs/failover.md "What consumers see"): the CommitLog byte offset below which the
 * data is held by every sync-state-set member. Dispatch (ConsumeQueues, index, message-arrival
 * notices) never goes past it unless `readUnCommitted=true` (store-components.ts
 * `dispatchLimit`), so a consumer never reads a message a failover can take back.
 *
 * Modes:
 * - `off` (classic mode, the default): no bound; `value()` is the CommitLog max offset.
 * - `master` (controller mode, this replica is master): the sync state set's value
 *   (`ConfirmSource`, broker/controller/sync-state-set.ts: the max offset while the set is the
 *   master alone or allAckInSyncStateSet=false, else the smallest member ack); without a
 *   source yet, the max offset (a new master's set is itself alone).
 * - `slave` (controller mode, this replica follows a master): the confirm offset last sent by
 *   the master (ha-protocol.ts confirm frame), never above this replica's max offset. A master
 *   that does not send confirm frames (an older tsmq) lifts the bound (`fromMaster(null)`).
 *   On entering the mode the value is what this replica has dispatched (everything recovered at
 *   start-up, or what it confirmed as master): a master stepping down never makes its
 *   unconfirmed tail consumable.
 *
 * Persisted (controller mode, store key `enableControllerMode`, like Apache 5.3.3): every
 * checkpoint write takes `value()` into confirmPhyOffset (byte 32, Apache's layout); start-up
 * recovery dispatches only up to it (corrected into [CommitLog min, recovered end]) and the
 * store starts in `slave` mode at what it dispatched, so a restarted replica never makes its
 * unconfirmed tail consumable before its role is known (store-recovery.ts, store-startup.ts).
 * Classic mode keeps "recovered / flushed end" there. After a truncation the slave value is
 * lowered to the new end (`clamp`).
 */

/** Where a master's confirm offset comes from (the sync state set). */
export interface ConfirmSource {
  /** Confirm offset in CommitLog bytes (ConfirmOffset caps it at the max offset). */
  confirmOffset(): number;
}

export type ConfirmMode = 'off' | 'master' | 'slave';

export class ConfirmOffset {
  private mode: ConfirmMode = 'off';
  private source: ConfirmSource | null = null;
  /** slave: the master's confirm offset (raw; capped at the max offset when read). */
  private fromMasterOffset = 0;
  /** slave: the master sends no confirm frames (older tsmq): no bound. */
  private masterWithoutConfirm = false;

  /** @param maxOffset the CommitLog max offset, bytes. */
  constructor(private readonly maxOffset: () => number) {}

  /** Current mode (for stats and tests). */
  getMode(): ConfirmMode {
    return this.mode;
  }

  /** True when dispatch is bounded by the confirm offset. */
  isBounded(): boolean {
    return this.mode !== 'off' && !(this.mode === 'slave' && this.masterWithoutConfirm);
  }

  /** The confirm offset in CommitLog bytes, never above the max offset. */
  value(): number {
    const max = this.maxOffset();
    if (this.mode === 'master') return this.source ? Math.min(max, Math.max(0, this.source.confirmOffset())) : max;
    if (this.mode === 'slave' && !this.masterWithoutConfirm) return Math.min(max, this.fromMasterOffset);
    return max;
  }

  /** `limit` lowered to the confirm offset when bounded (bytes). */
  bound(limit: number): number {
    return this.isBounded() ? Math.min(limit, this.value()) : limit;
  }

  /** Controller mode, master role; `source` null = the max offset (sync state set of one). */
  actAsMaster(source: ConfirmSource | null): void {
    this.mode = 'master';
    this.source = source;
  }

  /** Controller mode, master role: the sync state set took over (or left, null). */
  setSource(source: ConfirmSource | null): void {
    if (this.mode === 'master') this.source = source;
  }

  /**
   * Controller mode, slave role; the value starts at `startOffset` (bytes: what is dispatched
   * already) until the master sends its confirm offset.
   */
  actAsSlave(startOffset: number): void {
    if (this.mode !== 'slave') this.fromMasterOffset = Math.min(startOffset, this.maxOffset());
    this.mode = 'slave';
    this.source = null;
    this.masterWithoutConfirm = false;
  }

  /**
   * Slave: the master's confirm offset from a confirm frame (bytes), or null when the master
   * sends none (its first frame was data or a heartbeat): the bound is lifted for that master.
   */
  fromMaster(confirmOffset: number | null): void {
    if (this.mode !== 'slave') return;
    if (confirmOffset === null) {
      this.masterWithoutConfirm = true;
      return;
    }
    this.masterWithoutConfirm = false;
    this.fromMasterOffset = confirmOffset;
  }

  /**
   * Slave: a new master connection or a truncation — nothing above the CommitLog end stays
   * confirmed, and the bound holds until the (new) master's first frame says whether it sends
   * confirm frames.
   */
  clamp(): void {
    this.fromMasterOffset = Math.min(this.fromMasterOffset, this.maxOffset());
    this.masterWithoutConfirm = false;
  }
}
