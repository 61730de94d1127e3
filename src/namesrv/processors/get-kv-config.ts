/**
 * GET_KV_CONFIG (101): extFields namespace, key -> SUCCESS with extFields `value`, or
 * QUERY_NOT_FOUND (22) with remark `No config item, Namespace: <ns> Key: <key>` (Apache wording).
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getString } from '../../remoting/headers/header-fields.js';
import type { NamesrvContext } from '../namesrv-context.js';

export function getKvConfigProcessor(ctx: NamesrvContext): RequestHandler {
  return ({ request }) => {
    const namespace = getString(request.extFields, 'namespace');
    const key = getString(request.extFields, 'key');
    const value = ctx.kv.get(namespace, key);
    if (value === null) {
      return createResponseCommand(request, ResponseCode.QUERY_NOT_FOUND, `No config item, Namespace: ${namespace} Key: ${key}`);
    }
    return createResponseCommand(request, ResponseCode.SUCCESS, null, { value });
  };
}
