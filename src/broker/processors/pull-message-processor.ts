/**
 * PULL_MESSAGE (11) and LITE_PULL_MESSAGE (361, what the 5.x `DefaultLitePullConsumer` sends; the
 * same handling, as Apache) (mirrors 4.9 `PullMessageProcessor.processRequest`).
 *
 * Request extFields: consumerGroup, topic, queueId, queueOffset, maxMsgNums, sysFlag,
 * commitOffset, suspendTimeoutMillis, subscription?, subVersion, expressionType? (spec A7).
 * Checks: broker READ permission (16); subscription group (auto-created, else 26; disabled → 16);
 * topic exists (17; a topic missing here is first handed to the unknown-topic resolver: on a
 * slave the replica topic learner, ha/replica-topic-learner.ts) and readable (16); 0 ≤ queueId < readQueueNums (1); subscription: from the
 * request when sysFlag bit 2 is set (TAG parse error → 23; empty SQL92 → 23; the remark is
 * Apache's "parse the consumer's subscription failed" followed by ": <reason>"), else the group's
 * registered one (24 when missing, 25 when older than subVersion, 27 FILTER_DATA_NOT_EXIST for
 * an SQL92 one whose selector did not compile at the heartbeat). SQL92 with
 * enablePropertyFilter=false → 1 "The broker does not support consumer to filter message by
 * SQL92" (plus one broker warning per group naming enablePropertyFilter=true); with it on, a
 * selector from the request that does not compile → 23 with the parser's message, else the
 * store filters the records by the selector (expression-filter.ts, docs/sql92-filter.md). An
 * expression that does not compile is logged with group, topic, expression and reason, at most
 * once a minute per group + topic + expression (filter-warnings.ts).
 *
 * Store status → code (spec §7): FOUND → 0; NO_MATCHED_MESSAGE / MESSAGE_WAS_REMOVING → 20;
 * NO_MESSAGE_IN_QUEUE / NO_MATCHED_LOGIC_QUEUE → 21 if queueOffset ≠ 0 else 19;
 * OFFSET_FOUND_NULL / OFFSET_OVERFLOW_ONE → 19; OFFSET_OVERFLOW_BADLY / OFFSET_TOO_SMALL → 21.
 * Reply extFields always: nextBeginOffset, minOffset, maxOffset, suggestWhichBrokerId.
 * Body (code 0): the raw records concatenated, no padding.
 * 19 with suspend allowed (sysFlag bit 1) → held by PullRequestHoldService for
 * suspendTimeoutMillis, at most maxLongPollingTimeMills (shortPollingTimeMills without long
 * polling) and answered later.
 * sysFlag bit 0 with commitOffset ≥ 0 → stored as the group's offset (not on a slave, not on
 * a woken re-run).
 * A pending server-side reset of the queue (ConsumerOffsetManager.assignResetOffset, Apache
 * 5.x useServerSideResetOffset) → 21 PULL_OFFSET_MOVED with nextBeginOffset = the reset offset,
 * once; the pull's commitOffset is not stored then.
 */
import type { RemotingChannel, RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getInt, getLong, getOptionalLong, getOptionalString, getString } from '../../remoting/headers/header-fields.js';
import { hasCommitOffsetFlag, hasSubscriptionFlag, hasSuspendFlag } from '../../common/message/sysflag.js';
import type { GetMessageLendOptions, GetMessageResult, GetMessageStatus } from '../../store/message-store.js';
import { PermName } from '../broker-config.js';
import type { TopicConfig } from '../topic/topic-config.js';
import type { BrokerContext } from '../broker-context.js';
import { buildSubscriptionData, SubscriptionParseError, type SubscriptionData } from '../filter/subscription-data.js';
import { attachCompiledExpression, createMessageFilter, ExpressionType, isTagType } from '../filter/expression-filter.js';
import type { PullRequest, PullRequestHoldService } from '../longpolling/pull-request-hold-service.js';

export interface PullMessageRequestHeader {
  consumerGroup: string;
  topic: string;
  queueId: number;
  queueOffset: number;
  maxMsgNums: number;
  sysFlag: number;
  commitOffset: number;
  suspendTimeoutMillis: number;
  subscription?: string;
  subVersion: number;
  expressionType?: string;
}

export function decodePullMessageHeader(request: RemotingCommand): PullMessageRequestHeader {
  const ext = request.extFields;
  const h: PullMessageRequestHeader = {
    consumerGroup: getString(ext, 'consumerGroup'),
    topic: getString(ext, 'topic'),
    queueId: getInt(ext, 'queueId'),
    queueOffset: getLong(ext, 'queueOffset'),
    maxMsgNums: getInt(ext, 'maxMsgNums'),
    sysFlag: getInt(ext, 'sysFlag'),
    commitOffset: getLong(ext, 'commitOffset'),
    suspendTimeoutMillis: getLong(ext, 'suspendTimeoutMillis'),
    subVersion: getOptionalLong(ext, 'subVersion') ?? 0,
  };
  const subscription = getOptionalString(ext, 'subscription');
  if (subscription !== undefined) h.subscription = subscription;
  const expressionType = getOptionalString(ext, 'expressionType');
  if (expressionType !== undefined) h.expressionType = expressionType;
  return h;
}

/** Store status → pull response code (spec §7 / Apache). */
export function pullResponseCode(status: GetMessageStatus, requestOffset: number): number {
  switch (status) {
    case 'FOUND':
      return ResponseCode.SUCCESS;
    case 'NO_MATCHED_MESSAGE':
    case 'MESSAGE_WAS_REMOVING':
      return ResponseCode.PULL_RETRY_IMMEDIATELY;
    case 'NO_MESSAGE_IN_QUEUE':
    case 'NO_MATCHED_LOGIC_QUEUE':
      return requestOffset !== 0 ? ResponseCode.PULL_OFFSET_MOVED : ResponseCode.PULL_NOT_FOUND;
    case 'OFFSET_FOUND_NULL':
    case 'OFFSET_OVERFLOW_ONE':
      return ResponseCode.PULL_NOT_FOUND;
    case 'OFFSET_OVERFLOW_BADLY':
    case 'OFFSET_TOO_SMALL':
      return ResponseCode.PULL_OFFSET_MOVED;
    default:
      return ResponseCode.SYSTEM_ERROR;
  }
}

export class PullMessageProcessor {
  private holdService: PullRequestHoldService | null = null;
  private unknownTopicResolver: ((topic: string) => Promise<TopicConfig | undefined>) | null = null;

  constructor(private readonly ctx: BrokerContext) {}

  readonly handler: RequestHandler = (rc: RequestContext) => this.processRequest(rc.channel, rc.request, true);

  /** Wires the long-polling service (done once by whoever builds both). */
  setHoldService(service: PullRequestHoldService): void {
    this.holdService = service;
  }

  /**
   * Wires who resolves a topic missing from the TopicConfigManager before TOPIC_NOT_EXIST is
   * answered (a replica learning a replicated topic, ha/replica-topic-learner.ts).
   */
  setUnknownTopicResolver(resolver: (topic: string) => Promise<TopicConfig | undefined>): void {
    this.unknownTopicResolver = resolver;
  }

  /**
   * `wakeup` callback for the hold service: re-run without suspension and reply on the channel.
   * The reply is timed for rocketmq_rpc_latency_milliseconds from the suspension (is_long_polling, as Apache
   * times a suspended request from its arrival).
   */
  async executeRequestWhenWakeup(req: PullRequest): Promise<void> {
    const response = await this.processRequest(req.channel, req.request, false);
    if (response && !req.channel.closed) {
      req.channel.send(response);
      this.ctx.brokerStats.listener?.onRpc(req.request.code, response.code, Math.max(0, this.ctx.clock.nowMs() - req.suspendTimestamp), false, true);
    } else response?.onWritten?.(new Error('the pulling channel closed while the pull was suspended'));
  }

  /** Returns the reply, or null when the request was parked for long polling. */
  async processRequest(channel: RemotingChannel, request: RemotingCommand, brokerAllowSuspend: boolean): Promise<RemotingCommand | null> {
    const ctx = this.ctx;
    const cfg = ctx.config;
    const h = decodePullMessageHeader(request);

    if (!PermName.isReadable(cfg.brokerPermission)) return createResponseCommand(request, ResponseCode.NO_PERMISSION, `the broker[${cfg.brokerIP1}] pulling message is forbidden`);
    const sgc = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(h.consumerGroup);
    if (!sgc) return createResponseCommand(request, ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, `subscription group [${h.consumerGroup}] does not exist`);
    if (!sgc.consumeEnable) return createResponseCommand(request, ResponseCode.NO_PERMISSION, `subscription group no permission, ${h.consumerGroup}`);
    const tc = ctx.topicConfigManager.selectTopicConfig(h.topic) ?? (await this.unknownTopicResolver?.(h.topic));
    if (!tc) return createResponseCommand(request, ResponseCode.TOPIC_NOT_EXIST, `topic[${h.topic}] not exist, apply first please!`);
    if (!PermName.isReadable(tc.perm)) return createResponseCommand(request, ResponseCode.NO_PERMISSION, `the topic[${h.topic}] pulling message is forbidden`);
    if (h.queueId < 0 || h.queueId >= tc.readQueueNums) {
      return createResponseCommand(
        request,
        ResponseCode.SYSTEM_ERROR,
        `queueId[${h.queueId}] is illegal, topic:[${h.topic}] topicConfig.readQueueNums:[${tc.readQueueNums}] consumer:[${channel.remoteAddress}]`,
      );
    }
    const sub = this.resolveSubscription(h);
    if ('code' in sub) return createResponseCommand(request, sub.code, sub.remark);
    // Apache 5.x server-side reset (useServerSideResetOffset; 222 naming a queue of a group that
    // does not pop): this pull answers PULL_OFFSET_MOVED with the reset offset, once, and the
    // consumer moves there. The commitOffset riding on this pull is the consumer's position from
    // before the reset and is not stored (Apache stores it; the client then commits the reset
    // offset itself, so a crash in between loses the reset there).
    if (cfg.brokerRole !== 'SLAVE') {
      const resetTo = ctx.consumerOffsetManager.queryThenEraseResetOffset(h.consumerGroup, h.topic, h.queueId);
      if (resetTo !== undefined) {
        ctx.logger.info(`pull offset moved: group ${h.consumerGroup} ${h.topic}/${h.queueId} requested ${h.queueOffset}, reset to ${resetTo} by an admin`);
        return createResponseCommand(request, ResponseCode.PULL_OFFSET_MOVED, null, {
          nextBeginOffset: resetTo,
          minOffset: ctx.store.getMinOffsetInQueue(h.topic, h.queueId),
          maxOffset: ctx.store.getMaxOffsetInQueue(h.topic, h.queueId),
          suggestWhichBrokerId: 0,
        });
      }
    }

    const result = await ctx.store.getMessage(h.consumerGroup, h.topic, h.queueId, h.queueOffset, h.maxMsgNums, createMessageFilter(sub.data), PULL_REPLY_LEND);
    if (!result) return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, 'store getMessage return null');
    const reply = this.answer(request, channel, h, sub.data, sgc.whichBrokerWhenConsumeSlowly, brokerAllowSuspend, result);
    // a result that does not become a reply body gives back what it holds at once
    if (reply === null || reply.onWritten === undefined) releaseResult(ctx.store, result);
    return reply;
  }

  /** The reply to a pull whose store result is `result` (null: suspended for long polling). */
  private answer(
    request: RemotingCommand,
    channel: RemotingChannel,
    h: PullMessageRequestHeader,
    subscription: SubscriptionData | null,
    whichBrokerWhenConsumeSlowly: number,
    brokerAllowSuspend: boolean,
    result: GetMessageResult,
  ): RemotingCommand | null {
    const ctx = this.ctx;
    const cfg = ctx.config;

    let code = pullResponseCode(result.status, h.queueOffset);
    let nextBeginOffset = result.nextBeginOffset;
    const isSlave = cfg.brokerRole === 'SLAVE';
    if (code === ResponseCode.PULL_OFFSET_MOVED && isSlave) {
      // Apache: a slave without offset checking does not move the consumer; it retries at the same offset.
      code = ResponseCode.PULL_RETRY_IMMEDIATELY;
      nextBeginOffset = h.queueOffset;
    }
    if (code === ResponseCode.PULL_OFFSET_MOVED) {
      ctx.logger.info(
        `pull offset moved: group ${h.consumerGroup} ${h.topic}/${h.queueId} requested ${h.queueOffset}, status ${result.status}, next ${nextBeginOffset} (min ${result.minOffset}, max ${result.maxOffset})`,
      );
    }
    if (code === ResponseCode.SYSTEM_ERROR) return createResponseCommand(request, code, `store returned unexpected status ${result.status}`);

    ctx.brokerStats.recordGet(h.consumerGroup, h.topic, code === ResponseCode.SUCCESS ? result.messageQueueOffsets.length : 0, result.bufferTotalSizeBytes);
    ctx.consumerOffsetManager.commitPullOffset(h.consumerGroup, h.topic, h.queueId, nextBeginOffset);

    if (brokerAllowSuspend && hasCommitOffsetFlag(h.sysFlag) && !isSlave) {
      ctx.consumerOffsetManager.commitOffset(channel.remoteAddress, h.consumerGroup, h.topic, h.queueId, h.commitOffset);
    }

    if (code === ResponseCode.PULL_NOT_FOUND && brokerAllowSuspend && hasSuspendFlag(h.sysFlag) && this.holdService) {
      const timeoutMillis = cfg.longPollingEnable ? Math.min(h.suspendTimeoutMillis, cfg.maxLongPollingTimeMills) : cfg.shortPollingTimeMills;
      if (timeoutMillis > 0) {
        this.holdService.suspendPullRequest({
          channel,
          request,
          topic: h.topic,
          queueId: h.queueId,
          pullFromThisOffset: h.queueOffset,
          suspendTimestamp: ctx.clock.nowMs(),
          timeoutMillis,
          subscription,
        });
        return null;
      }
    }
    return this.buildResponse(request, code, nextBeginOffset, result, whichBrokerWhenConsumeSlowly);
  }

  private resolveSubscription(h: PullMessageRequestHeader): { data: SubscriptionData | null } | { code: number; remark: string } {
    const ctx = this.ctx;
    let data: SubscriptionData;
    if (hasSubscriptionFlag(h.sysFlag)) {
      const type = h.expressionType;
      if (isTagType(type)) {
        try {
          data = buildSubscriptionData(h.topic, h.subscription ?? '*', h.subVersion, ExpressionType.TAG);
        } catch (e) {
          if (e instanceof SubscriptionParseError) {
            ctx.filterWarnings.compileFailed(h.consumerGroup, h.topic, ExpressionType.TAG, h.subscription ?? '', e.message, 'pulls answered SUBSCRIPTION_PARSE_FAILED (23)');
            return parseFailed(e.message);
          }
          throw e;
        }
      } else {
        data = attachCompiledExpression({ topic: h.topic, subString: h.subscription ?? '', tagsSet: [], codeSet: [], subVersion: h.subVersion, expressionType: type!, classFilterMode: false });
        // Apache FilterAPI.build: an empty expression of another type is refused at once,
        // whatever enablePropertyFilter says
        if (!h.subscription) {
          const reason = data.filterError ?? `Expression can't be null! ${type}`;
          ctx.filterWarnings.compileFailed(h.consumerGroup, h.topic, data.expressionType, '', reason, 'pulls answered SUBSCRIPTION_PARSE_FAILED (23)');
          return parseFailed(reason);
        }
        if (data.compiledExpression === null && ctx.config.enablePropertyFilter) {
          // Apache means the same (ConsumerFilterManager.build returns null, asserted non-null)
          const reason = data.filterError ?? 'does not compile';
          ctx.filterWarnings.compileFailed(h.consumerGroup, h.topic, data.expressionType, h.subscription, reason, 'pulls answered SUBSCRIPTION_PARSE_FAILED (23)');
          return parseFailed(reason);
        }
      }
    } else {
      const group = ctx.consumerManager.getConsumerGroupInfo(h.consumerGroup);
      if (!group) return { code: ResponseCode.SUBSCRIPTION_NOT_EXIST, remark: "the consumer's group info not exist" };
      const found = group.findSubscriptionData(h.topic);
      if (!found) return { code: ResponseCode.SUBSCRIPTION_NOT_EXIST, remark: "the consumer's subscription not exist" };
      if (found.subVersion < h.subVersion) return { code: ResponseCode.SUBSCRIPTION_NOT_LATEST, remark: "the consumer's subscription not latest" };
      if (!isTagType(found.expressionType) && !found.compiledExpression) {
        // the selector registered by the heartbeat did not compile (or was empty)
        ctx.filterWarnings.compileFailed(h.consumerGroup, h.topic, found.expressionType, found.subString, found.filterError ?? 'does not compile', 'pulls answered FILTER_DATA_NOT_EXIST (27)');
        return { code: ResponseCode.FILTER_DATA_NOT_EXIST, remark: "The broker's consumer filter data is not exist!Your expression may be wrong!" };
      }
      data = found;
    }
    if (!isTagType(data.expressionType) && !ctx.config.enablePropertyFilter) {
      // the remark stays Apache's (the Java interop test asserts it); the hint goes to the log
      ctx.filterWarnings.filterDisabled(h.consumerGroup, h.topic, data.expressionType);
      return { code: ResponseCode.SYSTEM_ERROR, remark: `The broker does not support consumer to filter message by ${data.expressionType}` };
    }
    return { data };
  }

  private buildResponse(request: RemotingCommand, code: number, nextBeginOffset: number, result: GetMessageResult, whichBrokerWhenConsumeSlowly: number): RemotingCommand {
    const cfg = this.ctx.config;
    const suggest = cfg.slaveReadEnable && result.suggestPullingFromSlave ? whichBrokerWhenConsumeSlowly : 0;
    const ext = {
      nextBeginOffset,
      minOffset: result.minOffset,
      maxOffset: result.maxOffset,
      suggestWhichBrokerId: suggest,
    };
    const body = code === ResponseCode.SUCCESS ? (result.body ?? Buffer.concat(result.bodyParts ?? result.messages)) : null;
    const response = createResponseCommand(request, code, null, ext, body);
    const store = this.ctx.store;
    if (body !== null && result.body !== undefined && (result.release !== undefined || store.releaseMessageBody !== undefined)) {
      // the store's body (a pooled buffer or a view of its read cache) goes back to it once the
      // kernel has the reply (or the write failed): the next pulls fill the same memory instead
      // of a fresh buffer each, and a lent read-cache chunk may be reused
      response.onWritten = () => releaseResult(store, result);
    }
    return response;
  }
}

/**
 * getMessage's lend mode for pull replies: none — replies are one pooled body (PullBodyPool),
 * copied from the read cache's chunk or read straight into it. Measured (bench/broker/pull-ab.ts,
 * bench/results/store-pull-2026-12-02.md): lending one view of a run of >= 16 KiB (a frame body
 * that large is written as its own piece, so the view would reach the socket without a copy in
 * JavaScript) cost more broker CPU per pulled message than the copy, 1.53–2.0 vs 1.2–1.4 µs for
 * adjacent records in 3 of 3 interleaved rounds: the pooled body is reused last-in first-out
 * and stays in the CPU cache while the read into it and the socket's copy out of it run, whereas
 * a 256 KiB chunk of the 16 MiB cache is cold. Views of several records would need one socket
 * write piece each (smaller ones are copied into the frame batch anyway). Set lend options here
 * to lend views again (the reply path releases any result from the write callback).
 */
const PULL_REPLY_LEND: GetMessageLendOptions | null = null;

/** SUBSCRIPTION_PARSE_FAILED with Apache's remark, followed by the reason (ali-ons shows the remark in its pull error). */
function parseFailed(reason: string): { code: number; remark: string } {
  return { code: ResponseCode.SUBSCRIPTION_PARSE_FAILED, remark: `parse the consumer's subscription failed: ${reason}` };
}

/** Gives back what a getMessage result holds (its body, lent chunks); stores without `release` take the body back. */
function releaseResult(store: BrokerContext['store'], result: GetMessageResult): void {
  if (result.release) result.release();
  else if (result.body !== undefined) store.releaseMessageBody?.(result.body);
}
