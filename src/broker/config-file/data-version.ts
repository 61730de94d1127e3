/**
 * RocketMQ `DataVersion`: `{stateVersion, timestamp, counter}` attached to every metadata
 * document; `counter` increases on every change so nameservers and admin tools see updates.
 */
import type { Clock } from '../../common/time/clock.js';

export interface DataVersionJson {
  stateVersion: number;
  timestamp: number;
  counter: number;
}

export class DataVersion {
  stateVersion = 0;
  timestamp: number;
  counter = 0;

  constructor(private readonly clock: Clock) {
    this.timestamp = clock.nowMs();
  }

  /** Marks a change: counter + 1, timestamp = now (mirrors `DataVersion.nextVersion`). */
  next(): void {
    this.counter += 1;
    this.timestamp = this.clock.nowMs();
  }

  toJSON(): DataVersionJson {
    return { stateVersion: this.stateVersion, timestamp: this.timestamp, counter: this.counter };
  }

  /** Copies values from a decoded document; missing fields keep their current values. */
  assign(json: unknown): void {
    if (json === null || typeof json !== 'object') return;
    const j = json as Partial<Record<keyof DataVersionJson, unknown>>;
    if (typeof j.stateVersion === 'number') this.stateVersion = j.stateVersion;
    if (typeof j.timestamp === 'number') this.timestamp = j.timestamp;
    if (typeof j.counter === 'number') this.counter = j.counter;
  }
}
