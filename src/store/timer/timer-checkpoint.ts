/**
 * The timer checkpoint `<storePathRootDir>/config/timercheck` (Apache `TimerCheckpoint`,
 * byte-compatible): a 4096-byte file (Apache maps one OS page) whose first 56 bytes are, big-endian:
 *   0  lastReadTimeMs          every slot before this time was delivered
 *   8  lastTimerLogFlushPos    the timerlog was forced up to here; units after it are re-read at recovery
 *  16  lastTimerQueueOffset    rmq_sys_wheel_timer queue 0 was taken into the wheel up to here (exclusive)
 *  24  masterTimerQueueOffset  the same, as the master saw it (tsmq: equal to lastTimerQueueOffset)
 *  32  dataVersion.stateVersion, 40 dataVersion.timestamp, 48 dataVersion.counter
 * Written whole with writeFileDurable (temp file, fsync, rename): a crash leaves the old or the
 * new checkpoint, never a torn one. A missing file reads as all zeros (Apache's fresh state).
 */
import type { FileSystem } from '../../common/fs/file-system.js';

export const TIMER_CHECKPOINT_FILE_BYTES = 4096;

export interface TimerCheckpointState {
  lastReadTimeMs: number;
  lastTimerLogFlushPos: number;
  lastTimerQueueOffset: number;
  masterTimerQueueOffset: number;
  stateVersion: number;
  dataVersionTimestampMs: number;
  dataVersionCounter: number;
}

export function emptyTimerCheckpoint(): TimerCheckpointState {
  return { lastReadTimeMs: 0, lastTimerLogFlushPos: 0, lastTimerQueueOffset: 0, masterTimerQueueOffset: 0, stateVersion: 0, dataVersionTimestampMs: 0, dataVersionCounter: 0 };
}

export function encodeTimerCheckpoint(s: TimerCheckpointState): Buffer {
  const b = Buffer.alloc(TIMER_CHECKPOINT_FILE_BYTES);
  const fields = [s.lastReadTimeMs, s.lastTimerLogFlushPos, s.lastTimerQueueOffset, s.masterTimerQueueOffset, s.stateVersion, s.dataVersionTimestampMs, s.dataVersionCounter];
  fields.forEach((v, i) => b.writeBigInt64BE(BigInt(v), i * 8));
  return b;
}

/** Decodes a checkpoint file; a file shorter than 56 bytes keeps zeros for the missing fields (Apache reads 32 before data versions existed). */
export function decodeTimerCheckpoint(b: Buffer): TimerCheckpointState {
  const f = (i: number): number => (b.length >= (i + 1) * 8 ? Number(b.readBigInt64BE(i * 8)) : 0);
  return {
    lastReadTimeMs: f(0),
    lastTimerLogFlushPos: f(1),
    lastTimerQueueOffset: f(2),
    masterTimerQueueOffset: f(3),
    stateVersion: f(4),
    dataVersionTimestampMs: f(5),
    dataVersionCounter: f(6),
  };
}

export class TimerCheckpoint {
  private state: TimerCheckpointState;
  /** Whether the file existed when opened (a fresh store has none). */
  readonly existed: boolean;

  private constructor(readonly path: string, private readonly fs: FileSystem, state: TimerCheckpointState, existed: boolean) {
    this.state = state;
    this.existed = existed;
  }

  static open(path: string, fs: FileSystem): TimerCheckpoint {
    const raw = fs.readFile(path);
    return new TimerCheckpoint(path, fs, raw ? decodeTimerCheckpoint(raw) : emptyTimerCheckpoint(), raw !== null);
  }

  get(): Readonly<TimerCheckpointState> {
    return this.state;
  }

  /** Replaces the state and writes it durably. */
  async write(next: TimerCheckpointState): Promise<void> {
    this.state = { ...next };
    await this.fs.writeFileDurable(this.path, encodeTimerCheckpoint(this.state));
  }
}
