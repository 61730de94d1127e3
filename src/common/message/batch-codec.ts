/**
 * Client-encoded batch body (spec §1.15, mirrors `MessageDecoder.encodeMessage` /
 * `decodeMessages` as used for `MessageExtBatch`). The body is a concatenation of:
 *
 *   TOTALSIZE int | MAGIC int (0) | BODYCRC int (0) | FLAG int | BODY len int + bytes
 *   | PROPERTIES len short + UTF-8 bytes (`name\x01value\x02`…)
 *
 * TOTALSIZE = 4+4+4+4 + 4+bodyLen + 2+propsLen = 22 + bodyLen + propsLen.
 */
import { TsmqError } from '../errors.js';
import { decodeProperties, encodeProperties } from './properties.js';

export interface BatchItem {
  flag: number;
  body: Buffer;
  properties: Map<string, string>;
  /** The item's properties text as sent (decodeBatchBody sets it; encodeBatchBody ignores it). */
  propertiesText?: string;
}

/** Malformed batch body; `code` is MESSAGE_ILLEGAL so the broker can reply with code 13. */
export class BatchDecodeError extends TsmqError {
  constructor(message: string) {
    super('MESSAGE_ILLEGAL', message);
  }
}

const ITEM_HEADER = 22;

/** Node's Buffer.prototype.utf8Slice (what toString('utf8', start, end) calls after checking its arguments). */
interface Utf8Slicer {
  utf8Slice(start: number, end: number): string;
}

/** The big-endian int32 at `p` (p + 4 ≤ b.length, checked by the caller): Buffer.readInt32BE's range checks cost more than the read. */
function int32At(b: Buffer, p: number): number {
  return (b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!;
}

/**
 * Splits a batch body into its messages. Bodies are copies unless `opts.copyBodies` is false:
 * then they are views into `body` (no allocation per item; the caller must not reuse `body`
 * while the items are in use — the broker's send path stores them at once). Each item's
 * `properties` is a fresh Map the caller may modify.
 * @throws BatchDecodeError when an item is torn, its lengths disagree with its TOTALSIZE, or
 *   its properties are longer than 32767 bytes; the message names the item index and position.
 */
export function decodeBatchBody(body: Buffer, opts?: { copyBodies?: boolean }): BatchItem[] {
  const copy = opts?.copyBodies !== false;
  const items: BatchItem[] = [];
  let p = 0;
  while (p < body.length) {
    const idx = items.length;
    const left = body.length - p;
    if (left < ITEM_HEADER) throw new BatchDecodeError(`batch item ${idx} at byte ${p} is torn: ${left} bytes left, a header needs ${ITEM_HEADER}`);
    const total = int32At(body, p);
    if (total < ITEM_HEADER || total > left) {
      throw new BatchDecodeError(`batch item ${idx} at byte ${p} has TOTALSIZE ${total}, but ${left} bytes are left (minimum ${ITEM_HEADER})`);
    }
    const flag = int32At(body, p + 12);
    const bodyLen = int32At(body, p + 16);
    if (bodyLen < 0 || 20 + bodyLen + 2 > total) {
      throw new BatchDecodeError(`batch item ${idx} at byte ${p}: body length ${bodyLen} does not fit TOTALSIZE ${total}`);
    }
    const propsLenPos = p + 20 + bodyLen;
    const propsLen = ((body[propsLenPos]! << 24) | (body[propsLenPos + 1]! << 16)) >> 16;
    if (propsLen < 0 || ITEM_HEADER + bodyLen + propsLen !== total) {
      throw new BatchDecodeError(`batch item ${idx} at byte ${p}: properties length ${propsLen} with body ${bodyLen} does not add up to TOTALSIZE ${total}`);
    }
    // Buffer's own utf8Slice: toString's argument normalisation costs as much as the decode of ~100 bytes
    const propertiesText = (body as unknown as Utf8Slicer).utf8Slice(propsLenPos + 2, propsLenPos + 2 + propsLen);
    items.push({
      flag,
      body: copy ? Buffer.from(body.subarray(p + 20, p + 20 + bodyLen)) : body.subarray(p + 20, p + 20 + bodyLen),
      properties: decodeProperties(propertiesText),
      propertiesText,
    });
    p += total;
  }
  return items;
}

/**
 * Completes a batch item's properties the way the broker stores them (Apache `sendBatchMessage`:
 * the batch's properties apply to every item): each entry of `batchProps` the item lacks is
 * added, in `batchProps`' order, then `setKey` is set to `setValue` (CLUSTER). Modifies
 * `item.properties` in place and returns `encodeProperties(item.properties)`, built from the
 * text the client sent instead of serialising the Map again (the text, with a final '\x02'
 * added when it lacks one — Apache's Java clients since 4.9 drop the last separator — is the
 * Map's encoding whenever every entry of it is well formed and its keys are distinct, which is
 * what clients send; any other text is re-encoded from the Map). For many items of one batch use
 * BatchPropertyCompletion.
 */
export function completeBatchItemProperties(item: BatchItem, batchProps: ReadonlyMap<string, string>, setKey: string, setValue: string): string {
  const completion = new BatchPropertyCompletion(batchProps, setKey, setValue);
  const head = completion.complete(item);
  return head + completion.tail;
}

/**
 * completeBatchItemProperties for the items of one batch: the batch's entries are read out of
 * `batchProps` once (a snapshot: later changes to the Map are not seen), and the text of the
 * entry `setKey` adds is built once, so completing an item allocates no iterator, entry pair or
 * string in the common case (the item lacks only `setKey`). The text to store is returned in
 * two parts, `complete(item)` + `tail` (MessageInner encodedProperties / encodedPropertiesTail),
 * so the item's text is not concatenated and copied again.
 */
export class BatchPropertyCompletion {
  private readonly keys: string[] = [];
  private readonly values: string[] = [];
  /** `setKey\x01setValue\x02`, flat. */
  private readonly setEntryText: string;
  /** `\x02` + setEntryText, flat: the tail of an item sent without its last separator. */
  private readonly separatorAndSetEntryText: string;
  /** What the last `complete` call's text continues with ('' when it returned all of it). */
  tail = '';

  constructor(
    batchProps: ReadonlyMap<string, string>,
    private readonly setKey: string,
    private readonly setValue: string,
  ) {
    for (const [k, v] of batchProps) {
      this.keys.push(k);
      this.values.push(v);
    }
    const texts = setEntryTextsOf(setKey, setValue);
    this.setEntryText = texts.entry;
    this.separatorAndSetEntryText = texts.separatorAndEntry;
  }

  /**
   * Completes `item` (see completeBatchItemProperties) and returns the first part of the text to
   * store; `tail` is then set to the rest.
   */
  complete(item: BatchItem): string {
    const props = item.properties;
    const raw = item.propertiesText;
    const { keys, values, setKey, setValue } = this;
    const form = raw !== undefined && !props.has(setKey) ? encodingFormOf(raw, props.size) : NOT_CANONICAL;
    const reuse = form !== NOT_CANONICAL;
    let suffix = '';
    let setKeyPlaced = false;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      if (props.has(k)) continue;
      if (k === setKey) {
        props.set(k, setValue);
        setKeyPlaced = true;
        if (reuse) suffix += this.setEntryText;
      } else {
        const v = values[i]!;
        props.set(k, v);
        if (reuse) suffix += k + '\x01' + v + '\x02';
      }
    }
    if (!setKeyPlaced) {
      props.set(setKey, setValue);
      if (reuse) suffix += this.setEntryText;
    }
    if (!reuse) {
      this.tail = '';
      return encodeProperties(props);
    }
    // the client's text without its last separator (Java clients ≥ 4.9): the stored text goes on with it
    if (form === CANONICAL_BUT_LAST_SEPARATOR) suffix = suffix === this.setEntryText ? this.separatorAndSetEntryText : '\x02' + suffix;
    this.tail = suffix;
    return raw!;
  }
}

/**
 * The flat texts `setKey\x01setValue\x02` and `\x02` + that, for the last key and value asked
 * (one per broker: CLUSTER and its cluster name), so a batch's completion builds and flattens
 * them only when they change (building them per batch cost ~1 % of the broker's batch send).
 */
function setEntryTextsOf(setKey: string, setValue: string): { entry: string; separatorAndEntry: string } {
  const last = lastSetEntryTexts;
  if (last !== null && last.setKey === setKey && last.setValue === setValue) return last;
  const entry = flat(setKey + '\x01' + setValue + '\x02');
  const texts = { setKey, setValue, entry, separatorAndEntry: flat('\x02' + entry) };
  lastSetEntryTexts = texts;
  return texts;
}
let lastSetEntryTexts: { setKey: string; setValue: string; entry: string; separatorAndEntry: string } | null = null;

/** `s` as a flat (sequential) string: a concatenation is otherwise flattened again by each reader. */
function flat(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}

/** encodingFormOf: the text is not encodeProperties of its decoded Map, with or without a final '\x02'. */
const NOT_CANONICAL = 0;
/** encodingFormOf: the text is exactly encodeProperties of its decoded Map (also: both empty). */
const CANONICAL = 1;
/** encodingFormOf: the text + '\x02' is encodeProperties of its decoded Map (what Java clients ≥ 4.9 send). */
const CANONICAL_BUT_LAST_SEPARATOR = 2;

/**
 * How `text` relates to what encodeProperties gives for the Map decodeProperties made of it,
 * given that Map's size: CANONICAL when empty (size 0) or ending with '\x02' with one entry per
 * '\x02'; CANONICAL_BUT_LAST_SEPARATOR when it does not end with '\x02' and holds one entry per
 * '\x02' plus the last piece; else NOT_CANONICAL (a malformed piece is dropped by the decoder and
 * a duplicate key merged, so either leaves fewer entries than pieces).
 */
function encodingFormOf(text: string, decodedSize: number): number {
  if (text.length === 0) return decodedSize === 0 ? CANONICAL : NOT_CANONICAL;
  let n = 0;
  for (let i = text.indexOf('\x02'); i >= 0; i = text.indexOf('\x02', i + 1)) n++;
  if (text.charCodeAt(text.length - 1) === 2) return n === decodedSize ? CANONICAL : NOT_CANONICAL;
  return n + 1 === decodedSize ? CANONICAL_BUT_LAST_SEPARATOR : NOT_CANONICAL;
}

/**
 * Builds a batch body the way a client does (MAGIC and BODYCRC written as 0). For tests and
 * tools. @throws BatchDecodeError when an item's properties exceed 32767 bytes.
 */
export function encodeBatchBody(items: ReadonlyArray<BatchItem>): Buffer {
  const parts: Buffer[] = [];
  for (const [i, it] of items.entries()) {
    const props = Buffer.from(encodeProperties(it.properties), 'utf8');
    if (props.length > 32767) throw new BatchDecodeError(`batch item ${i}: properties are ${props.length} bytes, the limit is 32767`);
    const total = ITEM_HEADER + it.body.length + props.length;
    const b = Buffer.alloc(total);
    b.writeInt32BE(total, 0);
    b.writeInt32BE(it.flag | 0, 12);
    b.writeInt32BE(it.body.length, 16);
    it.body.copy(b, 20);
    b.writeInt16BE(props.length, 20 + it.body.length);
    props.copy(b, 22 + it.body.length);
    parts.push(b);
  }
  return Buffer.concat(parts);
}
