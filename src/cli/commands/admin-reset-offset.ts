/**
 * `tsmq admin reset-offset-by-time -n <namesrv> -g <group> -t <topic> -s <time> [-f <force>]` and
 * `… -b <host:port> -q <queueId> [-o <offset>]`: moves a consumer group's offsets on a topic back
 * (or forward) to the first message stored at or after a time (mqadmin `resetOffsetByTime`).
 * `-s`: now, epoch ms, or local yyyy-MM-dd#HH:mm:ss:SSS; `-1` means each queue's max offset.
 *
 * - Online group: INVOKE_BROKER_TO_RESET_OFFSET (222, header topic, group, timestamp, isForce)
 *   to every master of the topic's route; the broker commits the new offsets and tells the
 *   group's clients (220). Prints mqadmin's `start reset consumer offset by specified, group[…],
 *   topic[…], force[…], timestamp(string)[…], timestamp(long)[…]` and the table #brokerName,
 *   #queueId, #offset.
 * - Group offline (a broker answers CONSUMER_NOT_ONLINE 206): as mqadmin, the old way per
 *   broker: the group's consume stats (208; the topic's queues from 202 when the group has no
 *   offsets there), the offset for the time per queue (29, or 30 for -1), committed with
 *   UPDATE_CONSUMER_OFFSET (15) when `force` or when it moves back. Prints `reset consumer offset
 *   by specified consumerGroup[…], …` and the table #brokerName, #queueId, #brokerOffset,
 *   #consumerOffset, #timestampOffset, #resetOffset.
 *   Also taken when the broker answers SYSTEM_ERROR "THe consumer group <g> not exist" (the group
 *   has no committed offset on the topic there): mqadmin stops with that error; here the group's
 *   offsets are set from each queue's min offset, so a group that never consumed can be placed.
 * - A group that consumes by POP (the broker holds pop state for it on the topic): the broker
 *   answers 222 itself whether or not a consumer is online (Apache 5.3.3's server-side reset),
 *   so the online form applies; its pop start moves backwards or forwards.
 * - `-b -q`: one queue of one broker: the offset for the time (29), or -o, committed with 15
 *   when > 0 (as mqadmin; 0 is left alone there, so a reset to the start of a queue uses the
 *   topic-wide form).
 * `--json`: `{"group","topic","timestamp","force","mode":"online"|"offline"|"queue","queues":[{brokerName,
 * queueId,offset,brokerOffset?,consumerOffset?,timestampOffset?}]}`.
 */
import type { Command } from 'commander';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import {
  addressList,
  adminCommand,
  intOption,
  invokeAdmin,
  messageQueueEntries,
  numberField,
  objectField,
  parseFastjson,
  printJson,
  renderTable,
  successBody,
  timeoutOf,
  timestampOption,
  withCommonOptions,
  type CommonAdminOptions,
} from './admin-support.js';
import { fetchTopicRoute, masterAddrsOfRoute } from './admin-nameserver.js';
import { queueOffset, searchOffset } from './admin-messages.js';

export interface ResetOffsetOptions extends CommonAdminOptions {
  namesrvAddr?: string;
  group: string;
  topic: string;
  timestamp: string;
  force: string;
  brokerAddr?: string;
  queue?: string;
  offset?: string;
}

export interface ResetQueueRow {
  brokerName: string;
  queueId: number;
  /** The offset the group has now. */
  offset: number;
  brokerOffset?: number;
  consumerOffset?: number;
  timestampOffset?: number;
}

class GroupOffline extends Error {}

async function resetOnline(brokers: Map<string, string>, group: string, topic: string, timestamp: number, force: boolean, timeoutMs: number): Promise<ResetQueueRow[]> {
  const rows: ResetQueueRow[] = [];
  for (const [, broker] of brokers) {
    const { addr, response } = await invokeAdmin([broker], RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, { topic, group, timestamp, isForce: force }, timeoutMs);
    if (response.code === ResponseCode.CONSUMER_NOT_ONLINE) throw new GroupOffline(response.remark ?? 'consumer not online');
    // the broker's answer when the group has no committed offset on a queue of the topic
    if (response.code === ResponseCode.SYSTEM_ERROR && /consumer group .* not exist/i.test(response.remark ?? '')) throw new GroupOffline(response.remark ?? '');
    const table = objectField(parseFastjson(successBody(addr, response).toString('utf8')), 'offsetTable');
    for (const [key, value] of Object.entries(table)) {
      const mq = JSON.parse(key) as { brokerName: string; queueId: number };
      rows.push({ brokerName: mq.brokerName, queueId: mq.queueId, offset: Number(value) });
    }
  }
  return rows.sort((a, b) => (a.brokerName !== b.brokerName ? (a.brokerName < b.brokerName ? -1 : 1) : a.queueId - b.queueId));
}

async function resetOffline(brokers: Map<string, string>, readQueues: Map<string, number>, group: string, topic: string, timestamp: number, force: boolean, timeoutMs: number): Promise<ResetQueueRow[]> {
  const rows: ResetQueueRow[] = [];
  for (const [brokerName, broker] of brokers) {
    const stats = await invokeAdmin([broker], RequestCode.GET_CONSUME_STATS, { consumerGroup: group, topic }, timeoutMs);
    let queues: Array<{ queueId: number; brokerOffset: number; consumerOffset: number }> = [];
    if (stats.response.code === ResponseCode.SUCCESS) {
      queues = messageQueueEntries(objectField(parseFastjson(successBody(broker, stats.response).toString('utf8')), 'offsetTable'))
        .filter(([mq]) => mq.topic === topic)
        .map(([mq, o]) => ({ queueId: mq.queueId, brokerOffset: numberField(o, 'brokerOffset'), consumerOffset: numberField(o, 'consumerOffset') }));
    }
    if (queues.length === 0) {
      // the group has no offsets on the topic: every read queue, from its min offset (Apache)
      for (let queueId = 0; queueId < (readQueues.get(brokerName) ?? 0); queueId++) {
        queues.push({ queueId, brokerOffset: await queueOffset(broker, 'max', topic, queueId, timeoutMs), consumerOffset: await queueOffset(broker, 'min', topic, queueId, timeoutMs) });
      }
    }
    for (const q of queues) {
      const timestampOffset = timestamp === -1 ? await queueOffset(broker, 'max', topic, q.queueId, timeoutMs) : await searchOffset(broker, topic, q.queueId, timestamp, timeoutMs);
      let offset = q.consumerOffset;
      if (force || timestampOffset <= q.consumerOffset) {
        offset = timestampOffset;
        const r = await invokeAdmin([broker], RequestCode.UPDATE_CONSUMER_OFFSET, { consumerGroup: group, topic, queueId: q.queueId, commitOffset: offset }, timeoutMs);
        successBody(broker, r.response);
      }
      rows.push({ brokerName, queueId: q.queueId, offset, brokerOffset: q.brokerOffset, consumerOffset: q.consumerOffset, timestampOffset });
    }
  }
  return rows.sort((a, b) => (a.brokerName !== b.brokerName ? (a.brokerName < b.brokerName ? -1 : 1) : a.queueId - b.queueId));
}

export async function runResetOffsetByTime(opts: ResetOffsetOptions): Promise<void> {
  const timeoutMs = timeoutOf(opts);
  const group = opts.group.trim();
  const topic = opts.topic.trim();
  const timestamp = opts.timestamp.trim() === '-1' ? -1 : timestampOption('-s/--timestamp', opts.timestamp);
  const forceText = opts.force.trim();
  if (forceText !== 'true' && forceText !== 'false') throw new Error(`-f/--force must be true or false, got ${opts.force}`);
  const force = forceText === 'true';
  const head = `group[${group}], topic[${topic}], force[${force}], timestamp(string)[${opts.timestamp.trim()}], timestamp(long)[${timestamp}]`;

  if (opts.brokerAddr && opts.queue !== undefined) {
    const [broker] = addressList(opts.brokerAddr, 'broker');
    const queueId = intOption('-q/--queue', opts.queue, 0, 65535);
    const offset = opts.offset !== undefined ? intOption('-o/--offset', opts.offset, 0) : timestamp === -1 ? await queueOffset(broker!, 'max', topic, queueId, timeoutMs) : await searchOffset(broker!, topic, queueId, timestamp, timeoutMs);
    if (offset > 0) successBody(broker!, (await invokeAdmin([broker!], RequestCode.UPDATE_CONSUMER_OFFSET, { consumerGroup: group, topic, queueId, commitOffset: offset }, timeoutMs)).response);
    if (opts.json) {
      printJson({ group, topic, timestamp, force, mode: 'queue', brokerAddr: broker, queues: [{ queueId, offset, committed: offset > 0 }] });
      return;
    }
    console.log(`start reset consumer offset by specified, group[${group}], topic[${topic}], queueId[${queueId}], broker[${broker}], timestamp(string)[${opts.timestamp.trim()}], timestamp(long)[${timestamp}]`);
    console.log(`reset consumer offset to ${offset}`);
    return;
  }
  if (opts.queue !== undefined || opts.offset !== undefined) throw new Error('-q/--queue and -o/--offset need -b/--broker-addr');
  if (!opts.namesrvAddr) throw new Error('give -n <nameserver address> (or NAMESRV_ADDR)');
  const route = await fetchTopicRoute(opts.namesrvAddr, topic, timeoutMs);
  const brokers = masterAddrsOfRoute(route);
  let rows: ResetQueueRow[];
  let mode: 'online' | 'offline' = 'online';
  try {
    rows = await resetOnline(brokers, group, topic, timestamp, force, timeoutMs);
  } catch (e) {
    if (!(e instanceof GroupOffline)) throw e;
    mode = 'offline';
    rows = await resetOffline(brokers, new Map(route.queueDatas.map((q) => [q.brokerName, q.readQueueNums])), group, topic, timestamp, force, timeoutMs);
  }
  if (opts.json) {
    printJson({ group, topic, timestamp, force, mode, queues: rows });
    return;
  }
  if (mode === 'online') {
    console.log(`start reset consumer offset by specified, ${head}`);
    for (const l of renderTable(['#brokerName', '#queueId', '#offset'], rows.map((r) => [r.brokerName, r.queueId, r.offset]))) console.log(l);
  } else {
    console.log(`reset consumer offset by specified consumerGroup[${group}], topic[${topic}], force[${force}], timestamp(string)[${opts.timestamp.trim()}], timestamp(long)[${timestamp}]`);
    for (const l of renderTable(
      ['#brokerName', '#queueId', '#brokerOffset', '#consumerOffset', '#timestampOffset', '#resetOffset'],
      rows.map((r) => [r.brokerName, r.queueId, r.brokerOffset ?? '', r.consumerOffset ?? '', r.timestampOffset ?? '', r.offset]),
    ))
      console.log(l);
  }
}

export function registerAdminResetOffset(program: Command): void {
  withCommonOptions(
    adminCommand(program)
      .command('reset-offset-by-time')
      .description("move a consumer group's offsets on a topic to a point in time (mqadmin resetOffsetByTime, request codes 222, or 208 + 29 + 15 when the group is offline)")
      .requiredOption('-g, --group <group>', 'consumer group')
      .requiredOption('-t, --topic <topic>', 'topic name')
      .requiredOption('-s, --timestamp <time>', 'now, epoch ms, yyyy-MM-dd#HH:mm:ss:SSS, or -1 for the max offset')
      .option('-f, --force <true|false>', 'also move offsets forward', 'true')
      .option('-n, --namesrv-addr <host:port>', 'nameserver address(es)', process.env.NAMESRV_ADDR)
      .option('-b, --broker-addr <host:port>', 'with -q: only this broker')
      .option('-q, --queue <queueId>', 'with -b: only this queue')
      .option('-o, --offset <offset>', 'with -b -q: this offset instead of the time'),
  ).action(runResetOffsetByTime);
}
