/**
 * Run state of one store, shared by the facade and its components so that none of them needs
 * the facade: the phase (RocketMQ's `shutdown` flag, with a "stopping" step while services
 * drain) and why puts are refused (the running flags push their reason here; `setWritable` on
 * the store sets it too). Put remark when refused: "message store is not writable: <reason>".
 */
import { TsmqError } from '../common/errors.js';

export type StorePhase = 'running' | 'stopping' | 'stopped';

export class StoreState {
  phase: StorePhase = 'running';
  /** Why puts are refused (e.g. "disk full: usage 91% > …"), null when writable. */
  notWritableReason: string | null = null;

  isRunning(): boolean {
    return this.phase === 'running';
  }

  /** Writable ⇒ clears the reason; not writable ⇒ records `reason`. */
  setWritable(writable: boolean, reason = 'disk full'): void {
    this.notWritableReason = writable ? null : reason;
  }

  /** @throws TsmqError SERVICE_NOT_AVAILABLE once shutdown has begun. */
  assertOpen(): void {
    if (this.phase !== 'running') throw new TsmqError('SERVICE_NOT_AVAILABLE', 'message store has been shut down');
  }
}
