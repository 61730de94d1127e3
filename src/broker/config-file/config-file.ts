/**
 * Crash-safe persistence of one broker metadata JSON file (topics.json, consumerOffset.json,
 * delayOffset.json, subscriptionGroup.json), replacing RocketMQ's `ConfigManager` persist/load.
 *
 * Persist order (each step leaves a loadable state behind if the process dies right after it):
 *   1. write the whole document to `<file>.tmp` (created fresh, so a shorter document never
 *      leaves stale bytes: case B11) and fsync it;
 *   2. if the current `<file>` is known to be valid, rename it to `<file>.bak` (atomic; the
 *      previous good version is kept; a corrupt primary never overwrites a good backup);
 *   3. rename `<file>.tmp` over `<file>` (atomic);
 *   4. fsync the directory so both renames are durable.
 * Writes are coalesced: at most one write is in flight and at most one is queued behind it, and
 * the queued one renders the document only when it starts, so it carries the latest state. A
 * burst of N changes (a heartbeat registering 5,000 groups, 8,000 sends to new topics) costs a
 * handful of writes of the final document, not N growing copies (RocketMQ's ConfigManager writes
 * the whole document per change; tsmq's first version queued one rendered copy per change, which
 * was quadratic in time and memory). Every `persist` call resolves when a write that started
 * after the call (and so includes its state) is durable; writes never interleave.
 *
 * Load order (mirrors Apache `ConfigManager.load`, stricter on corruption):
 *   - `<file>` non-empty and decodable → use it;
 *   - else `<file>.bak` non-empty and decodable → use it (a corrupt primary is first renamed to
 *     `<file>.corrupt` for inspection);
 *   - else if `<file>.bak` exists with undecodable content → throw ConfigFileCorruptError (the
 *     broker must not start on silently empty metadata; Apache also refuses here);
 *   - else (nothing usable, no backup) → null: start empty, as Apache does; logged as an error
 *     when a corrupt primary was found.
 */
import * as path from 'node:path';
import type { FileSystem } from '../../common/fs/file-system.js';
import { nodeFileSystem } from '../../common/fs/node-file-system.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import { TsmqError } from '../../common/errors.js';
import { parseLenientJson } from './lenient-json.js';

/** Neither the primary file nor its backup could be decoded. */
export class ConfigFileCorruptError extends TsmqError {
  constructor(readonly filePath: string, detail: string) {
    super('CONFIG_FILE_CORRUPT', `cannot load ${filePath}: ${detail}`);
  }
}

export type ConfigFileSource = 'primary' | 'backup' | 'none';

export interface ConfigFileOptions {
  fs?: FileSystem;
  logger?: Logger;
}

/** One queued or running write: resolved when the document it rendered is durable. */
interface WriteTicket {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(e: Error): void;
  /** Renders the document when the write starts (latest state wins). */
  render: () => string | Buffer;
}

function newTicket(render: () => string | Buffer): WriteTicket {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Callers attach their own handlers; this keeps an ignored failure from being "unhandled".
  promise.catch(() => undefined);
  return { promise, resolve, reject, render };
}

export class ConfigFile {
  readonly filePath: string;
  private readonly fs: FileSystem;
  private readonly logger: Logger;
  /** Whether `<file>` currently holds a valid document (undefined = not checked yet). */
  private primaryValid: boolean | undefined;
  /** The write in progress, if any. */
  private running: WriteTicket | null = null;
  /** The write queued behind it, if any; renders when it starts. */
  private queued: WriteTicket | null = null;
  /** Render of the last write that failed, kept until a later write succeeds. */
  private failedRender: (() => string | Buffer) | null = null;
  /** Where the last `load` found its document. */
  lastLoadSource: ConfigFileSource = 'none';
  /** Writes completed successfully since construction (for tests and metrics). */
  writesCompleted = 0;

  constructor(filePath: string, opts: ConfigFileOptions = {}) {
    this.filePath = filePath;
    this.fs = opts.fs ?? nodeFileSystem;
    this.logger = opts.logger ?? silentLogger;
  }

  get backupPath(): string {
    return `${this.filePath}.bak`;
  }

  get tempPath(): string {
    return `${this.filePath}.tmp`;
  }

  /**
   * Reads and decodes the document (see the load order above). `decode` must throw for a
   * document it does not accept. Returns null when there is nothing to load.
   * @throws ConfigFileCorruptError when a backup exists but neither file decodes.
   */
  load<T>(decode: (text: string) => T): T | null {
    const primary = this.tryDecode(this.filePath, decode);
    if (primary.ok) {
      this.primaryValid = true;
      this.lastLoadSource = 'primary';
      return primary.value;
    }
    this.primaryValid = false;
    if (primary.error) {
      this.logger.error(`${this.filePath} is not a valid document (${primary.error}); trying ${this.backupPath}`);
      this.setAside();
    }
    const backup = this.tryDecode(this.backupPath, decode);
    if (backup.ok) {
      this.logger.warn(`loaded ${this.backupPath} because ${this.filePath} is ${primary.error ? 'corrupt' : 'missing or empty'}`);
      this.lastLoadSource = 'backup';
      return backup.value;
    }
    if (backup.error) {
      throw new ConfigFileCorruptError(
        this.filePath,
        `primary ${primary.error ?? 'missing or empty'}; backup ${this.backupPath} ${backup.error}`,
      );
    }
    if (primary.error) this.logger.error(`${this.filePath} was corrupt and there is no backup: starting with empty metadata`);
    this.lastLoadSource = 'none';
    return null;
  }

  /**
   * Durably replaces the document (see the persist order above). `document` is the text, or a
   * function rendering it (as text, or as its UTF-8 bytes), called when the write starts: when a write is already queued, this
   * call joins it (its render replaces the queued one) and no new write is added.
   * Resolves once a write that includes the state at the time of this call is durable;
   * rejects with the file-system error of that write (the previous document stays intact).
   */
  persist(document: string | (() => string | Buffer)): Promise<void> {
    const render = typeof document === 'string' ? () => document : document;
    if (this.queued) {
      this.queued.render = render;
      return this.queued.promise;
    }
    const ticket = newTicket(render);
    this.queued = ticket;
    // Start on the next turn, so that a burst of changes made by one request renders once.
    if (!this.running) setImmediate(() => this.startQueued());
    return ticket.promise;
  }

  /**
   * Resolves when every change requested so far is durable (the queued write, else the running
   * one); rejects when that write failed. Never waits for writes requested after the call.
   */
  idle(): Promise<void> {
    return (this.queued ?? this.running)?.promise ?? Promise.resolve();
  }

  /** True when a write is queued or running. */
  get busy(): boolean {
    return this.queued !== null || this.running !== null;
  }

  /**
   * Writes again the document of a failed write when nothing newer was requested since
   * (the broker calls this periodically, so a transient ENOSPC or EIO heals by itself).
   * Returns the write's promise, or null when there is nothing to retry.
   */
  retryFailed(): Promise<void> | null {
    if (!this.failedRender || this.busy) return null;
    return this.persist(this.failedRender);
  }

  private startQueued(): void {
    if (this.running || !this.queued) return;
    const ticket = this.queued;
    this.queued = null;
    this.running = ticket;
    let data: Buffer;
    try {
      const rendered = ticket.render();
      data = typeof rendered === 'string' ? Buffer.from(rendered, 'utf8') : rendered;
    } catch (e) {
      this.finish(ticket, e as Error);
      return;
    }
    this.doPersist(data).then(
      () => this.finish(ticket, null),
      (e: Error) => this.finish(ticket, e),
    );
  }

  private finish(ticket: WriteTicket, error: Error | null): void {
    this.running = null;
    if (error) {
      this.failedRender = ticket.render;
      ticket.reject(error);
    } else {
      this.failedRender = null;
      this.writesCompleted++;
      ticket.resolve();
    }
    if (this.queued) this.startQueued();
  }

  private async doPersist(data: Buffer): Promise<void> {
    const dir = path.dirname(this.filePath);
    this.fs.mkdirp(dir);
    const fd = this.fs.open(this.tempPath, 'w+');
    try {
      this.fs.pwrite(fd, data, 0, data.length, 0);
      await this.fs.fsync(fd);
    } finally {
      this.fs.close(fd);
    }
    if (this.primaryValid === undefined) this.primaryValid = this.looksValid(this.filePath);
    if (this.primaryValid && this.fs.exists(this.filePath)) this.fs.rename(this.filePath, this.backupPath);
    this.fs.rename(this.tempPath, this.filePath);
    this.primaryValid = true;
    await this.fsyncDir(dir);
  }

  private tryDecode<T>(file: string, decode: (text: string) => T): { ok: true; value: T } | { ok: false; error?: string } {
    let bytes: Buffer | null;
    try {
      bytes = this.fs.readFile(file);
    } catch (e) {
      return { ok: false, error: `unreadable: ${(e as Error).message}` };
    }
    if (bytes === null) return { ok: false };
    const text = bytes.toString('utf8');
    if (text.trim().length === 0) return { ok: false };
    try {
      return { ok: true, value: decode(text) };
    } catch (e) {
      return { ok: false, error: `undecodable: ${(e as Error).message}` };
    }
  }

  /** True when `file` holds syntactically valid JSON (fastjson bare keys accepted). */
  private looksValid(file: string): boolean {
    const bytes = this.fs.readFile(file);
    if (bytes === null || bytes.length === 0) return false;
    try {
      parseLenientJson(bytes.toString('utf8'));
      return true;
    } catch {
      return false;
    }
  }

  /** Keeps a corrupt primary as `<file>.corrupt` so the next persist does not destroy evidence. */
  private setAside(): void {
    try {
      this.fs.rename(this.filePath, `${this.filePath}.corrupt`);
    } catch (e) {
      this.logger.warn(`could not rename corrupt ${this.filePath}: ${(e as Error).message}`);
    }
  }

  private async fsyncDir(dir: string): Promise<void> {
    let fd: number;
    try {
      fd = this.fs.open(dir, 'r');
    } catch {
      return; // platforms that cannot open directories
    }
    try {
      await this.fs.fsync(fd).catch(() => undefined);
    } finally {
      this.fs.close(fd);
    }
  }
}
