/**
 * BROKER_HEARTBEAT (904). extFields clusterName, brokerAddr, brokerName (others such as
 * brokerId, epoch, maxOffset are accepted and ignored). Refreshes the broker's last-update
 * time; reply SUCCESS (also for an unregistered broker, as Apache does).
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getString } from '../../remoting/headers/header-fields.js';
import type { NamesrvContext } from '../namesrv-context.js';

export function brokerHeartbeatProcessor(ctx: NamesrvContext): RequestHandler {
  return ({ request }) => {
    getString(request.extFields, 'clusterName');
    const brokerAddr = getString(request.extFields, 'brokerAddr');
    ctx.routes.updateBrokerInfoUpdateTimestamp(brokerAddr);
    return createResponseCommand(request, ResponseCode.SUCCESS);
  };
}
