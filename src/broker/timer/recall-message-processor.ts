/**
 * RECALL_MESSAGE (370): header {producerGroup?, topic, recallHandle}; reply header {msgId}
 * plus MSG_REGION, as Apache's RecallMessageProcessor (checks and codes: recall-message-service.ts).
 */
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { bornHostOfChannel } from '../processors/send-message-processor.js';
import type { RecallMessageService } from './recall-message-service.js';

export function recallMessageHandler(service: RecallMessageService, regionId: string): RequestHandler {
  return async ({ channel, request }) => {
    const f = request.extFields ?? {};
    const topic = f.topic === undefined ? undefined : String(f.topic);
    const recallHandle = f.recallHandle === undefined ? undefined : String(f.recallHandle);
    if (topic === undefined || recallHandle === undefined) {
      const missing = topic === undefined ? 'topic' : 'recallHandle';
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `the custom field <${missing}> is null`, { MSG_REGION: regionId });
    }
    const r = await service.recall({
      topic,
      recallHandle,
      ...(f.producerGroup !== undefined ? { producerGroup: String(f.producerGroup) } : {}),
      bornHost: bornHostOfChannel(channel),
    });
    return r.ok
      ? createResponseCommand(request, ResponseCode.SUCCESS, null, { msgId: r.msgId, MSG_REGION: regionId })
      : createResponseCommand(request, r.code, r.remark, { MSG_REGION: regionId });
  };
}
