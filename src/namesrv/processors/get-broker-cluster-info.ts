/** GET_BROKER_CLUSTER_INFO (106): SUCCESS with the ClusterInfo JSON body (route-json.ts). */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { encodeClusterInfo } from '../route/route-json.js';
import type { NamesrvContext } from '../namesrv-context.js';

export function getBrokerClusterInfoProcessor(ctx: NamesrvContext): RequestHandler {
  return ({ request }) =>
    createResponseCommand(request, ResponseCode.SUCCESS, null, null, encodeClusterInfo(ctx.routes.getAllClusterInfo()));
}
