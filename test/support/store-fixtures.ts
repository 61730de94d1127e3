/**
 * Helpers for store tests: temp store roots, message builders and small-file store configs.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { MessageInner } from '../../src/common/message/message.js';
import { silentLogger } from '../../src/common/logging/logger.js';
import { ManualClock } from '../../src/common/time/clock.js';
import { DefaultMessageStore, type MessageStoreDeps } from '../../src/store/default-message-store.js';
import type { StoreConfig } from '../../src/store/store-config.js';

export function tempDir(prefix = 'tsmq-store-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

export interface MessageSpec {
  topic?: string;
  queueId?: number;
  body?: Buffer | string;
  tags?: string;
  keys?: string;
  properties?: Record<string, string>;
  sysFlag?: number;
  bornTimestamp?: number;
}

/** A message from 127.0.0.1:5000 to a store host 127.0.0.1:10911. */
export function makeMessage(spec: MessageSpec = {}): MessageInner {
  const props = new Map<string, string>();
  if (spec.tags !== undefined) props.set('TAGS', spec.tags);
  if (spec.keys !== undefined) props.set('KEYS', spec.keys);
  for (const [k, v] of Object.entries(spec.properties ?? {})) props.set(k, v);
  const body = spec.body === undefined ? Buffer.from('hello') : Buffer.isBuffer(spec.body) ? spec.body : Buffer.from(spec.body);
  return {
    topic: spec.topic ?? 'T',
    queueId: spec.queueId ?? 0,
    flag: 0,
    body,
    properties: props,
    sysFlag: spec.sysFlag ?? 0,
    bornTimestamp: spec.bornTimestamp ?? 1_700_000_000_000,
    bornHost: { ip: Buffer.from([127, 0, 0, 1]), port: 5000 },
    storeHost: { ip: Buffer.from([127, 0, 0, 1]), port: 10911 },
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
  };
}

/** Small files: 4 KiB CommitLog segments, 10-entry ConsumeQueue files. */
export function smallConfig(root: string, extra: Partial<StoreConfig> = {}): Partial<StoreConfig> {
  return {
    storePathRootDir: root,
    mappedFileSizeCommitLog: 4096,
    mappedFileSizeConsumeQueue: 200,
    maxHashSlotNum: 1000,
    maxIndexNum: 4000,
    ...extra,
  };
}

export async function openStore(config: Partial<StoreConfig>, deps: MessageStoreDeps = {}): Promise<DefaultMessageStore> {
  return DefaultMessageStore.open(config, { logger: silentLogger, clock: new ManualClock(1_700_000_000_000), ...deps });
}

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  obj: object;
}

/** A Logger that keeps every line (children share the list). */
export function capturingLogger(lines: LogLine[] = []): import('../../src/common/logging/logger.js').Logger & { lines: LogLine[] } {
  const at =
    (level: LogLine['level']) =>
    (obj: object | string, msg?: string): void => {
      if (typeof obj === 'string') lines.push({ level, msg: obj, obj: {} });
      else lines.push({ level, msg: msg ?? '', obj });
    };
  const logger = {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return logger;
}

/**
 * Waits until everything flushed is dispatched to the ConsumeQueues. Under SYNC_FLUSH a put is
 * answered after its group commit and dispatched one event-loop turn later (GroupCommitService
 * reports the flush once the next fdatasync is issued), so a test that reads the ConsumeQueue
 * right after a put awaits this first (no-op under ASYNC_FLUSH). Rejects after `timeoutMs`.
 */
export async function dispatched(store: DefaultMessageStore, timeoutMs = 5000): Promise<void> {
  if (store.config.flushDiskType !== 'SYNC_FLUSH') return; // ASYNC_FLUSH dispatches within the put
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await new Promise((r) => setImmediate(r));
    // SYNC_FLUSH dispatches only flushed data: done once it is behind by no more than the unflushed tail
    if (store.dispatchBehindBytes() <= store.getMaxPhyOffset() - store.getFlushedPhyOffset()) return;
    if (Date.now() > deadline) throw new Error(`dispatch still ${store.dispatchBehindBytes()} bytes behind after ${timeoutMs} ms`);
  }
}
