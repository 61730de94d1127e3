/** DELETE_KV_CONFIG (102): extFields namespace, key -> SUCCESS (also when absent). */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getString } from '../../remoting/headers/header-fields.js';
import type { NamesrvContext } from '../namesrv-context.js';

export function deleteKvConfigProcessor(ctx: NamesrvContext): RequestHandler {
  return ({ request }) => {
    ctx.kv.delete(getString(request.extFields, 'namespace'), getString(request.extFields, 'key'));
    return createResponseCommand(request, ResponseCode.SUCCESS);
  };
}
