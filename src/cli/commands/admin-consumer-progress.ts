/**
 * `tsmq admin consumer-progress -b <host:port> -g <group> [-t <topic>]`: how far a consumer group
 * is behind on one broker (mqadmin `consumerProgress`, request code GET_CONSUME_STATS = 208). Per
 * queue: broker offset (the queue's max offset), the group's committed consumer offset, their
 * difference, and the store time of the last consumed message; then the total difference.
 * Without -t the broker reports every topic the group has committed offsets for.
 * `--json`: `{"brokerAddr","group","consumeTps","diffTotal","queues":[{topic,brokerName,queueId,
 * brokerOffset,consumerOffset,diff,lastTimestamp}]}`.
 */
import type { Command } from 'commander';
import { RequestCode } from '../../remoting/codes/request-code.js';
import {
  addressList,
  adminCommand,
  formatTimeSeconds,
  invokeAdmin,
  numberField,
  messageQueueEntries,
  objectField,
  parseFastjson,
  printJson,
  renderTable,
  successBody,
  timeoutOf,
  withCommonOptions,
  type CommonAdminOptions,
} from './admin-support.js';

export interface ConsumerProgressOptions extends CommonAdminOptions {
  brokerAddr: string;
  group: string;
  topic?: string;
}

export interface QueueProgress {
  topic: string;
  brokerName: string;
  queueId: number;
  brokerOffset: number;
  consumerOffset: number;
  diff: number;
  lastTimestamp: number;
}

export interface ConsumerProgress {
  consumeTps: number;
  diffTotal: number;
  queues: QueueProgress[];
}

/** A ConsumeStats body as rows ordered by topic, broker, queue id, with the diff per queue and in total. */
export function consumerProgressOf(body: Buffer): ConsumerProgress {
  const parsed = parseFastjson(body.toString('utf8'));
  const queues = messageQueueEntries(objectField(parsed, 'offsetTable')).map(([mq, o]) => {
    const brokerOffset = numberField(o, 'brokerOffset');
    const consumerOffset = numberField(o, 'consumerOffset');
    return { ...mq, brokerOffset, consumerOffset, diff: brokerOffset - consumerOffset, lastTimestamp: numberField(o, 'lastTimestamp') };
  });
  const consumeTps = numberField(parsed as Record<string, unknown>, 'consumeTps');
  return { consumeTps, diffTotal: queues.reduce((sum, q) => sum + q.diff, 0), queues };
}

export function consumerProgressLines(p: ConsumerProgress): string[] {
  return [
    ...renderTable(
      ['#Topic', '#Broker Name', '#QID', '#Broker Offset', '#Consumer Offset', '#Diff', '#LastTime'],
      p.queues.map((q) => [q.topic, q.brokerName, q.queueId, q.brokerOffset, q.consumerOffset, q.diff, formatTimeSeconds(q.lastTimestamp)]),
    ),
    '',
    `Consume TPS: ${p.consumeTps.toFixed(2)}`,
    `Consume Diff Total: ${p.diffTotal}`,
  ];
}

export async function runConsumerProgress(opts: ConsumerProgressOptions): Promise<void> {
  const group = opts.group.trim();
  const topic = opts.topic?.trim();
  const { addr, response } = await invokeAdmin(
    addressList(opts.brokerAddr, 'broker').slice(0, 1),
    RequestCode.GET_CONSUME_STATS,
    { consumerGroup: group, ...(topic ? { topic } : {}) },
    timeoutOf(opts),
  );
  const progress = consumerProgressOf(successBody(addr, response));
  if (opts.json) {
    printJson({ brokerAddr: addr, group, ...progress });
    return;
  }
  if (progress.queues.length === 0) {
    console.log(`consumer group ${group} has no consume progress on ${addr}${topic ? ` for topic ${topic}` : ''}`);
    return;
  }
  for (const line of consumerProgressLines(progress)) console.log(line);
}

export function registerAdminConsumerProgress(program: Command): void {
  withCommonOptions(
    adminCommand(program)
      .command('consumer-progress')
      .description("a consumer group's offsets and lag per queue on a broker (mqadmin consumerProgress, request code 208)")
      .requiredOption('-b, --broker-addr <host:port>', 'broker address')
      .requiredOption('-g, --group <group>', 'consumer group')
      .option('-t, --topic <topic>', 'only this topic'),
  ).action(runConsumerProgress);
}
