/**
 * Helpers for the retention tests: local wall-clock times, file ages, a store with a manual
 * clock and a simulated disk-usage probe, and message fillers.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ManualClock } from '../../../src/common/time/clock.js';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import type { DefaultMessageStore, MessageStoreDeps } from '../../../src/store/default-message-store.js';
import type { MappedFile } from '../../../src/store/mapped-file/mapped-file.js';
import { ManualDiskUsageProbe } from '../../../src/store/retention/disk-usage-probe.js';
import type { StoreConfig } from '../../../src/store/store-config.js';
import { capturingLogger, makeMessage, openStore, smallConfig, type LogLine } from '../../support/store-fixtures.js';

export const HOUR_MS = 3_600_000;

/** Local time 2024-01-15 hh:mm (deleteWhen compares LOCAL hours). */
export function localTime(hour: number, minute = 30): number {
  return new Date(2024, 0, 15, hour, minute, 0, 0).getTime();
}

/** Small files, no waits between deletions, passes only when a test asks (timers far apart). */
export function retentionConfig(root: string, extra: Partial<StoreConfig> = {}): Partial<StoreConfig> {
  return smallConfig(root, {
    deleteCommitLogFilesInterval: 0,
    deleteConsumeQueueFilesInterval: 0,
    cleanResourceInterval: 3_600_000,
    ...extra,
  });
}

export interface RetentionStore {
  store: DefaultMessageStore;
  clock: ManualClock;
  probe: ManualDiskUsageProbe;
  logs: LogLine[];
}

export async function openRetentionStore(
  config: Partial<StoreConfig>,
  opts: { nowMs?: number; usedPercent?: number; deps?: MessageStoreDeps } = {},
): Promise<RetentionStore> {
  const clock = new ManualClock(opts.nowMs ?? localTime(10));
  const probe = new ManualDiskUsageProbe((opts.usedPercent ?? 40) / 100);
  const logger = capturingLogger();
  const store = await openStore(config, { clock, diskUsageProbe: probe, logger, ...opts.deps });
  return { store, clock, probe, logs: logger.lines };
}

/** Puts messages of `bodyBytes` to T/q0 until the CommitLog has `files` files; returns their count. */
export async function fillCommitLogFiles(store: DefaultMessageStore, files: number, bodyBytes = 1000, topic = 'T'): Promise<number> {
  let n = 0;
  while (store.commitLog.mfq.getFiles().length < files) {
    const r = await store.putMessage(makeMessage({ topic, body: seqBody(n, bodyBytes), keys: `k${n}` }));
    if (r.status !== 'PUT_OK') throw new Error(`put ${n} failed: ${r.status} ${r.remark}`);
    n++;
  }
  return n;
}

/** Body "m-<seq>" padded with '.' to `bytes`. */
export function seqBody(seq: number, bytes = 16): Buffer {
  const head = `m-${seq}`;
  return Buffer.from(head.padEnd(Math.max(bytes, head.length), '.'));
}

/** Sequence number encoded by seqBody. */
export function seqOf(record: Buffer): number {
  const body = decodeRecord(record, 0, { readBody: true, checkCrc: false }).body.toString();
  return Number(/^m-(\d+)/.exec(body)![1]);
}

/** Commits buffered bytes (so no later write moves mtimes), then sets a file's last-modified time to now − age. */
export function setAge(store: DefaultMessageStore, mf: MappedFile, nowMs: number, ageMs: number): void {
  store.commitLog.mfq.commit(0);
  const t = (nowMs - ageMs) / 1000;
  fs.utimesSync(mf.filePath, t, t);
}

/** Segment names present in a directory (preallocated next files included). */
export function segmentNames(dir: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => /^\d{20}$/.test(n)).sort() : [];
}

export function clDir(root: string): string {
  return path.join(root, 'commitlog');
}

export function cqDir(root: string, topic = 'T', queueId = 0): string {
  return path.join(root, 'consumequeue', topic, String(queueId));
}

export function problems(logs: LogLine[]): LogLine[] {
  return logs.filter((l) => l.level === 'warn' || l.level === 'error');
}

export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs = 3000, stepMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
