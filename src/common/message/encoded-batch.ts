/**
 * The byte path of a batch send (SEND_BATCH_MESSAGE 320): each item of the client's batch body
 * (batch-codec.ts layout) is stored by copying its body and its properties bytes straight from
 * the request frame into its CommitLog record, followed by the entries the broker adds (the
 * batch's properties the item lacks, then CLUSTER) — what Apache's `MessageExtEncoder.encodeBatch`
 * does. No properties Map, no properties string and no MessageInner per item: the item's
 * properties are read by a byte scan for what the store needs (TAGS, KEYS, UNIQ_KEY, the first
 * item's WAIT), and a Map is decoded only when someone reads a dispatched record's properties
 * (`EncodedBatch.properties`: the message-arriving listener's filters).
 *
 * `scanEncodedBatch` takes only the common case and returns null for anything else, which the
 * caller then sends down the general path (batch-codec.ts decodeBatchBody +
 * BatchPropertyCompletion + one MessageInner per item): a malformed item, properties that are not
 * the canonical text of their entries (a malformed piece, a repeated key, invalid UTF-8), a
 * property that changes how the batch is handled (DELAY, the timer keys, TRAN_MSG, CLUSTER, the
 * FIFO sharding key, START_DELIVER_TIME) in an item or in the batch's properties. For what it
 * takes, the stored bytes are exactly those of the general path (a property test compares both).
 */
import { isUtf8 } from 'node:buffer';
import type { SocketAddress } from './message.js';
import { MessageConst } from './message-const.js';
import { decodeProperties } from './properties.js';
import { LazyProperties } from './lazy-properties.js';
import { bodyCrcOf } from '../bytes/crc32.js';
import { MessageSysFlag } from './sysflag.js';
import { MAX_PROPERTIES_LENGTH, MAX_TOPIC_LENGTH, MESSAGE_MAGIC_CODE_V1, MESSAGE_MAGIC_CODE_V2 } from './record-layout.js';
import { cachedTopicBytes, w32, w64 } from './record-codec.js';

/** Batch item header: TOTALSIZE, MAGIC, BODYCRC, FLAG, BODY length (4 bytes each), then PROPERTIES length (2). */
const ITEM_HEADER = 22;

/**
 * The items of one batch as columns over the request frame, and what every record of the batch
 * shares. Item k's record holds `frame[bodyStart[k], + bodyLen[k])` as its body and
 * `frame[propsStart[k], + propsLen[k])` + `suffix[k]` as its properties.
 */
export interface EncodedBatch {
  /** The client's batch body (the request frame's body; must not change until the batch is stored and dispatched). */
  frame: Buffer;
  /** `frame` as a DataView (the record writer copies the properties four bytes at a time). */
  frameView: DataView;
  count: number;
  /** Item k's FLAG, body and properties positions in `frame` (plain arrays of small integers). */
  flag: number[];
  bodyStart: number[];
  bodyLen: number[];
  propsStart: number[];
  /** Bytes of the item's own properties text (as sent). */
  propsLen: number[];
  /** UTF-8 bytes stored after the item's text (shared between items that need the same). */
  suffix: Buffer[];
  /** `suffix[k]` as a DataView. */
  suffixView: DataView[];
  /** `suffix[k]` as text. */
  suffixText: string[];
  tags: (string | undefined)[];
  /** KEYS ('' when absent). */
  keys: string[];
  uniqKey: (string | null)[];
  /** The WAIT of the first item's stored properties is not "false" (the batch's WAIT, see PutMessageService.putMessages). */
  waitStoreMsgOK: boolean;
  /** Longest item body, bytes (checked against maxMessageSize). */
  maxBodyLen: number;
  /** What every record shares (set by the broker after the scan). */
  topic: string;
  queueId: number;
  sysFlag: number;
  bornTimestamp: number;
  bornHost: SocketAddress;
  storeHost: SocketAddress;
}

/** Keys whose presence sends the batch down the general path (see the file comment). */
const UNUSUAL_KEYS: readonly string[] = [
  MessageConst.DELAY,
  MessageConst.TIMER_DELIVER_MS,
  MessageConst.TIMER_DELAY_SEC,
  MessageConst.TIMER_DELAY_MS,
  MessageConst.TIMER_OUT_MS,
  MessageConst.TIMER_DEL_UNIQKEY,
  MessageConst.TRAN_MSG,
  MessageConst.SHARDING_KEY,
  MessageConst.CLUSTER,
  '__STARTDELIVERTIME',
];

/** What a key of an item's properties is to the scan. */
const K_OTHER = 0;
const K_TAGS = 1;
const K_KEYS = 2;
const K_UNIQ = 3;
const K_WAIT = 4;
const K_UNUSUAL = 5;

/** A watched key as bytes, its kind (K_*) and its bit in the per-item mask of batch keys present (0 when not a batch key). */
interface WatchedKey {
  bytes: Buffer;
  kind: number;
  batchBit: number;
}

const BASE_WATCHED: WatchedKey[] = [
  { bytes: Buffer.from(MessageConst.TAGS, 'latin1'), kind: K_TAGS, batchBit: 0 },
  { bytes: Buffer.from(MessageConst.KEYS, 'latin1'), kind: K_KEYS, batchBit: 0 },
  { bytes: Buffer.from(MessageConst.UNIQ_KEY, 'latin1'), kind: K_UNIQ, batchBit: 0 },
  { bytes: Buffer.from(MessageConst.WAIT, 'latin1'), kind: K_WAIT, batchBit: 0 },
  ...UNUSUAL_KEYS.map((k) => ({ bytes: Buffer.from(k, 'latin1'), kind: K_UNUSUAL, batchBit: 0 })),
];

/** Node's own Buffer text readers (no argument normalisation). */
interface Slicers {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}

/** Most batch properties handled by the scan (each needs a bit of the per-item mask). */
const MAX_BATCH_KEYS = 24;

/**
 * What the scan makes of the keys of a batch header's properties (their values change from batch
 * to batch: the Java producer gives each batch its own UNIQ_KEY): the watched keys and the
 * suffixes built so far. The last one is kept (a producer's batches share their keys).
 */
interface HeaderShape {
  /** The keys, '\x01'-joined, + '\x02' + setKey + '\x01' + setValue. */
  signature: string;
  keys: string[];
  setKey: string;
  setValue: string;
  /** Watched keys by their byte length (a key longer than the table is watched by none). */
  watchedByLength: WatchedKey[][];
  /** Suffixes by `present * 2 + lacksLastSeparator`, with the values of the batch entries they add. */
  suffixes: Map<number, { bytes: Buffer; view: DataView; text: string; values: string[] }>;
}

/** One batch header: its shape and its values. */
interface Header {
  shape: HeaderShape;
  values: string[];
  /** The batch's TAGS, KEYS, UNIQ_KEY, WAIT (what an item lacking its own stores). */
  tags: string | undefined;
  keysValue: string | undefined;
  uniqKey: string | undefined;
  wait: string | undefined;
}

let lastShape: HeaderShape | null = null;

function headerScan(batchPropertiesText: string, setKey: string, setValue: string): Header | null {
  const props = decodeProperties(batchPropertiesText);
  if (props.size > MAX_BATCH_KEYS || props.has(setKey)) return null;
  const keys: string[] = [];
  const values: string[] = [];
  let signature = '';
  for (const [k, v] of props) {
    keys.push(k);
    values.push(v);
    signature += k + '\x01';
  }
  signature += '\x02' + setKey + '\x01' + setValue;
  let shape = lastShape;
  if (shape === null || shape.signature !== signature) {
    for (const k of UNUSUAL_KEYS) if (props.has(k)) return null;
    const watched = BASE_WATCHED.map((w) => ({ ...w }));
    keys.forEach((k, i) => {
      const bytes = Buffer.from(k, 'utf8');
      const same = watched.find((w) => w.bytes.equals(bytes));
      if (same) same.batchBit = 1 << i;
      else watched.push({ bytes, kind: K_OTHER, batchBit: 1 << i });
    });
    const watchedByLength: WatchedKey[][] = [];
    for (const w of watched) {
      while (watchedByLength.length <= w.bytes.length) watchedByLength.push([]);
      watchedByLength[w.bytes.length]!.push(w);
    }
    shape = { signature, keys, setKey, setValue, watchedByLength, suffixes: new Map() };
    lastShape = shape;
  }
  return {
    shape,
    values,
    tags: props.get(MessageConst.TAGS),
    keysValue: props.get(MessageConst.KEYS),
    uniqKey: props.get(MessageConst.UNIQ_KEY),
    wait: props.get(MessageConst.WAIT),
  };
}

/** The bytes stored after an item's text: the batch entries it lacks (bit i of `present`: it has key i), then setKey; a leading '\x02' when its text lacks the last separator. */
function suffixOf(h: Header, present: number, lacksLastSeparator: boolean): { bytes: Buffer; view: DataView; text: string } {
  const shape = h.shape;
  const keys = shape.keys;
  const id = present * 2 + (lacksLastSeparator ? 1 : 0);
  let s = shape.suffixes.get(id);
  if (s !== undefined) {
    // the entries it adds must have this batch's values
    for (let i = 0; i < keys.length; i++) {
      if ((present & (1 << i)) === 0 && s.values[i] !== h.values[i]) {
        s = undefined;
        break;
      }
    }
  }
  if (s === undefined) {
    let text = lacksLastSeparator ? '\x02' : '';
    for (let i = 0; i < keys.length; i++) if ((present & (1 << i)) === 0) text += keys[i] + '\x01' + h.values[i] + '\x02';
    text += shape.setKey + '\x01' + shape.setValue + '\x02';
    const bytes = Buffer.from(text, 'utf8');
    s = { bytes, view: new DataView(bytes.buffer, bytes.byteOffset, bytes.length), text: bytes.toString('utf8'), values: h.values };
    if (shape.suffixes.size < 64 || shape.suffixes.has(id)) shape.suffixes.set(id, s);
  }
  return s;
}

/** Whether `frame[at, at + len)` holds exactly `key`'s bytes. */
function bytesEqual(frame: Buffer, at: number, len: number, key: Buffer): boolean {
  if (key.length !== len) return false;
  for (let i = 0; i < len; i++) if (frame[at + i] !== key[i]) return false;
  return true;
}

/** Whether `frame[at, at + len)` holds `key` (of `len` bytes). */
function sameKey(frame: Buffer, at: number, key: Buffer, len: number): boolean {
  for (let i = 0; i < len; i++) if (frame[at + i] !== key[i]) return false;
  return true;
}

const NO_WATCHED: WatchedKey[] = [];

/** Whether `b[x, x + len)` and `b[y, y + len)` hold the same bytes. */
function sameBytes(b: Buffer, x: number, y: number, len: number): boolean {
  for (let i = 0; i < len; i++) if (b[x + i] !== b[y + i]) return false;
  return true;
}

/** The big-endian int32 at `p` (in range: checked by the caller). */
function int32At(b: Buffer, p: number): number {
  return (b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!;
}

/** The last TAGS value read (the same tag on most items of most batches: compared in place, no new string). */
let lastTags = '';
let lastTagsBytes = Buffer.alloc(0);

/**
 * Scans a client batch body for the byte path (see the file comment). `batchPropertiesText` is
 * the request header's properties (the batch's); `setKey`/`setValue` the entry the broker sets
 * on every item (CLUSTER and its cluster name). Returns the batch with its shared fields blank
 * (topic '', queueId 0, …: the caller sets them), or null when the general path must take it
 * (anything unusual or malformed: that path reports the errors).
 */
export function scanEncodedBatch(frame: Buffer, batchPropertiesText: string, setKey: string, setValue: string): EncodedBatch | null {
  if (setKey !== MessageConst.CLUSTER) return null;
  const h = headerScan(batchPropertiesText, setKey, setValue);
  if (h === null) return null;
  const watchedByLength = h.shape.watchedByLength;
  const maxWatchedLength = watchedByLength.length - 1;
  const end = frame.length;
  // count first: the columns are made at their size
  let count = 0;
  for (let p = 0; p < end; count++) {
    if (end - p < ITEM_HEADER) return null;
    const total = int32At(frame, p);
    if (total < ITEM_HEADER || total > end - p) return null;
    p += total;
  }
  if (count === 0) return null;
  // plain arrays of small integers, made at their size: cheaper than typed arrays for a few dozen items
  const flag = new Array<number>(count);
  const bodyStart = new Array<number>(count);
  const bodyLen = new Array<number>(count);
  const propsStart = new Array<number>(count);
  const propsLen = new Array<number>(count);
  const suffix = new Array<Buffer>(count);
  const suffixView = new Array<DataView>(count);
  const suffixText = new Array<string>(count);
  const tags = new Array<string | undefined>(count);
  const keys = new Array<string>(count);
  const uniqKey = new Array<string | null>(count);
  const sl = frame as unknown as Slicers;
  let waitStoreMsgOK = true;
  let maxBodyLen = 0;
  // key ranges of the item being scanned, to refuse a repeated key
  const keyAt: number[] = [];
  const keyLen: number[] = [];
  let nKeys = 0;
  let p = 0;
  for (let k = 0; k < count; k++) {
    const total = int32At(frame, p);
    const bl = int32At(frame, p + 16);
    if (bl < 0 || 20 + bl + 2 > total) return null;
    const plPos = p + 20 + bl;
    const pl = ((frame[plPos]! << 24) | (frame[plPos + 1]! << 16)) >> 16;
    if (pl < 0 || ITEM_HEADER + bl + pl !== total) return null;
    const ps = plPos + 2;
    const pe = ps + pl;
    flag[k] = int32At(frame, p + 12);
    bodyStart[k] = p + 20;
    bodyLen[k] = bl;
    if (bl > maxBodyLen) maxBodyLen = bl;
    propsStart[k] = ps;
    propsLen[k] = pl;
    // an item without its own TAGS, KEYS, UNIQ_KEY or WAIT stores the batch's (the suffix adds it)
    let itemTags = h.tags;
    let itemKeys = h.keysValue ?? '';
    let itemUniq = h.uniqKey ?? null;
    let itemWait = h.wait;
    let present = 0;
    let high = 0;
    nKeys = 0;
    let q = ps;
    while (q < pe) {
      // one piece: key \x01 value, up to the next \x02 or the end of the text
      let sep = -1;
      let e = q;
      let pieceHigh = 0;
      for (; e < pe; e++) {
        const c = frame[e]!;
        if (c === 2) break;
        if (c === 1 && sep < 0) sep = e;
        pieceHigh |= c;
      }
      high |= pieceHigh;
      // a malformed piece (no key or no value) is dropped by the decoder: not canonical
      if (sep <= q || sep >= e - 1) return null;
      const kl = sep - q;
      for (let j = 0; j < nKeys; j++) if (keyLen[j] === kl && sameBytes(frame, q, keyAt[j]!, kl)) return null;
      keyAt[nKeys] = q;
      keyLen[nKeys] = kl;
      nKeys++;
      const candidates = kl <= maxWatchedLength ? watchedByLength[kl]! : NO_WATCHED;
      for (let w = 0; w < candidates.length; w++) {
        const wk = candidates[w]!;
        if (!sameKey(frame, q, wk.bytes, kl)) continue;
        const kind = wk.kind;
        if (kind === K_UNUSUAL) return null;
        present |= wk.batchBit;
        const vs = sep + 1;
        // the value as a string: Latin-1 is the same text when every byte is ASCII, and cheaper
        if (kind === K_TAGS) {
          if (bytesEqual(frame, vs, e - vs, lastTagsBytes)) itemTags = lastTags;
          else {
            itemTags = pieceHigh < 0x80 ? sl.latin1Slice(vs, e) : sl.utf8Slice(vs, e);
            lastTags = itemTags;
            lastTagsBytes = Buffer.from(frame.subarray(vs, e));
          }
        } else if (kind === K_KEYS) itemKeys = pieceHigh < 0x80 ? sl.latin1Slice(vs, e) : sl.utf8Slice(vs, e);
        else if (kind === K_UNIQ) itemUniq = pieceHigh < 0x80 ? sl.latin1Slice(vs, e) : sl.utf8Slice(vs, e);
        else if (kind === K_WAIT && k === 0) itemWait = pieceHigh < 0x80 ? sl.latin1Slice(vs, e) : sl.utf8Slice(vs, e);
        break;
      }
      q = e + 1;
    }
    // bytes ≥ 0x80: the text is stored as the general path re-encodes it only when it is valid UTF-8
    if (high >= 0x80 && !isUtf8(frame.subarray(ps, pe))) return null;
    const lacksLastSeparator = pl > 0 && frame[pe - 1] !== 2;
    const s = suffixOf(h, present, lacksLastSeparator);
    suffix[k] = s.bytes;
    suffixView[k] = s.view;
    suffixText[k] = s.text;
    tags[k] = itemTags;
    keys[k] = itemKeys;
    uniqKey[k] = itemUniq;
    if (k === 0) waitStoreMsgOK = itemWait !== 'false';
    p += total;
  }
  return {
    frame,
    frameView: new DataView(frame.buffer, frame.byteOffset, frame.length),
    count,
    flag,
    bodyStart,
    bodyLen,
    propsStart,
    propsLen,
    suffix,
    suffixView,
    suffixText,
    tags,
    keys,
    uniqKey,
    waitStoreMsgOK,
    maxBodyLen,
    topic: '',
    queueId: 0,
    sysFlag: 0,
    bornTimestamp: 0,
    bornHost: NO_HOST,
    storeHost: NO_HOST,
  };
}

const NO_HOST: SocketAddress = { ip: Buffer.alloc(4), port: 0 };

/** The stored properties text of item k (its text as sent + its suffix). */
export function encodedBatchPropertiesText(batch: EncodedBatch, k: number): string {
  const ps = batch.propsStart[k]!;
  return (batch.frame as unknown as Slicers).utf8Slice(ps, ps + batch.propsLen[k]!) + batch.suffixText[k]!;
}

/** The stored properties of item k of a batch, decoded from its bytes when first read. */
export class EncodedBatchItemProperties extends LazyProperties {
  private batch: EncodedBatch | null;

  constructor(
    batch: EncodedBatch,
    private readonly k: number,
  ) {
    super();
    this.batch = batch;
  }

  protected decode(): Map<string, string> {
    const batch = this.batch!;
    this.batch = null;
    return decodeProperties(encodedBatchPropertiesText(batch, this.k));
  }
}

/** How the records of an EncodedBatch are laid out (planEncodedBatch), before any byte is written. */
export interface EncodedBatchPlan {
  version: 1 | 2;
  /** SYSFLAG as stored (IPv6 host bits from the address lengths). */
  sysFlag: number;
  bornHostWidth: number;
  storeHostWidth: number;
  /** UTF-8 bytes of the topic (shared, cached per topic: never modify). */
  topicBytes: Buffer;
  /** topicBytes, the born host's and the store host's address bytes as DataViews. */
  topicView: DataView;
  bornIpView: DataView;
  storeIpView: DataView;
  /** TOTALSIZE of record k. */
  sizes: number[];
  /** All records, bytes. */
  total: number;
}

/**
 * Validates the records of `batch` as planRecord would each item's MessageInner and lays them
 * out. Returns the plan, or the refusal with the remark prefixed `batch message <k>: ` as
 * CommitLog.appendBatch words it. `maxRecordBytes`: the largest record accepted.
 */
export function planEncodedBatch(batch: EncodedBatch, maxMessageSize: number, maxRecordBytes: number): EncodedBatchPlan | { status: 'MESSAGE_ILLEGAL' | 'PROPERTIES_SIZE_EXCEEDED'; remark: string } {
  const tb = cachedTopicBytes(batch.topic);
  const topicLen = tb.length;
  const illegal = (remark: string) => ({ status: 'MESSAGE_ILLEGAL' as const, remark: `batch message 0: ${remark}` });
  if (topicLen > MAX_TOPIC_LENGTH) return illegal(`topic is too long: ${topicLen} bytes, the limit is ${MAX_TOPIC_LENGTH}`);
  if (!Number.isSafeInteger(batch.bornTimestamp)) return illegal(`born timestamp ${batch.bornTimestamp} is not a safe integer`);
  const bn = batch.bornHost.ip.length;
  const sn = batch.storeHost.ip.length;
  if (bn !== 4 && bn !== 16) return illegal(`born host address must have 4 or 16 bytes, got ${bn}`);
  if (sn !== 4 && sn !== 16) return illegal(`store host address must have 4 or 16 bytes, got ${sn}`);
  const bh = bn + 4;
  const sh = sn + 4;
  const version = topicLen > 127 ? 2 : 1;
  let sysFlag = batch.sysFlag & ~(MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG);
  if (bh === 20) sysFlag |= MessageSysFlag.BORNHOST_V6_FLAG;
  if (sh === 20) sysFlag |= MessageSysFlag.STOREHOSTADDRESS_V6_FLAG;
  const fixed = 74 + bh + sh + version + topicLen;
  const n = batch.count;
  const sizes = new Array<number>(n);
  let total = 0;
  for (let k = 0; k < n; k++) {
    const bodyLen = batch.bodyLen[k]!;
    if (bodyLen > maxMessageSize) return { status: 'MESSAGE_ILLEGAL', remark: `batch message ${k}: message body size ${bodyLen} exceeds maxMessageSize ${maxMessageSize}` };
    const propsLen = batch.propsLen[k]! + batch.suffix[k]!.length;
    if (propsLen > MAX_PROPERTIES_LENGTH) return { status: 'PROPERTIES_SIZE_EXCEEDED', remark: `batch message ${k}: properties are ${propsLen} bytes, the limit is ${MAX_PROPERTIES_LENGTH}` };
    const size = fixed + bodyLen + propsLen;
    if (size > maxRecordBytes) return { status: 'MESSAGE_ILLEGAL', remark: `batch message ${k}: message record size ${size} exceeds the limit of ${maxRecordBytes} bytes` };
    sizes[k] = size;
    total += size;
  }
  const view = (b: Buffer) => new DataView(b.buffer, b.byteOffset, b.length);
  return { version, sysFlag, bornHostWidth: bh, storeHostWidth: sh, topicBytes: tb, topicView: view(tb), bornIpView: view(batch.bornHost.ip), storeIpView: view(batch.storeHost.ip), sizes, total };
}

/**
 * Copies `src[from, from + len)` to `dst[p]` four bytes at a time (a properties text of ~60
 * bytes: a quarter of the loads and stores of a byte loop, and no native call's overhead).
 */
function copyWords(dst: DataView, p: number, src: DataView, from: number, len: number): void {
  let i = 0;
  for (; i + 4 <= len; i += 4) dst.setUint32(p + i, src.getUint32(from + i));
  for (; i < len; i++) dst.setUint8(p + i, src.getUint8(from + i));
}

/**
 * Writes the record of item k at `buf[at, at + plan.sizes[k])`: the layout of record-codec.ts
 * writeRecord, body and properties copied from the request frame, BODYCRC computed over the
 * frame's body bytes. `bufView`: `buf` as a DataView (same bytes).
 */
export function writeEncodedBatchRecord(buf: Buffer, bufView: DataView, at: number, batch: EncodedBatch, plan: EncodedBatchPlan, k: number, queueOffset: number, physicalOffset: number, storeTimestamp: number): void {
  const size = plan.sizes[k]!;
  const frame = batch.frame;
  const bs = batch.bodyStart[k]!;
  const bl = batch.bodyLen[k]!;
  const bh = plan.bornHostWidth;
  const sh = plan.storeHostWidth;
  w32(buf, at, size);
  w32(buf, at + 4, plan.version === 2 ? MESSAGE_MAGIC_CODE_V2 : MESSAGE_MAGIC_CODE_V1);
  // one plain view of the body for the CRC and the copy (Buffer's subarray and copy cost more in JavaScript than the 1 KiB memcpy)
  const body = new Uint8Array(frame.buffer, frame.byteOffset + bs, bl);
  w32(buf, at + 8, bodyCrcOf(body));
  w32(buf, at + 12, batch.queueId | 0);
  w32(buf, at + 16, batch.flag[k]! | 0);
  w64(buf, at + 20, queueOffset);
  w64(buf, at + 28, physicalOffset);
  w32(buf, at + 36, plan.sysFlag | 0);
  w64(buf, at + 40, batch.bornTimestamp);
  let p = at + 48;
  const born = batch.bornHost;
  copyWords(bufView, p, plan.bornIpView, 0, bh - 4);
  w32(buf, p + bh - 4, born.port | 0);
  p += bh;
  w64(buf, p, storeTimestamp);
  p += 8;
  const store = batch.storeHost;
  copyWords(bufView, p, plan.storeIpView, 0, sh - 4);
  w32(buf, p + sh - 4, store.port | 0);
  p += sh;
  w32(buf, p, 0); // RECONSUMETIMES
  w64(buf, p + 4, 0); // PREPARED TX OFFSET
  w32(buf, p + 12, bl);
  p += 16;
  buf.set(body, p);
  p += bl;
  const tb = plan.topicBytes;
  const topicLen = tb.length;
  if (plan.version === 2) {
    buf[p] = topicLen >>> 8;
    buf[p + 1] = topicLen;
    p += 2;
  } else {
    buf[p++] = topicLen;
  }
  copyWords(bufView, p, plan.topicView, 0, topicLen);
  p += topicLen;
  const pl = batch.propsLen[k]!;
  const suffix = batch.suffix[k]!;
  const propsLen = pl + suffix.length;
  buf[p] = propsLen >>> 8;
  buf[p + 1] = propsLen;
  p += 2;
  copyWords(bufView, p, batch.frameView, batch.propsStart[k]!, pl);
  p += pl;
  copyWords(bufView, p, batch.suffixView[k]!, 0, suffix.length);
  p += suffix.length;
  if (p !== at + size) throw new Error(`writeEncodedBatchRecord: internal size mismatch ${p - at} != ${size}`);
}
