/**
 * `tsmq store dump`: the raw contents of a stopped store, by offset range, as objects the CLI
 * prints as text or JSON lines.
 *
 * - `dumpCommitLog`: records from a physical offset (a record start; default the first) up to an
 *   end offset or a count: each with its fields (RocketMQ `MessageExt` names), properties, body
 *   size and a printable preview; a blank end-of-file filler as `blank`; the first invalid record
 *   as `invalid` with the reason (the dump stops there, like recovery).
 * - `dumpConsumeQueue`: units of one queue by queue-offset range, with file and byte offset.
 * - `dumpIndex`: one index file's header, its non-empty hash slots and its entries by range.
 * - `readCheckpoint` (store-stat.ts) for the checkpoint.
 */
import { join } from 'node:path';
import { checkRecord, decodeRecord, readLong } from '../../common/message/record-codec.js';
import { createMessageId, socketAddressToString } from '../../common/message/msgid.js';
import { BLANK_MAGIC_CODE, MESSAGE_MAGIC_CODE_V1 } from '../../common/message/record-layout.js';
import { PRE_BLANK_SIZE } from '../consumequeue/consume-queue-entry.js';
import { INDEX_ENTRY_SIZE, INDEX_HEADER_SIZE, INDEX_SLOT_SIZE } from '../index/index-file.js';
import { offsetToFileName } from '../mapped-file/file-names.js';
import { parseDelayLevels } from '../store-config.js';
import { cqPosition } from './consume-queue-check.js';
import { readIndexHeader, type IndexFileHeader } from './index-check.js';
import { assertStoreStopped, type VerifyConfig } from './store-verify.js';
import { cqFileBytes, listNames, SEGMENT_NAME, WindowReader } from './store-file-reader.js';

export type DumpedRecord =
  | {
      kind: 'message';
      file: string;
      offset: number;
      physicalOffset: number;
      storeSizeBytes: number;
      magicVersion: 1 | 2;
      topic: string;
      queueId: number;
      queueOffset: number;
      sysFlag: number;
      bornTimestampMs: number;
      storeTimestampMs: number;
      /** Offset message id (store host + physical offset). */
      msgId: string;
      bornHost: string;
      storeHost: string;
      reconsumeTimes: number;
      preparedTransactionOffset: number;
      bodyCrc: number;
      tagsCode: number;
      properties: Record<string, string>;
      bodyBytes: number;
      /** First 64 bytes of the body, non-printable bytes as \xNN. */
      bodyPreview: string;
    }
  | { kind: 'blank'; file: string; offset: number; physicalOffset: number; sizeBytes: number }
  | { kind: 'invalid'; file: string; offset: number; physicalOffset: number; reason: string };

function preview(body: Buffer): string {
  let s = '';
  for (const b of body.subarray(0, 64)) s += b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`;
  return body.length > 64 ? `${s}…` : s;
}

/**
 * Records from `fromPhysicalOffset` (default: the first file's start) while below
 * `toPhysicalOffset` and fewer than `count`. `fromPhysicalOffset` must be a record start.
 */
export function* dumpCommitLog(root: string, config: VerifyConfig, range: { fromPhysicalOffset?: number; toPhysicalOffset?: number; count?: number }): Generator<DumpedRecord> {
  assertStoreStopped(root);
  const size = config.mappedFileSizeCommitLog;
  const names = listNames(join(root, 'commitlog'), SEGMENT_NAME);
  if (names.length === 0) return;
  const delayTable = parseDelayLevels(config.messageDelayLevel);
  let phy = range.fromPhysicalOffset ?? Number(names[0]);
  const to = range.toPhysicalOffset ?? Number.MAX_SAFE_INTEGER;
  let left = range.count ?? Number.MAX_SAFE_INTEGER;
  while (phy < to && left > 0) {
    const base = Math.floor(phy / size) * size;
    const name = offsetToFileName(base);
    if (!names.includes(name)) return;
    const file = `commitlog/${name}`;
    const r = new WindowReader(join(root, 'commitlog', name));
    try {
      let pos = phy - base;
      while (phy < to && left > 0) {
        const h = r.view(pos, 8);
        if (h.available < 4 || r.buf.readInt32BE(h.at) === 0) return; // end of data
        const total = r.buf.readInt32BE(h.at);
        if (h.available >= 8 && r.buf.readInt32BE(h.at + 4) === BLANK_MAGIC_CODE) {
          yield { kind: 'blank', file, offset: pos, physicalOffset: phy, sizeBytes: total };
          left--;
          phy = base + size;
          break;
        }
        const w = r.view(pos, Math.max(8, total));
        const c = checkRecord(r.buf, w.at, w.available, { checkCrc: true, expectedPhysicalOffset: phy, delayLevelTableMs: delayTable });
        if (c.kind !== 'valid') {
          yield { kind: 'invalid', file, offset: pos, physicalOffset: phy, reason: c.kind === 'blank' ? 'blank filler of the wrong size' : c.reason };
          return;
        }
        const m = decodeRecord(r.buf, w.at);
        const props: Record<string, string> = {};
        for (const [k, v] of c.dispatch.properties) props[k] = v;
        yield {
          kind: 'message',
          file,
          offset: pos,
          physicalOffset: phy,
          storeSizeBytes: c.size,
          magicVersion: r.buf.readInt32BE(w.at + 4) === MESSAGE_MAGIC_CODE_V1 ? 1 : 2,
          topic: c.dispatch.topic,
          queueId: c.dispatch.queueId,
          queueOffset: c.dispatch.consumeQueueOffset,
          sysFlag: c.dispatch.sysFlag,
          bornTimestampMs: c.dispatch.bornTimestamp,
          storeTimestampMs: c.dispatch.storeTimestamp,
          msgId: createMessageId(m.storeHost, phy),
          bornHost: socketAddressToString(m.bornHost),
          storeHost: socketAddressToString(m.storeHost),
          reconsumeTimes: m.reconsumeTimes,
          preparedTransactionOffset: c.dispatch.preparedTransactionOffset,
          bodyCrc: m.bodyCrc,
          tagsCode: c.dispatch.tagsCode,
          properties: props,
          bodyBytes: m.body.length,
          bodyPreview: preview(m.body),
        };
        left--;
        pos += c.size;
        phy += c.size;
        if (pos >= r.sizeBytes) break;
      }
    } finally {
      r.close();
    }
  }
}

export interface DumpedUnit {
  queueOffset: number;
  file: string;
  offset: number;
  kind: 'data' | 'pre-blank' | 'empty';
  physicalOffset: number;
  sizeBytes: number;
  tagsCode: number;
}

/** Units [from, from + count) of `topic`/`queueId` (default: the queue's first file on, 100 units). Stops at a missing file. */
export function* dumpConsumeQueue(root: string, config: VerifyConfig, q: { topic: string; queueId: number; fromQueueOffset?: number; count?: number }): Generator<DumpedUnit> {
  assertStoreStopped(root);
  const cqBytes = cqFileBytes(config.mappedFileSizeConsumeQueue);
  const dir = join(root, 'consumequeue', q.topic, String(q.queueId));
  const names = listNames(dir, SEGMENT_NAME);
  if (names.length === 0) return;
  let at = q.fromQueueOffset ?? Number(names[0]) / 20;
  const end = at + (q.count ?? 100);
  let reader: WindowReader | null = null;
  try {
    for (; at < end; at++) {
      const pos = cqPosition(q.topic, q.queueId, at, cqBytes);
      const name = pos.file.slice(pos.file.lastIndexOf('/') + 1);
      if (!reader || !reader.path.endsWith(name)) {
        reader?.close();
        reader = null;
        if (!names.includes(name)) return;
        reader = new WindowReader(join(dir, name), 1024 * 1024);
      }
      const v = reader.view(pos.offset, 20);
      if (v.available < 20) return;
      const phy = readLong(reader.buf, v.at);
      const size = reader.buf.readInt32BE(v.at + 8);
      const tagsCode = readLong(reader.buf, v.at + 12);
      const kind = phy === 0 && size === 0 && tagsCode === 0 ? 'empty' : phy === 0 && size === PRE_BLANK_SIZE && tagsCode === 0 ? 'pre-blank' : 'data';
      yield { queueOffset: at, file: pos.file, offset: pos.offset, kind, physicalOffset: phy, sizeBytes: size, tagsCode };
    }
  } finally {
    reader?.close();
  }
}

export interface DumpedIndex {
  file: string;
  header: IndexFileHeader;
  /** Non-empty hash slots (slot number, newest entry of its chain, byte offset). */
  slots: Array<{ slot: number; entry: number; offset: number }>;
  entries: Array<{ entry: number; offset: number; keyHash: number; physicalOffset: number; timeDiffSeconds: number; previousEntry: number }>;
}

/** Header, non-empty slots and entries [fromEntry, fromEntry + count) (default 1, 100) of `index/<name>`. */
export function dumpIndex(root: string, config: VerifyConfig, name: string, range: { fromEntry?: number; count?: number } = {}): DumpedIndex {
  assertStoreStopped(root);
  const r = new WindowReader(join(root, 'index', name), 1024 * 1024);
  try {
    const h = r.view(0, INDEX_HEADER_SIZE);
    if (h.available < INDEX_HEADER_SIZE) throw new Error(`index/${name} is ${r.sizeBytes} bytes: no header`);
    const header = readIndexHeader(r.buf, h.at);
    const slots: DumpedIndex['slots'] = [];
    for (let s = 0; s < config.maxHashSlotNum; s++) {
      const offset = INDEX_HEADER_SIZE + s * INDEX_SLOT_SIZE;
      const v = r.view(offset, 4);
      if (v.available < 4) break;
      const entry = r.buf.readInt32BE(v.at);
      if (entry !== 0) slots.push({ slot: s, entry, offset });
    }
    const entries: DumpedIndex['entries'] = [];
    const from = Math.max(1, range.fromEntry ?? 1);
    const last = Math.min(header.indexCount, config.maxIndexNum, from + (range.count ?? 100));
    for (let e = from; e < last; e++) {
      const offset = INDEX_HEADER_SIZE + config.maxHashSlotNum * INDEX_SLOT_SIZE + e * INDEX_ENTRY_SIZE;
      const v = r.view(offset, INDEX_ENTRY_SIZE);
      if (v.available < INDEX_ENTRY_SIZE) break;
      entries.push({ entry: e, offset, keyHash: r.buf.readInt32BE(v.at), physicalOffset: readLong(r.buf, v.at + 4), timeDiffSeconds: r.buf.readInt32BE(v.at + 12), previousEntry: r.buf.readInt32BE(v.at + 16) });
    }
    return { file: `index/${name}`, header, slots, entries };
  } finally {
    r.close();
  }
}
