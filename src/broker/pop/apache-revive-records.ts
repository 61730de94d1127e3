/**
 * The pop bookkeeping records Apache RocketMQ 5.x writes as messages of its revive topic
 * `rmq_sys_REVIVE_LOG_<brokerClusterName>` (PopMessageProcessor / AckMessageProcessor /
 * ChangeInvisibleTimeProcessor), decoded so tsmq can take over pops in flight at a migration
 * (apache-revive-import.ts). Facts mirrored (Apache 5.3.3):
 *
 * - tag `ck` (PopAckConstants.CK_TAG): body is a PopCheckPoint as JSON:
 *   `so` start queue offset, `pt` pop time (epoch ms), `it` invisible time (ms), `bm` bit map of
 *   acked messages, `n` number of messages, `q` queue id, `t` topic (the retry topic's name for a
 *   pop of it), `c` consumer group, `ro` revive offset, `d` offsets relative to `so` (a list; absent
 *   or empty in old checkpoints: the messages are `so .. so+n-1`), `bn` broker name, `rp` re-put times.
 *   The messages are invisible until `pt + it` (its revive time).
 * - tag `ack` (ACK_TAG): body is an AckMsg: `ao` acked queue offset, `so` start offset of its
 *   checkpoint, `c` group, `t` topic, `q` queue id, `pt` pop time of its checkpoint, `bn` broker
 *   name (the long names `ackOffset`, `startOffset`, ... are accepted too, as fastjson does).
 * - tag `bAck` (BATCH_ACK_TAG): an AckMsg with `aol` (ackOffsetList): several offsets of one checkpoint.
 *
 * An ack belongs to the checkpoint with the same topic, group, queue id, start offset and pop time
 * (how Apache's PopReviveService pairs them).
 */

/** Apache `PopAckConstants.REVIVE_GROUP` (`CID_RMQ_SYS_` + `REVIVE_GROUP`): the revive service's offsets. */
export const APACHE_REVIVE_GROUP = 'CID_RMQ_SYS_REVIVE_GROUP';
/** Apache `PopAckConstants.CK_TAG`, `ACK_TAG`, `BATCH_ACK_TAG`. */
export const CK_TAG = 'ck';
export const ACK_TAG = 'ack';
export const BATCH_ACK_TAG = 'bAck';

/** Apache `PopAckConstants.buildClusterReviveTopic`: `rmq_sys_REVIVE_LOG_<brokerClusterName>`. */
export function apacheReviveTopic(clusterName: string): string {
  return `rmq_sys_REVIVE_LOG_${clusterName}`;
}

/** One Apache pop checkpoint: `offsets` are the popped queue offsets, `ackedIndexes` from its bit map. */
export interface ApacheCheckPoint {
  group: string;
  topic: string;
  queueId: number;
  startOffset: number;
  popTimeMs: number;
  invisibleTimeMs: number;
  /** Popped queue offsets, in checkpoint order (index i ↔ bit i of the bit map). */
  offsets: number[];
  /** Offsets already marked acked in the checkpoint's bit map. */
  acked: Set<number>;
}

/** One Apache ack or batch ack: the acked queue offsets of one checkpoint. */
export interface ApacheAck {
  group: string;
  topic: string;
  queueId: number;
  startOffset: number;
  popTimeMs: number;
  offsets: number[];
}

export type ApacheReviveRecord = { kind: 'ck'; ck: ApacheCheckPoint } | { kind: 'ack'; ack: ApacheAck };

/** Pairing key of a checkpoint and its acks. */
export function checkPointKey(r: { group: string; topic: string; queueId: number; startOffset: number; popTimeMs: number }): string {
  return `${r.topic}@${r.queueId}@${r.startOffset}@${r.group}@${r.popTimeMs}`;
}

function field(o: Record<string, unknown>, short: string, long: string): unknown {
  return o[short] !== undefined ? o[short] : o[long];
}

function int(o: Record<string, unknown>, short: string, long: string, what: string): number {
  const v = field(o, short, long);
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw new Error(`${what}: field ${short} (${long}) is not an integer: ${JSON.stringify(v)}`);
  return n;
}

function str(o: Record<string, unknown>, short: string, long: string, what: string): string {
  const v = field(o, short, long);
  if (typeof v !== 'string' || v === '') throw new Error(`${what}: field ${short} (${long}) is not a string: ${JSON.stringify(v)}`);
  return v;
}

/**
 * Decodes one revive-topic message by its tag. Returns null for a tag that is not a pop record
 * (nothing else is expected there). @throws Error naming the bad field for a malformed body.
 */
export function decodeApacheReviveRecord(tag: string | undefined, body: Buffer): ApacheReviveRecord | null {
  if (tag !== CK_TAG && tag !== ACK_TAG && tag !== BATCH_ACK_TAG) return null;
  let o: unknown;
  try {
    o = JSON.parse(body.toString('utf8'));
  } catch (e) {
    throw new Error(`revive ${tag} record: body is not JSON (${(e as Error).message})`);
  }
  if (!o || typeof o !== 'object' || Array.isArray(o)) throw new Error(`revive ${tag} record: body is not a JSON object`);
  const rec = o as Record<string, unknown>;
  if (tag === CK_TAG) {
    const what = 'revive ck record';
    const startOffset = int(rec, 'so', 'startOffset', what);
    const num = int(rec, 'n', 'num', what);
    const bitMap = field(rec, 'bm', 'bitMap') === undefined ? 0 : int(rec, 'bm', 'bitMap', what);
    const diffs = field(rec, 'd', 'queueOffsetDiff');
    if (num < 0 || num > 32) throw new Error(`${what}: n=${num} is outside 0..32`);
    let offsets: number[];
    if (Array.isArray(diffs) && diffs.length > 0) {
      if (!diffs.every((d) => Number.isSafeInteger(d) && (d as number) >= 0)) throw new Error(`${what}: d is not a list of offsets`);
      offsets = (diffs as number[]).map((d) => startOffset + d);
    } else {
      offsets = Array.from({ length: num }, (_, i) => startOffset + i);
    }
    const acked = new Set<number>();
    offsets.forEach((off, i) => {
      if (i < 32 && (bitMap >>> i) & 1) acked.add(off);
    });
    return {
      kind: 'ck',
      ck: {
        group: str(rec, 'c', 'cid', what),
        topic: str(rec, 't', 'topic', what),
        queueId: int(rec, 'q', 'queueId', what),
        startOffset,
        popTimeMs: int(rec, 'pt', 'popTime', what),
        invisibleTimeMs: int(rec, 'it', 'invisibleTime', what),
        offsets,
        acked,
      },
    };
  }
  const what = `revive ${tag} record`;
  let offsets: number[];
  if (tag === BATCH_ACK_TAG) {
    const list = field(rec, 'aol', 'ackOffsetList');
    if (!Array.isArray(list) || !list.every((n) => Number.isSafeInteger(n))) throw new Error(`${what}: aol is not a list of offsets`);
    offsets = list as number[];
  } else {
    offsets = [int(rec, 'ao', 'ackOffset', what)];
  }
  return {
    kind: 'ack',
    ack: {
      group: str(rec, 'c', 'consumerGroup', what),
      topic: str(rec, 't', 'topic', what),
      queueId: int(rec, 'q', 'queueId', what),
      startOffset: int(rec, 'so', 'startOffset', what),
      popTimeMs: int(rec, 'pt', 'popTime', what),
      offsets,
    },
  };
}
