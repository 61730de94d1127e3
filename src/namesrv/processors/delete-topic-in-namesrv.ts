/**
 * DELETE_TOPIC_IN_NAMESRV (216). extFields topic; optional clusterName limits the deletion to
 * that cluster's broker groups (Apache 5). Reply SUCCESS.
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getOptionalString, getString } from '../../remoting/headers/header-fields.js';
import type { NamesrvContext } from '../namesrv-context.js';

export function deleteTopicInNamesrvProcessor(ctx: NamesrvContext): RequestHandler {
  return ({ request }) => {
    const topic = getString(request.extFields, 'topic');
    const clusterName = getOptionalString(request.extFields, 'clusterName');
    ctx.routes.deleteTopic(topic, clusterName || undefined);
    return createResponseCommand(request, ResponseCode.SUCCESS);
  };
}
