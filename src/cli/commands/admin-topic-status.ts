/**
 * `tsmq admin topic-status -b <host:port> -t <topic>`: per queue of the topic on one broker, the
 * min and max offset and when the last message was stored (mqadmin `topicStatus`, request code
 * GET_TOPIC_STATS_INFO = 202). Table columns #Broker Name, #QID, #Min Offset, #Max Offset,
 * #Last Updated (local time, empty for an empty queue). `--json`:
 * `{"brokerAddr","topic","queues":[{brokerName,queueId,minOffset,maxOffset,lastUpdateTimestamp}]}`.
 */
import type { Command } from 'commander';
import { RequestCode } from '../../remoting/codes/request-code.js';
import {
  addressList,
  adminCommand,
  formatTimeMillis,
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

export interface TopicStatusOptions extends CommonAdminOptions {
  brokerAddr: string;
  topic: string;
}

export interface QueueStatus {
  brokerName: string;
  queueId: number;
  minOffset: number;
  maxOffset: number;
  lastUpdateTimestamp: number;
}

/** Rows of a TopicStatsTable body, ordered by broker and queue id. */
export function topicStatusOf(body: Buffer): QueueStatus[] {
  const table = objectField(parseFastjson(body.toString('utf8')), 'offsetTable');
  return messageQueueEntries(table).map(([mq, o]) => ({
    brokerName: mq.brokerName,
    queueId: mq.queueId,
    minOffset: numberField(o, 'minOffset'),
    maxOffset: numberField(o, 'maxOffset'),
    lastUpdateTimestamp: numberField(o, 'lastUpdateTimestamp'),
  }));
}

export function topicStatusTable(queues: QueueStatus[]): string[] {
  return renderTable(
    ['#Broker Name', '#QID', '#Min Offset', '#Max Offset', '#Last Updated'],
    queues.map((q) => [q.brokerName, q.queueId, q.minOffset, q.maxOffset, formatTimeMillis(q.lastUpdateTimestamp)]),
  );
}

export async function runTopicStatus(opts: TopicStatusOptions): Promise<void> {
  const topic = opts.topic.trim();
  const { addr, response } = await invokeAdmin(addressList(opts.brokerAddr, 'broker').slice(0, 1), RequestCode.GET_TOPIC_STATS_INFO, { topic }, timeoutOf(opts));
  const queues = topicStatusOf(successBody(addr, response));
  if (opts.json) {
    printJson({ brokerAddr: addr, topic, queues });
    return;
  }
  for (const line of topicStatusTable(queues)) console.log(line);
}

export function registerAdminTopicStatus(program: Command): void {
  withCommonOptions(
    adminCommand(program)
      .command('topic-status')
      .description("min/max offset and last update time of each of a topic's queues on a broker (mqadmin topicStatus, request code 202)")
      .requiredOption('-b, --broker-addr <host:port>', 'broker address')
      .requiredOption('-t, --topic <topic>', 'topic name'),
  ).action(runTopicStatus);
}
