/**
 * GET_ROUTEINFO_BY_TOPIC (105). extFields topic (string); optional acceptStandardJsonOnly is
 * accepted and ignored (we always write standard JSON, see route-json.ts).
 *
 * Reply SUCCESS with the TopicRouteData JSON body; for an unknown topic:
 * - INTENTIONAL DIFFERENCE FROM APACHE: when brokers registered the auto-create topic TBW102,
 *   reply SUCCESS with a route built from those brokers (RouteInfoManager.pickupAutoCreateRouteData).
 *   ali-ons throws on TOPIC_NOT_EXIST for a new topic instead of falling back to TBW102 itself
 *   (client-protocols.md A5); Apache's Java clients accept the route as they would the topic's own.
 *   `%RETRY%`/`%DLQ%` topics get one queue, as the broker creates them. A topic deleted with
 *   DELETE_TOPIC_IN_NAMESRV gets no such route until a broker registers it again (so
 *   `mqadmin topicRoute` after `deleteTopic` fails as against Apache).
 * - otherwise TOPIC_NOT_EXIST (17), remark `No topic route info in name server for the topic: <topic>`.
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getString } from '../../remoting/headers/header-fields.js';
import { encodeTopicRouteData } from '../route/route-json.js';
import type { NamesrvContext } from '../namesrv-context.js';

export function getRouteInfoByTopicProcessor(ctx: NamesrvContext): RequestHandler {
  return ({ request }) => {
    const topic = getString(request.extFields, 'topic');
    const route = ctx.routes.pickupTopicRouteData(topic) ?? ctx.routes.pickupAutoCreateRouteData(topic);
    if (!route) {
      return createResponseCommand(request, ResponseCode.TOPIC_NOT_EXIST, `No topic route info in name server for the topic: ${topic}`);
    }
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, encodeTopicRouteData(route));
  };
}
