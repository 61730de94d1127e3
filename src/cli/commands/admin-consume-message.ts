/**
 * `tsmq admin consume-message -n <namesrv> -t <topic> [-b <brokerName> [-i <queueId> [-o <offset>]]]
 * [-g <group>] [-s <begin>] [-e <end>] [-c <count>] [--quiet]`: reads messages with PULL_MESSAGE
 * (11), as mqadmin `consumeMessage` (and a measured `tools.sh Consumer`): without -b/-i every
 * read queue of the route in turn (by broker, queue id) from its min offset; with -b -i one
 * queue from its min offset or from -o; -s/-e (now, epoch ms or yyyy-MM-dd#HH:mm:ss:SSS) narrow
 * each queue to the offsets stored in that time; at most -c messages in all (default 128, as
 * mqadmin). Pulls 32 at a time with the group -g (default TOOLS_CONSUMER); nothing is committed
 * (as mqadmin: the group's consume progress does not move).
 *
 * Output: per queue pulled `Consume ok` and the `MSGID: …` lines (as printMsg; not with
 * --quiet), then `consumed N messages (B bytes) from Q queues in T ms: R msg/s`.
 * `--json`: `{"topic","consumed","bytes","elapsedMs","tps","queues":[{brokerName,queueId,fromOffset,
 * nextOffset,consumed}],"messages":[…]}` (messages only without --quiet).
 */
import type { Command } from 'commander';
import { adminCommand, intOption, printJson, timeoutOf, timestampOption, withCommonOptions, type CommonAdminOptions } from './admin-support.js';
import { fetchTopicRoute, withNamesrvOption } from './admin-nameserver.js';
import { TOOLS_CONSUMER_GROUP, messageJson, plainBody, pullOnce, queueOffset, searchOffset } from './admin-messages.js';
import { messageLine, messageQueueText, readQueuesOf, type RoutedQueue } from './admin-print-msg.js';

export interface ConsumeMessageOptions extends CommonAdminOptions {
  namesrvAddr: string;
  topic: string;
  brokerName?: string;
  queueId?: string;
  offset?: string;
  group: string;
  beginTimestamp?: string;
  endTimestamp?: string;
  count: string;
  quiet?: boolean;
}

/** The queues to read: one (-b -i), a broker's (-b) or the whole route's. @throws Error for an option combination mqadmin refuses or an unknown queue. */
export function chooseQueues(all: RoutedQueue[], opts: ConsumeMessageOptions): RoutedQueue[] {
  if (opts.offset !== undefined && opts.queueId === undefined) throw new Error('-o/--offset needs -i/--queue-id (mqadmin: "Please set queueId before offset!")');
  if (opts.queueId !== undefined && !opts.brokerName) throw new Error('-i/--queue-id needs -b/--broker-name (mqadmin: "Please set the brokerName before queueId!")');
  let qs = all;
  if (opts.brokerName) {
    const name = opts.brokerName.trim();
    qs = qs.filter((q) => q.brokerName === name);
    if (qs.length === 0) throw new Error(`broker ${name} serves no read queue of topic ${opts.topic}`);
  }
  if (opts.queueId !== undefined) {
    const id = intOption('-i/--queue-id', opts.queueId, 0, 65535);
    qs = qs.filter((q) => q.queueId === id);
    if (qs.length === 0) throw new Error(`topic ${opts.topic} has no read queue ${id} on ${opts.brokerName}`);
  }
  return qs;
}

export async function runConsumeMessage(opts: ConsumeMessageOptions): Promise<void> {
  const timeoutMs = timeoutOf(opts);
  const topic = opts.topic.trim();
  const limit = intOption('-c/--count', opts.count, 1, Number.MAX_SAFE_INTEGER);
  const now = Date.now();
  const begin = opts.beginTimestamp === undefined ? undefined : timestampOption('-s/--begin-timestamp', opts.beginTimestamp, now);
  const end = opts.endTimestamp === undefined ? undefined : timestampOption('-e/--end-timestamp', opts.endTimestamp, now);
  if (begin !== undefined && begin > now) throw new Error('-s/--begin-timestamp is in the future');
  if (end !== undefined && end > now) throw new Error('-e/--end-timestamp is in the future');
  if (begin !== undefined && end !== undefined && begin > end) throw new Error('-s/--begin-timestamp is after -e/--end-timestamp');
  const from = opts.offset === undefined ? 0 : intOption('-o/--offset', opts.offset, 0);
  const queues = chooseQueues(readQueuesOf(await fetchTopicRoute(opts.namesrvAddr, topic, timeoutMs)), opts);
  const group = opts.group.trim();
  const print = !opts.quiet;
  const started = performance.now();
  let consumed = 0;
  let bytes = 0;
  const perQueue: Array<{ brokerName: string; queueId: number; fromOffset: number; nextOffset: number; consumed: number }> = [];
  const messages: Record<string, unknown>[] = [];
  for (const q of queues) {
    if (consumed >= limit) break;
    const min = begin === undefined ? await queueOffset(q.brokerAddr, 'min', topic, q.queueId, timeoutMs) : await searchOffset(q.brokerAddr, topic, q.queueId, begin, timeoutMs);
    const max = end === undefined ? await queueOffset(q.brokerAddr, 'max', topic, q.queueId, timeoutMs) : await searchOffset(q.brokerAddr, topic, q.queueId, end, timeoutMs);
    const stat = { brokerName: q.brokerName, queueId: q.queueId, fromOffset: Math.max(min, from), nextOffset: Math.max(min, from), consumed: 0 };
    perQueue.push(stat);
    for (let offset = stat.fromOffset; offset < max && consumed < limit; ) {
      const r = await pullOnce(q.brokerAddr, group, topic, q.queueId, offset, Math.min(32, limit - consumed, max - offset), timeoutMs);
      const got = r.messages.filter((m) => m.queueOffset < max).slice(0, limit - consumed);
      if (got.length > 0 && print && !opts.json) console.log('Consume ok');
      for (const m of got) {
        consumed++;
        stat.consumed++;
        bytes += plainBody(m).length;
        if (print) {
          if (opts.json) messages.push(messageJson(m, 'utf8'));
          else console.log(messageLine(m, q.brokerName, 'utf8', true));
        }
      }
      const next = got.length > 0 ? got[got.length - 1]!.queueOffset + 1 : r.nextBeginOffset;
      stat.nextOffset = next;
      if (r.status === 'NO_NEW_MSG' || r.status === 'OFFSET_ILLEGAL' || next <= offset) {
        if (print && !opts.json) console.log(`${messageQueueText(topic, q)} print msg finished. status=${r.status}, offset=${next}`);
        break;
      }
      offset = next;
    }
  }
  const elapsedMs = performance.now() - started;
  const tps = elapsedMs > 0 ? (consumed * 1000) / elapsedMs : 0;
  if (opts.json) {
    printJson({ topic, consumed, bytes, elapsedMs: Math.round(elapsedMs), tps: Number(tps.toFixed(1)), queues: perQueue, ...(print ? { messages } : {}) });
    return;
  }
  console.log(`consumed ${consumed} messages (${bytes} bytes) from ${perQueue.length} queues in ${Math.round(elapsedMs)} ms: ${tps.toFixed(1)} msg/s`);
}

export function registerAdminConsumeMessage(program: Command): void {
  withCommonOptions(
    withNamesrvOption(adminCommand(program).command('consume-message').description('read messages of a topic and measure the rate (mqadmin consumeMessage / tools.sh Consumer, request code 11)'))
      .requiredOption('-t, --topic <topic>', 'topic name')
      .option('-b, --broker-name <name>', 'only this broker')
      .option('-i, --queue-id <id>', 'only this queue (needs -b)')
      .option('-o, --offset <offset>', 'start at this queue offset (needs -i)')
      .option('-g, --group <group>', 'consumer group for the pulls (nothing is committed)', TOOLS_CONSUMER_GROUP)
      .option('-s, --begin-timestamp <time>', 'from this store time: now, epoch ms or yyyy-MM-dd#HH:mm:ss:SSS')
      .option('-e, --end-timestamp <time>', 'up to this store time')
      .option('-c, --count <n>', 'most messages to read', '128')
      .option('--quiet', 'print only the summary'),
  ).action(runConsumeMessage);
}
