/**
 * UNREGISTER_BROKER (104). extFields brokerName, brokerAddr, clusterName, brokerId (long).
 * Reply SUCCESS (also when the broker was not registered, as Apache does).
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getLong, getString } from '../../remoting/headers/header-fields.js';
import type { NamesrvContext } from '../namesrv-context.js';

export function unregisterBrokerProcessor(ctx: NamesrvContext): RequestHandler {
  return ({ request }) => {
    const ext = request.extFields;
    ctx.routes.unregisterBroker(
      getString(ext, 'clusterName'),
      getString(ext, 'brokerAddr'),
      getString(ext, 'brokerName'),
      getLong(ext, 'brokerId'),
    );
    return createResponseCommand(request, ResponseCode.SUCCESS);
  };
}
