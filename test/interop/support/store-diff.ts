/**
 * Comparisons of store views (see store-views.ts): Apache's view (expected) against tsmq's
 * (actual), and any view against the writer's put log and the recipe. Every difference names
 * the message (topic/queue/queue offset), its CommitLog file and position, the field, and both
 * values.
 */
import { hostString, recipeBody, recipeMessage, recipeProperties, recipeTopic } from './recipe.js';
import { isRecipeTopic, type MsgLine, type PutLine, type StoreView } from './store-views.js';

/** "file 00000000000000065536 pos 1234" for a physical offset. */
export function wherePhysical(phy: number, commitLogBytes: number): string {
  const base = Math.floor(phy / commitLogBytes) * commitLogBytes;
  return `commitlog/${String(base).padStart(20, '0')} pos ${phy - base}`;
}

export interface DiffOptions {
  commitLogBytes: number;
  /** Which part to compare: messages/queues/probes/filter, queryMessage, or getOffsetInQueueByTime. */
  part: 'content' | 'query' | 'time';
  /** Compare getOffsetInQueueByTime: 'lower', 'lower+upper' (5.x reference) or 'none' (4.x, different algorithm). */
  times: 'none' | 'lower' | 'lower+upper';
}

const MSG_FIELDS: Array<keyof MsgLine> = [
  'topic', 'queueId', 'queueOffset', 'commitLogOffset', 'storeSize', 'bodyCrc', 'flag', 'sysFlag', 'bornTimestamp', 'bornHost',
  'storeTimestamp', 'storeHost', 'reconsumeTimes', 'preparedTransactionOffset', 'msgId', 'body', 'properties', 'cqPhysicalOffset',
  'cqSize', 'cqTagsCode',
];

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function short(v: unknown): string {
  const s = JSON.stringify(v);
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}

/** Every difference between the Apache view (expected) and tsmq's view (actual), restricted to recipe topics. */
export function diffViews(expected: StoreView, actual: StoreView, opts: DiffOptions): string[] {
  const out: string[] = [];
  const E = expected.peer;
  if (opts.part === 'query') {
    for (const [k, e] of expected.queries) {
      const a = actual.queries.get(k);
      if (a === undefined) out.push(`queryMessage ${k}: not queried on tsmq; ${E} found ${short(e)}`);
      else if (!same(e, a)) out.push(`queryMessage ${k}: ${E} ${short(e)}, tsmq ${short(a)}`);
    }
    return out;
  }
  if (opts.part === 'time') {
    for (const [k, e] of expected.times) {
      const a = actual.times.get(k);
      if (!a) {
        out.push(`getOffsetInQueueByTime ${k}: not run by tsmq`);
        continue;
      }
      if (e.lower !== a.lower) out.push(`getOffsetInQueueByTime ${k} LOWER: ${E} ${e.lower}, tsmq ${a.lower}`);
      if (opts.times === 'lower+upper' && e.upper !== undefined && e.upper !== a.upper) {
        out.push(`getOffsetInQueueByTime ${k} UPPER: ${E} ${e.upper}, tsmq ${a.upper}`);
      }
    }
    return out;
  }
  if (expected.maxPhyOffset !== actual.maxPhyOffset) out.push(`maxPhyOffset: ${E} ${expected.maxPhyOffset}, tsmq ${actual.maxPhyOffset}`);
  if (expected.minPhyOffset !== actual.minPhyOffset) out.push(`minPhyOffset: ${E} ${expected.minPhyOffset}, tsmq ${actual.minPhyOffset}`);
  for (const d of actual.duplicates) out.push(`tsmq returned ${d} twice`);
  for (const g of actual.gaps) out.push(`tsmq getMessage gap: ${g}`);
  const keys = new Set([...expected.queues.keys(), ...actual.queues.keys()].filter((k) => isRecipeTopic(k.split('/')[0]!)));
  for (const k of [...keys].sort()) {
    const e = expected.queues.get(k);
    const a = actual.queues.get(k);
    if (!e || !a) {
      out.push(`queue ${k}: ${e ? 'missing in tsmq' : `unexpected in tsmq (absent in ${E})`}`);
      continue;
    }
    for (const f of ['minOffset', 'maxOffset', 'earliestTime'] as const) {
      if (e[f] !== a[f]) out.push(`queue ${k} ${f}: ${E} ${e[f]}, tsmq ${a[f]}`);
    }
  }
  const msgKeys = new Set([...expected.msgs.keys(), ...actual.msgs.keys()].filter((k) => isRecipeTopic(k.split('/')[0]!)));
  for (const k of [...msgKeys].sort()) {
    const e = expected.msgs.get(k);
    const a = actual.msgs.get(k);
    if (!e || !a) {
      const m = (e ?? a)!;
      out.push(`message ${k} (${wherePhysical(m.commitLogOffset, opts.commitLogBytes)}): ${e ? 'not returned by tsmq' : `returned by tsmq only`}`);
      continue;
    }
    for (const f of MSG_FIELDS) {
      if (!same(e[f], a[f])) {
        out.push(`message ${k} (${wherePhysical(e.commitLogOffset, opts.commitLogBytes)}) field ${f}: ${E} ${short(e[f])}, tsmq ${short(a[f])}`);
      }
    }
  }
  for (const [k, e] of expected.probes) {
    if (!isRecipeTopic(k.split('/')[0]!)) continue;
    const a = actual.probes.get(k);
    if (!a) out.push(`probe getMessage ${k}: not run by tsmq`);
    else if (!same(e, a)) out.push(`probe getMessage ${k}: ${E} ${short(e)}, tsmq ${short(a)}`);
  }
  for (const [k, e] of expected.filters) {
    if (!isRecipeTopic(k.split('/')[0]!)) continue;
    const a = actual.filters.get(k);
    if (!same(e, a)) out.push(`TagA filter ${k}: ${E} ${short(e)}, tsmq ${short(a)}`);
  }
  return out;
}

/**
 * Checks a view against the recipe and the writer's put log: every put message (i < n) is
 * readable at the physical offset the writer reported, with the queue offset, size, msgId and
 * store time reported, and the recipe's content.
 */
export function diffAgainstRecipe(view: StoreView, n: number, puts: PutLine[], commitLogBytes: number, longTopics = false): string[] {
  const out: string[] = [];
  const byOffset = new Map<number, MsgLine>();
  for (const m of view.msgs.values()) if (isRecipeTopic(m.topic)) byOffset.set(m.commitLogOffset, m);
  for (const p of puts) {
    if (p.i >= n) continue;
    if (p.status !== 'PUT_OK' || p.wroteOffset === undefined) {
      out.push(`put ${p.i}: status ${p.status}`);
      continue;
    }
    const m = byOffset.get(p.wroteOffset);
    const where = wherePhysical(p.wroteOffset, commitLogBytes);
    if (!m) {
      out.push(`${view.peer}: message ${p.i} written at ${where} not readable`);
      continue;
    }
    const want = recipeMessage(p.i, longTopics);
    const checks: Array<[string, unknown, unknown]> = [
      ['topic', want.topic, m.topic],
      ['queueId', want.queueId, m.queueId],
      ['queueOffset', p.queueOffset, m.queueOffset],
      ['storeSize', p.wroteBytes, m.storeSize],
      ['msgId', p.msgId, m.msgId],
      ['storeTimestamp', p.storeTimestamp, m.storeTimestamp],
      ['flag', want.flag, m.flag],
      ['bornTimestamp', want.bornTimestamp, m.bornTimestamp],
      ['bornHost', hostString(want.bornHost), m.bornHost],
      ['storeHost', hostString(want.storeHost), m.storeHost],
      ['reconsumeTimes', want.reconsumeTimes, m.reconsumeTimes],
      ['body', recipeBody(p.i).toString('base64'), m.body],
      ['properties', Object.fromEntries([...recipeProperties(p.i).entries()].sort()), m.properties],
    ];
    for (const [f, w, got] of checks) {
      if (!same(w, got)) out.push(`${view.peer}: message ${p.i} (${where}) field ${f}: written ${short(w)}, read ${short(got)}`);
    }
  }
  return out;
}

/**
 * queryMessage results a view must have for the recipe keys, from the put log: every put
 * message of the topic whose KEYS contain the key or whose UNIQ_KEY equals it.
 */
export function diffQueriesAgainstPuts(view: StoreView, puts: PutLine[], longTopics = false): string[] {
  const out: string[] = [];
  if (puts.length === 0) return out; // no put log to check against (e.g. a damaged store)
  for (const [k, got] of view.queries) {
    const hash = k.indexOf('#');
    const topic = k.slice(0, hash);
    const key = k.slice(hash + 1);
    const want = puts
      .filter((p) => p.status === 'PUT_OK' && p.wroteOffset !== undefined && recipeTopic(p.i, longTopics) === topic)
      .filter((p) => {
        const props = recipeProperties(p.i);
        return props.get('UNIQ_KEY') === key || props.get('KEYS')!.split(' ').includes(key);
      })
      .map((p) => p.wroteOffset!)
      .sort((a, b) => a - b);
    if (!same(want, got)) out.push(`${view.peer}: queryMessage ${k}: written ${short(want)}, found ${short(got)}`);
  }
  return out;
}
