/**
 * Message-store configuration keys (RocketMQ `MessageStoreConfig` names and 5.x defaults,
 * spec Appendix A), declared once with type, default, validator and doc.
 *
 * `resolveStoreConfig(raw)` turns broker.conf strings into a typed `StoreConfig`;
 * `DefaultMessageStore.open` takes a `Partial<StoreConfig>` and fills the defaults.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { resolveConfig, type ConfigKey, type ConfigValue } from '../common/config/config-spec.js';

export type FlushDiskType = 'ASYNC_FLUSH' | 'SYNC_FLUSH';
export type BrokerRole = 'ASYNC_MASTER' | 'SYNC_MASTER' | 'SLAVE';

const positive = (v: number): string | null => (Number.isInteger(v) && v > 0 ? null : 'must be a positive integer');
const nonNegative = (v: number): string | null => (Number.isInteger(v) && v >= 0 ? null : 'must be an integer >= 0');
/** A disk ratio in percent: any integer, clamped where it is used (retention-policy.ts), as RocketMQ does. */
const percent = (v: number): string | null => (Number.isInteger(v) ? null : 'must be an integer percentage');
const num = (name: string, def: number, doc: string, validate = positive, aliases?: string[]): ConfigKey<number> => ({
  name,
  type: 'number',
  default: def,
  doc,
  validate,
  ...(aliases ? { aliases } : {}),
});

export const storeConfigSpec = {
  storePathRootDir: {
    name: 'storePathRootDir',
    type: 'string',
    default: path.join(os.homedir(), 'store'),
    doc: 'Root directory of the store (commitlog/, consumequeue/, index/, checkpoint, abort, lock).',
  } as ConfigKey<string>,
  storePathCommitLog: {
    name: 'storePathCommitLog',
    type: 'string',
    default: '',
    doc: 'CommitLog directory; empty means <storePathRootDir>/commitlog. Multiple directories are not supported.',
  } as ConfigKey<string>,
  mappedFileSizeCommitLog: num('mappedFileSizeCommitLog', 1024 * 1024 * 1024, 'CommitLog segment size in bytes (1 GiB).', (v) =>
    Number.isInteger(v) && v >= 4096 ? null : 'must be an integer >= 4096',
  ),
  mappedFileSizeConsumeQueue: num('mappedFileSizeConsumeQueue', 300000 * 20, 'ConsumeQueue segment size in bytes; rounded up to a multiple of 20.'),
  maxMessageSize: num('maxMessageSize', 4 * 1024 * 1024, 'Largest accepted message BODY in bytes; records may add up to 64 KiB on top.', (v) =>
    Number.isInteger(v) && v >= 10 ? null : 'must be an integer >= 10',
  ),
  flushDiskType: {
    name: 'flushDiskType',
    type: 'string',
    default: 'ASYNC_FLUSH',
    doc: 'ASYNC_FLUSH (periodic fdatasync) or SYNC_FLUSH (group commit before replying).',
    validate: (v: string) => (v === 'ASYNC_FLUSH' || v === 'SYNC_FLUSH' ? null : 'must be ASYNC_FLUSH or SYNC_FLUSH'),
  } as ConfigKey<string>,
  flushIntervalCommitLog: num('flushIntervalCommitLog', 500, 'ASYNC_FLUSH: ms between CommitLog flushes.'),
  flushCommitLogLeastPages: num('flushCommitLogLeastPages', 4, 'ASYNC_FLUSH: flush only when at least this many 4 KiB pages are dirty.', nonNegative),
  flushCommitLogThoroughInterval: num('flushCommitLogThoroughInterval', 10000, 'ASYNC_FLUSH: ms after which a flush ignores the page threshold.'),
  flushIntervalConsumeQueue: num('flushIntervalConsumeQueue', 1000, 'ms between ConsumeQueue flushes.'),
  flushConsumeQueueLeastPages: num('flushConsumeQueueLeastPages', 2, 'ConsumeQueue flush page threshold.', nonNegative),
  flushConsumeQueueThoroughInterval: num('flushConsumeQueueThoroughInterval', 60000, 'ms after which a ConsumeQueue flush ignores the page threshold.'),
  syncFlushTimeout: num('syncFlushTimeout', 5000, 'SYNC_FLUSH: ms a producer waits for the flush before FLUSH_DISK_TIMEOUT.'),
  checkCRCOnRecover: {
    name: 'checkCRCOnRecover',
    type: 'boolean',
    default: true,
    doc: 'Verify BODYCRC of every record scanned by recovery.',
  } as ConfigKey<boolean>,
  readUnCommitted: {
    name: 'readUnCommitted',
    type: 'boolean',
    default: false,
    doc: 'Dispatch (make consumable) past the confirm offset: in controller mode messages not yet held by every sync-state-set member, under SYNC_FLUSH unflushed messages (Apache readUnCommitted).',
  } as ConfigKey<boolean>,
  enableControllerMode: {
    name: 'enableControllerMode',
    type: 'boolean',
    default: false,
    doc: 'Controller mode (Apache brokerConfig.enableControllerMode, read by its store too): the checkpoint confirmPhyOffset holds the confirm offset, and start-up makes nothing past it consumable (src/store/ha/confirm-offset.ts).',
  } as ConfigKey<boolean>,
  maxTransferBytesOnMessageInMemory: num('maxTransferBytesOnMessageInMemory', 256 * 1024, 'Pull batch byte limit when the data is hot.'),
  maxTransferCountOnMessageInMemory: num('maxTransferCountOnMessageInMemory', 32, 'Pull batch count limit when the data is hot.'),
  maxTransferBytesOnMessageInDisk: num('maxTransferBytesOnMessageInDisk', 64 * 1024, 'Pull batch byte limit when the data is cold.'),
  maxTransferCountOnMessageInDisk: num('maxTransferCountOnMessageInDisk', 8, 'Pull batch count limit when the data is cold.'),
  accessMessageInMemoryMaxRatio: num('accessMessageInMemoryMaxRatio', 40, 'Percent of RAM behind the CommitLog end still considered in memory.', (v) =>
    v >= 0 && v <= 100 ? null : 'must be 0..100',
  ),
  maxFilterMessageSize: num('maxFilterMessageSize', 16000, 'Bytes of ConsumeQueue scanned per pull (at least maxMsgNums × 20).'),
  messageDelayLevel: {
    name: 'messageDelayLevel',
    type: 'string',
    default: '1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h',
    doc: 'Delay levels (units s, m, h, d); level n is queue n-1 of SCHEDULE_TOPIC_XXXX.',
    validate: (v: string) => {
      try {
        parseDelayLevels(v);
        return null;
      } catch (e) {
        return (e as Error).message;
      }
    },
  } as ConfigKey<string>,
  brokerRole: {
    name: 'brokerRole',
    type: 'string',
    default: 'ASYNC_MASTER',
    doc: 'ASYNC_MASTER, SYNC_MASTER or SLAVE. A SLAVE store refuses puts.',
    validate: (v: string) => (['ASYNC_MASTER', 'SYNC_MASTER', 'SLAVE'].includes(v) ? null : 'must be ASYNC_MASTER, SYNC_MASTER or SLAVE'),
  } as ConfigKey<string>,
  offsetCheckInSlave: {
    name: 'offsetCheckInSlave',
    type: 'boolean',
    default: false,
    doc: 'Whether a slave corrects pull offsets like a master.',
  } as ConfigKey<boolean>,
  destroyMapedFileIntervalForcibly: num('destroyMapedFileIntervalForcibly', 120000, 'ms after which a held segment is released forcibly.', positive, [
    'destroyMappedFileIntervalForcibly',
  ]),
  messageIndexEnable: {
    name: 'messageIndexEnable',
    type: 'boolean',
    default: true,
    doc: 'Build the IndexFile (lookups by KEYS and UNIQ_KEY).',
  } as ConfigKey<boolean>,
  indexBuildInWorker: {
    name: 'indexBuildInWorker',
    type: 'boolean',
    default: false,
    doc: 'tsmq: build the IndexFile on a worker thread (RocketMQ builds it on its reput thread, apart from puts); same files, same recovery, lookups answered after every record dispatched before them. See docs/internals/scaling.md.',
  } as ConfigKey<boolean>,
  maxHashSlotNum: num('maxHashSlotNum', 5_000_000, 'Hash slots per index file.'),
  maxIndexNum: num('maxIndexNum', 20_000_000, 'Entries per index file (a file holds maxIndexNum - 1 keys).', (v) =>
    Number.isInteger(v) && v >= 2 ? null : 'must be an integer >= 2',
  ),
  maxMsgsNumBatch: num('maxMsgsNumBatch', 64, 'Most offsets one index query collects.'),
  defaultQueryMaxNum: num('defaultQueryMaxNum', 32, 'Result limit of a lookup by unique key.'),
  // --- retention and disk space (spec §6; see src/store/retention and docs/retention.md) ---
  fileReservedTime: num('fileReservedTime', 72, 'Hours a CommitLog file is kept after its last write before it may be deleted.', (v) =>
    Number.isFinite(v) && v > 0 ? null : 'must be a number of hours > 0',
  ),
  deleteWhen: {
    name: 'deleteWhen',
    type: 'string',
    default: '04',
    doc: 'Local hour(s) of the day, separated by ";", during which expired CommitLog files are deleted ("04" = 04:00-04:59).',
    validate: (v: string) => (parseDeleteWhenHours(v) ? null : 'must be hours 0..23 separated by ";", e.g. "04" or "04;16"'),
  } as ConfigKey<string>,
  diskMaxUsedSpaceRatio: num('diskMaxUsedSpaceRatio', 75, 'Disk usage % above which expired files are deleted at any hour (any integer; used clamped to 10..95).', percent),
  diskSpaceWarningLevelRatio: num('diskSpaceWarningLevelRatio', 90, 'Disk usage % above which puts are refused (disk full; any integer; used clamped to 35..90).', percent),
  diskSpaceCleanForciblyRatio: num('diskSpaceCleanForciblyRatio', 85, 'Disk usage % above which files are deleted even if not expired (any integer; used clamped to 30..85).', percent),
  deleteCommitLogFilesInterval: num('deleteCommitLogFilesInterval', 100, 'ms to wait between two CommitLog file deletions.', nonNegative),
  deleteConsumeQueueFilesInterval: num('deleteConsumeQueueFilesInterval', 100, 'ms to wait after a ConsumeQueue that had files deleted.', nonNegative),
  deleteFileBatchMax: num('deleteFileBatchMax', 10, 'Most CommitLog files deleted by one cleaning pass.'),
  cleanResourceInterval: num('cleanResourceInterval', 10000, 'ms between cleaning passes.'),
  redeleteHangedFileInterval: num('redeleteHangedFileInterval', 120000, 'ms between forced retries of a first file that a reader still held when it was deleted.'),
  cleanFileForciblyEnable: {
    name: 'cleanFileForciblyEnable',
    type: 'boolean',
    default: true,
    doc: 'Allow deleting files that are not expired yet when disk usage passes diskSpaceCleanForciblyRatio.',
  } as ConfigKey<boolean>,
  // --- classic master/slave replication (spec §9; src/store/ha, docs/ha.md) ---
  haSendHeartbeatInterval: num('haSendHeartbeatInterval', 5000, 'HA: ms between offset reports of an idle slave and heartbeat frames of an idle master.'),
  haHousekeepingInterval: num('haHousekeepingInterval', 20000, 'HA: ms without any byte read after which either side closes the replication connection.'),
  haTransferBatchSize: num('haTransferBatchSize', 32 * 1024, 'HA: largest CommitLog data frame body the master sends, in bytes.', (v) =>
    Number.isInteger(v) && v > 0 && v <= 64 * 1024 * 1024 ? null : 'must be an integer in 1..67108864',
  ),
  haMaxGapNotInSync: num('haMaxGapNotInSync', 256 * 1024 * 1024, 'HA: a slave more than this many bytes behind the master is not in sync (SYNC_MASTER then answers SLAVE_NOT_AVAILABLE).', positive, [
    'haSlaveFallbehindMax',
  ]),
  slaveTimeout: num('slaveTimeout', 3000, 'SYNC_MASTER: ms a producer waits for a slave ack before FLUSH_SLAVE_TIMEOUT.'),
  haMasterAddress: {
    name: 'haMasterAddress',
    type: 'string',
    default: '',
    doc: "SLAVE: the master's HA address host:port; empty = learn it from the nameserver registration reply.",
  } as ConfigKey<string>,
  // --- I/O engine (spec §4.3, §5.3; docs/internals/io-engine.md) ---
  warmMapedFileEnable: {
    name: 'warmMapedFileEnable',
    type: 'string',
    default: '',
    doc:
      'Pre-write each CommitLog segment with zeros (and force it) before it is used: the next one in the background, ' +
      "a fresh store's first one at start-up. true/false; unset = on under SYNC_FLUSH, off under ASYNC_FLUSH.",
    validate: (v: string) => (v === '' || v === 'true' || v === 'false' ? null : 'must be true or false'),
    aliases: ['warmMappedFileEnable'],
  } as ConfigKey<string>,
  flushLeastPagesWhenWarmMapedFile: num('flushLeastPagesWhenWarmMapedFile', 4096, 'Pre-writing a segment forces it every this many 4 KiB pages (16 MiB).', positive, [
    'flushLeastPagesWhenWarmMappedFile',
  ]),
  commitCommitLogAsync: {
    name: 'commitCommitLogAsync',
    type: 'boolean',
    default: false,
    doc:
      'tsmq: commit the CommitLog write buffer with asynchronous positional writes on the libuv pool (the role of ' +
      "RocketMQ's CommitRealTimeService thread) instead of a synchronous pwrite on the store thread; puts are still " +
      'answered only once their bytes are in the page cache. Off by default: on a small shared machine the thread ' +
      'hand-over per commit costs more than the blocking it saves (docs/internals/scaling.md).',
  } as ConfigKey<boolean>,
  transientStorePoolEnable: {
    name: 'transientStorePoolEnable',
    type: 'boolean',
    default: false,
    doc:
      'Accepted for broker.conf compatibility; tsmq always works like this mode: appends go to a write buffer that is ' +
      'committed to the file (pwrite) and then flushed (fdatasync), readers see written data at once.',
  } as ConfigKey<boolean>,
  dataReadAheadEnable: {
    name: 'dataReadAheadEnable',
    type: 'boolean',
    default: true,
    doc:
      'Read ahead in CommitLog files (Apache MessageStoreConfig, default true; madvise MADV_NORMAL vs MADV_RANDOM on its ' +
      'mapped files; set live by SET_COMMITLOG_READ_MODE / mqadmin setCommitLogReadAheadMode). Shown and kept by tsmq ' +
      'but it changes no I/O: tsmq reads the CommitLog with positional reads (no mmap), so the kernel read-ahead applies as is.',
  } as ConfigKey<boolean>,
} satisfies Record<string, ConfigKey<ConfigValue>>;

export interface StoreConfig {
  storePathRootDir: string;
  storePathCommitLog: string;
  mappedFileSizeCommitLog: number;
  mappedFileSizeConsumeQueue: number;
  maxMessageSize: number;
  flushDiskType: FlushDiskType;
  flushIntervalCommitLog: number;
  flushCommitLogLeastPages: number;
  flushCommitLogThoroughInterval: number;
  flushIntervalConsumeQueue: number;
  flushConsumeQueueLeastPages: number;
  flushConsumeQueueThoroughInterval: number;
  syncFlushTimeout: number;
  checkCRCOnRecover: boolean;
  /** Dispatch past the confirm offset (controller mode) and the flushed offset (SYNC_FLUSH). */
  readUnCommitted: boolean;
  /** Controller mode: confirm offset persisted in the checkpoint and bounding start-up dispatch. */
  enableControllerMode: boolean;
  maxTransferBytesOnMessageInMemory: number;
  maxTransferCountOnMessageInMemory: number;
  maxTransferBytesOnMessageInDisk: number;
  maxTransferCountOnMessageInDisk: number;
  accessMessageInMemoryMaxRatio: number;
  maxFilterMessageSize: number;
  messageDelayLevel: string;
  brokerRole: BrokerRole;
  offsetCheckInSlave: boolean;
  destroyMapedFileIntervalForcibly: number;
  messageIndexEnable: boolean;
  indexBuildInWorker: boolean;
  maxHashSlotNum: number;
  maxIndexNum: number;
  maxMsgsNumBatch: number;
  defaultQueryMaxNum: number;
  haSendHeartbeatInterval: number;
  haHousekeepingInterval: number;
  haTransferBatchSize: number;
  haMaxGapNotInSync: number;
  slaveTimeout: number;
  haMasterAddress: string;
  fileReservedTime: number;
  deleteWhen: string;
  diskMaxUsedSpaceRatio: number;
  diskSpaceWarningLevelRatio: number;
  diskSpaceCleanForciblyRatio: number;
  deleteCommitLogFilesInterval: number;
  deleteConsumeQueueFilesInterval: number;
  deleteFileBatchMax: number;
  cleanResourceInterval: number;
  redeleteHangedFileInterval: number;
  cleanFileForciblyEnable: boolean;
  /** Resolved from the key: unset means SYNC_FLUSH. */
  warmMapedFileEnable: boolean;
  /** tsmq: CommitLog commits as asynchronous positional writes on the libuv pool (default false; see its spec doc). */
  commitCommitLogAsync: boolean;
  flushLeastPagesWhenWarmMapedFile: number;
  transientStorePoolEnable: boolean;
  /** Apache's read-ahead switch; recorded only, no effect on tsmq's I/O (see its spec doc). */
  dataReadAheadEnable: boolean;
}

/** Typed config from broker.conf strings. @throws ConfigError on a bad value. */
export function resolveStoreConfig(raw: Record<string, string>): StoreConfig {
  return normalizeStoreConfig(resolveConfig(storeConfigSpec, raw) as unknown as StoreConfig);
}

/** Defaults for every key not given, validation, and derived rounding (CQ size to a multiple of 20). */
export function completeStoreConfig(partial: Partial<StoreConfig>): StoreConfig {
  const raw: Record<string, string> = {};
  for (const [k, v] of Object.entries(partial)) if (v !== undefined) raw[k] = String(v);
  return resolveStoreConfig(raw);
}

function normalizeStoreConfig(c: StoreConfig): StoreConfig {
  const cq = Math.ceil(c.mappedFileSizeConsumeQueue / 20) * 20;
  const warm = c.warmMapedFileEnable as unknown as string;
  const warmMapedFileEnable = warm === '' ? c.flushDiskType === 'SYNC_FLUSH' : warm === 'true';
  return { ...c, mappedFileSizeConsumeQueue: cq, warmMapedFileEnable };
}

/** `<root>/commitlog` unless storePathCommitLog is set. */
export function commitLogDir(c: StoreConfig): string {
  return c.storePathCommitLog !== '' ? c.storePathCommitLog : path.join(c.storePathRootDir, 'commitlog');
}

/**
 * Parses `messageDelayLevel` ("1s 5s 10s 30s 1m … 2h") into ms per level (index 0 = level 1),
 * like `DefaultMessageStore.parseDelayLevel`. @throws Error on an unknown unit or a bad number.
 */
export function parseDelayLevels(text: string): number[] {
  const unitMs: Record<string, number> = { s: 1000, m: 60000, h: 3600000, d: 86400000 };
  return text
    .trim()
    .split(/\s+/)
    .filter((t) => t.length > 0)
    .map((token) => {
      const unit = token.slice(-1);
      const value = Number(token.slice(0, -1));
      if (!(unit in unitMs) || !Number.isFinite(value) || value < 0) throw new Error(`bad delay level "${token}"`);
      return value * unitMs[unit]!;
    });
}

/**
 * Parses `deleteWhen` ("04", "04;16", RocketMQ `UtilAll.isItTimeToDo`) into local hours 0..23;
 * null when any part is not such an hour. Empty parts (a trailing ";") are ignored.
 */
export function parseDeleteWhenHours(text: string): number[] | null {
  const parts = text.split(';').map((p) => p.trim()).filter((p) => p.length > 0);
  if (parts.length === 0) return null;
  const hours: number[] = [];
  for (const p of parts) {
    if (!/^\d{1,2}$/.test(p)) return null;
    const h = Number(p);
    if (h > 23) return null;
    hours.push(h);
  }
  return hours;
}
