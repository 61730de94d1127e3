/**
 * `tsmq admin print-msg -n <namesrv> -t <topic> [-c <charset>] [-s <tags>] [-b <begin>] [-e <end>]
 * [-d <printBody>]`: every message of a topic, queue by queue (mqadmin `printMsg`): for each
 * read queue of the route (by broker name, queue id) a `minOffset=…, maxOffset=…, MessageQueue
 * [topic=…, brokerName=…, queueId=…]` line, the messages pulled (PULL_MESSAGE 11, group
 * TOOLS_CONSUMER, 32 per pull, nothing committed) as `MSGID: <id> MessageExt […] BODY: <body>`
 * lines, and a dashed line. -b/-e (now, epoch ms or yyyy-MM-dd#HH:mm:ss:SSS) narrow each queue
 * to the offsets stored in that time (SEARCH_OFFSET_BY_TIMESTAMP 29); -s filters by tag
 * (`TagA || TagB`). `--json`: `{"topic","queues":[{brokerName,queueId,minOffset,maxOffset,messages:[…]}]}`.
 */
import type { Command } from 'commander';
import type { MessageExt } from '../../common/message/message.js';
import { MessageConst } from '../../common/message/message-const.js';
import { socketAddressToString } from '../../common/message/msgid.js';
import { adminCommand, printJson, timeoutOf, timestampOption, withCommonOptions, type CommonAdminOptions } from './admin-support.js';
import { fetchTopicRoute, masterAddrsOfRoute, withNamesrvOption } from './admin-nameserver.js';
import { TOOLS_CONSUMER_GROUP, bodyCharsetOf, clientMsgId, messageJson, plainBody, pullOnce, queueOffset, searchOffset } from './admin-messages.js';
import type { TopicRouteJson } from './admin-topic-route.js';

export interface PrintMsgOptions extends CommonAdminOptions {
  namesrvAddr: string;
  topic: string;
  charsetName: string;
  subExpression: string;
  beginTimestamp?: string;
  endTimestamp?: string;
  printBody: string;
}

/** A queue of a topic on a broker, with the master serving it. */
export interface RoutedQueue {
  brokerName: string;
  brokerAddr: string;
  queueId: number;
}

/** The read queues of a route, ordered by broker name and queue id (brokers without master skipped). */
export function readQueuesOf(route: TopicRouteJson): RoutedQueue[] {
  const masters = masterAddrsOfRoute(route);
  const out: RoutedQueue[] = [];
  for (const [brokerName, brokerAddr] of masters) {
    const q = route.queueDatas.find((d) => d.brokerName === brokerName);
    for (let queueId = 0; queueId < (q?.readQueueNums ?? 0); queueId++) out.push({ brokerName, brokerAddr, queueId });
  }
  return out;
}

/** `MessageQueue [topic=…, brokerName=…, queueId=…]` (Apache's MessageQueue.toString). */
export const messageQueueText = (topic: string, q: { brokerName: string; queueId: number }): string => `MessageQueue [topic=${topic}, brokerName=${q.brokerName}, queueId=${q.queueId}]`;

/** `MSGID: <id> MessageExt [...] BODY: <body>` (mqadmin printMsg / consumeMessage). */
export function messageLine(m: MessageExt, brokerName: string, charset: BufferEncoding, printBody: boolean): string {
  const fields = [
    `brokerName=${brokerName}`,
    `queueId=${m.queueId}`,
    `storeSize=${m.storeSize}`,
    `queueOffset=${m.queueOffset}`,
    `sysFlag=${m.sysFlag}`,
    `bornTimestamp=${m.bornTimestamp}`,
    `bornHost=${socketAddressToString(m.bornHost)}`,
    `storeTimestamp=${m.storeTimestamp}`,
    `storeHost=${socketAddressToString(m.storeHost)}`,
    `msgId=${m.msgId}`,
    `commitLogOffset=${m.commitLogOffset}`,
    `reconsumeTimes=${m.reconsumeTimes}`,
    `topic=${m.topic}`,
    `tags=${m.properties.get(MessageConst.TAGS) ?? ''}`,
    `keys=${m.properties.get(MessageConst.KEYS) ?? ''}`,
  ];
  return `MSGID: ${clientMsgId(m)} MessageExt [${fields.join(', ')}] BODY: ${printBody ? plainBody(m).toString(charset) : 'NOT PRINT BODY'}`;
}

export async function runPrintMsg(opts: PrintMsgOptions): Promise<void> {
  const timeoutMs = timeoutOf(opts);
  const topic = opts.topic.trim();
  const charset = bodyCharsetOf('-c/--charset-name', opts.charsetName)!;
  const printBody = opts.printBody.trim() !== 'false';
  const begin = opts.beginTimestamp === undefined ? undefined : timestampOption('-b/--begin-timestamp', opts.beginTimestamp);
  const end = opts.endTimestamp === undefined ? undefined : timestampOption('-e/--end-timestamp', opts.endTimestamp);
  const queues = readQueuesOf(await fetchTopicRoute(opts.namesrvAddr, topic, timeoutMs));
  const out: Array<{ brokerName: string; queueId: number; minOffset: number; maxOffset: number; messages: Record<string, unknown>[] }> = [];
  for (const q of queues) {
    const minOffset = begin === undefined ? await queueOffset(q.brokerAddr, 'min', topic, q.queueId, timeoutMs) : await searchOffset(q.brokerAddr, topic, q.queueId, begin, timeoutMs);
    const maxOffset = end === undefined ? await queueOffset(q.brokerAddr, 'max', topic, q.queueId, timeoutMs) : await searchOffset(q.brokerAddr, topic, q.queueId, end, timeoutMs);
    const messages: Record<string, unknown>[] = [];
    if (!opts.json) console.log(`minOffset=${minOffset}, maxOffset=${maxOffset}, ${messageQueueText(topic, q)}`);
    for (let offset = minOffset; offset < maxOffset; ) {
      const r = await pullOnce(q.brokerAddr, TOOLS_CONSUMER_GROUP, topic, q.queueId, offset, 32, timeoutMs, opts.subExpression);
      const next = r.nextBeginOffset;
      for (const m of r.messages) {
        if (m.queueOffset >= maxOffset) continue;
        if (opts.json) messages.push(messageJson(m, printBody ? charset : undefined));
        else console.log(messageLine(m, q.brokerName, charset, printBody));
      }
      if (r.status === 'NO_MATCHED_MSG' && !opts.json) console.log(`${messageQueueText(topic, q)} no matched msg. status=${r.status}, offset=${next}`);
      if (r.status === 'NO_NEW_MSG' || r.status === 'OFFSET_ILLEGAL' || next <= offset) {
        if (!opts.json) console.log(`${messageQueueText(topic, q)} print msg finished. status=${r.status}, offset=${next}`);
        break;
      }
      offset = next;
    }
    if (!opts.json) console.log('--------------------------------------------------------');
    out.push({ brokerName: q.brokerName, queueId: q.queueId, minOffset, maxOffset, messages });
  }
  if (opts.json) printJson({ topic, queues: out });
}

export function registerAdminPrintMsg(program: Command): void {
  withCommonOptions(
    withNamesrvOption(adminCommand(program).command('print-msg').description('print every message of a topic, queue by queue (mqadmin printMsg, request code 11)'))
      .requiredOption('-t, --topic <topic>', 'topic name')
      .option('-c, --charset-name <charset>', 'body charset (UTF-8, ISO-8859-1, base64, hex...)', 'UTF-8')
      .option('-s, --sub-expression <tags>', 'tag filter, e.g. "TagA || TagB"', '*')
      .option('-b, --begin-timestamp <time>', 'from this store time: now, epoch ms or yyyy-MM-dd#HH:mm:ss:SSS')
      .option('-e, --end-timestamp <time>', 'up to this store time')
      .option('-d, --print-body <true|false>', 'print the bodies', 'true'),
  ).action(runPrintMsg);
}
