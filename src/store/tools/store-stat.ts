/**
 * `tsmq store stat`: what a stopped store holds, cheaply (no full CommitLog scan): bytes per
 * directory; the CommitLog's files, first offset, end of data (a scan of the last segment only,
 * like RocketMQ's normal recovery from its last files) and first/last store times; per topic and
 * queue the min offset (corrected for retention like RocketMQ's `correctMinOffset`), max offset,
 * ConsumeQueue files and the store times of the first and last live messages; each index file's
 * header; the checkpoint; whether the abort file is there.
 *
 * Units: offsets are bytes (physical) or message counts (queue); times are epoch ms.
 * Refuses a store a live broker holds (StoreInUseError), like verify.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readLong } from '../../common/message/record-codec.js';
import { parseDelayLevels } from '../store-config.js';
import { walkCommitLog } from './commit-log-walk.js';
import { checkQueue } from './consume-queue-check.js';
import { listIndexFiles, readIndexHeader, type IndexFileHeader } from './index-check.js';
import { RecordProbe } from './record-probe.js';
import { assertStoreStopped, type VerifyConfig } from './store-verify.js';
import { cqFileBytes, listNames, listQueues, SEGMENT_NAME, treeBytes, WindowReader } from './store-file-reader.js';

export interface QueueStat {
  topic: string;
  queueId: number;
  minOffset: number;
  maxOffset: number;
  /** Store time of the message at minOffset / maxOffset - 1 (0 when the queue is empty or the record is unreadable). */
  minStoreTimestampMs: number;
  maxStoreTimestampMs: number;
  consumeQueueFiles: number;
}

export interface CheckpointStat {
  physicMsgTimestampMs: number;
  logicsMsgTimestampMs: number;
  indexMsgTimestampMs: number;
  masterFlushedOffset: number;
  confirmPhyOffset: number;
}

export interface StoreStat {
  root: string;
  sizes: { commitLogBytes: number; consumeQueueBytes: number; indexBytes: number; totalBytes: number };
  commitLog: { files: number; minPhysicalOffset: number; maxPhysicalOffset: number; firstStoreTimestampMs: number; lastStoreTimestampMs: number };
  topics: number;
  queues: QueueStat[];
  indexFiles: Array<{ file: string } & IndexFileHeader>;
  checkpoint: CheckpointStat | null;
  abortFilePresent: boolean;
}

export function statStore(root: string, config: VerifyConfig): StoreStat {
  assertStoreStopped(root);
  const delayTable = parseDelayLevels(config.messageDelayLevel);
  const segmentBytes = config.mappedFileSizeCommitLog;
  const names = listNames(join(root, 'commitlog'), SEGMENT_NAME);
  // The end of the data: walk from the last segment whose first record is valid (≤ 2 segments in practice).
  let first = { min: names.length > 0 ? Number(names[0]) : 0, firstTs: 0 };
  let end = { max: first.min, lastTs: 0 };
  if (names.length > 0) {
    const whole = names.length <= 2;
    const walk = walkCommitLog(root, { segmentBytes, checkCrc: false, delayLevelTableMs: delayTable, fromSegmentIndex: whole ? 0 : names.length - 2 });
    end = { max: walk.maxPhysicalOffset, lastTs: walk.lastStoreTimestampMs };
    const probe = new RecordProbe(root, segmentBytes, first.min, walk.maxPhysicalOffset, delayTable);
    const r = probe.at(first.min);
    probe.close();
    first = { min: first.min, firstTs: r.kind === 'valid' ? r.dispatch.storeTimestamp : 0 };
  }
  const probe = new RecordProbe(root, segmentBytes, first.min, end.max, delayTable);
  const queues: QueueStat[] = [];
  const topics = new Set<string>();
  try {
    const cqBytes = cqFileBytes(config.mappedFileSizeConsumeQueue);
    for (const q of listQueues(root)) {
      const c = checkQueue(q, { root, cqFileBytes: cqBytes, minPhysicalOffset: first.min, probe: null, problem: () => {} });
      topics.add(q.topic);
      const ts = (queueOffset: number): number => {
        if (queueOffset < c.minLiveOffset || queueOffset >= c.maxOffset) return 0;
        const unit = readUnit(root, c.files, queueOffset, cqBytes);
        if (!unit) return 0;
        const rec = probe.at(unit.phy);
        return rec.kind === 'valid' ? rec.dispatch.storeTimestamp : 0;
      };
      queues.push({ topic: q.topic, queueId: q.queueId, minOffset: c.minLiveOffset, maxOffset: c.maxOffset, minStoreTimestampMs: ts(c.minLiveOffset), maxStoreTimestampMs: ts(c.maxOffset - 1), consumeQueueFiles: c.files.length });
    }
  } finally {
    probe.close();
  }
  const indexFiles = listIndexFiles(root).map((name) => {
    const r = new WindowReader(join(root, 'index', name), 64);
    try {
      const v = r.view(0, 40);
      return v.available >= 40 ? { file: `index/${name}`, ...readIndexHeader(r.buf, v.at) } : null;
    } finally {
      r.close();
    }
  });
  const sizes = { commitLogBytes: treeBytes(join(root, 'commitlog')), consumeQueueBytes: treeBytes(join(root, 'consumequeue')), indexBytes: treeBytes(join(root, 'index')), totalBytes: 0 };
  sizes.totalBytes = sizes.commitLogBytes + sizes.consumeQueueBytes + sizes.indexBytes;
  return {
    root,
    sizes,
    commitLog: { files: names.length, minPhysicalOffset: first.min, maxPhysicalOffset: end.max, firstStoreTimestampMs: first.firstTs, lastStoreTimestampMs: end.lastTs },
    topics: topics.size,
    queues,
    indexFiles: indexFiles.filter((x) => x !== null),
    checkpoint: readCheckpoint(root),
    abortFilePresent: existsSync(join(root, 'abort')),
  };
}

/** The unit at `queueOffset` from a queue's files (null when its file is absent or short). */
function readUnit(root: string, files: string[], queueOffset: number, cqBytes: number): { phy: number; size: number; tagsCode: number } | null {
  const logical = queueOffset * 20;
  const start = Math.floor(logical / cqBytes) * cqBytes;
  const file = files.find((f) => Number(f.slice(f.lastIndexOf('/') + 1)) === start);
  if (!file) return null;
  const r = new WindowReader(join(root, file), 64);
  try {
    const v = r.view(logical - start, 20);
    if (v.available < 20) return null;
    return { phy: readLong(r.buf, v.at), size: r.buf.readInt32BE(v.at + 8), tagsCode: readLong(r.buf, v.at + 12) };
  } finally {
    r.close();
  }
}

export function readCheckpoint(root: string): CheckpointStat | null {
  const path = join(root, 'checkpoint');
  if (!existsSync(path)) return null;
  const b = readFileSync(path);
  if (b.length < 40) return null;
  return { physicMsgTimestampMs: readLong(b, 0), logicsMsgTimestampMs: readLong(b, 8), indexMsgTimestampMs: readLong(b, 16), masterFlushedOffset: readLong(b, 24), confirmPhyOffset: readLong(b, 32) };
}
