/**
 * `tsmq admin delete-topic -c <cluster> -t <topic> -n <namesrv>`: deletes a topic from every
 * master of a cluster (DELETE_TOPIC_IN_BROKER 215: the broker drops the topic config, its
 * consume queues and the group offsets of the topic) and then from every nameserver
 * (DELETE_TOPIC_IN_NAMESRV 216 with clusterName), as mqadmin `deleteTopic` does. Prints
 * mqadmin's `delete topic [<t>] from cluster [<c>] success.` and `delete topic [<t>] from
 * NameServer success.`. A refusal is an error (exit 1) naming the broker or nameserver; the
 * brokers already done stay done. `--json`: `{"topic","cluster","brokers":[addr…],"nameservers":[addr…]}`.
 * A producer whose broker has autoCreateTopicEnable=true re-creates the topic by sending to it.
 */
import type { Command } from 'commander';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { validateTopic } from '../../common/message/topic-validator.js';
import { addressList, adminCommand, invokeAdmin, printJson, successBody, timeoutOf, withCommonOptions, type CommonAdminOptions } from './admin-support.js';
import { fetchClusterInfo, masterAddrsOfCluster, withNamesrvOption } from './admin-nameserver.js';

export interface DeleteTopicOptions extends CommonAdminOptions {
  cluster: string;
  topic: string;
  namesrvAddr: string;
}

/** Where a topic was deleted. */
export interface DeletedTopic {
  topic: string;
  cluster: string;
  brokers: string[];
  nameservers: string[];
}

/** Deletes `topic` from the masters of `cluster` (215), then from each nameserver (216). @throws the first refusal. */
export async function deleteTopicInCluster(namesrv: string, cluster: string, topic: string, timeoutMs: number): Promise<DeletedTopic> {
  const masters = masterAddrsOfCluster(await fetchClusterInfo(namesrv, timeoutMs), cluster);
  for (const addr of masters) successBody(addr, (await invokeAdmin([addr], RequestCode.DELETE_TOPIC_IN_BROKER, { topic }, timeoutMs)).response);
  const nameservers = addressList(namesrv, 'nameserver');
  for (const addr of nameservers) successBody(addr, (await invokeAdmin([addr], RequestCode.DELETE_TOPIC_IN_NAMESRV, { topic, clusterName: cluster }, timeoutMs)).response);
  return { topic, cluster, brokers: masters, nameservers };
}

export async function runDeleteTopic(opts: DeleteTopicOptions): Promise<void> {
  const topic = opts.topic.trim();
  const problem = validateTopic(topic);
  if (problem) throw new Error(`-t: ${problem}`);
  const cluster = opts.cluster.trim();
  const done = await deleteTopicInCluster(opts.namesrvAddr, cluster, topic, timeoutOf(opts));
  if (opts.json) {
    printJson(done);
    return;
  }
  console.log(`delete topic [${topic}] from cluster [${cluster}] success.`);
  console.log(`delete topic [${topic}] from NameServer success.`);
}

export function registerAdminDeleteTopic(program: Command): void {
  withCommonOptions(
    withNamesrvOption(
      adminCommand(program)
        .command('delete-topic')
        .description('delete a topic from the masters of a cluster and from the nameservers (mqadmin deleteTopic, request codes 215 and 216)')
        .requiredOption('-c, --cluster <cluster>', 'cluster name')
        .requiredOption('-t, --topic <topic>', 'topic name'),
    ),
  ).action(runDeleteTopic);
}
