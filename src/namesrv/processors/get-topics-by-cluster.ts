/** GET_TOPICS_BY_CLUSTER (224), header cluster: SUCCESS with body `{"topicList":[...]}`, the topics served by that cluster's brokers (sorted; empty for an unknown cluster). */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getString } from '../../remoting/headers/header-fields.js';
import { encodeTopicList } from '../route/route-json.js';
import type { NamesrvContext } from '../namesrv-context.js';

export function getTopicsByClusterProcessor(ctx: NamesrvContext): RequestHandler {
  return ({ request }) =>
    createResponseCommand(request, ResponseCode.SUCCESS, null, null, encodeTopicList(ctx.routes.getTopicsByCluster(getString(request.extFields, 'cluster'))));
}
