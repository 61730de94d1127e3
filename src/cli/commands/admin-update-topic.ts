/**
 * `tsmq admin update-topic (-b <host:port> | -c <cluster> -n <namesrv>) -t <topic> [-r 8] [-w 8] [-p 6] [-o false] [-a +k=v,-k]`:
 * creates or updates a topic on one broker, or with `-c` on every master of a cluster in broker
 * name order (mqadmin `updateTopic`, request code
 * UPDATE_AND_CREATE_TOPIC = 17). `-a` changes topic attributes as mqadmin's does, e.g.
 * `-a +message.type=FIFO` (the broker checks them: broker/topic/topic-attributes.ts). Defaults as mqadmin: 8 read and 8 write queues, perm 6 (read + write). The broker refuses
 * illegal names, system topics and the cluster name; it re-registers with its nameservers, so the
 * route follows within moments.
 */
import type { Command } from 'commander';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { TopicValidator, validateTopic } from '../../common/message/topic-validator.js';
import { brokerOrClusterMasters } from './admin-nameserver.js';
import { adminCommand, intOption, invokeAdmin, printJson, successBody, timeoutOf, withCommonOptions, type CommonAdminOptions } from './admin-support.js';

export interface UpdateTopicOptions extends CommonAdminOptions {
  brokerAddr?: string;
  cluster?: string;
  namesrvAddr?: string;
  topic: string;
  readQueueNums: string;
  writeQueueNums: string;
  perm: string;
  order: string;
  attributes?: string;
}

/** The topic settings sent, as printed. */
export interface TopicSettings {
  topic: string;
  readQueueNums: number;
  writeQueueNums: number;
  perm: number;
  order: boolean;
  /** The attribute changes sent (`+key=value,-key`), when given. */
  attributes?: string;
}

/** `6` → `RW`, `4` → `R`, `2` → `W`, `0` → `-` (PermName bits 4 read, 2 write). */
export function permText(perm: number): string {
  const s = `${perm & 4 ? 'R' : ''}${perm & 2 ? 'W' : ''}`;
  return s === '' ? '-' : s;
}

/**
 * The topic permissions `-p` accepts: 2 (W), 4 (R), 6 (RW), as mqadmin updateTopic documents
 * ("2|4|6"). RocketMQ's PermName also has 1 (PERM_INHERIT) and PermName.isValid takes any value
 * in 0..7, but inherit only matters on an auto-create template topic (TBW102 carries perm 7, and
 * a topic is auto-created only from a template with the inherit bit), and 0, 1, 3, 5 or 7 on an
 * ordinary topic are a typo or make it unusable, so they are refused here.
 */
export const TOPIC_PERMS: readonly number[] = [2, 4, 6];

/** `-p` as 2, 4 or 6. @throws Error naming the option and the allowed values. */
export function topicPermOf(text: string): number {
  const n = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!TOPIC_PERMS.includes(n)) {
    throw new Error(`-p/--perm must be 2 (W, write only), 4 (R, read only) or 6 (RW, read + write), got ${text}`);
  }
  return n;
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
    perm: topicPermOf(opts.perm),
    order: opts.order === 'true',
    ...(opts.attributes !== undefined ? { attributes: opts.attributes.trim() } : {}),
  };
}

export async function runUpdateTopic(opts: UpdateTopicOptions): Promise<void> {
  const settings = topicSettingsOf(opts);
  const timeoutMs = timeoutOf(opts);
  const written: string[] = [];
  for (const broker of await brokerOrClusterMasters(opts, timeoutMs)) {
    const { addr, response } = await invokeAdmin(
      [broker],
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
        ...(settings.attributes !== undefined ? { attributes: settings.attributes } : {}),
      },
      timeoutMs,
    );
    successBody(addr, response);
    written.push(addr);
    if (!opts.json) console.log(`create topic to ${addr} success.`);
  }
  if (opts.json) {
    printJson(opts.brokerAddr ? { brokerAddr: written[0], ...settings } : { brokerAddrs: written, ...settings });
    return;
  }
  console.log(`topic ${settings.topic}: readQueueNums ${settings.readQueueNums}, writeQueueNums ${settings.writeQueueNums}, perm ${settings.perm} (${permText(settings.perm)}), order ${settings.order}${settings.attributes ? `, attributes ${settings.attributes}` : ''}`);
}

export function registerAdminUpdateTopic(program: Command): void {
  withCommonOptions(
    adminCommand(program)
      .command('update-topic')
      .description('create or update a topic on a broker or on every master of a cluster (mqadmin updateTopic, request code 17)')
      .option('-b, --broker-addr <host:port>', 'broker address')
      .option('-c, --cluster <cluster>', 'every master of this cluster (needs -n; -b wins when both are given)')
      .option('-n, --namesrv-addr <host:port>', 'nameserver address(es) for -c', process.env.NAMESRV_ADDR)
      .requiredOption('-t, --topic <topic>', 'topic name')
      .option('-r, --read-queue-nums <n>', 'read queues', '8')
      .option('-w, --write-queue-nums <n>', 'write queues', '8')
      .option('-p, --perm <perm>', 'permission: 2 write, 4 read, 6 read + write (only these)', '6')
      .option('-o, --order <true|false>', 'ordered topic flag', 'false')
      .option('-a, --attributes <changes>', 'attribute changes, e.g. +message.type=FIFO or -reserve.time (comma separated)'),
  ).action(runUpdateTopic);
}
