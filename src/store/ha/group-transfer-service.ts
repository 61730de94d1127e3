/**
 * SYNC_MASTER producers waiting for a slave ack (RocketMQ 4.x `GroupTransferService`, spec §9.3).
 *
 * A waiter holds `nextOffset` (end of its message). It resolves PUT_OK as soon as the highest
 * ack of any slave (`push2SlaveMaxOffset`) reaches it, FLUSH_SLAVE_TIMEOUT when `timeoutMs`
 * (slaveTimeout) passes first; the message stays stored either way. Appends are sequential, so
 * waiters arrive in nextOffset order and one ack resolves a prefix of the queue.
 */
import type { Logger } from '../../common/logging/logger.js';

export type ReplicaStatus = 'PUT_OK' | 'FLUSH_SLAVE_TIMEOUT';

interface Waiter {
  nextOffset: number;
  deadlineMs: number;
  resolve: (s: ReplicaStatus) => void;
}

export class GroupTransferService {
  private waiters: Waiter[] = [];
  private head = 0;
  private watchdog: NodeJS.Timeout | null = null;
  private acked = 0;
  private stopped = false;

  constructor(
    private readonly timeoutMs: number,
    private readonly logger: Logger,
  ) {}

  /** Highest ack seen so far. */
  get ackedOffset(): number {
    return this.acked;
  }

  /** Waits until an ack ≥ nextOffset arrives or the timeout passes. */
  waitFor(nextOffset: number): Promise<ReplicaStatus> | ReplicaStatus {
    if (nextOffset <= this.acked) return 'PUT_OK';
    if (this.stopped) return 'FLUSH_SLAVE_TIMEOUT';
    const p = new Promise<ReplicaStatus>((resolve) => {
      const w: Waiter = { nextOffset, deadlineMs: Date.now() + this.timeoutMs, resolve };
      const last = this.waiters[this.waiters.length - 1];
      if (last && this.waiters.length > this.head && last.nextOffset > nextOffset) {
        // not expected (appends are sequential), keep the queue sorted anyway
        let i = this.waiters.length;
        while (i > this.head && this.waiters[i - 1]!.nextOffset > nextOffset) i--;
        this.waiters.splice(i, 0, w);
      } else this.waiters.push(w);
    });
    this.armWatchdog();
    return p;
  }

  /** A slave acknowledged `offset` bytes (already validated by the connection). */
  notifyAck(offset: number): void {
    if (offset <= this.acked) return;
    this.acked = offset;
    while (this.head < this.waiters.length && this.waiters[this.head]!.nextOffset <= offset) this.waiters[this.head++]!.resolve('PUT_OK');
    this.compact();
  }

  /** Waiters not resolved yet. */
  pending(): number {
    return this.waiters.length - this.head;
  }

  /** Resolves every waiter with FLUSH_SLAVE_TIMEOUT and refuses new ones (shutdown). */
  stop(): void {
    this.stopped = true;
    if (this.watchdog) clearTimeout(this.watchdog);
    this.watchdog = null;
    while (this.head < this.waiters.length) this.waiters[this.head++]!.resolve('FLUSH_SLAVE_TIMEOUT');
    this.compact();
  }

  private armWatchdog(): void {
    if (this.watchdog || this.pending() === 0) return;
    const wait = Math.max(0, this.waiters[this.head]!.deadlineMs - Date.now());
    this.watchdog = setTimeout(() => {
      this.watchdog = null;
      const now = Date.now();
      let expired = 0;
      // deadlines grow with nextOffset, so expired waiters form a prefix
      while (this.head < this.waiters.length && this.waiters[this.head]!.deadlineMs <= now) {
        this.waiters[this.head++]!.resolve('FLUSH_SLAVE_TIMEOUT');
        expired++;
      }
      if (expired > 0) this.logger.warn({ expired, ackedOffset: this.acked, timeoutMs: this.timeoutMs }, 'no slave ack within slaveTimeout');
      this.compact();
      this.armWatchdog();
    }, wait);
    this.watchdog.unref();
  }

  private compact(): void {
    if (this.head === this.waiters.length) {
      this.waiters = [];
      this.head = 0;
    } else if (this.head > 1024) {
      this.waiters = this.waiters.slice(this.head);
      this.head = 0;
    }
  }
}
