/**
 * ACK_MESSAGE (200051), BATCH_ACK_MESSAGE (200151) and CHANGE_MESSAGE_INVISIBLETIME (200053): the
 * remoting side of Apache 5.x `AckMessageProcessor` / `ChangeInvisibleTimeProcessor`, over the
 * broker's one PopService.
 *
 * A delivery is named by queue id + queue offset + the extra info the client got with the message
 * (extra-info.ts): it is the current delivery only while the message is still in flight to the
 * group with invisible-until = popTime + invisibleTime (PopService.resolveDelivery), so an ack or
 * change for a delivery that was since redelivered, acked or changed is refused and changes
 * nothing.
 *
 * 200051 header: consumerGroup, topic, queueId, extraInfo, offset.
 *   topic missing → TOPIC_NOT_EXIST (17); queueId outside [0, readQueueNums) → MESSAGE_ILLEGAL
 *   (13); offset outside [min, max] of the queue → NO_MESSAGE (208) (Apache's checks and codes).
 *   extraInfo malformed → INVALID_PARAMETER (29) naming the field (Apache fails the same request
 *   with SYSTEM_ERROR from an uncaught exception); not the current delivery → NO_MESSAGE (208)
 *   with the reason (Apache answers SUCCESS and drops the ack later, unseen). Else SUCCESS.
 * 200151 body `BatchAckMessageRequestBody` JSON {"brokerName","acks":[{"c":group,"t":topic,
 *   "r":retry,"so":startOffset,"q":queueId,"rq":reviveQid,"pt":popTime,"it":invisibleTime,
 *   "b":base64(BitSet.toByteArray)}]} (long names accepted too): each set bit i acks offset so + i.
 *   No body or no acks → NO_MESSAGE (208); unparsable body → INVALID_PARAMETER (29); offsets
 *   outside the queue are skipped (as Apache). SUCCESS when every named delivery was acked, else
 *   NO_MESSAGE with the count and the first reason (the others are still acked).
 * 200053 header: the ack fields + invisibleTime (ms). Checks as 200051 except offset must be in
 *   [min, max) (208 without remark, as Apache). SUCCESS with header popTime (now), invisibleTime,
 *   reviveQid (echoed from extraInfo): the message is invisible until popTime + invisibleTime, and
 *   the client's new extra info names exactly that delivery.
 */
import type { RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getInt, getLong, getString } from '../../remoting/headers/header-fields.js';
import type { BrokerContext } from '../broker-context.js';
import { parseLenientJson } from '../config-file/lenient-json.js';
import { ExtraInfoError, parseExtraInfo, type ExtraInfo } from '../pop/extra-info.js';
import type { HandleCheck, PopService } from '../pop/pop-service.js';

interface AckTarget {
  group: string;
  topic: string;
  queueId: number;
  offset: number;
}

/** One entry of a BatchAckMessageRequestBody. */
export interface BatchAck {
  consumerGroup: string;
  topic: string;
  retry: string;
  startOffset: number;
  queueId: number;
  reviveQueueId: number;
  popTime: number;
  invisibleTime: number;
  /** Offsets relative to startOffset (set bits of the Java BitSet). */
  bits: number[];
}

/** Set bit indexes of a Java `BitSet.toByteArray()` (little-endian bytes, bit i = byte i/8, bit i%8). */
export function bitSetIndexes(bytes: Buffer): number[] {
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) for (let b = 0; b < 8; b++) if ((bytes[i]! >> b) & 1) out.push(i * 8 + b);
  return out;
}

class BodyError extends Error {}

function field(o: Record<string, unknown>, short: string, long: string): unknown {
  return o[short] !== undefined ? o[short] : o[long];
}

function num(v: unknown, what: string): number {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw new BodyError(`${what} is not an integer`);
  return n;
}

/** Parses a BatchAckMessageRequestBody. @throws BodyError naming the bad field. */
export function parseBatchAckBody(body: Buffer): { brokerName: string | undefined; acks: BatchAck[] } {
  let doc: unknown;
  try {
    doc = parseLenientJson(body.toString('utf8'));
  } catch (e) {
    throw new BodyError(`body is not JSON: ${(e as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new BodyError('body is not a JSON object');
  const o = doc as Record<string, unknown>;
  const rawAcks = o.acks ?? [];
  if (!Array.isArray(rawAcks)) throw new BodyError('acks is not an array');
  const acks = rawAcks.map((a, i): BatchAck => {
    if (!a || typeof a !== 'object') throw new BodyError(`acks[${i}] is not an object`);
    const x = a as Record<string, unknown>;
    const group = field(x, 'c', 'consumerGroup');
    const topic = field(x, 't', 'topic');
    if (typeof group !== 'string' || typeof topic !== 'string') throw new BodyError(`acks[${i}]: consumerGroup or topic is missing`);
    const b = field(x, 'b', 'bitSet');
    let bytes: Buffer;
    if (typeof b === 'string') bytes = Buffer.from(b, 'base64');
    else if (Array.isArray(b)) bytes = Buffer.from(b.map((v) => num(v, `acks[${i}].b`) & 0xff));
    else throw new BodyError(`acks[${i}]: bitSet is missing`);
    return {
      consumerGroup: group,
      topic,
      retry: String(field(x, 'r', 'retry') ?? '0'),
      startOffset: num(field(x, 'so', 'startOffset'), `acks[${i}].startOffset`),
      queueId: num(field(x, 'q', 'queueId'), `acks[${i}].queueId`),
      reviveQueueId: num(field(x, 'rq', 'reviveQueueId') ?? 0, `acks[${i}].reviveQueueId`),
      popTime: num(field(x, 'pt', 'popTime'), `acks[${i}].popTime`),
      invisibleTime: num(field(x, 'it', 'invisibleTime'), `acks[${i}].invisibleTime`),
      bits: bitSetIndexes(bytes),
    };
  });
  return { brokerName: typeof o.brokerName === 'string' ? o.brokerName : undefined, acks };
}

export class AckMessageProcessor {
  constructor(
    private readonly ctx: BrokerContext,
    private readonly pop: PopService,
  ) {}

  readonly ackHandler: RequestHandler = (rc) => this.ack(rc);
  readonly batchAckHandler: RequestHandler = (rc) => this.batchAck(rc);
  readonly changeInvisibleTimeHandler: RequestHandler = (rc) => this.changeInvisibleTime(rc);

  /** Header checks shared by ack and change; `offsetEndInclusive` differs (Apache: max vs max − 1). */
  private checkTarget(request: RemotingCommand, remoteAddress: string, offsetEndInclusive: boolean): { target: AckTarget; extra: ExtraInfo } | RemotingCommand {
    const ext = request.extFields;
    const target: AckTarget = {
      group: getString(ext, 'consumerGroup'),
      topic: getString(ext, 'topic'),
      queueId: getInt(ext, 'queueId'),
      offset: getLong(ext, 'offset'),
    };
    const extraText = getString(ext, 'extraInfo');
    const tc = this.ctx.topicConfigManager.selectTopicConfig(target.topic);
    if (!tc) return createResponseCommand(request, ResponseCode.TOPIC_NOT_EXIST, `topic[${target.topic}] not exist, apply first please!`);
    if (target.queueId < 0 || target.queueId >= tc.readQueueNums) {
      return createResponseCommand(
        request,
        ResponseCode.MESSAGE_ILLEGAL,
        `queueId[${target.queueId}] is illegal, topic:[${target.topic}] topicConfig.readQueueNums:[${tc.readQueueNums}] consumer:[${remoteAddress}]`,
      );
    }
    const store = this.ctx.store;
    const min = store.getMinOffsetInQueue(target.topic, target.queueId);
    const max = store.getMaxOffsetInQueue(target.topic, target.queueId);
    if (target.offset < min || target.offset > max || (!offsetEndInclusive && target.offset === max)) {
      const remark = offsetEndInclusive ? `offset is illegal, key:${target.topic}@${target.queueId}, commit:${target.offset}, store:${min}~${max}` : null;
      return createResponseCommand(request, ResponseCode.NO_MESSAGE, remark);
    }
    let extra: ExtraInfo;
    try {
      extra = parseExtraInfo(extraText);
    } catch (e) {
      if (e instanceof ExtraInfoError) return createResponseCommand(request, ResponseCode.INVALID_PARAMETER, e.message);
      throw e;
    }
    return { target, extra };
  }

  private resolve(t: AckTarget, popTime: number, invisibleTime: number): HandleCheck {
    return this.pop.resolveDelivery(t.group, { topic: t.topic, queueId: t.queueId, queueOffset: t.offset, invisibleUntilMs: popTime + invisibleTime });
  }

  async ack({ channel, request }: RequestContext): Promise<RemotingCommand> {
    const c = this.checkTarget(request, channel.remoteAddress, true);
    if ('code' in c) return c;
    const found = this.resolve(c.target, c.extra.popTimeMs, c.extra.invisibleTimeMs);
    const r = found.ok ? await this.pop.ack(c.target.group, found.handle) : found;
    if (!r.ok) return createResponseCommand(request, ResponseCode.NO_MESSAGE, `ack of ${c.target.topic}@${c.target.queueId}:${c.target.offset} refused: ${r.reason}`);
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  }

  async batchAck({ request }: RequestContext): Promise<RemotingCommand> {
    if (!request.body || request.body.length === 0) return createResponseCommand(request, ResponseCode.NO_MESSAGE, null);
    let body: ReturnType<typeof parseBatchAckBody>;
    try {
      body = parseBatchAckBody(request.body);
    } catch (e) {
      if (e instanceof BodyError) return createResponseCommand(request, ResponseCode.INVALID_PARAMETER, `BATCH_ACK_MESSAGE: ${e.message}`);
      throw e;
    }
    if (body.acks.length === 0) return createResponseCommand(request, ResponseCode.NO_MESSAGE, null);
    let tried = 0;
    const failures: string[] = [];
    for (const a of body.acks) {
      if (a.retry !== '0') {
        failures.push(`retry-topic acks (r=${a.retry}) name no delivery of this broker`);
        continue;
      }
      const store = this.ctx.store;
      const min = store.getMinOffsetInQueue(a.topic, a.queueId);
      const max = store.getMaxOffsetInQueue(a.topic, a.queueId);
      for (const bit of a.bits) {
        const offset = a.startOffset + bit;
        if (offset < min || offset > max) continue;
        tried++;
        const t: AckTarget = { group: a.consumerGroup, topic: a.topic, queueId: a.queueId, offset };
        const found = this.resolve(t, a.popTime, a.invisibleTime);
        const r = found.ok ? await this.pop.ack(t.group, found.handle) : found;
        if (!r.ok) failures.push(`${a.topic}@${a.queueId}:${offset}: ${r.reason}`);
      }
    }
    if (failures.length === 0) return createResponseCommand(request, ResponseCode.SUCCESS, null);
    return createResponseCommand(request, ResponseCode.NO_MESSAGE, `${failures.length} of ${Math.max(tried, failures.length)} acks refused; first: ${failures[0]}`);
  }

  async changeInvisibleTime({ channel, request }: RequestContext): Promise<RemotingCommand> {
    const invisibleTime = getLong(request.extFields, 'invisibleTime');
    const c = this.checkTarget(request, channel.remoteAddress, false);
    // Apache's replies here always carry the (zero) ChangeInvisibleTimeResponseHeader fields; the client decodes them first.
    const zero = { popTime: 0, invisibleTime: 0, reviveQid: 0 };
    if ('code' in c) return { ...c, extFields: { ...zero, ...(c.extFields ?? {}) } };
    if (invisibleTime < 0) return createResponseCommand(request, ResponseCode.INVALID_PARAMETER, `invisibleTime ${invisibleTime} is negative`, zero);
    const found = this.resolve(c.target, c.extra.popTimeMs, c.extra.invisibleTimeMs);
    const r = found.ok ? await this.pop.changeInvisibleDuration(c.target.group, found.handle, invisibleTime) : found;
    if (!r.ok) return createResponseCommand(request, ResponseCode.NO_MESSAGE, `change of ${c.target.topic}@${c.target.queueId}:${c.target.offset} refused: ${r.reason}`, zero);
    const until = (r as { invisibleUntilMs: number }).invisibleUntilMs;
    return createResponseCommand(request, ResponseCode.SUCCESS, null, { popTime: until - invisibleTime, invisibleTime, reviveQid: c.extra.reviveQid });
  }
}
