/**
 * Reference counting for a segment file (mirrors RocketMQ `ReferenceResource`, spec §5.1).
 *
 * - `refCount` starts at 1: the owner's reference.
 * - `hold()` succeeds only while available and the count was > 0 (undone otherwise).
 * - `release()` decrements; at ≤ 0 `cleanup(refCount)` runs once and `cleanupOver` is recorded.
 * - `shutdown(intervalForciblyMs)`: first call marks unavailable, remembers the time and drops
 *   the owner's reference. A later call while refCount > 0 and at least `intervalForciblyMs`
 *   after the first forces `refCount = -1000 - refCount` and releases, so cleanup runs even
 *   though readers still hold it.
 * - `isCleanupOver()` = refCount ≤ 0 && cleanupOver.
 */
import type { Clock } from '../../common/time/clock.js';
import { systemClock } from '../../common/time/clock.js';

export abstract class ReferenceResource {
  protected refCount = 1;
  protected available = true;
  protected cleanupOver = false;
  private firstShutdownTimestampMs = 0;

  constructor(protected readonly clock: Clock = systemClock) {}

  /** Takes a reference; false if the resource is shut down or already released. */
  hold(): boolean {
    if (this.available) {
      if (this.refCount++ > 0) return true;
      this.refCount--;
    }
    return false;
  }

  isAvailable(): boolean {
    return this.available;
  }

  getRefCount(): number {
    return this.refCount;
  }

  release(): void {
    const value = --this.refCount;
    if (value > 0) return;
    if (this.cleanupOver) return;
    this.cleanupOver = this.cleanup(value);
  }

  shutdown(intervalForciblyMs: number): void {
    if (this.available) {
      this.available = false;
      this.firstShutdownTimestampMs = this.clock.nowMs();
      this.release();
    } else if (this.refCount > 0) {
      if (this.clock.nowMs() - this.firstShutdownTimestampMs >= intervalForciblyMs) {
        this.refCount = -1000 - this.refCount;
        this.release();
      }
    }
  }

  isCleanupOver(): boolean {
    return this.refCount <= 0 && this.cleanupOver;
  }

  /** Frees the underlying resource; returns true when done. Called once the count drops to ≤ 0. */
  protected abstract cleanup(currentRef: number): boolean;
}
