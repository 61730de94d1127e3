/**
 * Finding messages (mqadmin `queryMsgByKey`, `queryMsgById`, `queryMsgByOffset`):
 *
 * - `query-msg-by-key -n <namesrv> -t <topic> -k <key> [-b <beginMs>] [-e <endMs>] [-m <max>]`:
 *   QUERY_MESSAGE (12) to every master of the topic's route (maxNum default 64, the whole time
 *   range by default), keeping messages of the topic whose KEYS hold the key (the index is by
 *   hash, as the Java client re-checks). Table #Message ID (the client's unique id when the
 *   message has one), #QID, #Offset, ordered by store time. None found → an empty table.
 *   `--json`: `{"topic","key","messages":[…]}`.
 * - `query-msg-by-id -n <namesrv> -i <msgId[,msgId]> [-t <topic>] [-f <charset>]`: an offset
 *   message id (store host + CommitLog offset) is read from that broker with VIEW_MESSAGE_BY_ID
 *   (33); any other id (or one that broker does not answer) is looked up as the client's unique
 *   id with QUERY_MESSAGE `_UNIQUE_KEY_QUERY` on the masters of -t's route (needed then). Prints
 *   mqadmin's message detail and the message track (which groups consumed it). Not found → error.
 *   `--json`: `[{"message":{…},"tracks":[…]}]`.
 * - `query-msg-by-offset -n <namesrv> -t <topic> -b <brokerName> -i <queueId> -o <offset> [-f]`:
 *   PULL_MESSAGE (11, group TOOLS_CONSUMER, nothing committed) of one message at that queue
 *   offset, then detail and track as above. No message there → error naming the pull status.
 */
import type { Command } from 'commander';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { decodeMessageId } from '../../common/message/msgid.js';
import { socketAddressToString } from '../../common/message/msgid.js';
import { MessageConst, KEY_SEPARATOR } from '../../common/message/message-const.js';
import type { MessageExt } from '../../common/message/message.js';
import { adminCommand, intOption, invokeAdmin, printJson, renderTable, successBody, timeoutOf, withCommonOptions, type CommonAdminOptions } from './admin-support.js';
import { fetchTopicRoute, masterAddrOf, masterAddrsOfRoute, withNamesrvOption } from './admin-nameserver.js';
import {
  TOOLS_CONSUMER_GROUP,
  bodyCharsetOf,
  clientMsgId,
  decodeMessages,
  messageDetailLines,
  messageJson,
  messageTrackLines,
  messageTrackOf,
  pullOnce,
  type MessageTrack,
} from './admin-messages.js';

/** Java Long.MAX_VALUE as "no end"; the broker clamps it (query-message-processors.ts). */
const NO_END = '9223372036854775807';

export interface QueryByKeyOptions extends CommonAdminOptions {
  namesrvAddr: string;
  topic: string;
  key: string;
  beginTimestamp?: string;
  endTimestamp?: string;
  maxNum: string;
}

/** QUERY_MESSAGE (12) on each broker; answers other than SUCCESS / QUERY_NOT_FOUND are errors. */
async function queryMessages(brokers: string[], ext: Record<string, string | number | boolean>, timeoutMs: number): Promise<Array<{ brokerAddr: string; message: MessageExt }>> {
  const out: Array<{ brokerAddr: string; message: MessageExt }> = [];
  for (const broker of brokers) {
    const { addr, response } = await invokeAdmin([broker], RequestCode.QUERY_MESSAGE, ext, timeoutMs);
    if (response.code === ResponseCode.QUERY_NOT_FOUND) continue;
    for (const message of decodeMessages(successBody(addr, response))) out.push({ brokerAddr: addr, message });
  }
  return out;
}

export async function runQueryMsgByKey(opts: QueryByKeyOptions): Promise<void> {
  const timeoutMs = timeoutOf(opts);
  const topic = opts.topic.trim();
  const key = opts.key.trim();
  const maxNum = intOption('-m/--max-num', opts.maxNum, 1, 64 * 1024);
  const begin = opts.beginTimestamp === undefined ? 0 : intOption('-b/--begin-timestamp', opts.beginTimestamp, 0);
  const end = opts.endTimestamp === undefined ? NO_END : intOption('-e/--end-timestamp', opts.endTimestamp, 0);
  const brokers = [...masterAddrsOfRoute(await fetchTopicRoute(opts.namesrvAddr, topic, timeoutMs)).values()];
  const found = (await queryMessages(brokers, { topic, key, maxNum, beginTimestamp: begin, endTimestamp: end }, timeoutMs))
    .map((f) => f.message)
    .filter((m) => m.topic === topic && (m.properties.get(MessageConst.KEYS) ?? '').split(KEY_SEPARATOR).includes(key))
    .sort((a, b) => a.storeTimestamp - b.storeTimestamp || a.commitLogOffset - b.commitLogOffset)
    .slice(0, maxNum);
  if (opts.json) {
    printJson({ topic, key, messages: found.map((m) => messageJson(m)) });
    return;
  }
  for (const l of renderTable(['#Message ID', '#QID', '#Offset'], found.map((m) => [clientMsgId(m), m.queueId, m.queueOffset]))) console.log(l);
}

export interface QueryByIdOptions extends CommonAdminOptions {
  namesrvAddr?: string;
  msgId: string;
  topic?: string;
  bodyFormat?: string;
}

/** A message by offset message id: VIEW_MESSAGE_BY_ID (33) to the store host the id names. @throws Error why not. */
async function findByOffsetId(id: string, timeoutMs: number): Promise<{ brokerAddr: string; message: MessageExt }> {
  if (!/^[0-9A-Fa-f]{32}$|^[0-9A-Fa-f]{56}$/.test(id)) throw new Error('not an offset message id (32 or 56 hex digits)');
  const { host, commitLogOffset } = decodeMessageId(id);
  const storeAddr = socketAddressToString(host);
  const { addr, response } = await invokeAdmin([storeAddr], RequestCode.VIEW_MESSAGE_BY_ID, { offset: commitLogOffset }, timeoutMs);
  const [m] = decodeMessages(successBody(addr, response));
  if (!m || m.msgId.toUpperCase() !== id.toUpperCase()) throw new Error(`${storeAddr} has no message at CommitLog offset ${commitLogOffset}`);
  return { brokerAddr: addr, message: m };
}

/** A message by the client's unique id (UNIQ_KEY) in `topic`: QUERY_MESSAGE `_UNIQUE_KEY_QUERY` on the route's masters, the earliest stored. */
async function findByUniqueKey(id: string, topic: string, namesrv: string, timeoutMs: number): Promise<{ brokerAddr: string; message: MessageExt } | null> {
  const brokers = [...masterAddrsOfRoute(await fetchTopicRoute(namesrv, topic, timeoutMs)).values()];
  const found = (await queryMessages(brokers, { topic, key: id, maxNum: 32, beginTimestamp: 0, endTimestamp: NO_END, _UNIQUE_KEY_QUERY: 'true' }, timeoutMs))
    .filter((f) => f.message.topic === topic && f.message.properties.get(MessageConst.UNIQ_KEY) === id)
    .sort((a, b) => a.message.storeTimestamp - b.message.storeTimestamp);
  return found[0] ?? null;
}

/**
 * With -t the id is first looked up as a client unique id, then as an offset message id (both
 * are 32 hex digits); without -t only as an offset message id. @throws Error when neither finds it.
 */
async function findById(id: string, topic: string | undefined, namesrv: string | undefined, timeoutMs: number): Promise<{ brokerAddr: string; message: MessageExt }> {
  if (topic) {
    if (!namesrv) throw new Error('-t needs -n <nameserver address> (or NAMESRV_ADDR)');
    const byKey = await findByUniqueKey(id, topic, namesrv, timeoutMs);
    if (byKey) return byKey;
  }
  try {
    return await findByOffsetId(id, timeoutMs);
  } catch (e) {
    const why = `as an offset message id: ${(e as Error).message}`;
    throw new Error(topic ? `message ${id} not found in topic ${topic} by unique key, nor ${why}` : `message ${id} not found ${why} (give -t <topic> to look it up by the client's unique id)`);
  }
}

async function printFound(found: Array<{ brokerAddr: string; message: MessageExt }>, json: boolean | undefined, charset: BufferEncoding | undefined, timeoutMs: number): Promise<void> {
  const out: Array<{ message: Record<string, unknown>; tracks: MessageTrack[] }> = [];
  for (const f of found) {
    const tracks = await messageTrackOf(f.brokerAddr, f.message, timeoutMs);
    out.push({ message: messageJson(f.message, charset), tracks });
    if (!json) {
      for (const l of messageDetailLines(f.message, charset)) console.log(l);
      for (const l of messageTrackLines(tracks)) console.log(l);
    }
  }
  if (json) printJson(out);
}

export async function runQueryMsgById(opts: QueryByIdOptions): Promise<void> {
  const timeoutMs = timeoutOf(opts);
  const charset = bodyCharsetOf('-f/--body-format', opts.bodyFormat);
  const ids = opts.msgId.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  if (ids.length === 0) throw new Error('-i/--msg-id is empty');
  const found = [];
  for (const id of ids) found.push(await findById(id, opts.topic?.trim(), opts.namesrvAddr, timeoutMs));
  await printFound(found, opts.json, charset, timeoutMs);
}

export interface QueryByOffsetOptions extends CommonAdminOptions {
  namesrvAddr: string;
  topic: string;
  brokerName: string;
  queueId: string;
  offset: string;
  bodyFormat?: string;
}

export async function runQueryMsgByOffset(opts: QueryByOffsetOptions): Promise<void> {
  const timeoutMs = timeoutOf(opts);
  const charset = bodyCharsetOf('-f/--body-format', opts.bodyFormat);
  const topic = opts.topic.trim();
  const queueId = intOption('-i/--queue-id', opts.queueId, 0, 65535);
  const offset = intOption('-o/--offset', opts.offset, 0);
  const brokerAddr = masterAddrOf(await fetchTopicRoute(opts.namesrvAddr, topic, timeoutMs), opts.brokerName.trim(), topic);
  const r = await pullOnce(brokerAddr, TOOLS_CONSUMER_GROUP, topic, queueId, offset, 1, timeoutMs);
  const m = r.messages[0];
  if (!m) throw new Error(`no message at ${topic} ${opts.brokerName.trim()} queue ${queueId} offset ${offset}: ${r.status} (queue offsets ${r.minOffset}..${r.maxOffset})`);
  await printFound([{ brokerAddr, message: m }], opts.json, charset, timeoutMs);
}

export function registerAdminQueryMsg(program: Command): void {
  const admin = adminCommand(program);
  withCommonOptions(
    withNamesrvOption(admin.command('query-msg-by-key').description('messages of a topic by key (mqadmin queryMsgByKey, request code 12)'))
      .requiredOption('-t, --topic <topic>', 'topic name')
      .requiredOption('-k, --key <key>', 'message key')
      .option('-b, --begin-timestamp <ms>', 'stored at or after (ms, default 0)')
      .option('-e, --end-timestamp <ms>', 'stored at or before (ms, default no end)')
      .option('-m, --max-num <n>', 'most messages per broker', '64'),
  ).action(runQueryMsgByKey);
  withCommonOptions(
    admin
      .command('query-msg-by-id')
      .description('a message by offset message id or client unique id, and who consumed it (mqadmin queryMsgById, request codes 33 / 12)')
      .requiredOption('-i, --msg-id <id[,id]>', 'message id(s)')
      .option('-t, --topic <topic>', 'topic (needed for a client unique id)')
      .option('-n, --namesrv-addr <host:port>', 'nameserver address(es)', process.env.NAMESRV_ADDR)
      .option('-f, --body-format <charset>', 'print the body in this charset (UTF-8, ISO-8859-1, base64, hex...)'),
  ).action(runQueryMsgById);
  withCommonOptions(
    withNamesrvOption(admin.command('query-msg-by-offset').description('the message at a queue offset, and who consumed it (mqadmin queryMsgByOffset, request code 11)'))
      .requiredOption('-t, --topic <topic>', 'topic name')
      .requiredOption('-b, --broker-name <name>', 'broker name')
      .requiredOption('-i, --queue-id <id>', 'queue id')
      .requiredOption('-o, --offset <offset>', 'queue offset')
      .option('-f, --body-format <charset>', 'print the body in this charset'),
  ).action(runQueryMsgByOffset);
}
