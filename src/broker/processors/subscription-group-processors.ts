/**
 * Subscription group administration (mirror Apache `AdminBrokerProcessor`):
 *
 *   200 UPDATE_AND_CREATE_SUBSCRIPTIONGROUP  body = SubscriptionGroupConfig JSON
 *       {groupName, consumeEnable, consumeFromMinEnable, consumeBroadcastEnable,
 *        consumeMessageOrderly, retryQueueNums, retryMaxTimes, brokerId,
 *        whichBrokerWhenConsumeSlowly, notifyConsumerIdsChangedEnable, groupSysFlag,
 *        consumeTimeoutMinute, attributes}; missing fields take Apache's defaults. An illegal
 *       group name → 29 INVALID_PARAMETER with the reason; an unreadable body, or retryQueueNums
 *       outside 0..maxTopicQueueNums (tsmq: its retry topic gets that many queues) → 1 SYSTEM_ERROR.
 *       The group is created or replaced; the answer waits until subscriptionGroup.json holds it
 *       (a failed write answers 1 SYSTEM_ERROR naming it; the change stays in memory).
 *   225 UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (5.x `mqadmin updateSubGroupList`): body
 *       SubscriptionGroupList {"groupConfigList":[SubscriptionGroupConfig, …]}, each read as for
 *       200; an illegal group name → 29 INVALID_PARAMETER naming it and no group is changed; an
 *       unreadable body → 1 SYSTEM_ERROR. Answered once subscriptionGroup.json holds them all.
 *   207 DELETE_SUBSCRIPTIONGROUP  header groupName, cleanOffset (5.x, default false: also drop
 *       the group's committed offsets). SUCCESS even when the group did not exist (Apache);
 *       answered once the file no longer holds it.
 *   352 GET_SUBSCRIPTIONGROUP_CONFIG  header group → body the group's config JSON;
 *       unknown → 26 SUBSCRIPTION_GROUP_NOT_EXIST "No group in this broker".
 * (201 GET_ALL_SUBSCRIPTIONGROUP_CONFIG is served with the slave-sync handlers.)
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getOptionalBoolean, getOptionalString, getString } from '../../remoting/headers/header-fields.js';
import { validateGroup } from '../../common/message/topic-validator.js';
import { checkRetryQueueNums } from '../topic/topic-queue-limit.js';
import type { BrokerContext } from '../broker-context.js';

export class SubscriptionGroupProcessors {
  constructor(private readonly ctx: BrokerContext) {}

  readonly updateAndCreate: RequestHandler = async ({ channel, request }) => {
    let doc: unknown;
    try {
      doc = JSON.parse((request.body ?? Buffer.alloc(0)).toString('utf8'));
    } catch (e) {
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `subscription group body is not JSON: ${(e as Error).message}`);
    }
    if (doc === null) return createResponseCommand(request, ResponseCode.SUCCESS, null);
    let config;
    try {
      config = this.ctx.subscriptionGroupManager.decodeGroup(doc, '');
    } catch (e) {
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `bad subscription group body: ${(e as Error).message}`);
    }
    const problem = validateGroup(config.groupName);
    if (problem) return createResponseCommand(request, ResponseCode.INVALID_PARAMETER, problem);
    const tooMany = checkRetryQueueNums(config.groupName, config.retryQueueNums, this.ctx.config.maxTopicQueueNums);
    if (tooMany) return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, tooMany);
    this.ctx.logger.info(`UPDATE_AND_CREATE_SUBSCRIPTIONGROUP ${config.groupName} from ${channel.remoteAddress}: ${JSON.stringify(config)}`);
    this.ctx.subscriptionGroupManager.updateSubscriptionGroupConfig(config);
    return this.answerWhenDurable(request, config.groupName, 'updated');
  };

  readonly updateAndCreateList: RequestHandler = async ({ channel, request }) => {
    let configs;
    try {
      const doc: unknown = JSON.parse((request.body ?? Buffer.alloc(0)).toString('utf8'));
      const list = typeof doc === 'object' && doc !== null ? (doc as { groupConfigList?: unknown }).groupConfigList : undefined;
      if (!Array.isArray(list)) throw new Error('groupConfigList is not a list');
      configs = list.map((g: unknown) => this.ctx.subscriptionGroupManager.decodeGroup(g, ''));
    } catch (e) {
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `bad subscription group list body: ${(e as Error).message}`);
    }
    for (const config of configs) {
      const problem = validateGroup(config.groupName);
      if (problem) return createResponseCommand(request, ResponseCode.INVALID_PARAMETER, `${problem} (group '${config.groupName}'; no group of the list was changed)`);
      const tooMany = checkRetryQueueNums(config.groupName, config.retryQueueNums, this.ctx.config.maxTopicQueueNums);
      if (tooMany) return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `${tooMany} (no group of the list was changed)`);
    }
    this.ctx.logger.info(`UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST from ${channel.remoteAddress}: ${configs.map((c) => c.groupName).join(', ')}`);
    for (const config of configs) this.ctx.subscriptionGroupManager.updateSubscriptionGroupConfig(config);
    for (const config of configs) {
      const failed = await this.answerWhenDurable(request, config.groupName, 'updated');
      if (failed.code !== ResponseCode.SUCCESS) return failed;
    }
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  };

  readonly delete: RequestHandler = async ({ channel, request }) => {
    const group = getString(request.extFields, 'groupName');
    this.ctx.logger.info(`DELETE_SUBSCRIPTIONGROUP ${group} from ${channel.remoteAddress}`);
    this.ctx.subscriptionGroupManager.deleteSubscriptionGroupConfig(group);
    if (getOptionalBoolean(request.extFields, 'cleanOffset') === true) this.ctx.consumerOffsetManager.removeGroup(group);
    this.ctx.brokerStats.onGroupDeleted(group);
    return this.answerWhenDurable(request, group, 'deleted');
  };

  /** SUCCESS once the group's latest change is on disk; SYSTEM_ERROR naming the failed write. */
  private async answerWhenDurable(request: RemotingCommand, group: string, what: string): Promise<RemotingCommand> {
    try {
      await this.ctx.subscriptionGroupManager.durable(group);
    } catch (e) {
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `group ${group} is ${what} in memory but subscriptionGroup.json could not be written: ${(e as Error).message}`);
    }
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  }

  readonly get: RequestHandler = ({ request }) => {
    const group = getOptionalString(request.extFields, 'group') ?? '';
    const config = this.ctx.subscriptionGroupManager.get(group);
    if (!config) return createResponseCommand(request, ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, 'No group in this broker');
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(JSON.stringify(config), 'utf8'));
  };
}
