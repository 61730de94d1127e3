/**
 * GET_KVLIST_BY_NAMESPACE (219): extFields namespace -> SUCCESS with KVTable body
 * `{"table":{...}}`, or QUERY_NOT_FOUND (22) with remark `No config item, Namespace: <ns>`.
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getString } from '../../remoting/headers/header-fields.js';
import { encodeKvTable } from '../route/route-json.js';
import type { NamesrvContext } from '../namesrv-context.js';

export function getKvListByNamespaceProcessor(ctx: NamesrvContext): RequestHandler {
  return ({ request }) => {
    const namespace = getString(request.extFields, 'namespace');
    const table = ctx.kv.list(namespace);
    if (!table) return createResponseCommand(request, ResponseCode.QUERY_NOT_FOUND, `No config item, Namespace: ${namespace}`);
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, encodeKvTable(table));
  };
}
