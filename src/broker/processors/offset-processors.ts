/**
 * Offset requests (mirror 4.9 `ConsumerManageProcessor` and `AdminBrokerProcessor`):
 *   14 QUERY_CONSUMER_OFFSET: stored offset (clamped to the queue max, case B35); else, unless
 *      setZeroIfNotFound=false, 0 when the queue's min offset ≤ 0 (a young queue is read from
 *      its start); else 22 QUERY_NOT_FOUND.
 *   15 UPDATE_CONSUMER_OFFSET: stores commitOffset (negative values are ignored, spec A8); an
 *      illegal group name → 26 SUBSCRIPTION_GROUP_NOT_EXIST "Group G not exist! (reason)", an
 *      unknown topic → 17 TOPIC_NOT_EXIST "Topic T not exist!" (Apache 5.3.3's texts; Apache
 *      also answers 26 for a legal group that does not exist, tsmq accepts it).
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
import { validateGroup } from '../../common/message/topic-validator.js';

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
    const group = getString(ext, 'consumerGroup');
    const topic = getString(ext, 'topic');
    const queueId = getInt(ext, 'queueId');
    const commitOffset = getLong(ext, 'commitOffset');
    // Without these checks any peer could grow consumerOffset.json with made-up keys, even
    // '@'-holding ones that make the topic@group key ambiguous. Apache 5.3.3 also requires the
    // group to exist; tsmq only requires a legal name, so `tsmq admin reset-offset-by-time` can
    // still place the offsets of a group before its first consumer starts.
    const groupProblem = validateGroup(group);
    if (groupProblem) {
      return createResponseCommand(request, ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, `Group ${group} not exist! (${groupProblem})`);
    }
    if (!this.ctx.topicConfigManager.selectTopicConfig(topic)) {
      return createResponseCommand(request, ResponseCode.TOPIC_NOT_EXIST, `Topic ${topic} not exist!`);
    }
    this.ctx.consumerOffsetManager.commitOffset(channel.remoteAddress, group, topic, queueId, commitOffset);
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
