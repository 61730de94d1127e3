/**
 * HEART_BEAT (34), UNREGISTER_CLIENT (35), GET_CONSUMER_LIST_BY_GROUP (38) and
 * CHECK_CLIENT_CONFIG (46) (mirrors `ClientManageProcessor` and
 * `ConsumerManageProcessor.getConsumerListByGroup`).
 *
 * HEART_BEAT body (JSON, spec A9): {clientID, consumerDataSet:[{groupName, consumeType,
 * messageModel, consumeFromWhere, unitMode, subscriptionDataSet:[{topic, subString, tagsSet,
 * codeSet, subVersion, expressionType?, classFilterMode}]}], producerDataSet:[{groupName}]}.
 * For each consumer group: the subscription group is found/auto-created, `%RETRY%<group>` is
 * created (retryQueueNums queues, perm 6) and the client registered with its subscriptions.
 * SQL92 subscriptions are compiled here (whether or not enablePropertyFilter is on, as Apache's
 * ConsumerFilterManager does); one that does not compile is kept without a selector, and pulls
 * relying on it get FILTER_DATA_NOT_EXIST (27). Such an expression, and an SQL92 subscription
 * while enablePropertyFilter=false, are logged through ctx.filterWarnings (rate-limited).
 * GET_CONSUMER_LIST_BY_GROUP answers body {"consumerIdList":[...]}, or 1 SYSTEM_ERROR
 * "no consumer for this group, <group>" when the group has no live client.
 */
import type { RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getOptionalString, getString } from '../../remoting/headers/header-fields.js';
import { retryTopicOf } from '../../common/message/topic-validator.js';
import { PermName } from '../broker-config.js';
import type { BrokerContext } from '../broker-context.js';
import { parseLenientJson } from '../config-file/lenient-json.js';
import { buildSubscriptionData, SubscriptionParseError, type SubscriptionData } from '../filter/subscription-data.js';
import { attachCompiledExpression, compileFilterExpression, FilterCompileError, isTagType } from '../filter/expression-filter.js';

interface HeartbeatConsumerData {
  groupName: string;
  consumeType: string;
  messageModel: string;
  consumeFromWhere: string;
  subscriptions: SubscriptionData[];
}

interface HeartbeatData {
  clientId: string;
  consumers: HeartbeatConsumerData[];
  producerGroups: string[];
}

const str = (v: unknown, def = ''): string => (typeof v === 'string' ? v : v === undefined || v === null ? def : String(v));
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function decodeSubscription(raw: unknown): SubscriptionData | null {
  if (!raw || typeof raw !== 'object') return null;
  const o = raw as Record<string, unknown>;
  const topic = str(o.topic);
  if (topic === '') return null;
  const subVersion = Number(o.subVersion ?? 0) || 0;
  const expressionType = str(o.expressionType, 'TAG') || 'TAG';
  if (!isTagType(expressionType)) {
    // compiled now, whatever enablePropertyFilter says (Apache's ConsumerFilterManager.register)
    const data: SubscriptionData = { topic, subString: str(o.subString), tagsSet: [], codeSet: [], subVersion, expressionType, classFilterMode: o.classFilterMode === true };
    return attachCompiledExpression(data);
  }
  try {
    const data = buildSubscriptionData(topic, str(o.subString, '*'), subVersion, expressionType);
    data.classFilterMode = o.classFilterMode === true;
    return data;
  } catch (e) {
    if (!(e instanceof SubscriptionParseError)) throw e;
    // Keep what the client computed, as Apache does (it never re-parses heartbeats).
    return {
      topic,
      subString: str(o.subString),
      tagsSet: arr(o.tagsSet).map((t) => str(t)),
      codeSet: arr(o.codeSet).map((c) => Number(c) | 0),
      subVersion,
      expressionType,
      classFilterMode: o.classFilterMode === true,
    };
  }
}

/** Parses the HEART_BEAT body. @throws Error with a reason for a missing or malformed body. */
export function decodeHeartbeat(body: Buffer | null): HeartbeatData {
  if (!body || body.length === 0) throw new Error('heartbeat body is missing');
  let doc: unknown;
  try {
    doc = parseLenientJson(body.toString('utf8'));
  } catch (e) {
    throw new Error(`heartbeat body is not valid JSON: ${(e as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('heartbeat body is not a JSON object');
  const o = doc as Record<string, unknown>;
  const clientId = str(o.clientID);
  if (clientId === '') throw new Error('heartbeat body has no clientID');
  const consumers: HeartbeatConsumerData[] = [];
  for (const c of arr(o.consumerDataSet)) {
    if (!c || typeof c !== 'object') continue;
    const cd = c as Record<string, unknown>;
    const groupName = str(cd.groupName);
    if (groupName === '') continue;
    consumers.push({
      groupName,
      consumeType: str(cd.consumeType, 'CONSUME_PASSIVELY'),
      messageModel: str(cd.messageModel, 'CLUSTERING'),
      consumeFromWhere: str(cd.consumeFromWhere, 'CONSUME_FROM_LAST_OFFSET'),
      subscriptions: arr(cd.subscriptionDataSet).map(decodeSubscription).filter((s): s is SubscriptionData => s !== null),
    });
  }
  const producerGroups = arr(o.producerDataSet)
    .map((p) => (p && typeof p === 'object' ? str((p as Record<string, unknown>).groupName) : ''))
    .filter((g) => g !== '');
  return { clientId, consumers, producerGroups };
}

export class ClientManageProcessor {
  constructor(private readonly ctx: BrokerContext) {}

  readonly heartbeat: RequestHandler = (rc) => this.processHeartbeat(rc);
  readonly unregisterClient: RequestHandler = (rc) => this.processUnregister(rc);
  readonly getConsumerListByGroup: RequestHandler = (rc) => this.processConsumerList(rc);
  readonly checkClientConfig: RequestHandler = (rc) => this.processCheckClientConfig(rc);

  async processHeartbeat({ channel, request }: RequestContext): Promise<RemotingCommand> {
    let hb: HeartbeatData;
    try {
      hb = decodeHeartbeat(request.body);
    } catch (e) {
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, (e as Error).message);
    }
    const info = { channel, clientId: hb.clientId, language: request.language, version: request.version };
    for (const c of hb.consumers) {
      for (const sub of c.subscriptions) {
        if (sub.compiledExpression === null) {
          this.ctx.filterWarnings.compileFailed(c.groupName, sub.topic, sub.expressionType, sub.subString, sub.filterError ?? 'does not compile', `registered by consumer ${hb.clientId}; its pulls get FILTER_DATA_NOT_EXIST (27)`);
        } else if (!isTagType(sub.expressionType) && !this.ctx.config.enablePropertyFilter) {
          this.ctx.filterWarnings.filterDisabled(c.groupName, sub.topic, sub.expressionType);
        }
      }
      const sgc = this.ctx.subscriptionGroupManager.findSubscriptionGroupConfig(c.groupName);
      if (sgc) {
        this.ctx.topicConfigManager.createTopicInSendMessageBackMethod(
          retryTopicOf(c.groupName),
          sgc.retryQueueNums,
          PermName.PERM_READ | PermName.PERM_WRITE,
          0,
        );
      }
      this.ctx.consumerManager.registerConsumer(c.groupName, info, {
        consumeType: c.consumeType,
        messageModel: c.messageModel,
        consumeFromWhere: c.consumeFromWhere,
        subscriptions: c.subscriptions,
      });
    }
    for (const g of hb.producerGroups) this.ctx.producerManager.registerProducer(g, info);
    // Groups and %RETRY% topics this heartbeat created are on disk before it is answered (one
    // coalesced write per file however many were created).
    const writes = new Set<Promise<void>>();
    for (const c of hb.consumers) {
      const g = this.ctx.subscriptionGroupManager.durable(c.groupName);
      if (g) writes.add(g);
      const t = this.ctx.topicConfigManager.durable(retryTopicOf(c.groupName));
      if (t) writes.add(t);
    }
    if (writes.size > 0) {
      const failed = (await Promise.allSettled(writes)).find((r) => r.status === 'rejected');
      if (failed) this.ctx.logger.error(`heartbeat from ${hb.clientId}: created groups or retry topics not durable: ${(failed as PromiseRejectedResult).reason}`);
    }
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  }

  processUnregister({ channel, request }: RequestContext): RemotingCommand {
    const ext = request.extFields;
    const clientId = getString(ext, 'clientID');
    const producerGroup = getOptionalString(ext, 'producerGroup');
    const consumerGroup = getOptionalString(ext, 'consumerGroup');
    if (producerGroup) this.ctx.producerManager.unregisterProducer(producerGroup, channel, clientId);
    if (consumerGroup) this.ctx.consumerManager.unregisterConsumer(consumerGroup, channel, clientId);
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  }

  /**
   * CHECK_CLIENT_CONFIG (46), sent by Java consumers at start for every non-TAG subscription
   * (`MQClientInstance.checkClientInBroker`); a failure stops the consumer's start. Body
   * {clientId, group, subscriptionData:{topic, subString, expressionType, ...}}. TAG (or no
   * subscription) → 0; SQL92 with enablePropertyFilter=false → 1 "The broker does not support
   * consumer to filter message by SQL92"; an expression that does not compile → 23
   * SUBSCRIPTION_PARSE_FAILED with the compiler's message; else 0 (as Apache's ClientManageProcessor).
   */
  processCheckClientConfig({ request }: RequestContext): RemotingCommand {
    let body: Record<string, unknown> | null = null;
    if (request.body && request.body.length > 0) {
      try {
        const doc = parseLenientJson(request.body.toString('utf8'));
        if (doc && typeof doc === 'object' && !Array.isArray(doc)) body = doc as Record<string, unknown>;
      } catch (e) {
        return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `check client config body is not valid JSON: ${(e as Error).message}`);
      }
    }
    const sub = body?.subscriptionData;
    if (!sub || typeof sub !== 'object') return createResponseCommand(request, ResponseCode.SUCCESS, null);
    const o = sub as Record<string, unknown>;
    const type = str(o.expressionType);
    if (isTagType(type)) return createResponseCommand(request, ResponseCode.SUCCESS, null);
    if (!this.ctx.config.enablePropertyFilter) {
      // the remark stays Apache's (the Java interop test asserts it); the hint goes to the log
      this.ctx.filterWarnings.filterDisabled(str(body!.group), str(o.topic), type);
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `The broker does not support consumer to filter message by ${type}`);
    }
    const who = `${str(body!.clientId)}@${str(body!.group)}`;
    try {
      const selector = compileFilterExpression(type, str(o.subString));
      if (selector.ignoredTail) {
        this.ctx.logger.warn(
          `client ${who} topic ${str(o.topic)}: ${type} expression "${selector.source}" ends at line ${selector.ignoredTail.line}, column ${selector.ignoredTail.column}; "${selector.ignoredTail.text}" is ignored (as Apache RocketMQ does)`,
        );
      }
    } catch (e) {
      if (!(e instanceof FilterCompileError)) throw e;
      this.ctx.filterWarnings.compileFailed(str(body!.group), str(o.topic), type, str(o.subString), e.message, `checked by client ${who}; CHECK_CLIENT_CONFIG answered SUBSCRIPTION_PARSE_FAILED (23)`);
      return createResponseCommand(request, ResponseCode.SUBSCRIPTION_PARSE_FAILED, e.message);
    }
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  }

  processConsumerList({ request }: RequestContext): RemotingCommand {
    const group = getString(request.extFields, 'consumerGroup');
    const ids = this.ctx.consumerManager.getConsumerGroupInfo(group)?.allClientIds() ?? [];
    if (ids.length === 0) {
      this.ctx.logger.warn(`GET_CONSUMER_LIST_BY_GROUP: no consumer for group ${group}`);
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `no consumer for this group, ${group}`);
    }
    const body = Buffer.from(JSON.stringify({ consumerIdList: ids }), 'utf8');
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, body);
  }
}
