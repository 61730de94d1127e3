/**
 * What the message commands of `tsmq admin` share (query-msg-by-*, print-msg, consume-message):
 * decoding the records a broker returns (QUERY_MESSAGE 12, VIEW_MESSAGE_BY_ID 33, PULL_MESSAGE
 * 11 bodies are CommitLog records back to back), one-shot pulls and queue offsets, the message
 * detail mqadmin's queryMsgById prints, and its message track (who consumed it: 300, 203, 208).
 */
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { decodeRecord } from '../../common/message/record-codec.js';
import type { MessageExt } from '../../common/message/message.js';
import { MessageConst } from '../../common/message/message-const.js';
import { MessageSysFlag, PullSysFlag } from '../../common/message/sysflag.js';
import { socketAddressToString } from '../../common/message/msgid.js';
import { inflateBounded } from '../../common/bytes/bounded-inflate.js';
import { responseCodeName } from '../../remoting/codes/response-code.js';
import { formatTimeMillis, invokeAdmin, messageQueueEntries, numberField, objectField, parseFastjson, successBody } from './admin-support.js';
import { fetchConsumerConnection } from './admin-connections.js';

/** MixAll.TOOLS_CONSUMER_GROUP: the group mqadmin's pull-based commands use. */
export const TOOLS_CONSUMER_GROUP = 'TOOLS_CONSUMER';

/** Most bytes an admin command inflates a compressed body to. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Every record of a reply body, in order. @throws RecordDecodeError for a torn or malformed record. */
export function decodeMessages(body: Buffer): MessageExt[] {
  const out: MessageExt[] = [];
  let at = 0;
  while (at < body.length) {
    const m = decodeRecord(body, at);
    out.push(m);
    at += m.storeSize;
  }
  return out;
}

/** The body as the producer sent it (inflated when sysFlag COMPRESSED is set and it inflates). */
export function plainBody(m: MessageExt): Buffer {
  if ((m.sysFlag & MessageSysFlag.COMPRESSED_FLAG) === 0) return m.body;
  const r = inflateBounded(m.body, 'zlib', MAX_BODY_BYTES);
  return r.ok ? r.body : m.body;
}

/** The id a client knows a message by: its UNIQ_KEY when it has one, else the offset message id. */
export const clientMsgId = (m: MessageExt): string => m.properties.get(MessageConst.UNIQ_KEY) ?? m.msgId;

/** A message as the admin commands print it in --json (body as UTF-8 text when `bodyCharset` is given). */
export function messageJson(m: MessageExt, bodyCharset?: BufferEncoding): Record<string, unknown> {
  const body = plainBody(m);
  return {
    msgId: clientMsgId(m),
    offsetMsgId: m.msgId,
    topic: m.topic,
    tags: m.properties.get(MessageConst.TAGS) ?? null,
    keys: m.properties.get(MessageConst.KEYS) ?? null,
    queueId: m.queueId,
    queueOffset: m.queueOffset,
    commitLogOffset: m.commitLogOffset,
    reconsumeTimes: m.reconsumeTimes,
    bornTimestamp: m.bornTimestamp,
    storeTimestamp: m.storeTimestamp,
    bornHost: socketAddressToString(m.bornHost),
    storeHost: socketAddressToString(m.storeHost),
    sysFlag: m.sysFlag,
    properties: Object.fromEntries(m.properties),
    bodyBytes: body.length,
    ...(bodyCharset ? { body: body.toString(bodyCharset) } : {}),
  };
}

/** Java Map.toString of the properties: `{K=v, K2=v2}`. */
const propertiesText = (p: Map<string, string>): string => `{${[...p].map(([k, v]) => `${k}=${v}`).join(', ')}}`;

/**
 * The detail lines of mqadmin's queryMsgById (`%-20s %s`): OffsetID, Topic, Tags, Keys, Queue ID,
 * Queue Offset, CommitLog Offset, Reconsume Times, Born / Store Timestamp (local
 * `yyyy-MM-dd HH:mm:ss,SSS`), Born / Store Host, System Flag, Properties, then the body size
 * (mqadmin writes the body to /tmp/rocketmq/msgbodys instead) and, with `bodyCharset`, the body.
 */
export function messageDetailLines(m: MessageExt, bodyCharset?: BufferEncoding): string[] {
  const body = plainBody(m);
  const rows: Array<[string, string | number]> = [
    ['OffsetID:', m.msgId],
    ['Topic:', m.topic],
    ['Tags:', `[${m.properties.get(MessageConst.TAGS) ?? 'null'}]`],
    ['Keys:', `[${m.properties.get(MessageConst.KEYS) ?? 'null'}]`],
    ['Queue ID:', m.queueId],
    ['Queue Offset:', m.queueOffset],
    ['CommitLog Offset:', m.commitLogOffset],
    ['Reconsume Times:', m.reconsumeTimes],
    ['Born Timestamp:', formatTimeMillis(m.bornTimestamp)],
    ['Store Timestamp:', formatTimeMillis(m.storeTimestamp)],
    ['Born Host:', socketAddressToString(m.bornHost)],
    ['Store Host:', socketAddressToString(m.storeHost)],
    ['System Flag:', m.sysFlag],
    ['Properties:', propertiesText(m.properties)],
    ['Message Body Size:', body.length],
  ];
  if (bodyCharset) rows.push(['Message Body:', body.toString(bodyCharset)]);
  return rows.map(([k, v]) => `${k.padEnd(20)} ${v}`);
}

/** `-f` / `-c` charset names Node can decode (UTF-8, GBK is not among them). @throws Error naming the option. */
export function bodyCharsetOf(flag: string, text: string | undefined): BufferEncoding | undefined {
  if (text === undefined) return undefined;
  const t = text.trim().toLowerCase().replace(/^utf-8$/, 'utf8').replace(/^iso-8859-1$/, 'latin1').replace(/^us-ascii$/, 'ascii').replace(/^utf-16le$/, 'utf16le');
  if (!['utf8', 'latin1', 'ascii', 'utf16le', 'base64', 'hex'].includes(t)) throw new Error(`${flag} must be one of UTF-8, ISO-8859-1, US-ASCII, UTF-16LE, base64, hex; got ${text}`);
  return t as BufferEncoding;
}

/** One consumer group's relation to a message (Apache MessageTrack). */
export interface MessageTrack {
  consumerGroup: string;
  /** CONSUMED, CONSUMED_BUT_FILTERED, NOT_CONSUME_YET, PULL, CONSUME_BROADCASTING, NOT_ONLINE or UNKNOWN. */
  trackType: string;
  exceptionDesc: string | null;
}

/** Apache's MessageTrack.toString. */
export const messageTrackText = (t: MessageTrack): string => `MessageTrack [consumerGroup=${t.consumerGroup}, trackType=${t.trackType}, exceptionDesc=${t.exceptionDesc}]`;

/**
 * Which groups consumed `m`, asked of the broker that stores it (`brokerAddr`), as Apache's
 * messageTrackDetail: the groups with offsets on the topic (QUERY_TOPIC_CONSUME_BY_WHO 300);
 * per group its connection (203: none → NOT_ONLINE with "CODE:206 DESC:…"; pull consumer →
 * PULL; broadcasting → CONSUME_BROADCASTING), else its committed offset on the message's queue
 * (208): beyond the message → CONSUMED (CONSUMED_BUT_FILTERED when the subscription's tags
 * exclude the message's tag), otherwise NOT_CONSUME_YET.
 */
export async function messageTrackOf(brokerAddr: string, m: MessageExt, timeoutMs: number): Promise<MessageTrack[]> {
  const { addr, response } = await invokeAdmin([brokerAddr], RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, { topic: m.topic }, timeoutMs);
  const groups = ((parseFastjson(successBody(addr, response).toString('utf8')) as { groupList?: string[] }).groupList ?? []).slice().sort();
  const out: MessageTrack[] = [];
  for (const group of groups) {
    const track: MessageTrack = { consumerGroup: group, trackType: 'UNKNOWN', exceptionDesc: null };
    out.push(track);
    let connection;
    try {
      connection = (await fetchConsumerConnection([addr], group, timeoutMs)).connection;
    } catch (e) {
      const code = /code (\d+)/.exec((e as Error).message)?.[1];
      if (code === String(ResponseCode.CONSUMER_NOT_ONLINE)) track.trackType = 'NOT_ONLINE';
      track.exceptionDesc = code ? `CODE:${code} DESC:${(e as Error).message.replace(/^.*?\), /, '')}` : (e as Error).message;
      continue;
    }
    if (connection.consumeType === 'CONSUME_ACTIVELY') {
      track.trackType = 'PULL';
      continue;
    }
    if (connection.messageModel === 'BROADCASTING') {
      track.trackType = 'CONSUME_BROADCASTING';
      continue;
    }
    const stats = await invokeAdmin([addr], RequestCode.GET_CONSUME_STATS, { consumerGroup: group, topic: m.topic }, timeoutMs);
    if (stats.response.code !== ResponseCode.SUCCESS) {
      track.exceptionDesc = `CODE:${stats.response.code} DESC:${stats.response.remark ?? responseCodeName(stats.response.code)}`;
      continue;
    }
    const table = objectField(parseFastjson(successBody(addr, stats.response).toString('utf8')), 'offsetTable');
    const q = messageQueueEntries(table).find(([mq]) => mq.topic === m.topic && mq.queueId === m.queueId);
    const consumed = q !== undefined && numberField(q[1], 'consumerOffset') > m.queueOffset;
    if (!consumed) {
      track.trackType = 'NOT_CONSUME_YET';
      continue;
    }
    track.trackType = 'CONSUMED';
    const sub = connection.subscriptionTable[m.topic] as { tagsSet?: string[] } | undefined;
    const tags = sub?.tagsSet ?? [];
    const tag = m.properties.get(MessageConst.TAGS);
    if (sub && tags.length > 0 && !tags.includes('*') && !(tag !== undefined && tags.includes(tag))) track.trackType = 'CONSUMED_BUT_FILTERED';
  }
  return out;
}

/** Lines mqadmin prints after a message: `WARN: No Consumer` or one MessageTrack per group. */
export function messageTrackLines(tracks: MessageTrack[]): string[] {
  return tracks.length === 0 ? ['', 'WARN: No Consumer'] : ['', ...tracks.map(messageTrackText)];
}

/** A queue's min or max offset (GET_MIN_OFFSET 31 / GET_MAX_OFFSET 30). */
export async function queueOffset(brokerAddr: string, which: 'min' | 'max', topic: string, queueId: number, timeoutMs: number): Promise<number> {
  const { addr, response } = await invokeAdmin([brokerAddr], which === 'min' ? RequestCode.GET_MIN_OFFSET : RequestCode.GET_MAX_OFFSET, { topic, queueId }, timeoutMs);
  successBody(addr, response);
  return Number(response.extFields?.offset ?? NaN);
}

/** The queue offset of the first message stored at or after `timestampMs` (SEARCH_OFFSET_BY_TIMESTAMP 29). */
export async function searchOffset(brokerAddr: string, topic: string, queueId: number, timestampMs: number, timeoutMs: number): Promise<number> {
  const { addr, response } = await invokeAdmin([brokerAddr], RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, { topic, queueId, timestamp: timestampMs }, timeoutMs);
  successBody(addr, response);
  return Number(response.extFields?.offset ?? NaN);
}

/** What one pull returned: FOUND with messages, or NO_NEW_MSG / NO_MATCHED_MSG / OFFSET_ILLEGAL. */
export interface PullOutcome {
  status: 'FOUND' | 'NO_NEW_MSG' | 'NO_MATCHED_MSG' | 'OFFSET_ILLEGAL';
  nextBeginOffset: number;
  minOffset: number;
  maxOffset: number;
  messages: MessageExt[];
}

/**
 * One PULL_MESSAGE (11) without suspension, with the subscription in the request (`*` or
 * `TagA || TagB`), committing nothing, as DefaultMQPullConsumer.pull does for mqadmin.
 * @throws Error for any other answer than 0, 19, 20, 21.
 */
export async function pullOnce(brokerAddr: string, group: string, topic: string, queueId: number, offset: number, maxNums: number, timeoutMs: number, subExpression = '*'): Promise<PullOutcome> {
  const { addr, response } = await invokeAdmin(
    [brokerAddr],
    RequestCode.PULL_MESSAGE,
    { consumerGroup: group, topic, queueId, queueOffset: offset, maxMsgNums: maxNums, sysFlag: PullSysFlag.FLAG_SUBSCRIPTION, commitOffset: 0, suspendTimeoutMillis: 0, subscription: subExpression, subVersion: 0, expressionType: 'TAG' },
    timeoutMs,
  );
  const ext = response.extFields ?? {};
  const base = { nextBeginOffset: Number(ext.nextBeginOffset ?? offset), minOffset: Number(ext.minOffset ?? 0), maxOffset: Number(ext.maxOffset ?? 0) };
  switch (response.code) {
    case ResponseCode.SUCCESS: {
      const tagFilter = subExpression.trim() === '*' ? null : new Set(subExpression.split('||').map((s) => s.trim()));
      // the broker filters by tag hash code; the client re-checks the tag itself, as Apache's does
      const messages = decodeMessages(response.body ?? Buffer.alloc(0)).filter((m) => !tagFilter || tagFilter.has(m.properties.get(MessageConst.TAGS) ?? ''));
      return { status: messages.length > 0 ? 'FOUND' : 'NO_MATCHED_MSG', ...base, messages };
    }
    case ResponseCode.PULL_NOT_FOUND:
      return { status: 'NO_NEW_MSG', ...base, messages: [] };
    case ResponseCode.PULL_RETRY_IMMEDIATELY:
      return { status: 'NO_MATCHED_MSG', ...base, messages: [] };
    case ResponseCode.PULL_OFFSET_MOVED:
      return { status: 'OFFSET_ILLEGAL', ...base, messages: [] };
    default:
      successBody(addr, response);
      throw new Error(`${addr}: unexpected pull answer ${response.code}`);
  }
}
