/**
 * Base of the JSON metadata managers (mirrors RocketMQ's `ConfigManager`): one document per
 * manager under `<storePathRootDir>/config/`, loaded once at start-up and persisted through
 * the crash-safe ConfigFile.
 */
import type { Logger } from '../../common/logging/logger.js';
import type { FileSystem } from '../../common/fs/file-system.js';
import { ConfigFile } from './config-file.js';
import { parseLenientJson } from './lenient-json.js';

export interface ConfigManagerOptions {
  fs?: FileSystem;
  logger?: Logger;
}

export abstract class ConfigManager {
  protected readonly configFile: ConfigFile;

  protected constructor(filePath: string, opts: ConfigManagerOptions = {}) {
    this.configFile = new ConfigFile(filePath, opts);
  }

  get filePath(): string {
    return this.configFile.filePath;
  }

  /** The whole document, as written to disk (a JSON-serializable object). */
  abstract encode(): object;

  /**
   * Replaces the in-memory state from a decoded document. Must validate first and only then
   * assign, and throw (with a reason) for a document of the wrong shape.
   */
  protected abstract decode(doc: Record<string, unknown>): void;

  /**
   * Loads the document (primary, else backup). Returns false when nothing was found and the
   * manager starts with its defaults. @throws ConfigFileCorruptError (see ConfigFile.load).
   */
  load(): boolean {
    const found = this.configFile.load((text) => {
      const doc = parseLenientJson(text);
      if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('top level is not a JSON object');
      this.decode(doc as Record<string, unknown>);
      return true;
    });
    return found === true;
  }

  /**
   * Resolves when every change made so far is durable (the write that includes it finished);
   * rejects with that write's error. Does not start a write.
   */
  whenPersisted(): Promise<void> {
    return this.configFile.idle();
  }

  /**
   * Writes the current state durably. Calls made while a write is queued share it (the
   * document is rendered when the write starts), so bursts of changes cost one write.
   */
  persist(): Promise<void> {
    return this.configFile.persist(this.render);
  }

  /**
   * Persists after a change to the entry `key` (a topic, a group) and remembers the write until
   * it is durable, so a request that created the entry can wait for it (`durable`) before it
   * answers. Failures are logged here; the entry stays pending until a later write succeeds.
   */
  protected persistChange(key: string, logError: (message: string) => void): void {
    const write = this.persist();
    this.pendingKeys.set(key, write);
    write.then(
      () => {
        if (this.pendingKeys.get(key) === write) this.pendingKeys.delete(key);
      },
      (e: Error) => logError(`persist ${this.filePath} failed: ${e.message}`),
    );
  }

  /**
   * The write that makes the latest change to `key` durable, or null when it already is (or was
   * never changed). Rejects with the write's error; callers decide whether that fails their answer.
   */
  durable(key: string): Promise<void> | null {
    return this.pendingKeys.get(key) ?? null;
  }

  /** Writes again after a failed write (see ConfigFile.retryFailed); null when nothing failed. */
  retryFailedPersist(): Promise<void> | null {
    return this.configFile.retryFailed();
  }

  /** Successful writes of this manager's document since start (for tests and metrics). */
  get writesCompleted(): number {
    return this.configFile.writesCompleted;
  }

  /** Entries changed by requests whose write has not completed yet → that write. */
  private readonly pendingKeys = new Map<string, Promise<void>>();

  private readonly render = (): string | Buffer => this.renderDocument();

  /**
   * What is written to disk: `encode()` as JSON with 2-space indentation, as text or as its UTF-8
   * bytes. A manager may render the same bytes faster.
   */
  protected renderDocument(): string | Buffer {
    return JSON.stringify(this.encode(), null, 2);
  }
}

/** A plain JSON object (not null, not an array), else throws naming `what`. */
export function asObject(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${what} is not an object`);
  return value as Record<string, unknown>;
}

/** A finite number (numeric strings accepted, as fastjson may quote longs), else throws. */
export function asNumber(value: unknown, what: string): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new Error(`${what} is not a number`);
  return n;
}
