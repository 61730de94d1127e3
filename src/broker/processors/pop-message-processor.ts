/**
 * POP_MESSAGE (200050): RocketMQ 5.x remoting pop (Apache `PopMessageProcessor`) over the broker's
 * one PopService (the same durable state the gRPC front's ReceiveMessage uses).
 *
 * Request header (JSON; the code does not fit the ROCKETMQ binary header): consumerGroup, topic,
 * queueId (-1 = every readable queue), maxMsgNums (≤ 32), invisibleTime (ms), pollTime (ms, 0 = no
 * long polling), bornTime (client epoch ms), initMode (0 MIN, 1 MAX), expType? (TAG | SQL92),
 * exp?, order? (boolean), attemptId? (ignored).
 *
 * Checks, in Apache's order: bornTime + pollTime more than 500 ms in the past → POLLING_TIMEOUT
 * (210) "pop message is timeout too much"; maxMsgNums > 32 → INVALID_PARAMETER (29); then
 * pop-access.ts (16 / 17 / 29 / 26 / 16); an expression that does not parse →
 * SUBSCRIPTION_PARSE_FAILED (23); SQL92 without enablePropertyFilter → SYSTEM_ERROR (1).
 *
 * Reply: SUCCESS (0), remark "FOUND", body = the popped records concatenated (as a pull body;
 * RECONSUMETIMES patched to the delivery attempt − 1, as Apache's revived retry messages carry),
 * queues in pop order and offsets ascending within a queue. Header: popTime (epoch ms),
 * invisibleTime, reviveQid (0; 999 for order=true), restNum, startOffsetInfo, msgOffsetInfo,
 * orderCountInfo (order=true) — see extra-info.ts. The client builds each message's `POP_CK`
 * extra info from them.
 * Nothing to hand out: the request waits (long polling) until a put on the topic, an ack / change
 * that may free something, an in-flight message becoming visible again, or pollTime (at most
 * maxLongPollingTimeMills) ends; then
 * POLLING_TIMEOUT (210), remark "NO_MESSAGE_IN_QUEUE", same header with empty offset infos. With
 * `maxPopPollingSize` requests already waiting → POLLING_FULL (209). Apache's 5.3.3 client maps
 * both (and PULL_NOT_FOUND) to "no new message" and pops again.
 *
 * order=true pops use the PopService's FIFO mode (a message group is not handed out while an
 * earlier message of it is in flight), not Apache's per-queue orderly lock.
 */
import type { RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getInt, getLong, getOptionalBoolean, getOptionalInt, getOptionalLong, getOptionalString, getString } from '../../remoting/headers/header-fields.js';
import { readSysFlag, storeTimestampPosition } from '../../common/message/record-codec.js';
import { storeHostLength } from '../../common/message/sysflag.js';
import type { MessageFilter } from '../../store/message-store.js';
import type { BrokerContext } from '../broker-context.js';
import { buildSubscriptionData, SubscriptionParseError } from '../filter/subscription-data.js';
import { attachCompiledExpression, createMessageFilter, ExpressionType, isTagType } from '../filter/expression-filter.js';
import type { PopResult, PopService } from '../pop/pop-service.js';
import { msgOffsetInfoOf, orderCountInfoOf, POP_ORDER_REVIVE_QUEUE, POP_REVIVE_QID, startOffsetInfoOf, type PoppedQueue } from '../pop/extra-info.js';
import { checkPopTarget, isRefusal } from './pop-access.js';

/** Apache's limit on maxMsgNums. */
const MAX_MSG_NUMS = 32;
/** A request born more than this before its poll end is refused (Apache `isTimeoutTooMuch`). */
const TIMEOUT_TOO_MUCH_MS = 500;
/** Parked requests re-check at least this often (safety net for wake-ups that were missed). */
export const POP_POLL_RECHECK_MS = 500;
/** Apache ConsumeInitMode.MIN. */
const INIT_MODE_MIN = 0;
/**
 * What every Apache reply built on PopMessageResponseHeader carries even when it is an error (its
 * primitive fields are always encoded); the 5.3.3 client refuses POLLING_* replies without them.
 */
export const EMPTY_POP_RESPONSE_HEADER = { popTime: 0, invisibleTime: 0, reviveQid: 0, restNum: 0 } as const;

export interface PopMessageRequestHeader {
  consumerGroup: string;
  topic: string;
  queueId: number;
  maxMsgNums: number;
  invisibleTime: number;
  pollTime: number;
  bornTime: number;
  initMode: number;
  expType?: string;
  exp?: string;
  order: boolean;
}

/** @throws HeaderError for a missing or non-numeric field. */
export function decodePopMessageHeader(request: RemotingCommand): PopMessageRequestHeader {
  const ext = request.extFields;
  const h: PopMessageRequestHeader = {
    consumerGroup: getString(ext, 'consumerGroup'),
    topic: getString(ext, 'topic'),
    queueId: getInt(ext, 'queueId'),
    maxMsgNums: getInt(ext, 'maxMsgNums'),
    invisibleTime: getLong(ext, 'invisibleTime'),
    pollTime: getOptionalLong(ext, 'pollTime') ?? 0,
    bornTime: getOptionalLong(ext, 'bornTime') ?? 0,
    initMode: getOptionalInt(ext, 'initMode') ?? 1,
    order: getOptionalBoolean(ext, 'order') ?? false,
  };
  const expType = getOptionalString(ext, 'expType');
  const exp = getOptionalString(ext, 'exp');
  if (expType !== undefined) h.expType = expType;
  if (exp !== undefined) h.exp = exp;
  return h;
}

/**
 * Copy of a stored record with RECONSUMETIMES set (the client reads a message's reconsume count
 * from there; the stored record says 0 for a first delivery).
 */
export function withReconsumeTimes(record: Buffer, reconsumeTimes: number): Buffer {
  const sysFlag = readSysFlag(record, 0);
  const pos = storeTimestampPosition(sysFlag) + 8 + storeHostLength(sysFlag);
  if (record.readInt32BE(pos) === reconsumeTimes) return record;
  const copy = Buffer.from(record);
  copy.writeInt32BE(reconsumeTimes, pos);
  return copy;
}

/** The message filter of a pop request, or the refusal. */
export function popFilterOf(ctx: BrokerContext, topic: string, expType: string | undefined, exp: string | undefined): { filter: MessageFilter | null } | { code: number; remark: string } {
  if (exp === undefined || exp === '') return { filter: null };
  const parseFailed = (reason: string) => ({ code: ResponseCode.SUBSCRIPTION_PARSE_FAILED, remark: `parse the consumer's subscription failed: ${reason}` });
  if (isTagType(expType)) {
    try {
      return { filter: createMessageFilter(buildSubscriptionData(topic, exp, 0, ExpressionType.TAG)) };
    } catch (e) {
      if (e instanceof SubscriptionParseError) return parseFailed(e.message);
      throw e;
    }
  }
  if (!ctx.config.enablePropertyFilter) return { code: ResponseCode.SYSTEM_ERROR, remark: `The broker does not support consumer to filter message by ${expType}` };
  const data = attachCompiledExpression({ topic, subString: exp, tagsSet: [], codeSet: [], subVersion: 0, expressionType: expType!, classFilterMode: false });
  if (data.compiledExpression === null) return parseFailed(data.filterError ?? 'does not compile');
  return { filter: createMessageFilter(data) };
}

export class PopMessageProcessor {
  constructor(
    private readonly ctx: BrokerContext,
    private readonly pop: PopService,
    private readonly maxPollingSize: number,
    private readonly stopping: () => boolean,
  ) {}

  readonly handler: RequestHandler = (rc) => this.process(rc);

  async process({ channel, request }: RequestContext): Promise<RemotingCommand> {
    const h = decodePopMessageHeader(request);
    const fail = (code: number, remark: string): RemotingCommand => createResponseCommand(request, code, remark, { ...EMPTY_POP_RESPONSE_HEADER });
    const ip = this.ctx.config.brokerIP1;
    if (h.bornTime > 0 && Date.now() - h.bornTime - h.pollTime > TIMEOUT_TOO_MUCH_MS) {
      return fail(ResponseCode.POLLING_TIMEOUT, `the broker[${ip}] pop message is timeout too much`);
    }
    if (h.maxMsgNums > MAX_MSG_NUMS) return fail(ResponseCode.INVALID_PARAMETER, `the broker[${ip}] pop message's num is greater than 32`);
    const target = checkPopTarget(this.ctx, 'pop', h.consumerGroup, h.topic, h.queueId, channel.remoteAddress);
    if (isRefusal(target)) return fail(target.code, target.remark);
    const filter = popFilterOf(this.ctx, h.topic, h.expType, h.exp);
    if ('code' in filter) return fail(filter.code, filter.remark);

    const endAt = Date.now() + Math.min(Math.max(0, h.pollTime), this.ctx.config.maxLongPollingTimeMills);
    for (;;) {
      const r = await this.pop.pop({
        group: h.consumerGroup,
        topic: h.topic,
        filter: filter.filter,
        batchSize: Math.max(1, h.maxMsgNums),
        invisibleMs: Math.max(0, h.invisibleTime),
        fifo: h.order,
        queueId: h.queueId,
        initFromMin: h.initMode === INIT_MODE_MIN,
      });
      if (r.messages.length > 0) return this.found(request, h, r);
      const left = endAt - Date.now();
      if (left <= 0 || channel.closed || this.stopping()) return this.notFound(request, h, r, ResponseCode.POLLING_TIMEOUT);
      if (this.pop.waitQueue.size >= this.maxPollingSize) return this.notFound(request, h, r, ResponseCode.POLLING_FULL);
      const untilVisible = r.nextVisibleAtMs !== undefined ? Math.max(1, r.nextVisibleAtMs - this.ctx.clock.nowMs()) : Infinity;
      await this.pop.waitQueue.wait(h.topic, Math.min(left, untilVisible, POP_POLL_RECHECK_MS));
      // A client that went away, or a broker shutting down, must not have messages made invisible for it.
      if (channel.closed || this.stopping()) return this.notFound(request, h, r, ResponseCode.POLLING_TIMEOUT);
    }
  }

  private header(h: PopMessageRequestHeader, r: PopResult, queues: PoppedQueue[]): Record<string, string | number> {
    return {
      popTime: r.popTimeMs,
      invisibleTime: h.invisibleTime,
      reviveQid: h.order ? POP_ORDER_REVIVE_QUEUE : POP_REVIVE_QID,
      restNum: r.restNum,
      startOffsetInfo: startOffsetInfoOf(queues),
      msgOffsetInfo: msgOffsetInfoOf(queues),
    };
  }

  private found(request: RemotingCommand, h: PopMessageRequestHeader, r: PopResult): RemotingCommand {
    // Group by queue (first-seen order), offsets ascending: the client matches msgOffsetInfo by index.
    const byQueue = new Map<number, PopResult['messages']>();
    for (const m of r.messages) {
      const qid = m.message.queueId;
      const list = byQueue.get(qid);
      if (list) list.push(m);
      else byQueue.set(qid, [m]);
    }
    const queues: PoppedQueue[] = [];
    const records: Buffer[] = [];
    const counts: Array<{ queueId: number; count: number }> = [];
    for (const [queueId, list] of byQueue) {
      list.sort((a, b) => a.message.queueOffset - b.message.queueOffset);
      const offsets = list.map((m) => m.message.queueOffset);
      queues.push({ queueId, startOffset: offsets[0]!, offsets });
      counts.push({ queueId, count: Math.max(...list.map((m) => m.attempt - 1)) });
      for (const m of list) records.push(withReconsumeTimes(m.record, m.attempt - 1));
    }
    const ext = this.header(h, r, queues);
    if (h.order) ext.orderCountInfo = orderCountInfoOf(counts);
    return createResponseCommand(request, ResponseCode.SUCCESS, 'FOUND', ext, Buffer.concat(records));
  }

  private notFound(request: RemotingCommand, h: PopMessageRequestHeader, r: PopResult, code: number): RemotingCommand {
    return createResponseCommand(request, code, 'NO_MESSAGE_IN_QUEUE', this.header(h, r, []));
  }
}
