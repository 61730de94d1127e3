/**
 * PEEK_MESSAGE (200052), Apache 5.x `PeekMessageProcessor`: reads messages from the group's pop
 * position (its ack offset: in-flight messages included) without changing any pop state.
 *
 * Request header: consumerGroup, topic, queueId (-1 = every readable queue), maxMsgNums.
 * Checks: pop-access.ts (16 / 17 / 16 / 29 / 26 / 16).
 * Reply: SUCCESS (0) remark "FOUND", body = the stored records concatenated (as a pull body), or
 * PULL_NOT_FOUND (19) remark "NO_MESSAGE_IN_QUEUE" without body; header restNum (messages after
 * the last one read) plus the zero popTime / invisibleTime / reviveQid Apache's header type carries.
 */
import type { RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getInt, getString } from '../../remoting/headers/header-fields.js';
import type { BrokerContext } from '../broker-context.js';
import type { PopService } from '../pop/pop-service.js';
import { checkPopTarget, isRefusal } from './pop-access.js';
import { EMPTY_POP_RESPONSE_HEADER } from './pop-message-processor.js';

const MAX_PEEK = 32;

export class PeekMessageProcessor {
  constructor(
    private readonly ctx: BrokerContext,
    private readonly pop: PopService,
  ) {}

  readonly handler: RequestHandler = (rc) => this.process(rc);

  async process({ channel, request }: RequestContext): Promise<RemotingCommand> {
    const ext = request.extFields;
    const group = getString(ext, 'consumerGroup');
    const topic = getString(ext, 'topic');
    const queueId = getInt(ext, 'queueId');
    const maxMsgNums = getInt(ext, 'maxMsgNums');
    const target = checkPopTarget(this.ctx, 'peeking', group, topic, queueId, channel.remoteAddress);
    if (isRefusal(target)) return createResponseCommand(request, target.code, target.remark, { ...EMPTY_POP_RESPONSE_HEADER });
    const r = await this.pop.peek(group, topic, queueId, Math.min(Math.max(1, maxMsgNums), MAX_PEEK), null);
    const header = { ...EMPTY_POP_RESPONSE_HEADER, restNum: r.restNum };
    if (r.messages.length === 0) return createResponseCommand(request, ResponseCode.PULL_NOT_FOUND, 'NO_MESSAGE_IN_QUEUE', header);
    return createResponseCommand(request, ResponseCode.SUCCESS, 'FOUND', header, Buffer.concat(r.messages.map((m) => m.record)));
  }
}
