/** PUT_KV_CONFIG (100): extFields namespace, key, value -> SUCCESS (in-memory KV table). */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getString } from '../../remoting/headers/header-fields.js';
import type { NamesrvContext } from '../namesrv-context.js';

export function putKvConfigProcessor(ctx: NamesrvContext): RequestHandler {
  return ({ request }) => {
    const ext = request.extFields;
    ctx.kv.put(getString(ext, 'namespace'), getString(ext, 'key'), getString(ext, 'value'));
    return createResponseCommand(request, ResponseCode.SUCCESS);
  };
}
