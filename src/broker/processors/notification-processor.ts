/**
 * NOTIFICATION (200054), Apache 5.x `NotificationProcessor`: "is there something to pop?", with
 * long polling.
 *
 * Request header: consumerGroup, topic, queueId (-1 = every readable queue), pollTime (ms),
 * bornTime, order?, attemptId? (ignored).
 * Checks: pop-access.ts (16 / 17 / 16 / 29 / 26 / 16).
 * Reply: always SUCCESS (0) with header hasMsg (a pop could hand out a message now:
 * PopService.hasVisibleMessage, filters not applied) and pollingFull. With nothing to pop the
 * request waits up to pollTime (at most maxLongPollingTimeMills) for a put on the topic, an ack / change, or an in-flight message
 * becoming visible, then answers hasMsg=false; with `maxPopPollingSize` requests already waiting it
 * answers at once with pollingFull=true.
 */
import type { RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getInt, getOptionalLong, getString } from '../../remoting/headers/header-fields.js';
import type { BrokerContext } from '../broker-context.js';
import type { PopService } from '../pop/pop-service.js';
import { checkPopTarget, isRefusal } from './pop-access.js';
import { POP_POLL_RECHECK_MS } from './pop-message-processor.js';

export class NotificationProcessor {
  constructor(
    private readonly ctx: BrokerContext,
    private readonly pop: PopService,
    private readonly maxPollingSize: number,
    private readonly stopping: () => boolean,
  ) {}

  readonly handler: RequestHandler = (rc) => this.process(rc);

  async process({ channel, request }: RequestContext): Promise<RemotingCommand> {
    const ext = request.extFields;
    const group = getString(ext, 'consumerGroup');
    const topic = getString(ext, 'topic');
    const queueId = getInt(ext, 'queueId');
    const pollTime = getOptionalLong(ext, 'pollTime') ?? 0;
    const target = checkPopTarget(this.ctx, 'peeking', group, topic, queueId, channel.remoteAddress);
    if (isRefusal(target)) return createResponseCommand(request, target.code, target.remark, { hasMsg: false, pollingFull: false });
    const endAt = Date.now() + Math.min(Math.max(0, pollTime), this.ctx.config.maxLongPollingTimeMills);
    for (;;) {
      if (this.pop.hasVisibleMessage(group, topic, queueId)) return this.reply(request, true, false);
      const left = endAt - Date.now();
      if (left <= 0 || channel.closed || this.stopping()) return this.reply(request, false, false);
      if (this.pop.waitQueue.size >= this.maxPollingSize) return this.reply(request, false, true);
      await this.pop.waitQueue.wait(topic, Math.min(left, POP_POLL_RECHECK_MS));
    }
  }

  private reply(request: RemotingCommand, hasMsg: boolean, pollingFull: boolean): RemotingCommand {
    return createResponseCommand(request, ResponseCode.SUCCESS, null, { hasMsg, pollingFull });
  }
}
