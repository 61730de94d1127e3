/**
 * Master-side requests a slave's SlaveSynchronize sends every few seconds (mirrors 4.9
 * `AdminBrokerProcessor`): each answers SUCCESS with a JSON body, no extFields.
 *
 *   43  GET_ALL_CONSUMER_OFFSET          {"offsetTable":{"<topic>@<group>":{"<queueId>":<offset>}},"dataVersion":{...}}
 *   45  GET_ALL_DELAY_OFFSET             {"offsetTable":{"<level>":<offset>},"dataVersion":{...}} (delayOffset.json)
 *   201 GET_ALL_SUBSCRIPTIONGROUP_CONFIG {"subscriptionGroupTable":{...},"forbiddenTable":{},"dataVersion":{...}}
 *
 * (21 GET_ALL_TOPIC_CONFIG is served by TopicAdminProcessors.) Apache answers 45 with the file
 * content; tsmq serialises the in-memory table, which is at least as new.
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import type { BrokerContext } from '../broker-context.js';
import type { ScheduleMessageService } from '../schedule/schedule-message-service.js';

export function buildSlaveSyncHandlers(ctx: BrokerContext, schedule: ScheduleMessageService): Map<number, RequestHandler> {
  const json = (doc: object): Buffer => Buffer.from(JSON.stringify(doc), 'utf8');
  return new Map<number, RequestHandler>([
    [RequestCode.GET_ALL_CONSUMER_OFFSET, ({ request }) => createResponseCommand(request, ResponseCode.SUCCESS, null, null, json(ctx.consumerOffsetManager.encode()))],
    [RequestCode.GET_ALL_DELAY_OFFSET, ({ request }) => createResponseCommand(request, ResponseCode.SUCCESS, null, null, json(schedule.encode()))],
    [
      RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
      ({ request }) => createResponseCommand(request, ResponseCode.SUCCESS, null, null, json(ctx.subscriptionGroupManager.encode())),
    ],
  ]);
}
