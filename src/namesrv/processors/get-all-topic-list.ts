/** GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206): SUCCESS with body `{"topicList":[...]}` (sorted). */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { encodeTopicList } from '../route/route-json.js';
import type { NamesrvContext } from '../namesrv-context.js';

export function getAllTopicListProcessor(ctx: NamesrvContext): RequestHandler {
  return ({ request }) =>
    createResponseCommand(request, ResponseCode.SUCCESS, null, null, encodeTopicList(ctx.routes.getAllTopicList()));
}
