/**
 * Durable pop state: a snapshot plus append-only logs under `<storePathRootDir>/pop/`.
 *
 *   pop/snapshot.json        {"format":1,"generation":g,"maxVersion":v,"queues":[...]} (PopStateTable snapshot)
 *   pop/pop-<g>.log          records appended after the snapshot of generation g (pop-record-codec.ts)
 *
 * Every change is applied to the in-memory table and written to the current log at once
 * (positional write into the page cache, so it survives a process crash); the log is
 * fdatasync-ed every `flushIntervalMs`, and `record()` can wait for that flush (`syncFlush`).
 *
 * Start-up: read the snapshot (none ⇒ generation 0, empty), replay every log with generation ≥ g
 * in order, truncating the last one at its first torn record; delete logs older than g.
 *
 * Compaction (log larger than `compactLogBytes`, or on clean shutdown): capture the table, switch
 * appends to pop-<g+1>.log, write the snapshot of generation g+1 durably (tmp + fsync + rename),
 * then delete older logs. A crash at any point leaves snapshot g + logs g..g+1, or snapshot g+1 +
 * log g+1: both replay to the same state.
 *
 * A deleted topic's or group's states are dropped by a FORGET record (`forget`), durable as any
 * other record; the next compaction leaves them out of the snapshot.
 *
 * Replication (pop-state-sync.ts): `exportState()` is the whole table with a change stamp
 * (`instanceId` of this open + `changeCount`, bumped by every `record`/`replaceWith`), and a
 * replica adopts its master's table with `replaceWith` (applied in memory at once, then made
 * durable by a compaction).
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { FileSystem } from '../../common/fs/file-system.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import type { Clock } from '../../common/time/clock.js';
import { TsmqError } from '../../common/errors.js';
import { decodePopLog, encodePopRecord } from './pop-record-codec.js';
import { PopStateTable, forgetMatch, type PopForgetRecord, type PopLogRecord, type PopRecord, type PopSnapshotQueue } from './pop-state-table.js';

export interface PopStateStoreOptions {
  /** Directory of the pop files (`<storePathRootDir>/pop`). */
  dir: string;
  fs: FileSystem;
  clock: Clock;
  logger?: Logger;
  flushIntervalMs: number;
  syncFlush: boolean;
  compactLogBytes: number;
}

const SNAPSHOT = 'snapshot.json';

/**
 * `pop/snapshot.json` cannot be decoded. The broker refuses to start (it would otherwise forget
 * which popped messages are in flight or acked); the message names the file and the way out.
 */
export class PopSnapshotCorruptError extends TsmqError {
  constructor(readonly filePath: string, sizeBytes: number, detail: string) {
    super(
      'POP_SNAPSHOT_CORRUPT',
      `pop state snapshot ${filePath} (${sizeBytes} bytes) is corrupt: ${detail}. ` +
        `Refusing to start. Move the file away to start without it: pop consumption then resumes from the ` +
        `committed consumer offsets and the remaining pop logs (messages may be delivered again, none is lost).`,
    );
  }
}
const LOG_NAME = /^pop-(\d+)\.log$/;

export class PopStateStore {
  readonly table = new PopStateTable();
  private readonly logger: Logger;
  private generation = 0;
  private fd = -1;
  private writePos = 0;
  private dirty = false;
  private flushTimer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private waiters: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  private compacting: Promise<void> | null = null;
  private lastVersion = 0;
  private closed = false;
  /** Identifies this open of the state (a restart starts another change-count series). */
  readonly instanceId = randomUUID();
  private changes = 0;

  private constructor(private readonly opts: PopStateStoreOptions) {
    this.logger = opts.logger ?? silentLogger;
  }

  /**
   * Loads (or creates) the state in `opts.dir`.
   * @throws PopSnapshotCorruptError when `snapshot.json` is not a pop snapshot (names the file).
   */
  static open(opts: PopStateStoreOptions): PopStateStore {
    const s = new PopStateStore(opts);
    s.load();
    s.flushTimer = setInterval(() => void s.flush().catch((e: Error) => s.logger.error(`pop log flush failed: ${e.message}`)), opts.flushIntervalMs);
    s.flushTimer.unref();
    return s;
  }

  private load(): void {
    const { fs, dir } = this.opts;
    fs.mkdirp(dir);
    const snapPath = join(dir, SNAPSHOT);
    const snap = fs.readFile(snapPath);
    if (snap) {
      try {
        const doc = JSON.parse(snap.toString('utf8')) as { format?: number; generation?: number; maxVersion?: number; queues?: unknown } | null;
        if (doc === null || typeof doc !== 'object' || doc.format !== 1 || !Number.isSafeInteger(doc.generation)) throw new Error('unknown format');
        this.table.loadSnapshot(doc.queues ?? []);
        this.generation = doc.generation!;
        this.table.maxVersion = Math.max(this.table.maxVersion, doc.maxVersion ?? 0);
      } catch (e) {
        throw new PopSnapshotCorruptError(snapPath, snap.length, (e as Error).message);
      }
    }
    const logs = fs
      .readdir(dir)
      .map((n) => LOG_NAME.exec(n))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    let replayed = 0;
    let last = this.generation;
    for (const gen of logs) {
      const path = this.logPath(gen);
      if (gen < this.generation) {
        fs.unlink(path);
        continue;
      }
      const data = fs.readFile(path) ?? Buffer.alloc(0);
      const decoded = decodePopLog(data);
      for (const r of decoded.records) this.table.apply(r);
      replayed += decoded.records.length;
      if (decoded.stopReason) {
        this.logger.warn(`pop log ${path}: ${decoded.stopReason}; ${data.length - decoded.validBytes} bytes dropped`);
        const fd = fs.open(path, 'r+');
        fs.ftruncate(fd, decoded.validBytes);
        fs.close(fd);
      }
      last = gen;
    }
    this.generation = last;
    this.lastVersion = this.table.maxVersion;
    this.fd = fs.open(this.logPath(this.generation), 'a+');
    this.writePos = fs.fstatSize(this.fd);
    this.logger.info(`pop state loaded: generation ${this.generation}, ${this.table.size} queues, ${replayed} log records replayed`);
  }

  private logPath(gen: number): string {
    return join(this.opts.dir, `pop-${gen}.log`);
  }

  /**
   * A fresh delivery version: greater than every version ever issued, and at least
   * `now × 1000` so versions stay unique even if the log tail was lost in a machine crash.
   */
  nextVersion(): number {
    this.lastVersion = Math.max(this.lastVersion + 1, this.opts.clock.nowMs() * 1000, this.table.maxVersion + 1);
    return this.lastVersion;
  }

  /**
   * Applies and logs records (in order). Resolves at once, or after the covering fdatasync when
   * `syncFlush` is on. @throws Error when the store is closed or the write fails.
   */
  record(...recs: PopRecord[]): Promise<void> {
    return this.append(recs);
  }

  /** `record` for any log record (FORGET included). */
  private append(recs: PopLogRecord[]): Promise<void> {
    if (this.closed) throw new Error('pop state store is closed');
    this.changes++;
    for (const rec of recs) {
      const buf = encodePopRecord(rec);
      this.opts.fs.pwrite(this.fd, buf, 0, buf.length, this.writePos);
      this.writePos += buf.length;
      this.table.apply(rec);
    }
    this.dirty = true;
    if (this.writePos >= this.opts.compactLogBytes && !this.compacting) {
      this.compacting = this.compact().finally(() => (this.compacting = null));
      this.compacting.catch((e: Error) => this.logger.error(`pop compaction failed: ${e.message}`));
    }
    if (!this.opts.syncFlush) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      void this.flush().catch(() => undefined);
    });
  }

  /** Records and replacements applied since this open (with `instanceId`: the change stamp). */
  get changeCount(): number {
    return this.changes;
  }

  /** The whole table for a replica: snapshot queues (pop-state-table.ts), max version and change stamp. */
  exportState(): { instanceId: string; changeCount: number; maxVersion: number; queues: PopSnapshotQueue[] } {
    return { instanceId: this.instanceId, changeCount: this.changes, maxVersion: Math.max(this.lastVersion, this.table.maxVersion), queues: this.table.toSnapshot() };
  }

  /**
   * Forgets every queue state of a topic (`{ topic }`, a deleted topic) or of a group
   * (`{ group }`, a group deleted with its offsets); Apache drops their offsets and pop in-flight
   * counts (cleanOffsetByTopic / clearInFlightMessageNumByTopicName, removeOffset /
   * clearInFlightMessageNumByGroupName). Gone from memory, and a FORGET record in the log, before
   * this returns: durable as every record (a process crash right after keeps it forgotten; a
   * machine crash after the covering fdatasync: within `flushIntervalMs`, or when the returned
   * promise resolves with `syncFlush`). The next compaction leaves them out of the snapshot, so a
   * broker that creates and deletes topics and groups all day does not keep a state per queue of
   * every one it ever popped. Resolves with how many queue states were dropped (0: nothing written).
   * @throws Error when the log write fails (they stay forgotten in memory).
   */
  forget(scope: { topic: string } | { group: string }): Promise<number> {
    if (this.closed) return Promise.resolve(0);
    const rec: PopForgetRecord = 'topic' in scope ? { type: 'FORGET', topic: scope.topic } : { type: 'FORGET', group: scope.group };
    const n = this.table.forget(forgetMatch(rec));
    if (n === 0) return Promise.resolve(0);
    try {
      return this.append([rec]).then(() => n);
    } catch (e) {
      return Promise.reject(e as Error);
    }
  }

  /** A compaction after the one in progress (whose snapshot may predate the table), tracked as `compacting`. */
  private compactAfterCurrent(): Promise<void> {
    const previous = this.compacting;
    const tracked: Promise<void> = (async () => {
      await previous?.catch(() => undefined);
      await this.compact();
    })().finally(() => {
      if (this.compacting === tracked) this.compacting = null;
    });
    this.compacting = tracked;
    return tracked;
  }

  /**
   * Replaces the whole table with a master's (`exportState().queues`, `maxVersion`): validated
   * first (a bad document throws and changes nothing), applied in memory at once, durable when the
   * returned promise resolves (a compaction: snapshot of a new generation, older logs deleted).
   * Versions issued later stay above `maxVersion`. @throws Error naming the bad field, or when closed.
   */
  replaceWith(queues: unknown, maxVersion: number): Promise<void> {
    if (this.closed) throw new Error('pop state store is closed');
    new PopStateTable().loadSnapshot(queues); // validation only
    this.table.loadSnapshot(queues);
    this.table.maxVersion = Math.max(this.table.maxVersion, Number.isSafeInteger(maxVersion) ? maxVersion : 0);
    this.lastVersion = Math.max(this.lastVersion, this.table.maxVersion);
    this.changes++;
    // after a compaction in progress (its snapshot may predate this table), one of our own
    return this.compactAfterCurrent();
  }

  /** fdatasync of the current log when it has unflushed records; waiters resolve after it. */
  async flush(): Promise<void> {
    if (this.flushing) {
      await this.flushing.catch(() => undefined);
      if (!this.dirty) return;
    }
    if (!this.dirty || this.fd < 0) return;
    this.dirty = false;
    const waiters = this.waiters;
    this.waiters = [];
    const fd = this.fd;
    this.flushing = this.opts.fs.fdatasync(fd);
    try {
      await this.flushing;
      for (const w of waiters) w.resolve();
    } catch (e) {
      for (const w of waiters) w.reject(e as Error);
      throw e;
    } finally {
      this.flushing = null;
    }
  }

  /** Snapshot + fresh log (see the file comment). */
  async compact(): Promise<void> {
    const { fs, dir } = this.opts;
    await this.flush();
    const doc = { format: 1, generation: this.generation + 1, maxVersion: this.lastVersion, queues: this.table.toSnapshot() };
    const oldFd = this.fd;
    this.generation++;
    this.fd = fs.open(this.logPath(this.generation), 'a+');
    this.writePos = fs.fstatSize(this.fd);
    fs.close(oldFd);
    await fs.writeFileDurable(join(dir, SNAPSHOT), Buffer.from(JSON.stringify(doc)));
    for (const name of fs.readdir(dir)) {
      const m = LOG_NAME.exec(name);
      if (m && Number(m[1]) < this.generation) fs.unlink(join(dir, name));
    }
    this.logger.info(`pop state compacted into generation ${this.generation}`);
  }

  /** Flushes, compacts and closes; later `record` calls throw. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.flushTimer) clearInterval(this.flushTimer);
    this.flushTimer = null;
    await this.compacting?.catch(() => undefined);
    await this.compact();
    this.closed = true;
    this.opts.fs.close(this.fd);
    this.fd = -1;
  }
}
