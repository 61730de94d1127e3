/**
 * `tsmq admin update-topic -b <host:port> -t <topic> [-r 8] [-w 8] [-p 6] [-o false]`: creates or
 * updates a topic on one broker (mqadmin `updateTopic`, request code UPDATE_AND_CREATE_TOPIC =
 * 17). Defaults as mqadmin: 8 read and 8 write queues, perm 6 (read + write). The broker refuses
 * illegal names, system topics and the cluster name; it re-registers with its nameservers, so the
 * route follows within moments.
 */
import type { Command } from 'commander';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { TopicValidator, validateTopic } from '../../common/message/topic-validator.js';
import { addressList, adminCommand, intOption, invokeAdmin, printJson, successBody, timeoutOf, withCommonOptions, type CommonAdminOptions } from './admin-support.js';

export interface UpdateTopicOptions extends CommonAdminOptions {
  brokerAddr: string;
  topic: string;
  readQueueNums: string;
  writeQueueNums: string;
  perm: string;
  order: string;
}

/** The topic settings sent, as printed. */
export interface TopicSettings {
  topic: string;
  readQueueNums: number;
  writeQueueNums: number;
  perm: number;
  order: boolean;
}

/** `6` → `RW`, `4` → `R`, `2` → `W`, `0` → `-` (PermName bits 4 read, 2 write). */
export function permText(perm: number): string {
  const s = `${perm & 4 ? 'R' : ''}${perm & 2 ? 'W' : ''}`;
  return s === '' ? '-' : s;
}

/** Reads and checks the options. @throws Error naming the bad option. */
export function topicSettingsOf(opts: UpdateTopicOptions): TopicSettings {
  const topic = opts.topic.trim();
  const problem = validateTopic(topic);
  if (problem) throw new Error(`-t: ${problem}`);
  if (!['true', 'false'].includes(opts.order)) throw new Error(`-o/--order must be true or false, got ${opts.order}`);
  return {
    topic,
    readQueueNums: intOption('-r/--read-queue-nums', opts.readQueueNums, 1, 1024),
    writeQueueNums: intOption('-w/--write-queue-nums', opts.writeQueueNums, 1, 1024),
    perm: intOption('-p/--perm', opts.perm, 0, 7),
    order: opts.order === 'true',
  };
}

export async function runUpdateTopic(opts: UpdateTopicOptions): Promise<void> {
  const settings = topicSettingsOf(opts);
  const [brokerAddr] = addressList(opts.brokerAddr, 'broker');
  const { addr, response } = await invokeAdmin(
    [brokerAddr!],
    RequestCode.UPDATE_AND_CREATE_TOPIC,
    {
      topic: settings.topic,
      defaultTopic: TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC,
      readQueueNums: settings.readQueueNums,
      writeQueueNums: settings.writeQueueNums,
      perm: settings.perm,
      topicFilterType: 'SINGLE_TAG',
      topicSysFlag: 0,
      order: settings.order,
    },
    timeoutOf(opts),
  );
  successBody(addr, response);
  if (opts.json) {
    printJson({ brokerAddr: addr, ...settings });
    return;
  }
  console.log(`create topic to ${addr} success.`);
  console.log(`topic ${settings.topic}: readQueueNums ${settings.readQueueNums}, writeQueueNums ${settings.writeQueueNums}, perm ${settings.perm} (${permText(settings.perm)}), order ${settings.order}`);
}

export function registerAdminUpdateTopic(program: Command): void {
  withCommonOptions(
    adminCommand(program)
      .command('update-topic')
      .description('create or update a topic on a broker (mqadmin updateTopic, request code 17)')
      .requiredOption('-b, --broker-addr <host:port>', 'broker address')
      .requiredOption('-t, --topic <topic>', 'topic name')
      .option('-r, --read-queue-nums <n>', 'read queues', '8')
      .option('-w, --write-queue-nums <n>', 'write queues', '8')
      .option('-p, --perm <perm>', 'permission: 2 write, 4 read, 6 read + write', '6')
      .option('-o, --order <true|false>', 'ordered topic flag', 'false'),
  ).action(runUpdateTopic);
}
