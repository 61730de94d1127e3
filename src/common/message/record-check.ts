/**
 * `checkRecord`: the single validation routine used by recovery and dispatch (spec §3.7,
 * mirrors `CommitLog.checkMessageAndReturnSize`). Re-exported by record-codec.ts.
 */
import { parseRecord } from './record-parse.js';
import { tagsCode as computeTagsCode } from './java-hash.js';
import { MessageConst } from './message-const.js';
import { TopicValidator } from './topic-validator.js';

/** What the dispatcher needs to build a consume-queue entry and index entries for one record. */
export interface DispatchRequest {
  topic: string;
  queueId: number;
  /** PHYSICALOFFSET as stored. */
  commitLogOffset: number;
  /** TOTALSIZE of the record. */
  msgSize: number;
  /** Java hash of TAGS, or the deliver time for SCHEDULE_TOPIC_XXXX records with DELAY. */
  tagsCode: number;
  storeTimestamp: number;
  /** QUEUEOFFSET as stored. */
  consumeQueueOffset: number;
  /** KEYS property ('' if none). */
  keys: string;
  /** UNIQ_KEY property or null. */
  uniqKey: string | null;
  sysFlag: number;
  preparedTransactionOffset: number;
  properties: Map<string, string>;
  bornTimestamp: number;
}

export type RecordCheck =
  | { kind: 'valid'; size: number; dispatch: DispatchRequest }
  | { kind: 'blank'; size: number }
  | { kind: 'invalid'; reason: string };

export interface CheckRecordOptions {
  /** Recompute and compare BODYCRC (recovery: `checkCRCOnRecover`; dispatch: false). */
  checkCrc: boolean;
  /** When given, the stored PHYSICALOFFSET must equal it (the record's logical position). */
  expectedPhysicalOffset?: number;
  /** Delay per level in ms (index 0 = level 1); absent ⇒ unknown levels deliver at store time + 1000. */
  delayLevelTableMs?: number[];
}

const INTEGER = /^[+-]?\d+$/;

/**
 * Validates the record at `at` given `available` readable bytes from `at` (clamped to the
 * buffer). Order of checks: room for TOTALSIZE; TOTALSIZE ≤ available (else "torn record");
 * magic (BLANK ⇒ `blank` with size = TOTALSIZE; not V1/V2 ⇒ invalid); minimum size for the host
 * widths in SYSFLAG; body/topic/properties lengths fit; recomputed TOTALSIZE equals the field;
 * PHYSICALOFFSET equals `expectedPhysicalOffset` when given; BODYCRC when `checkCrc` (a stored 0
 * is compared like any other value, case B08). Never throws.
 *
 * Tags code: Java hash of TAGS, except SCHEDULE_TOPIC_XXXX records with an integer DELAY > 0:
 * storeTimestamp + table[min(level, table.length) - 1], or storeTimestamp + 1000 without a table.
 * A non-numeric DELAY is ignored (RocketMQ would reject the record; we do not truncate on it).
 */
export function checkRecord(buf: Buffer, at: number, available: number, opts: CheckRecordOptions): RecordCheck {
  try {
    const r = parseRecord(buf, at, available, opts.checkCrc, opts.expectedPhysicalOffset);
    if (typeof r === 'string') return { kind: 'invalid', reason: r };
    if (typeof r === 'number') return { kind: 'blank', size: r };
    const props = r.properties;
    let tagsCode = computeTagsCode(props.get(MessageConst.TAGS));
    if (r.topic === TopicValidator.RMQ_SYS_SCHEDULE_TOPIC) {
      const delay = props.get(MessageConst.DELAY);
      if (delay !== undefined && INTEGER.test(delay)) {
        let level = Number(delay);
        const table = opts.delayLevelTableMs;
        if (table !== undefined && table.length > 0) {
          if (level > table.length) level = table.length;
          if (level > 0) tagsCode = r.storeTimestamp + table[level - 1]!;
        } else if (level > 0) {
          tagsCode = r.storeTimestamp + 1000;
        }
      }
    }
    return {
      kind: 'valid',
      size: r.totalSize,
      dispatch: {
        topic: r.topic,
        queueId: r.queueId,
        commitLogOffset: r.physicalOffset,
        msgSize: r.totalSize,
        tagsCode,
        storeTimestamp: r.storeTimestamp,
        consumeQueueOffset: r.queueOffset,
        keys: props.get(MessageConst.KEYS) ?? '',
        uniqKey: props.get(MessageConst.UNIQ_KEY) ?? null,
        sysFlag: r.sysFlag,
        preparedTransactionOffset: r.preparedTransactionOffset,
        properties: props,
        bornTimestamp: r.bornTimestamp,
      },
    };
  } catch (e) {
    return { kind: 'invalid', reason: `unreadable record: ${(e as Error)?.message ?? String(e)}` };
  }
}
