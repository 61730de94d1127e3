/**
 * The invariants the simulation checks against a store, after every recovery (full) and while it
 * runs (on what pulls, lookups and queries return). A broken invariant throws InvariantViolation.
 *
 * After recovery (`checkRecoveredStore`):
 *  1. Every CommitLog record from the min to the max physical offset is a message that was put
 *     (SIMID known, topic, queue, body and KEYS identical), not one that was refused or lost
 *     earlier, found once, at the position the store reported for it.
 *  2. Every message that had to survive (model fate `durable`) is found, unless it lies below the
 *     CommitLog min offset (deleted by retention); retention may only have deleted messages whose
 *     file had expired (store time + fileReservedTime ≤ now) unless the disk was full enough for
 *     forced cleaning.
 *  3. Every queue of a live topic is gap-free: each offset in [min, max) pulls a record with that
 *     queue offset, and every record of that queue in the CommitLog lies in [min, max).
 *     No queue exists for a topic that was never put to.
 *  4. A lookup by key returns exactly the surviving messages of that topic with that key (all of
 *     them: at most 20 use one key, below maxMsgsNumBatch).
 * The model then learns the outcome: found ⇒ durable, not found ⇒ lost, below min ⇒ expired.
 */
import { decodeRecord } from '../../src/common/message/record-codec.js';
import type { MessageExt } from '../../src/common/message/message.js';
import type { DefaultMessageStore } from '../../src/store/default-message-store.js';
import { SimModel, type SimMessage } from './sim-model.js';

export class InvariantViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvariantViolation';
  }
}

function fail(message: string): never {
  throw new InvariantViolation(message);
}

export const SIMID = 'SIMID';

/** The model message a record claims to be, after checking it is one that may exist. */
export function identify(model: SimModel, ext: MessageExt, where: string): SimMessage {
  const raw = ext.properties.get(SIMID);
  const id = raw === undefined ? NaN : Number(raw);
  const m = Number.isInteger(id) ? model.messages[id] : undefined;
  if (!m) fail(`${where}: record at physical offset ${ext.commitLogOffset} (${ext.topic}/${ext.queueId}) was never put (SIMID ${raw})`);
  if (m.fate === 'refused') fail(`${where}: message ${m.id} was refused (${m.status}) but is stored at physical offset ${ext.commitLogOffset}`);
  if (m.fate === 'lost') fail(`${where}: message ${m.id} was lost in an earlier crash but reappeared at physical offset ${ext.commitLogOffset}`);
  if (ext.topic !== m.topic || ext.queueId !== m.queueId) fail(`${where}: message ${m.id} stored as ${ext.topic}/${ext.queueId}, put to ${m.topic}/${m.queueId}`);
  if (!ext.body.equals(m.body)) fail(`${where}: message ${m.id} body differs (${ext.body.length} bytes stored, ${m.body.length} put)`);
  if ((ext.properties.get('KEYS') ?? null) !== m.keys) fail(`${where}: message ${m.id} KEYS ${ext.properties.get('KEYS')} vs ${m.keys}`);
  if ((ext.properties.get('TAGS') ?? null) !== m.tags) fail(`${where}: message ${m.id} TAGS ${ext.properties.get('TAGS')} vs ${m.tags}`);
  if (m.phyOffset !== null && m.phyOffset !== ext.commitLogOffset) fail(`${where}: message ${m.id} at physical offset ${ext.commitLogOffset}, reported at ${m.phyOffset}`);
  if (m.queueOffset !== null && m.queueOffset !== ext.queueOffset) fail(`${where}: message ${m.id} has queue offset ${ext.queueOffset}, reported ${m.queueOffset}`);
  return m;
}

export interface RetentionContext {
  nowMs: number;
  /** Smallest fileReservedTime in ms in force since the last check. */
  minReservedMs: number;
  /** Disk usage passed the forced-cleaning level since the last check. */
  forcedPossible: boolean;
}

export interface RecoveryCheckReport {
  records: number;
  found: number;
  lost: number;
  expired: number;
  queues: number;
  keysChecked: number;
}

interface Found {
  m: SimMessage;
  queueOffset: number;
  phy: number;
  sizeBytes: number;
  storeTimestamp: number;
}

/** See the file comment. Mutates the model's fates. */
/**
 * How the store came back: after a power loss only what reached the device counts (cached
 * messages may be gone; what is found was read from the device); after a process crash the page
 * cache is intact (what is found is cached, not necessarily durable); after a clean shutdown
 * everything was flushed.
 */
export type RestartKind = 'clean' | 'process-crash' | 'power-loss';

export async function checkRecoveredStore(
  store: DefaultMessageStore,
  model: SimModel,
  kind: RestartKind,
  retention: RetentionContext,
  segmentBytes: number,
): Promise<RecoveryCheckReport> {
  const minPhy = store.getMinPhyOffset();
  const maxPhy = store.getMaxPhyOffset();
  const found = new Map<number, Found>();
  // 1. CommitLog walk
  let phy = minPhy;
  let records = 0;
  while (phy < maxPhy) {
    const ext = await store.lookMessageByOffset(phy);
    if (!ext) {
      phy = (Math.floor(phy / segmentBytes) + 1) * segmentBytes; // blank end of a segment
      continue;
    }
    records++;
    const m = identify(model, ext, 'CommitLog walk');
    if (found.has(m.id)) fail(`CommitLog walk: message ${m.id} stored twice (physical offsets ${found.get(m.id)!.phy} and ${phy})`);
    found.set(m.id, { m, queueOffset: ext.queueOffset, phy, sizeBytes: ext.storeSize, storeTimestamp: ext.storeTimestamp });
    if (ext.storeSize <= 0) fail(`CommitLog walk: record at ${phy} has size ${ext.storeSize}`);
    phy += ext.storeSize;
  }
  if (phy !== maxPhy && phy < maxPhy) fail(`CommitLog walk ended at ${phy}, max offset ${maxPhy}`);
  // 2. what had to survive
  let expired = 0;
  const mustSurvive = new Set(model.mustSurvive(kind === 'power-loss').map((m) => m.id));
  for (const m of model.messages) {
    if (!mustSurvive.has(m.id) || found.has(m.id)) continue;
    if (m.phyOffset !== null && m.sizeBytes !== null && m.phyOffset + m.sizeBytes <= minPhy) {
      const deadline = (m.storeTimestamp ?? 0) + retention.minReservedMs;
      if (!retention.forcedPossible && deadline > retention.nowMs) {
        fail(`retention deleted message ${m.id} (physical offset ${m.phyOffset}, stored at ${m.storeTimestamp}) before it expired (now ${retention.nowMs}, reserved ${retention.minReservedMs} ms)`);
      }
      continue; // expired, marked below
    }
    fail(
      `acknowledged message ${m.id} (${m.topic}/${m.queueId} queue offset ${m.queueOffset}, physical ${m.phyOffset}+${m.sizeBytes}, status ${m.status}) is missing after recovery (CommitLog ${minPhy}..${maxPhy})`,
    );
  }
  // 3. queues
  const table = store.getTopicQueueTable();
  const byQueue = new Map<string, Found[]>();
  for (const f of found.values()) {
    const k = SimModel.queueKey(f.m.topic, f.m.queueId);
    const list = byQueue.get(k) ?? [];
    list.push(f);
    byQueue.set(k, list);
  }
  const knownTopics = new Set(model.messages.map((m) => m.topic));
  let queues = 0;
  for (const [topic, qs] of table) {
    if (!knownTopics.has(topic)) fail(`queue table has topic ${topic} that was never put to`);
    if (model.deletedTopics.has(topic)) continue;
    for (const queueId of qs.keys()) {
      queues++;
      const min = store.getMinOffsetInQueue(topic, queueId);
      const max = store.getMaxOffsetInQueue(topic, queueId);
      let o = min;
      while (o < max) {
        const r = await store.getMessage('sim', topic, queueId, o, 32);
        if (r.status !== 'FOUND' || r.messageQueueOffsets[0] !== o) {
          fail(`queue ${topic}/${queueId} [${min}, ${max}): pull at ${o} gave ${r.status} (first offset ${r.messageQueueOffsets[0]}, next ${r.nextBeginOffset})`);
        }
        r.messages.forEach((raw, i) => {
          const ext = decodeRecord(raw);
          const qo = r.messageQueueOffsets[i]!;
          if (qo !== o + i) fail(`queue ${topic}/${queueId}: pull returned offset ${qo} where ${o + i} was expected`);
          const m = identify(model, ext, `queue ${topic}/${queueId} offset ${qo}`);
          if (ext.queueOffset !== qo) fail(`queue ${topic}/${queueId} offset ${qo}: record has queue offset ${ext.queueOffset} (message ${m.id})`);
          const f = found.get(m.id);
          if (!f || f.phy !== ext.commitLogOffset) fail(`queue ${topic}/${queueId} offset ${qo}: message ${m.id} at ${ext.commitLogOffset} is not the CommitLog's record`);
        });
        o += r.messages.length;
      }
      for (const f of byQueue.get(SimModel.queueKey(topic, queueId)) ?? []) {
        if (f.queueOffset < min || f.queueOffset >= max) fail(`message ${f.m.id} (${topic}/${queueId} offset ${f.queueOffset}) is in the CommitLog but outside its queue [${min}, ${max})`);
      }
    }
  }
  for (const [k, list] of byQueue) {
    const i = k.lastIndexOf('/');
    const topic = k.slice(0, i);
    if (model.deletedTopics.has(topic)) continue;
    if (!table.get(topic)?.has(Number(k.slice(i + 1)))) fail(`queue ${k} holds ${list.length} records in the CommitLog but does not exist`);
  }
  // the model learns the outcome: losses first, so a found message may take a lost one's offset
  let lost = 0;
  for (const m of model.messages) {
    if (found.has(m.id)) continue;
    if (m.fate === 'pending' || m.fate === 'written' || m.fate === 'cached') {
      m.fate = 'lost';
      model.unplace(m);
      lost++;
    } else if (m.fate === 'durable') {
      m.fate = 'expired';
      expired++;
    }
  }
  for (const f of found.values()) {
    model.place(f.m, f.queueOffset, f.phy, f.sizeBytes, f.storeTimestamp);
    // read from the device after a power loss: durable; otherwise what was cached stays cached
    if (kind === 'power-loss' || (f.m.fate !== 'cached' && kind === 'clean')) f.m.fate = 'durable';
    else if (f.m.fate !== 'durable') f.m.fate = 'cached';
  }
  // 4. index
  const keysChecked = await checkKeyLookups(store, model, found, minPhy);
  return { records, found: found.size, lost, expired, queues, keysChecked };
}

async function checkKeyLookups(store: DefaultMessageStore, model: SimModel, found: Map<number, Found>, minPhy: number): Promise<number> {
  if (!store.config.messageIndexEnable) return 0;
  let checked = 0;
  for (const [key, ids] of [...model.keyUses].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const byTopic = new Map<string, Set<number>>();
    for (const id of ids) {
      const f = found.get(id);
      if (!f || model.deletedTopics.has(f.m.topic) || f.phy < minPhy) continue;
      const set = byTopic.get(f.m.topic) ?? new Set<number>();
      set.add(id);
      byTopic.set(f.m.topic, set);
    }
    for (const [topic, expected] of byTopic) {
      checked++;
      const r = await store.queryMessage(topic, key, 64, 0, Number.MAX_SAFE_INTEGER);
      const got = new Set<number>();
      for (const raw of r.messages) {
        const ext = decodeRecord(raw);
        const m = identify(model, ext, `queryMessage(${topic}, ${key})`);
        if (m.topic !== topic || !(m.keys ?? '').split(' ').includes(key)) fail(`queryMessage(${topic}, ${key}) returned message ${m.id} with keys ${m.keys}`);
        if (got.has(m.id)) fail(`queryMessage(${topic}, ${key}) returned message ${m.id} twice`);
        got.add(m.id);
      }
      const missing = [...expected].filter((id) => !got.has(id) && !model.messages[id]!.indexMayMiss);
      if (missing.length > 0) fail(`queryMessage(${topic}, ${key}) misses surviving messages ${missing.join(',')} (got ${[...got].join(',')})`);
    }
  }
  return checked;
}

/** A pull while the store runs: whatever comes back is the right message at the right offset. */
export function checkPullResult(model: SimModel, topic: string, queueId: number, messages: Buffer[], offsets: number[]): void {
  messages.forEach((raw, i) => {
    const ext = decodeRecord(raw);
    const where = `pull ${topic}/${queueId} offset ${offsets[i]}`;
    const m = identify(model, ext, where);
    if (m.fate === 'expired') fail(`${where}: message ${m.id} was below the CommitLog min offset at the last recovery`);
    if (ext.queueOffset !== offsets[i]) fail(`${where}: record has queue offset ${ext.queueOffset}`);
    if (i > 0 && offsets[i]! !== offsets[i - 1]! + 1) fail(`${where}: offsets not consecutive (${offsets[i - 1]} then ${offsets[i]})`);
  });
}
