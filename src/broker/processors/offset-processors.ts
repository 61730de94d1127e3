/**
 * Offset requests (mirror 4.9 `ConsumerManageProcessor` and `AdminBrokerProcessor`):
 *   14 QUERY_CONSUMER_OFFSET: stored offset (clamped to the queue max, case B35); else, unless
 *      setZeroIfNotFound=false, 0 when the queue's min offset ≤ 0 (a young queue is read from
 *      its start); else 22 QUERY_NOT_FOUND.
 *   15 UPDATE_CONSUMER_OFFSET: stores commitOffset (negative values are ignored, spec A8).
 *   30 GET_MAX_OFFSET, 31 GET_MIN_OFFSET: `offset` = the store's queue max / min.
 *   29 SEARCH_OFFSET_BY_TIMESTAMP: `offset` = getOffsetInQueueByTime(timestamp, boundaryType
 *      LOWER by default, UPPER when asked).
 *   32 GET_EARLIEST_MSG_STORETIME: `timestamp` = store time of the earliest entry (-1 if none).
 */
import type { RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getInt, getLong, getOptionalBoolean, getOptionalString, getString } from '../../remoting/headers/header-fields.js';
import type { BrokerContext } from '../broker-context.js';

export class OffsetProcessors {
  constructor(private readonly ctx: BrokerContext) {}

  readonly queryConsumerOffset: RequestHandler = (rc) => this.processQueryConsumerOffset(rc);
  readonly updateConsumerOffset: RequestHandler = (rc) => this.processUpdateConsumerOffset(rc);
  readonly getMaxOffset: RequestHandler = (rc) => this.processGetMaxOffset(rc);
  readonly getMinOffset: RequestHandler = (rc) => this.processGetMinOffset(rc);
  readonly searchOffsetByTimestamp: RequestHandler = (rc) => this.processSearchOffset(rc);
  readonly getEarliestMsgStoretime: RequestHandler = (rc) => this.processEarliestStoreTime(rc);

  processQueryConsumerOffset({ request }: RequestContext): RemotingCommand {
    const ext = request.extFields;
    const group = getString(ext, 'consumerGroup');
    const topic = getString(ext, 'topic');
    const queueId = getInt(ext, 'queueId');
    const setZeroIfNotFound = getOptionalBoolean(ext, 'setZeroIfNotFound');
    const com = this.ctx.consumerOffsetManager;
    let offset = com.queryOffset(group, topic, queueId);
    if (offset >= 0) {
      const max = this.ctx.store.getMaxOffsetInQueue(topic, queueId);
      if (offset > max) {
        com.clampToMax(topic, queueId, max);
        offset = max;
      }
      return createResponseCommand(request, ResponseCode.SUCCESS, null, { offset });
    }
    if (setZeroIfNotFound === false) {
      return createResponseCommand(request, ResponseCode.QUERY_NOT_FOUND, 'Not found, do not set to zero, maybe this group boot first');
    }
    const min = this.ctx.store.getMinOffsetInQueue(topic, queueId);
    if (min <= 0) return createResponseCommand(request, ResponseCode.SUCCESS, null, { offset: 0 });
    return createResponseCommand(request, ResponseCode.QUERY_NOT_FOUND, 'Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first');
  }

  processUpdateConsumerOffset({ channel, request }: RequestContext): RemotingCommand {
    const ext = request.extFields;
    this.ctx.consumerOffsetManager.commitOffset(
      channel.remoteAddress,
      getString(ext, 'consumerGroup'),
      getString(ext, 'topic'),
      getInt(ext, 'queueId'),
      getLong(ext, 'commitOffset'),
    );
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  }

  processGetMaxOffset({ request }: RequestContext): RemotingCommand {
    const ext = request.extFields;
    const offset = this.ctx.store.getMaxOffsetInQueue(getString(ext, 'topic'), getInt(ext, 'queueId'));
    return createResponseCommand(request, ResponseCode.SUCCESS, null, { offset });
  }

  processGetMinOffset({ request }: RequestContext): RemotingCommand {
    const ext = request.extFields;
    const offset = this.ctx.store.getMinOffsetInQueue(getString(ext, 'topic'), getInt(ext, 'queueId'));
    return createResponseCommand(request, ResponseCode.SUCCESS, null, { offset });
  }

  async processSearchOffset({ request }: RequestContext): Promise<RemotingCommand> {
    const ext = request.extFields;
    const boundary = (getOptionalString(ext, 'boundaryType') ?? 'LOWER').toUpperCase();
    const offset = await this.ctx.store.getOffsetInQueueByTime(
      getString(ext, 'topic'),
      getInt(ext, 'queueId'),
      getLong(ext, 'timestamp'),
      boundary === 'UPPER' ? 'UPPER' : 'LOWER',
    );
    return createResponseCommand(request, ResponseCode.SUCCESS, null, { offset });
  }

  async processEarliestStoreTime({ request }: RequestContext): Promise<RemotingCommand> {
    const ext = request.extFields;
    const timestamp = await this.ctx.store.getEarliestMessageTime(getString(ext, 'topic'), getInt(ext, 'queueId'));
    return createResponseCommand(request, ResponseCode.SUCCESS, null, { timestamp });
  }
}
