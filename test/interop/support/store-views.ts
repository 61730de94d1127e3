/**
 * A "store view": everything a reader can get out of a store directory through the store API
 * (every message via getMessage per topic/queue, consume-queue entry, probes past the end, a
 * TagA filter, queryMessage by key, getOffsetInQueueByTime). The Java peers print it as JSON
 * lines; `tsmqStoreView` produces the same from tsmq's DefaultMessageStore; store-diff.ts
 * lists every difference with file, position and field.
 */
import { copyFileSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { silentLogger } from '../../../src/common/logging/logger.js';
import { decodeRecord } from '../../../src/common/message/record-codec.js';
import { javaStringHashCode } from '../../../src/common/message/java-hash.js';
import { DefaultMessageStore } from '../../../src/store/default-message-store.js';
import type { StoreConfig } from '../../../src/store/store-config.js';
import { hostString, recipeMessage, recipeQueueId, recipeTopic, RECIPE_LONG_TOPIC, RECIPE_TOPICS } from './recipe.js';

export interface MsgLine {
  topic: string;
  queueId: number;
  queueOffset: number;
  commitLogOffset: number;
  storeSize: number;
  bodyCrc: number;
  flag: number;
  sysFlag: number;
  bornTimestamp: number;
  bornHost: string;
  storeTimestamp: number;
  storeHost: string;
  reconsumeTimes: number;
  preparedTransactionOffset: number;
  msgId: string;
  body: string;
  properties: Record<string, string>;
  cqPhysicalOffset: number;
  cqSize: number;
  cqTagsCode: number;
}

export interface StoreView {
  peer: string;
  minPhyOffset: number;
  maxPhyOffset: number;
  /** key `topic/queueId` */
  queues: Map<string, { minOffset: number; maxOffset: number; earliestTime: number }>;
  /** key `topic/queueId/queueOffset` */
  msgs: Map<string, MsgLine>;
  /** duplicated keys seen while reading (a message returned twice) */
  duplicates: string[];
  /** key `topic/queueId/offset` */
  probes: Map<string, { status: string | null; nextBeginOffset: number | null; count: number | null }>;
  gaps: string[];
  /** key `topic/queueId` → queue offsets matched by a TagA filter */
  filters: Map<string, number[]>;
  /** key `topic#key` → sorted commit-log offsets of queryMessage(topic, key) */
  queries: Map<string, number[]>;
  /** key `topic/queueId/ts` → LOWER (and UPPER when known) */
  times: Map<string, { lower: number | null; upper?: number | null }>;
}

export interface PutLine {
  i: number;
  status: string;
  wroteOffset?: number;
  wroteBytes?: number;
  queueOffset?: number;
  msgId?: string;
  storeTimestamp?: number;
}

export interface StoreSizes {
  commitLogBytes: number;
  consumeQueueBytes: number;
  /** Index file geometry for both sides (Apache's defaults when absent). */
  maxHashSlotNum?: number;
  maxIndexNum?: number;
}

export function javaSizeArgs(s: StoreSizes): string[] {
  const a = ['--cl', String(s.commitLogBytes), '--cq', String(s.consumeQueueBytes)];
  if (s.maxHashSlotNum) a.push('--slots', String(s.maxHashSlotNum));
  if (s.maxIndexNum) a.push('--index', String(s.maxIndexNum));
  return a;
}

export function tsmqConfig(dir: string, s: StoreSizes): Partial<StoreConfig> {
  const c: Record<string, unknown> = {
    storePathRootDir: dir,
    mappedFileSizeCommitLog: s.commitLogBytes,
    mappedFileSizeConsumeQueue: s.consumeQueueBytes,
  };
  if (s.maxHashSlotNum) {
    c.maxHashSlotNum = s.maxHashSlotNum;
    c.maxIndexNum = s.maxIndexNum;
  }
  // TSMQ_TEST_INDEX_IN_WORKER=1: the same suite with the IndexFile built on the worker thread
  if (process.env.TSMQ_TEST_INDEX_IN_WORKER === '1') c.indexBuildInWorker = true;
  return c as Partial<StoreConfig>;
}

/** Parses the JSON lines printed by ApacheStoreReader / ApacheStore5Reader. */
export function parseJavaView(lines: Array<Record<string, unknown>>): StoreView {
  const v = emptyView('?');
  for (const l of lines) {
    const topic = l.topic as string;
    const q = l.queueId as number;
    switch (l.type) {
      case 'store':
        v.peer = l.peer as string;
        v.minPhyOffset = l.minPhyOffset as number;
        v.maxPhyOffset = l.maxPhyOffset as number;
        break;
      case 'queue':
        v.queues.set(`${topic}/${q}`, { minOffset: l.minOffset as number, maxOffset: l.maxOffset as number, earliestTime: l.earliestTime as number });
        break;
      case 'msg': {
        const m = l as unknown as MsgLine;
        const key = `${m.topic}/${m.queueId}/${m.queueOffset}`;
        if (v.msgs.has(key)) v.duplicates.push(key);
        v.msgs.set(key, m);
        break;
      }
      case 'probe':
        v.probes.set(`${topic}/${q}/${l.offset as number}`, {
          status: l.status as string | null,
          nextBeginOffset: l.nextBeginOffset as number | null,
          count: l.count as number | null,
        });
        break;
      case 'gap':
        v.gaps.push(`${topic}/${q} at ${l.offset as number}: ${l.status as string} next ${l.nextBeginOffset as number}`);
        break;
      case 'filter':
        v.filters.set(`${topic}/${q}`, l.queueOffsets as number[]);
        break;
      case 'query':
        v.queries.set(`${topic}#${l.key as string}`, [...(l.offsets as number[])].sort((a, b) => a - b));
        break;
      case 'time':
        v.times.set(`${topic}/${q}/${l.ts as number}`, {
          lower: l.offset as number,
          ...(l.upper !== undefined ? { upper: l.upper as number } : {}),
        });
        break;
    }
  }
  return v;
}

function emptyView(peer: string): StoreView {
  return {
    peer,
    minPhyOffset: -1,
    maxPhyOffset: -1,
    queues: new Map(),
    msgs: new Map(),
    duplicates: [],
    probes: new Map(),
    gaps: [],
    filters: new Map(),
    queries: new Map(),
    times: new Map(),
  };
}

export interface QueryPlan {
  queries: Array<[topic: string, key: string]>;
  times: Array<[topic: string, queueId: number, ts: number]>;
}

/** Keys to look up for a run of n recipe messages. */
export function recipeQueries(n: number, longTopics = false): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const topic of RECIPE_TOPICS) {
    for (const k of ['hot0', 'hot1', 'hot2', 'hot3', 'nope']) out.push([topic, k]);
  }
  const picks = [0, 1, 2, 7, 28, Math.floor(n / 2), n - 1, ...(longTopics ? [49, 99] : [])];
  for (const i of picks) {
    if (i < 0 || i >= n) continue;
    out.push([recipeTopic(i, longTopics), `k${i}`]);
    out.push([recipeTopic(i, longTopics), recipeMessage(i).properties.get('UNIQ_KEY')!]);
  }
  return out;
}

/** Timestamps to search per queue: around the first, middle and last entries of each recipe queue. */
export function timeProbes(entries: Array<{ topic: string; queueId: number; queueOffset: number; storeTimestamp: number }>): Array<[string, number, number]> {
  const perQueue = new Map<string, Array<{ queueOffset: number; storeTimestamp: number }>>();
  for (const m of entries) {
    if (!isRecipeTopic(m.topic)) continue;
    const k = `${m.topic}/${m.queueId}`;
    if (!perQueue.has(k)) perQueue.set(k, []);
    perQueue.get(k)!.push(m);
  }
  const out: Array<[string, number, number]> = [];
  for (const [k, list] of [...perQueue.entries()].sort()) {
    list.sort((a, b) => a.queueOffset - b.queueOffset);
    const [topic, q] = k.split('/') as [string, string];
    const first = list[0]!.storeTimestamp;
    const mid = list[Math.floor(list.length / 2)]!.storeTimestamp;
    const last = list[list.length - 1]!.storeTimestamp;
    const ts = new Set([0, first - 1, first, mid - 1, mid, mid + 1, last, last + 1]);
    for (const t of [...ts].sort((a, b) => a - b)) out.push([topic, Number(q), t]);
  }
  return out;
}

/** Time probes from a writer's put log (queue and store time of each put). */
export function timeProbesFromPuts(puts: PutLine[], longTopics = false): Array<[string, number, number]> {
  return timeProbes(
    puts
      .filter((p) => p.status === 'PUT_OK' && p.queueOffset !== undefined && p.storeTimestamp !== undefined)
      .map((p) => ({
        topic: recipeTopic(p.i, longTopics),
        queueId: recipeQueueId(p.i, longTopics),
        queueOffset: p.queueOffset!,
        storeTimestamp: p.storeTimestamp!,
      })),
  );
}

export function isRecipeTopic(t: string): boolean {
  return (RECIPE_TOPICS as readonly string[]).includes(t) || t === RECIPE_LONG_TOPIC;
}

export function writePlanFiles(dir: string, plan: QueryPlan): { queriesFile: string; timesFile: string } {
  mkdirSync(dir, { recursive: true });
  const queriesFile = join(dir, 'queries.tsv');
  const timesFile = join(dir, 'times.tsv');
  writeFileSync(queriesFile, plan.queries.map(([t, k]) => `${t}\t${k}\n`).join(''));
  writeFileSync(timesFile, plan.times.map(([t, q, ts]) => `${t}\t${q}\t${ts}\n`).join(''));
  return { queriesFile, timesFile };
}

/**
 * Opens tsmq's DefaultMessageStore the way the broker does, for the interop tests: config from
 * `sizes`, silent logger. The IndexService is part of the store (messageIndexEnable, default
 * true), so index files are written and `queryMessage` works.
 */
export async function openTsmqStore(dir: string, sizes: StoreSizes): Promise<DefaultMessageStore> {
  return await DefaultMessageStore.open(tsmqConfig(dir, sizes), { logger: silentLogger });
}

/**
 * Opens `dir` with tsmq's DefaultMessageStore (load + recovery), reads it like the Java
 * readers do, and shuts it down cleanly.
 */
export async function tsmqStoreView(dir: string, sizes: StoreSizes, plan: QueryPlan): Promise<StoreView & { recoveryReport: unknown }> {
  const store = await openTsmqStore(dir, sizes);
  try {
    const v = emptyView('tsmq');
    v.minPhyOffset = store.getMinPhyOffset();
    v.maxPhyOffset = store.getMaxPhyOffset();
    const table = store.getTopicQueueTable();
    const tagA = javaStringHashCode('TagA');
    for (const topic of [...table.keys()].sort()) {
      for (const q of [...table.get(topic)!.keys()].sort((a, b) => a - b)) {
        const min = store.getMinOffsetInQueue(topic, q);
        const max = store.getMaxOffsetInQueue(topic, q);
        v.queues.set(`${topic}/${q}`, { minOffset: min, maxOffset: max, earliestTime: await store.getEarliestMessageTime(topic, q) });
        const cq = store.consumeQueueStore.find(topic, q);
        let offset = min;
        for (let guard = 0; offset < max && guard < 100_000; guard++) {
          const r = await store.getMessage('iop-reader', topic, q, offset, 32, null);
          if (r.messages.length === 0) {
            v.gaps.push(`${topic}/${q} at ${offset}: ${r.status} next ${r.nextBeginOffset}`);
            if (r.nextBeginOffset <= offset) break;
          }
          for (const buf of r.messages) {
            const m = decodeRecord(buf, 0, { readBody: true });
            const e = cq?.getEntry(m.queueOffset) ?? null;
            const key = `${m.topic}/${m.queueId}/${m.queueOffset}`;
            if (v.msgs.has(key)) v.duplicates.push(key);
            v.msgs.set(key, {
              topic: m.topic,
              queueId: m.queueId,
              queueOffset: m.queueOffset,
              commitLogOffset: m.commitLogOffset,
              storeSize: m.storeSize,
              bodyCrc: m.bodyCrc,
              flag: m.flag,
              sysFlag: m.sysFlag,
              bornTimestamp: m.bornTimestamp,
              bornHost: hostString(m.bornHost),
              storeTimestamp: m.storeTimestamp,
              storeHost: hostString(m.storeHost),
              reconsumeTimes: m.reconsumeTimes,
              preparedTransactionOffset: m.preparedTransactionOffset,
              msgId: m.msgId,
              body: m.body.toString('base64'),
              properties: Object.fromEntries([...m.properties.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
              cqPhysicalOffset: e ? e.phyOffset : -1,
              cqSize: e ? e.size : -1,
              cqTagsCode: e ? e.tagsCode : 0,
            });
          }
          if (r.nextBeginOffset <= offset) break;
          offset = r.nextBeginOffset;
        }
        const probeOffsets = [max, max + 5, ...(min > 0 ? [min - 1] : [])];
        for (const po of probeOffsets) {
          const r = await store.getMessage('iop-reader', topic, q, po, 32, null);
          v.probes.set(`${topic}/${q}/${po}`, { status: r.status, nextBeginOffset: r.nextBeginOffset, count: r.messages.length });
        }
        const matched: number[] = [];
        offset = min;
        const filter = { isMatchedByConsumeQueue: (code: number) => code === tagA };
        for (let guard = 0; offset < max && guard < 100_000; guard++) {
          const r = await store.getMessage('iop-reader', topic, q, offset, 32, filter);
          for (const buf of r.messages) matched.push(decodeRecord(buf, 0, { readBody: false }).queueOffset);
          if (r.nextBeginOffset <= offset) break;
          offset = r.nextBeginOffset;
        }
        v.filters.set(`${topic}/${q}`, matched);
      }
    }
    for (const [topic, key] of plan.queries) {
      const res = await store.queryMessage(topic, key, 64, 0, Number.MAX_SAFE_INTEGER);
      v.queries.set(`${topic}#${key}`, queryOffsets(res.messages));
    }
    for (const [topic, q, ts] of plan.times) {
      v.times.set(`${topic}/${q}/${ts}`, {
        lower: await store.getOffsetInQueueByTime(topic, q, ts, 'LOWER'),
        upper: await store.getOffsetInQueueByTime(topic, q, ts, 'UPPER'),
      });
    }
    return { ...v, recoveryReport: store.recoveryReport };
  } finally {
    await store.shutdown();
  }
}

/** Commit-log offsets of the raw records queryMessage returns, ascending, without duplicates. */
function queryOffsets(records: Buffer[]): number[] {
  const out = records.map((r) => decodeRecord(r, 0, { readBody: false }).commitLogOffset);
  return [...new Set(out)].sort((a, b) => a - b);
}

/** Copies a store directory (files only; small test stores). */
export function copyDir(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    const a = join(from, name);
    const b = join(to, name);
    if (statSync(a).isDirectory()) copyDir(a, b);
    else copyFileSync(a, b);
  }
}
