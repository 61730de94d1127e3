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
 * Persists of one file are serialized (a timer persist and the shutdown persist never interleave).
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

export class ConfigFile {
  readonly filePath: string;
  private readonly fs: FileSystem;
  private readonly logger: Logger;
  /** Whether `<file>` currently holds a valid document (undefined = not checked yet). */
  private primaryValid: boolean | undefined;
  private chain: Promise<void> = Promise.resolve();
  /** Where the last `load` found its document. */
  lastLoadSource: ConfigFileSource = 'none';

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

  /** Durably replaces the document with `text` (see the persist order above). */
  persist(text: string): Promise<void> {
    const run = this.chain.then(() => this.doPersist(Buffer.from(text, 'utf8')));
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Resolves when every persist started so far has finished (successfully or not). */
  idle(): Promise<void> {
    return this.chain;
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
