/**
 * Admin offset resets reaching pop consumption (docs/internals/pop.md "Offset reset"). Wraps the
 * broker's INVOKE_BROKER_TO_RESET_OFFSET (222) and UPDATE_CONSUMER_OFFSET (15) handlers:
 *
 * - 222 for a group with pop state on the topic (`PopService.hasPopState`), or naming one queue
 *   (header `queueId` ≥ 0, sent by 5.x `resetOffsetByQueueId` = `mqadmin resetOffsetByTime -b -q
 *   [-o]`): answered the Apache 5.3.3 way (`useServerSideResetOffset=true`,
 *   `AdminBrokerProcessor.resetOffsetInner`), server-side, whether or not a consumer is online and
 *   without RESET_CONSUMER_CLIENT_OFFSET (220) to the clients:
 *     not the master → 1 SYSTEM_ERROR "Can not reset offset in slave broker";
 *     unknown topic → 17 TOPIC_NOT_EXIST "Topic <t> does not exist";
 *     unknown group → 26 SUBSCRIPTION_GROUP_NOT_EXIST "Group <g> does not exist";
 *     queueId ≥ 0 with `offset` (not -1): outside [min, max + 1] → 1 SYSTEM_ERROR
 *       "Target offset <o> not in consume queue range [<min>-<max>]"; else that offset; without
 *       `offset`: the offset for `timestamp` (getOffsetInQueueByTime, LOWER; -1 = the queue max);
 *     queueId < 0: every read queue, by `timestamp` as above (`isForce` is not looked at, as in
 *       Apache 5.3.3's server-side reset: backwards and forwards alike).
 *   Each queue then gets `PopService.resetOffset` when the group pops the topic (durable RESET
 *   record, consumer offset committed), else the committed offset plus Apache's one-shot reset
 *   (`ConsumerOffsetManager.assignResetOffset`: the queue's next pull answers PULL_OFFSET_MOVED with
 *   it, so an online pull/push consumer moves there); the reply is SUCCESS with
 *   ResetOffsetBody {"offsetTable":{<mq>:<offset>}}.
 *   Any other 222 (a group that only pulls / pushes) keeps tsmq's 4.9 behaviour
 *   (reset-offset-processor.ts: commit + 220 to the online clients).
 * - 15 from an admin (mqadmin's offline reset, `tsmq admin reset-offset-by-time -b -q`, a
 *   dashboard): after it is stored, a queue of a group with pop state whose pop start differs gets
 *   the committed offset as its pop start (`PopService.resetOffset`). Apache keeps no pop progress
 *   apart from the committed offset (`getPopOffset` reads it), so a commit there moves the pop in
 *   both directions; tsmq's pop already starts at a committed offset ahead of it, and a commit
 *   behind it is applied as a reset.
 */
import type { RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getInt, getLong, getOptionalInt, getOptionalLong, getString } from '../../remoting/headers/header-fields.js';
import type { BrokerContext } from '../broker-context.js';
import type { PopService } from '../pop/pop-service.js';
import type { MessageQueueRef } from './message-queue-json.js';
import { resetOffsetBodyJson } from './reset-offset-processor.js';

/** Replaces the 222 and 15 handlers in `handlers` with the pop-aware ones (see the file comment). */
export function wrapPopResetHandlers(handlers: Map<number, RequestHandler>, ctx: BrokerContext, pop: PopService): void {
  const reset = handlers.get(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET);
  if (reset) handlers.set(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, (rc) => invokeBrokerToResetOffset(rc, reset, ctx, pop));
  const update = handlers.get(RequestCode.UPDATE_CONSUMER_OFFSET);
  if (update) handlers.set(RequestCode.UPDATE_CONSUMER_OFFSET, (rc) => updateConsumerOffset(rc, update, pop));
}

async function invokeBrokerToResetOffset(rc: RequestContext, inner: RequestHandler, ctx: BrokerContext, pop: PopService): Promise<RemotingCommand | null> {
  const { request } = rc;
  const ext = request.extFields;
  const topic = getString(ext, 'topic');
  const group = getString(ext, 'group');
  const queueId = getOptionalInt(ext, 'queueId') ?? -1;
  if (queueId < 0 && !pop.hasPopState(group, topic)) return inner(rc);
  const timestamp = getOptionalLong(ext, 'timestamp') ?? 0;
  const offsetHeader = getOptionalLong(ext, 'offset');
  const fail = (code: number, remark: string): RemotingCommand => {
    ctx.logger.warn(`[reset-offset] ${group} on ${topic}: ${remark}`);
    return createResponseCommand(request, code, remark);
  };
  if (!pop.isMaster) return fail(ResponseCode.SYSTEM_ERROR, 'Can not reset offset in slave broker');
  const tc = ctx.topicConfigManager.selectTopicConfig(topic);
  if (!tc) return fail(ResponseCode.TOPIC_NOT_EXIST, `Topic ${topic} does not exist`);
  if (!ctx.subscriptionGroupManager.findSubscriptionGroupConfig(group)) return fail(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, `Group ${group} does not exist`);

  const byTime = async (q: number): Promise<number> =>
    timestamp < 0 ? ctx.store.getMaxOffsetInQueue(topic, q) : Math.max(0, await ctx.store.getOffsetInQueueByTime(topic, q, timestamp, 'LOWER'));
  const targets = new Map<number, number>();
  if (queueId >= 0) {
    if (queueId >= Math.max(tc.readQueueNums, tc.writeQueueNums)) return fail(ResponseCode.SYSTEM_ERROR, `queueId ${queueId} is out of range: ${topic} has ${tc.readQueueNums} read queues`);
    if (offsetHeader !== undefined && offsetHeader !== -1) {
      const min = ctx.store.getMinOffsetInQueue(topic, queueId);
      const max = ctx.store.getMaxOffsetInQueue(topic, queueId);
      if ((min >= 0 && offsetHeader < min) || offsetHeader > max + 1) return fail(ResponseCode.SYSTEM_ERROR, `Target offset ${offsetHeader} not in consume queue range [${min}-${max}]`);
      targets.set(queueId, offsetHeader);
    } else {
      targets.set(queueId, await byTime(queueId));
    }
  } else {
    for (let q = 0; q < tc.readQueueNums; q++) targets.set(q, await byTime(q));
  }
  if (targets.size === 0) return fail(ResponseCode.SYSTEM_ERROR, 'No queues to reset.');

  const pops = pop.hasPopState(group, topic);
  const table: Array<[MessageQueueRef, number]> = [];
  try {
    for (const [q, offset] of targets) {
      if (pops) await pop.resetOffset(group, topic, q, offset);
      else ctx.consumerOffsetManager.assignResetOffset(rc.channel.remoteAddress, group, topic, q, offset);
      table.push([{ topic, brokerName: ctx.config.brokerName, queueId: q }, offset]);
    }
  } catch (e) {
    return fail(ResponseCode.SYSTEM_ERROR, (e as Error).message);
  }
  ctx.logger.info(`[reset-offset] ${group} on ${topic} reset by ${rc.channel.remoteAddress}: ${table.map(([mq, o]) => `q${mq.queueId}=${o}`).join(' ')}${pops ? ' (pop state)' : ''}`);
  return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(resetOffsetBodyJson(table), 'utf8'));
}

async function updateConsumerOffset(rc: RequestContext, inner: RequestHandler, pop: PopService): Promise<RemotingCommand | null> {
  const response = await inner(rc);
  if (!response || response.code !== ResponseCode.SUCCESS || !pop.isMaster) return response;
  const ext = rc.request.extFields;
  const group = getString(ext, 'consumerGroup');
  const topic = getString(ext, 'topic');
  const queueId = getInt(ext, 'queueId');
  const offset = getLong(ext, 'commitOffset');
  if (offset < 0 || queueId < 0 || !pop.hasPopState(group, topic)) return response;
  const start = pop.popStartOffset(group, topic, queueId);
  // ahead of the pop start the committed offset already wins (committedAhead); behind it: a reset
  if (start >= 0 && offset < start) await pop.resetOffset(group, topic, queueId, offset);
  return response;
}
