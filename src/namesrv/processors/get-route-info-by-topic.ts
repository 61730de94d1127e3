/**
 * GET_ROUTEINFO_BY_TOPIC (105). extFields topic (string); optional acceptStandardJsonOnly is
 * accepted and ignored (we always write standard JSON, see route-json.ts).
 *
 * Reply SUCCESS with the TopicRouteData JSON body; for an unknown topic TOPIC_NOT_EXIST (17),
 * remark `No topic route info in name server for the topic: <topic>`, as Apache, except:
 * - INTENTIONAL DIFFERENCE FROM APACHE, for a request of `version` below V4_0_0 (ali-ons sends
 *   V3_4_9 = 121 in every request; Apache's 4.x/5.x Java clients their own version, e.g. 409, the
 *   Go client 317): when brokers registered the auto-create topic TBW102, reply SUCCESS with a
 *   route built from those brokers (RouteInfoManager.pickupAutoCreateRouteData). ali-ons throws on
 *   TOPIC_NOT_EXIST for a new topic instead of falling back to TBW102 itself (client-protocols.md
 *   A5). The 4.x/5.x clients fall back themselves on 17, with their own defaultTopicQueueNums (a
 *   Java producer with 8 writes 8 queues of a new topic at once; the route's min(4, …) held it to
 *   4 until its next route refresh, up to 30 s).
 * - `%RETRY%<group>` / `%DLQ%<group>` (any version): the one-queue route the broker creates them
 *   with at the group's heartbeat / first send-back, so a consumer that asks before that (the Go
 *   client asks at start) sees its retries without waiting for its next route refresh (30 s).
 * A topic deleted with DELETE_TOPIC_IN_NAMESRV gets no such route until a broker registers it
 * again (so `mqadmin topicRoute` after `deleteTopic` fails as against Apache).
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
    const route = ctx.routes.pickupTopicRouteData(topic) ?? (wantsAutoCreateRoute(request.version, topic) ? ctx.routes.pickupAutoCreateRouteData(topic) : null);
    if (!route) {
      return createResponseCommand(request, ResponseCode.TOPIC_NOT_EXIST, `No topic route info in name server for the topic: ${topic}`);
    }
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, encodeTopicRouteData(route));
  };
}

/** MQVersion ordinal of V4_0_0: clients below it (ali-ons: V3_4_9) get the TBW102 route for a new topic. */
export const AUTO_CREATE_ROUTE_BELOW_VERSION = 213;

/** Whether an unknown `topic` asked for with request `version` is answered with the TBW102 route (see the file comment). */
export function wantsAutoCreateRoute(version: number, topic: string): boolean {
  return version < AUTO_CREATE_ROUTE_BELOW_VERSION || topic.startsWith('%RETRY%') || topic.startsWith('%DLQ%');
}
