/**
 * Lookup by key (RocketMQ `DefaultMessageStore.queryMessage`): asks the IndexService for
 * candidate physical offsets, then reads each record and keeps it only if its topic is the
 * requested one and its KEYS contain the key or its UNIQ_KEY equals it — index entries store
 * only a 31-bit hash, so collisions are filtered here. Offsets are deduplicated (case B14),
 * results are ascending by physical offset and never exceed maxNum.
 */
import { decodeRecord } from '../../common/message/record-codec.js';
import { KEY_SEPARATOR, MessageConst } from '../../common/message/message-const.js';
import type { IndexLookup } from '../index/index-plugin.js';
import type { QueryMessageResult } from '../message-store.js';

export interface RecordReader {
  /** Raw record at a physical offset, or null when there is none (deleted, beyond the end). */
  selectOneMessageByOffset(phyOffset: number): Buffer | null;
  getMinOffset(): number;
}

export async function queryMessage(
  index: IndexLookup | null,
  reader: RecordReader,
  maxMsgsNumBatch: number,
  topic: string,
  key: string,
  maxNum: number,
  beginMs: number,
  endMs: number,
): Promise<QueryMessageResult> {
  const limit = Math.max(0, Math.min(maxNum, maxMsgsNumBatch));
  if (!index || limit === 0 || key === '') return { messages: [], indexLastUpdateTimestamp: 0, indexLastUpdatePhyOffset: 0 };
  // Collisions may crowd out real matches: ask for more candidates than wanted.
  const found = await index.queryOffset(topic, key, limit * 4, beginMs, endMs);
  const offsets = [...new Set(found.phyOffsets)].filter((o) => o >= reader.getMinOffset()).sort((a, b) => a - b);
  const messages: Buffer[] = [];
  for (const phy of offsets) {
    if (messages.length >= limit) break;
    const record = reader.selectOneMessageByOffset(phy);
    if (!record) continue;
    let matches = false;
    try {
      const m = decodeRecord(record, 0, { readBody: false });
      if (m.topic === topic) {
        const keys = m.properties.get(MessageConst.KEYS);
        matches = m.properties.get(MessageConst.UNIQ_KEY) === key || (keys !== undefined && keys.split(KEY_SEPARATOR).includes(key));
      }
    } catch {
      matches = false;
    }
    if (matches) messages.push(record);
  }
  return {
    messages,
    indexLastUpdateTimestamp: found.indexLastUpdateTimestamp,
    indexLastUpdatePhyOffset: found.indexLastUpdatePhyOffset,
  };
}
