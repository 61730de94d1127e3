/**
 * WIPE_WRITE_PERM_OF_BROKER (205) and ADD_WRITE_PERM_OF_BROKER (327), header brokerName: clear
 * the write bit of / grant read+write to every queue data of that broker group in this
 * nameserver's routes (RouteInfoManager.operateWritePermOfBroker). Reply SUCCESS with header
 * wipeTopicCount / addTopicCount = topics changed (Apache's response headers).
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getString } from '../../remoting/headers/header-fields.js';
import type { NamesrvContext } from '../namesrv-context.js';

export function writePermOfBrokerProcessor(ctx: NamesrvContext, op: 'wipe' | 'add'): RequestHandler {
  return ({ channel, request }) => {
    const brokerName = getString(request.extFields, 'brokerName');
    const count = ctx.routes.operateWritePermOfBroker(brokerName, op);
    ctx.logger.info(`${op} write perm of broker ${brokerName} from ${channel.remoteAddress}: ${count} topics`);
    const header: Record<string, string> = op === 'wipe' ? { wipeTopicCount: String(count) } : { addTopicCount: String(count) };
    return createResponseCommand(request, ResponseCode.SUCCESS, null, header);
  };
}
