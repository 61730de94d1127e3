/**
 * `MessageStore`: the public, typed face of tsmq's store (RocketMQ `DefaultMessageStore`) for
 * use inside a Node process, without a broker. It converts between the public shapes
 * (stored-message.ts) and the store's internal ones and adds `consume()`, an async iterator
 * over one queue that waits for new messages through the store's message-arriving listener
 * (no polling). Everything else is the store itself: same files, same recovery, same formats
 * as `tsmq start`, so a directory written here can be served by a broker later and vice versa.
 */
import pino from 'pino';
import type { Logger } from '../common/logging/logger.js';
import { wrapPino } from '../common/logging/logger.js';
import type { SocketAddress } from '../common/message/message.js';
import { decodeRecord } from '../common/message/record-codec.js';
import { DefaultMessageStore } from '../store/default-message-store.js';
import type { BoundaryType, GetMessageStatus } from '../store/message-store.js';
import type { StoreConfig } from '../store/store-config.js';
import { MessageArrivals } from './message-arrivals.js';
import { MessageStoreError, toMessageInner, toStoredMessage, type MessageInput, type PutResult, type StoredMessage, type StoredPutStatus } from './stored-message.js';

/** Log levels of the embedded API's logger (pino's); logs are JSON lines on stderr. */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

/**
 * Options of `MessageStore.open`: RocketMQ's `MessageStoreConfig` key names and units
 * (`mappedFileSizeCommitLog` in bytes, `flushIntervalCommitLog` in ms, `fileReservedTime` in
 * hours, ...; `docs/library.md` lists them). Only `storePathRootDir` is required.
 */
export interface MessageStoreOptions extends Partial<StoreConfig> {
  /** Store root directory (created when missing): commitlog/, consumequeue/, index/, checkpoint, lock. */
  storePathRootDir: string;
  /** Logging level of the store's own log lines (stderr); default 'warn'. */
  logLevel?: LogLevel;
}

/** Arguments of `getMessage` (RocketMQ `getMessage(group, topic, queueId, offset, maxMsgNums, filter)`). */
export interface GetMessageRequest {
  /** Consumer group; recorded nowhere by the store, kept for RocketMQ's signature. */
  group: string;
  topic: string;
  queueId: number;
  /** Queue offset to read from. */
  offset: number;
  /** Most messages to return (the store also caps a batch by maxTransfer* bytes/counts). */
  maxMsgNums: number;
}

/** Answer of `getMessage` with RocketMQ's `GetMessageStatus` and offset rules. */
export interface GetMessageResponse {
  /** FOUND, NO_MESSAGE_IN_QUEUE, OFFSET_OVERFLOW_ONE (read at the end), OFFSET_TOO_SMALL, ... */
  status: GetMessageStatus;
  /** Where the next read should start (corrected offset for OFFSET_* statuses). */
  nextBeginOffset: number;
  minOffset: number;
  maxOffset: number;
  messages: StoredMessage[];
}

/** Arguments of `queryMessage` (lookup in the IndexFile by KEYS entry or UNIQ_KEY). */
export interface QueryMessageRequest {
  topic: string;
  key: string;
  /** Most messages to return (capped by maxMsgsNumBatch, 64). */
  maxNum: number;
  /** Earliest store time, epoch ms; default 0. */
  beginMs?: number;
  /** Latest store time, epoch ms; default no limit. */
  endMs?: number;
}

/** Where `consume()` starts: a queue offset, the queue's first message or its end. */
export type ConsumeFrom = number | 'first' | 'last';

export interface ConsumeOptions {
  topic: string;
  queueId?: number;
  /** Default 'first' (the queue's min offset). 'last' yields only messages put after the call. */
  from?: ConsumeFrom;
  /** Ends the iteration (the `for await` loop exits normally). */
  signal?: AbortSignal;
  /** Messages fetched per store read; default 32. */
  batchSize?: number;
}

function levelLogger(level: LogLevel): Logger {
  return wrapPino(pino({ level }, pino.destination({ fd: 2, sync: false })));
}

const NOT_STORED = new Set(['SERVICE_NOT_AVAILABLE', 'CREATE_MAPPED_FILE_FAILED', 'MESSAGE_ILLEGAL', 'PROPERTIES_SIZE_EXCEEDED', 'OS_PAGE_CACHE_BUSY', 'UNKNOWN_ERROR']);

/** How a wrapped store is owned: by this object (open) or by a broker (startBroker). */
export interface StoreBinding {
  inner: DefaultMessageStore;
  arrivals: MessageArrivals;
  /** Closes the inner store; null when someone else (the broker) owns it. */
  close: (() => Promise<void>) | null;
  /** STOREHOST written into records put through this object (the broker's address under startBroker). */
  storeHost: SocketAddress;
}

/**
 * An embedded RocketMQ message store: CommitLog, ConsumeQueues, IndexFile, checkpoint and
 * recovery, byte-compatible with Apache RocketMQ's store.
 *
 * ```ts
 * const store = await MessageStore.open({ storePathRootDir: '/tmp/my-store' });
 * const r = await store.putMessage({ topic: 'Orders', body: 'hello', keys: ['order-1'] });
 * for await (const m of store.consume({ topic: 'Orders', from: 'first' })) { ... }
 * await store.close();
 * ```
 */
export class MessageStore {
  private readonly inner: DefaultMessageStore;
  private readonly arrivals: MessageArrivals;
  private readonly closeInner: (() => Promise<void>) | null;
  private readonly host: SocketAddress;
  private closing: Promise<void> | null = null;

  /** @internal use `MessageStore.open` or `startBroker`. */
  constructor(binding: StoreBinding) {
    this.inner = binding.inner;
    this.arrivals = binding.arrivals;
    this.closeInner = binding.close;
    this.host = binding.storeHost;
  }

  /**
   * Opens the store at `options.storePathRootDir`, creating it when empty, and recovers it as
   * a broker start does (normal recovery after `close()`, abnormal after a crash: the abort
   * file is there). Only one process may have a store open (`lock` file).
   * @throws StoreLockedError when another live process has the store open, ConfigError for a
   *   bad option value, SegmentLoadError for a segment file of the wrong size.
   */
  static async open(options: MessageStoreOptions): Promise<MessageStore> {
    if (!options || typeof options.storePathRootDir !== 'string' || options.storePathRootDir === '') {
      throw new MessageStoreError('CONFIG_INVALID', 'MessageStore.open: storePathRootDir is required');
    }
    const { logLevel, ...config } = options;
    const inner = await DefaultMessageStore.open(config, { logger: levelLogger(logLevel ?? 'warn') });
    const arrivals = new MessageArrivals();
    inner.setMessageArrivingListener((topic, queueId) => arrivals.notify(topic, queueId));
    return new MessageStore({ inner, arrivals, close: () => inner.shutdown(), storeHost: { ip: Buffer.from([127, 0, 0, 1]), port: 0 } });
  }

  /** The resolved configuration (RocketMQ key names, defaults filled in). */
  get config(): Readonly<StoreConfig> {
    return this.inner.config;
  }

  /**
   * Appends one message (RocketMQ `putMessage`). Resolves once the record is appended (and,
   * under SYNC_FLUSH, flushed); the message is readable by `getMessage` when this resolves.
   * @throws MessageStoreError MESSAGE_ILLEGAL (bad input, body over maxMessageSize),
   *   PROPERTIES_SIZE_EXCEEDED, SERVICE_NOT_AVAILABLE (closed, disk full, slave role) etc.,
   *   with RocketMQ's status as `code`; nothing was stored then.
   */
  async putMessage(message: MessageInput): Promise<PutResult> {
    const r = await this.inner.putMessage(toMessageInner(message, this.storeHost()));
    return this.toPutResult(r.status, r.appendResult, r.remark);
  }

  /**
   * Appends a batch atomically (RocketMQ's batch put): every message goes to the same topic and
   * queue, with consecutive queue offsets and CommitLog positions and one store time, or none is
   * stored. Results are in input order.
   * @throws MessageStoreError as putMessage; MESSAGE_ILLEGAL when the messages do not share one
   *   topic and queue or the list is empty.
   */
  async putMessages(messages: MessageInput[]): Promise<PutResult[]> {
    if (!Array.isArray(messages) || messages.length === 0) throw new MessageStoreError('MESSAGE_ILLEGAL', 'putMessages needs a non-empty array');
    const inners = messages.map((m) => toMessageInner(m, this.storeHost()));
    const first = inners[0]!;
    for (const m of inners) {
      if (m.topic !== first.topic || m.queueId !== first.queueId) {
        throw new MessageStoreError('MESSAGE_ILLEGAL', `a batch goes to one topic and queue: ${first.topic}/${first.queueId} and ${m.topic}/${m.queueId} differ`);
      }
    }
    const r = await this.inner.putMessages(inners);
    if (!r.appendResults) throw new MessageStoreError(r.status, r.remark ?? r.status);
    return r.appendResults.map((a) => this.toPutResult(r.status, a, r.remark));
  }

  /**
   * Reads up to `maxMsgNums` messages of a queue from `offset` (RocketMQ `getMessage`, no filter).
   * @throws MessageStoreError SERVICE_NOT_AVAILABLE after close.
   */
  async getMessage(req: GetMessageRequest): Promise<GetMessageResponse> {
    const r = await this.guard(() => this.inner.getMessage(req.group, req.topic, req.queueId, req.offset, req.maxMsgNums, null));
    return {
      status: r.status,
      nextBeginOffset: r.nextBeginOffset,
      minOffset: r.minOffset,
      maxOffset: r.maxOffset,
      messages: r.messages.map((b) => toStoredMessage(decodeRecord(b))),
    };
  }

  /**
   * Messages of `topic` whose KEYS contain `key` or whose UNIQ_KEY equals it, stored within
   * [beginMs, endMs], oldest first (RocketMQ `queryMessage`; needs messageIndexEnable, the default).
   */
  async queryMessage(req: QueryMessageRequest): Promise<StoredMessage[]> {
    const r = await this.guard(() => this.inner.queryMessage(req.topic, req.key, req.maxNum, req.beginMs ?? 0, req.endMs ?? Number.MAX_SAFE_INTEGER));
    return r.messages.map((b) => toStoredMessage(decodeRecord(b)));
  }

  /** The message whose record starts at `physicalOffset`, or null (RocketMQ `lookMessageByOffset`). */
  async lookMessageByOffset(physicalOffset: number): Promise<StoredMessage | null> {
    const m = await this.inner.lookMessageByOffset(physicalOffset);
    return m ? toStoredMessage(m) : null;
  }

  /**
   * Queue offset of the first message stored at or after `timestampMs` ('LOWER', default) or of
   * the last one stored at or before it ('UPPER') (RocketMQ `getOffsetInQueueByTime`).
   */
  getOffsetInQueueByTime(req: { topic: string; queueId: number; timestampMs: number; boundary?: BoundaryType }): Promise<number> {
    return this.inner.getOffsetInQueueByTime(req.topic, req.queueId, req.timestampMs, req.boundary ?? 'LOWER');
  }

  /** Smallest queue offset still stored (0 for an unknown queue). */
  minOffset(q: { topic: string; queueId: number }): number {
    return this.inner.getMinOffsetInQueue(q.topic, q.queueId);
  }

  /** Next queue offset to be written, i.e. the number of messages ever put (0 for an unknown queue). */
  maxOffset(q: { topic: string; queueId: number }): number {
    return this.inner.getMaxOffsetInQueue(q.topic, q.queueId);
  }

  /** Topic → queue id → max offset, for every queue in the store. */
  topics(): Map<string, Map<number, number>> {
    return this.inner.getTopicQueueTable();
  }

  /** Forces the CommitLog and every ConsumeQueue to disk (fdatasync) now, whatever flushDiskType says. */
  async flush(): Promise<void> {
    await this.inner.commitLog.mfq.flush(0);
    await this.inner.consumeQueueStore.flushAll(0);
  }

  /**
   * Iterates over a queue's messages in order and then waits for new ones (woken by the store's
   * dispatch, no polling). Ends when `signal` aborts, the loop breaks or the store closes.
   * Offsets below the queue's min (deleted files) are skipped to the min, as a pull does.
   */
  async *consume(opts: ConsumeOptions): AsyncGenerator<StoredMessage, void, undefined> {
    const topic = opts.topic;
    const queueId = opts.queueId ?? 0;
    const batch = opts.batchSize ?? 32;
    const from = opts.from ?? 'first';
    let offset = from === 'first' ? this.minOffset({ topic, queueId }) : from === 'last' ? this.maxOffset({ topic, queueId }) : from;
    if (!Number.isInteger(offset) || offset < 0) throw new MessageStoreError('ILLEGAL_ARGUMENT', `consume: from must be 'first', 'last' or a queue offset >= 0, got ${String(from)}`);
    while (!opts.signal?.aborted && !this.arrivals.isClosed) {
      const w = this.arrivals.wait(topic, queueId, opts.signal);
      let r: GetMessageResponse;
      try {
        r = await this.getMessage({ group: '', topic, queueId, offset, maxMsgNums: batch });
      } catch (e) {
        w.cancel();
        if (this.arrivals.isClosed) return;
        throw e;
      }
      if (r.messages.length > 0) {
        w.cancel();
        for (const m of r.messages) {
          if (opts.signal?.aborted) return;
          yield m;
          offset = m.queueOffset + 1;
        }
        if (r.nextBeginOffset > offset) offset = r.nextBeginOffset;
        continue;
      }
      if (r.nextBeginOffset !== offset) {
        w.cancel();
        offset = r.nextBeginOffset;
        continue;
      }
      await w.promise;
    }
  }

  /**
   * Clean shutdown (flush, checkpoint, abort file removed); pending `consume()` loops end.
   * Idempotent. A store obtained from `startBroker` is closed by the broker's `close()` instead.
   */
  close(): Promise<void> {
    if (!this.closeInner) return Promise.reject(new MessageStoreError('ILLEGAL_STATE', 'this store belongs to a broker: close the broker (startBroker(...).close())'));
    this.closing ??= (async () => {
      this.arrivals.close();
      await this.closeInner!();
    })();
    return this.closing;
  }

  private storeHost(): SocketAddress {
    return this.host;
  }

  private toPutResult(status: string, a: { msgId: string; queueOffset: number; wroteOffset: number; storeTimestamp: number } | undefined, remark: string | undefined): PutResult {
    if (!a || NOT_STORED.has(status)) throw new MessageStoreError(status, remark ?? status);
    return { status: status as StoredPutStatus, msgId: a.msgId, queueOffset: a.queueOffset, physicalOffset: a.wroteOffset, storeTimestampMs: a.storeTimestamp };
  }

  private async guard<T>(f: () => Promise<T>): Promise<T> {
    try {
      return await f();
    } catch (e) {
      if (e instanceof Error && (e as { code?: string }).code === 'SERVICE_NOT_AVAILABLE') throw new MessageStoreError('SERVICE_NOT_AVAILABLE', e.message, { cause: e });
      throw e;
    }
  }
}
