/**
 * Subscription (consumer) group commands (mqadmin `updateSubGroup` / `deleteSubGroup`):
 *
 * - `update-sub-group (-b <host:port> | -c <cluster> -n <namesrv>) -g <group> [-s consumeEnable]
 *   [-m consumeFromMinEnable] [-d consumeBroadcastEnable] [-o consumeMessageOrderly]
 *   [-q retryQueueNums] [-r retryMaxTimes] [-i brokerId] [-w whichBrokerWhenConsumeSlowly]
 *   [-a notifyConsumerIdsChanged]`: UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200) with the
 *   SubscriptionGroupConfig JSON to the broker or every master of the cluster, then the group as
 *   the broker holds it (GET_SUBSCRIPTIONGROUP_CONFIG 352). Booleans are `true` / `false`.
 *   Difference from mqadmin: mqadmin sends a fresh config (every option not given falls back to
 *   its default, so `-r 5` on an orderly group turns orderliness off); this command starts from
 *   the group's current config on that broker (352; the defaults for a new group: consumeEnable
 *   true, consumeFromMinEnable false, consumeBroadcastEnable false, consumeMessageOrderly false,
 *   retryQueueNums 1, retryMaxTimes 16, brokerId 0, whichBrokerWhenConsumeSlowly 1,
 *   notifyConsumerIdsChangedEnable true) and changes only the options given.
 *   Prints `create subscription group to <addr> success.` and the group's settings.
 *   `--json`: `[{"brokerAddr","config":{…as the broker returns it}}]`.
 * - `delete-sub-group (-b <host:port> | -c <cluster> -n <namesrv>) -g <group> [-r removeOffset]`:
 *   DELETE_SUBSCRIPTIONGROUP (207, `cleanOffset` = -r, default false); with -c also deletes the
 *   group's `%RETRY%<group>` and `%DLQ%<group>` topics from the cluster (215 + 216), as mqadmin.
 *   Prints mqadmin's `delete subscription group [<g>] from broker [<addr>] success.` (with -c:
 *   `… in cluster [<c>] success.`). `--json`: `{"group","brokers":[…],"removeOffset","deletedTopics":[…]}`.
 */
import type { Command } from 'commander';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { validateGroup } from '../../common/message/topic-validator.js';
import { adminCommand, intOption, invokeAdmin, printJson, successBody, timeoutOf, withCommonOptions, type CommonAdminOptions } from './admin-support.js';
import { brokerOrClusterMasters } from './admin-nameserver.js';
import { deleteTopicInCluster } from './admin-delete-topic.js';

interface GroupTargetOptions extends CommonAdminOptions {
  brokerAddr?: string;
  cluster?: string;
  namesrvAddr?: string;
  group: string;
}

export interface UpdateSubGroupOptions extends GroupTargetOptions {
  consumeEnable?: string;
  consumeFromMinEnable?: string;
  consumeBroadcastEnable?: string;
  consumeMessageOrderly?: string;
  retryQueueNums?: string;
  retryMaxTimes?: string;
  brokerId?: string;
  whichBrokerWhenConsumeSlowly?: string;
  notifyConsumerIdsChanged?: string;
}

export interface DeleteSubGroupOptions extends GroupTargetOptions {
  removeOffset?: string;
}

/** A new group's settings (Apache SubscriptionGroupConfig defaults). */
export const NEW_GROUP_DEFAULTS = {
  consumeEnable: true,
  consumeFromMinEnable: false,
  consumeBroadcastEnable: false,
  consumeMessageOrderly: false,
  retryQueueNums: 1,
  retryMaxTimes: 16,
  brokerId: 0,
  whichBrokerWhenConsumeSlowly: 1,
  notifyConsumerIdsChangedEnable: true,
};

const boolOf = (flag: string, text: string): boolean => {
  const t = text.trim();
  if (t !== 'true' && t !== 'false') throw new Error(`${flag} must be true or false, got ${text}`);
  return t === 'true';
};

/** The settings the options change (only those given). @throws Error naming a bad option. */
export function groupChangesOf(opts: UpdateSubGroupOptions): Record<string, boolean | number> {
  const out: Record<string, boolean | number> = {};
  if (opts.consumeEnable !== undefined) out.consumeEnable = boolOf('-s/--consume-enable', opts.consumeEnable);
  if (opts.consumeFromMinEnable !== undefined) out.consumeFromMinEnable = boolOf('-m/--consume-from-min-enable', opts.consumeFromMinEnable);
  if (opts.consumeBroadcastEnable !== undefined) out.consumeBroadcastEnable = boolOf('-d/--consume-broadcast-enable', opts.consumeBroadcastEnable);
  if (opts.consumeMessageOrderly !== undefined) out.consumeMessageOrderly = boolOf('-o/--consume-message-orderly', opts.consumeMessageOrderly);
  if (opts.retryQueueNums !== undefined) out.retryQueueNums = intOption('-q/--retry-queue-nums', opts.retryQueueNums, 0, 1024);
  if (opts.retryMaxTimes !== undefined) out.retryMaxTimes = intOption('-r/--retry-max-times', opts.retryMaxTimes, -1, 1_000_000);
  if (opts.brokerId !== undefined) out.brokerId = intOption('-i/--broker-id', opts.brokerId, 0);
  if (opts.whichBrokerWhenConsumeSlowly !== undefined) out.whichBrokerWhenConsumeSlowly = intOption('-w/--which-broker-when-consume-slowly', opts.whichBrokerWhenConsumeSlowly, 0);
  if (opts.notifyConsumerIdsChanged !== undefined) out.notifyConsumerIdsChangedEnable = boolOf('-a/--notify-consumer-ids-changed', opts.notifyConsumerIdsChanged);
  return out;
}

function groupOf(text: string): string {
  const group = text.trim();
  const problem = validateGroup(group);
  if (problem) throw new Error(`-g: ${problem}`);
  return group;
}

/** The group's config on a broker (352), or null when the broker has no such group. */
export async function fetchGroupConfig(brokerAddr: string, group: string, timeoutMs: number): Promise<Record<string, unknown> | null> {
  const { addr, response } = await invokeAdmin([brokerAddr], RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, { group }, timeoutMs);
  if (response.code === ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST) return null;
  return JSON.parse(successBody(addr, response).toString('utf8')) as Record<string, unknown>;
}

const SHOWN = ['consumeEnable', 'consumeFromMinEnable', 'consumeBroadcastEnable', 'consumeMessageOrderly', 'retryQueueNums', 'retryMaxTimes', 'brokerId', 'whichBrokerWhenConsumeSlowly', 'notifyConsumerIdsChangedEnable'];

/** `group <g>: consumeEnable true, …` in mqadmin's field order. */
export function groupSettingsLine(config: Record<string, unknown>): string {
  return `group ${String(config.groupName)}: ${SHOWN.map((k) => `${k} ${String(config[k])}`).join(', ')}`;
}

export async function runUpdateSubGroup(opts: UpdateSubGroupOptions): Promise<void> {
  const timeoutMs = timeoutOf(opts);
  const group = groupOf(opts.group);
  const changes = groupChangesOf(opts);
  const out: Array<{ brokerAddr: string; config: Record<string, unknown> }> = [];
  for (const broker of await brokerOrClusterMasters(opts, timeoutMs)) {
    const current = (await fetchGroupConfig(broker, group, timeoutMs)) ?? { groupName: group, ...NEW_GROUP_DEFAULTS };
    const config = { ...current, ...changes, groupName: group };
    const { addr, response } = await invokeAdmin([broker], RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, null, timeoutMs, Buffer.from(JSON.stringify(config), 'utf8'));
    successBody(addr, response);
    const saved = (await fetchGroupConfig(addr, group, timeoutMs)) ?? config;
    out.push({ brokerAddr: addr, config: saved });
    if (!opts.json) {
      console.log(`create subscription group to ${addr} success.`);
      console.log(groupSettingsLine(saved));
    }
  }
  if (opts.json) printJson(out);
}

export async function runDeleteSubGroup(opts: DeleteSubGroupOptions): Promise<void> {
  const timeoutMs = timeoutOf(opts);
  const group = groupOf(opts.group);
  const removeOffset = opts.removeOffset === undefined ? false : boolOf('-r/--remove-offset', opts.removeOffset);
  const brokers = await brokerOrClusterMasters(opts, timeoutMs);
  const lines: string[] = [];
  for (const broker of brokers) {
    successBody(broker, (await invokeAdmin([broker], RequestCode.DELETE_SUBSCRIPTIONGROUP, { groupName: group, cleanOffset: removeOffset }, timeoutMs)).response);
    lines.push(opts.brokerAddr ? `delete subscription group [${group}] from broker [${broker}] success.` : `delete subscription group [${group}] from broker [${broker}] in cluster [${opts.cluster}] success.`);
  }
  const deletedTopics: string[] = [];
  if (!opts.brokerAddr && opts.cluster && opts.namesrvAddr) {
    for (const topic of [`%RETRY%${group}`, `%DLQ%${group}`]) {
      await deleteTopicInCluster(opts.namesrvAddr, opts.cluster.trim(), topic, timeoutMs);
      deletedTopics.push(topic);
    }
  }
  if (opts.json) printJson({ group, brokers, removeOffset, deletedTopics });
  else for (const l of lines) console.log(l);
}

function withGroupTarget(cmd: Command, what: string): Command {
  return cmd
    .option('-b, --broker-addr <host:port>', `${what} this broker`)
    .option('-c, --cluster <cluster>', `${what} every master of this cluster (needs -n)`)
    .option('-n, --namesrv-addr <host:port>', 'nameserver address(es) for -c', process.env.NAMESRV_ADDR)
    .requiredOption('-g, --group <group>', 'consumer group name');
}

export function registerAdminSubGroup(program: Command): void {
  const admin = adminCommand(program);
  withCommonOptions(
    withGroupTarget(admin.command('update-sub-group').description('create or update a consumer group (mqadmin updateSubGroup, request code 200)'), 'on')
      .option('-s, --consume-enable <true|false>', 'the group may consume')
      .option('-m, --consume-from-min-enable <true|false>', 'a new consumer starts from the min offset')
      .option('-d, --consume-broadcast-enable <true|false>', 'broadcast consumption')
      .option('-o, --consume-message-orderly <true|false>', 'orderly consumption (FIFO)')
      .option('-q, --retry-queue-nums <n>', 'retry queues')
      .option('-r, --retry-max-times <n>', 'redeliveries before the dead-letter queue (-1: none)')
      .option('-i, --broker-id <id>', 'consume from this broker id')
      .option('-w, --which-broker-when-consume-slowly <id>', 'broker id to consume from when behind')
      .option('-a, --notify-consumer-ids-changed <true|false>', 'notify consumers when the group changes'),
  ).action(runUpdateSubGroup);
  withCommonOptions(
    withGroupTarget(admin.command('delete-sub-group').description('delete a consumer group (mqadmin deleteSubGroup, request code 207)'), 'from').option(
      '-r, --remove-offset <true|false>',
      "also drop the group's committed offsets",
    ),
  ).action(runDeleteSubGroup);
}
