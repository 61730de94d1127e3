/**
 * `tsmq admin send-message -n <namesrv> -t <topic> (-p <body> | --size <bytes>) [-k <keys>]
 * [-c <tags>] [-b <brokerName> [-i <queueId>]] [--count <n>] [--concurrency <n>] [-g <group>]`:
 * sends messages with SEND_MESSAGE_V2 (310), as mqadmin `sendMessage` (one message) and as the
 * benchmark `tools.sh Producer` (many: counts, rate and response times).
 *
 * Each message carries KEYS / TAGS when given, WAIT=true and a client unique id (UNIQ_KEY, 32
 * hex digits: IPv4, pid, a random per-run part, ms since the start of the month, a counter,
 * the shape of Apache's MessageClientIDSetter) which is the MsgId printed. Queues: -b/-i pins
 * one; -b alone uses that broker's write queues; otherwise round robin over every writable
 * queue of the route (perm with the write bit), starting at the first. The producer group (-g,
 * default TOOLS_PRODUCER) is only a header field (no heartbeat, so producer-connection does not
 * list it). --concurrency requests are in flight at once over one connection per broker.
 *
 * Output: one message → mqadmin's table `#Broker Name  #QID  #Send Result  #MsgId` (SEND_OK,
 * or the broker's refusal as `FAILED(<code>)`); more → a table `#Broker Name  #QID  #Sent` of
 * the successful sends per queue. Always a summary line `sent N messages (ok X, failed Y) in T
 * ms: R msg/s, B bytes/s; RT avg A ms, max M ms`. Exit code 1 when any send failed.
 * `--json`: `{"topic","sent","ok","failed","elapsedMs","tps","bytesPerSecond","avgRtMs","maxRtMs",
 * "queues":[{brokerName,queueId,sent}],"results":[{brokerName,queueId,status,msgId,offsetMsgId,queueOffset,rtMs,error?}]}`
 * (results only for up to 1000 messages).
 */
import { randomBytes } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import type { Command } from 'commander';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode, responseCodeName } from '../../remoting/codes/response-code.js';
import { createRequestCommand } from '../../remoting/protocol/commands.js';
import { RemotingClient } from '../../remoting/transport/remoting-client.js';
import { adminClientOptions } from './admin-connection.js';
import { MessageConst } from '../../common/message/message-const.js';
import { encodeProperties } from '../../common/message/properties.js';
import { TopicValidator, validateTopic } from '../../common/message/topic-validator.js';
import { adminCommand, intOption, printJson, renderTable, timeoutOf, withCommonOptions, type CommonAdminOptions } from './admin-support.js';
import { fetchPublishRoute, masterAddrsOfRoute, withNamesrvOption } from './admin-nameserver.js';

/** DefaultMQProducer's defaultTopicQueueNums (what mqadmin sendMessage uses): queues of a topic its first send creates. */
const DEFAULT_TOPIC_QUEUE_NUMS = 4;

export interface SendMessageOptions extends CommonAdminOptions {
  namesrvAddr: string;
  topic: string;
  body?: string;
  size?: string;
  key?: string;
  tags?: string;
  brokerName?: string;
  qid?: string;
  count: string;
  concurrency: string;
  group: string;
}

/** The result of one send. */
export interface SendOutcome {
  brokerName: string;
  queueId: number;
  /** SEND_OK, FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE, or FAILED(<code>). */
  status: string;
  msgId: string;
  offsetMsgId: string;
  queueOffset: number;
  rtMs: number;
  error?: string;
}

const SEND_STATUS: Record<number, string> = {
  [ResponseCode.SUCCESS]: 'SEND_OK',
  [ResponseCode.FLUSH_DISK_TIMEOUT]: 'FLUSH_DISK_TIMEOUT',
  [ResponseCode.FLUSH_SLAVE_TIMEOUT]: 'FLUSH_SLAVE_TIMEOUT',
  [ResponseCode.SLAVE_NOT_AVAILABLE]: 'SLAVE_NOT_AVAILABLE',
};

/** Client unique ids: 16 bytes as 32 upper-case hex digits (Apache MessageClientIDSetter's layout). */
export class UniqueIdGenerator {
  private readonly prefix: Buffer;
  private counter = 0;
  private monthStartMs = 0;
  private nextMonthMs = 0;

  constructor() {
    const ip = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)?.address ?? '127.0.0.1';
    this.prefix = Buffer.alloc(10);
    ip.split('.').forEach((p, i) => this.prefix.writeUInt8(Number(p) & 255, i));
    this.prefix.writeUInt16BE(process.pid & 0xffff, 4);
    randomBytes(4).copy(this.prefix, 6);
  }

  next(nowMs = Date.now()): string {
    if (nowMs >= this.nextMonthMs || nowMs < this.monthStartMs) {
      const d = new Date(nowMs);
      this.monthStartMs = new Date(d.getFullYear(), d.getMonth(), 1).getTime();
      this.nextMonthMs = new Date(d.getFullYear(), d.getMonth() + 1, 1).getTime();
    }
    const tail = Buffer.alloc(6);
    tail.writeUInt32BE((nowMs - this.monthStartMs) >>> 0, 0);
    tail.writeUInt16BE(this.counter++ & 0xffff, 4);
    return Buffer.concat([this.prefix, tail]).toString('hex').toUpperCase();
  }
}

interface Target {
  brokerName: string;
  brokerAddr: string;
  queueId: number;
}

/** Where the messages go: the pinned queue, the broker's write queues, or every writable queue of the route. @throws Error naming what is missing. */
export async function sendTargetsOf(opts: SendMessageOptions, topic: string, timeoutMs: number): Promise<Target[]> {
  const route = await fetchPublishRoute(opts.namesrvAddr, topic, timeoutMs, DEFAULT_TOPIC_QUEUE_NUMS);
  const masters = masterAddrsOfRoute(route);
  const brokerName = opts.brokerName?.trim();
  if (opts.qid !== undefined && !brokerName) throw new Error('-i/--qid needs -b/--broker-name (mqadmin: "Broker name must be set if the queue is chosen!")');
  const out: Target[] = [];
  for (const [name, addr] of masters) {
    if (brokerName && name !== brokerName) continue;
    const q = route.queueDatas.find((d) => d.brokerName === name);
    if (!q || (q.perm & 2) === 0) continue;
    if (opts.qid !== undefined) {
      const queueId = intOption('-i/--qid', opts.qid, 0, 65535);
      if (queueId >= q.writeQueueNums) throw new Error(`topic ${topic} has ${q.writeQueueNums} write queues on ${name}; -i ${queueId} is not one`);
      return [{ brokerName: name, brokerAddr: addr, queueId }];
    }
    for (let queueId = 0; queueId < q.writeQueueNums; queueId++) out.push({ brokerName: name, brokerAddr: addr, queueId });
  }
  if (out.length === 0) throw new Error(brokerName ? `broker ${brokerName} has no writable queue of topic ${topic}` : `topic ${topic} has no writable queue`);
  return out;
}

function bodyOf(opts: SendMessageOptions): Buffer {
  if (opts.body !== undefined && opts.size !== undefined) throw new Error('give -p/--body or --size, not both');
  if (opts.body !== undefined) return Buffer.from(opts.body, 'utf8');
  if (opts.size !== undefined) return Buffer.alloc(intOption('--size', opts.size, 0, 4 * 1024 * 1024), 'a');
  throw new Error('give -p/--body <text> or --size <bytes>');
}

export async function runSendMessage(opts: SendMessageOptions): Promise<void> {
  const timeoutMs = timeoutOf(opts);
  const topic = opts.topic.trim();
  const problem = validateTopic(topic);
  if (problem) throw new Error(`-t: ${problem}`);
  const body = bodyOf(opts);
  const count = intOption('--count', opts.count, 1, 100_000_000);
  const concurrency = intOption('--concurrency', opts.concurrency, 1, 1024);
  const targets = await sendTargetsOf(opts, topic, timeoutMs);
  const ids = new UniqueIdGenerator();
  const client = new RemotingClient(adminClientOptions({ connectTimeoutMs: Math.min(3000, timeoutMs) }));
  const keepResults = count <= 1000;
  const results: SendOutcome[] = [];
  const perQueue = new Map<Target, number>();
  let ok = 0;
  let failed = 0;
  let rtTotal = 0;
  let rtMax = 0;
  let nextIndex = 0;
  const sendOne = async (i: number): Promise<void> => {
    const t = targets[i % targets.length]!;
    const msgId = ids.next();
    const props = new Map<string, string>();
    if (opts.key) props.set(MessageConst.KEYS, opts.key.trim());
    if (opts.tags) props.set(MessageConst.TAGS, opts.tags.trim());
    props.set(MessageConst.WAIT, 'true');
    props.set(MessageConst.UNIQ_KEY, msgId);
    const ext = { a: opts.group, b: topic, c: TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC, d: DEFAULT_TOPIC_QUEUE_NUMS, e: t.queueId, f: 0, g: Date.now(), h: 0, i: encodeProperties(props), j: 0, k: false };
    const t0 = performance.now();
    let outcome: SendOutcome;
    try {
      const r = await client.invokeSync(t.brokerAddr, createRequestCommand(RequestCode.SEND_MESSAGE_V2, ext, body), timeoutMs);
      const rtMs = performance.now() - t0;
      const status = SEND_STATUS[r.code] ?? `FAILED(${r.code})`;
      outcome = {
        brokerName: t.brokerName,
        queueId: Number(r.extFields?.queueId ?? t.queueId),
        status,
        msgId,
        offsetMsgId: String(r.extFields?.msgId ?? ''),
        queueOffset: Number(r.extFields?.queueOffset ?? -1),
        rtMs,
        ...(status.startsWith('FAILED') ? { error: `code ${r.code} (${responseCodeName(r.code)})${r.remark ? `, ${r.remark}` : ''}` } : {}),
      };
    } catch (e) {
      outcome = { brokerName: t.brokerName, queueId: t.queueId, status: 'FAILED', msgId, offsetMsgId: '', queueOffset: -1, rtMs: performance.now() - t0, error: (e as Error).message };
    }
    if (outcome.error) failed++;
    else {
      ok++;
      perQueue.set(t, (perQueue.get(t) ?? 0) + 1);
    }
    rtTotal += outcome.rtMs;
    rtMax = Math.max(rtMax, outcome.rtMs);
    if (keepResults) results[i] = outcome;
  };
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: Math.min(concurrency, count) }, async () => {
        while (nextIndex < count) await sendOne(nextIndex++);
      }),
    );
  } finally {
    await client.close();
  }
  const elapsedMs = performance.now() - started;
  const perSecond = (n: number): number => (elapsedMs > 0 ? (n * 1000) / elapsedMs : 0);
  const summary = {
    topic,
    sent: count,
    ok,
    failed,
    elapsedMs: Math.round(elapsedMs),
    tps: Number(perSecond(ok).toFixed(1)),
    bytesPerSecond: Math.round(perSecond(ok * body.length)),
    avgRtMs: Number((rtTotal / count).toFixed(3)),
    maxRtMs: Number(rtMax.toFixed(3)),
    queues: targets.filter((t) => perQueue.has(t)).map((t) => ({ brokerName: t.brokerName, queueId: t.queueId, sent: perQueue.get(t)! })),
  };
  if (opts.json) printJson(keepResults ? { ...summary, results } : summary);
  else {
    if (count === 1) {
      const r = results[0]!;
      for (const l of renderTable(['#Broker Name', '#QID', '#Send Result', '#MsgId'], [[r.brokerName, r.queueId, r.status, r.msgId]])) console.log(l);
      if (r.error) console.log(`error: ${r.error}`);
    } else {
      for (const l of renderTable(['#Broker Name', '#QID', '#Sent'], summary.queues.map((q) => [q.brokerName, q.queueId, q.sent]))) console.log(l);
    }
    console.log(
      `sent ${count} messages (ok ${ok}, failed ${failed}) in ${summary.elapsedMs} ms: ${summary.tps.toFixed(1)} msg/s, ${summary.bytesPerSecond} bytes/s; RT avg ${summary.avgRtMs.toFixed(2)} ms, max ${summary.maxRtMs.toFixed(2)} ms`,
    );
  }
  if (failed > 0) {
    const first = results.find((r) => r?.error);
    throw new Error(`${failed} of ${count} sends failed${first ? `; first: ${first.error}` : ''}`);
  }
}

export function registerAdminSendMessage(program: Command): void {
  withCommonOptions(
    withNamesrvOption(adminCommand(program).command('send-message').description('send one message or a measured batch (mqadmin sendMessage / tools.sh Producer, request code 310)'))
      .requiredOption('-t, --topic <topic>', 'topic name')
      .option('-p, --body <text>', 'message body (UTF-8)')
      .option('--size <bytes>', 'instead of -p: a body of this many bytes')
      .option('-k, --key <keys>', 'message keys (space-separated)')
      .option('-c, --tags <tag>', 'message tag')
      .option('-b, --broker-name <name>', 'only this broker')
      .option('-i, --qid <queueId>', 'only this queue (needs -b)')
      .option('--count <n>', 'messages to send', '1')
      .option('--concurrency <n>', 'sends in flight at once', '1')
      .option('-g, --group <group>', 'producer group', 'TOOLS_PRODUCER'),
  ).action(runSendMessage);
}
