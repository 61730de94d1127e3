/**
 * QUERY_ASSIGNMENT (400), SET_MESSAGE_REQUEST_MODE (401) and GET_ALL_MESSAGE_REQUEST_MODE (402):
 * broker-side rebalancing for RocketMQ 5.x clients (Apache `QueryAssignmentProcessor`). A 5.x
 * DefaultMQPushConsumer with `clientRebalance=false` asks the broker which queues it owns and
 * whether to PULL or POP them; `mqadmin setConsumeMode -m POP` switches a topic/group to POP.
 *
 * 400: no header; body `QueryAssignmentRequestBody` {"topic","consumerGroup","clientId",
 *   "strategyName":"AVG"|"AVG_BY_CIRCLE","messageModel":"CLUSTERING"|"BROADCASTING"} →
 *   SUCCESS, body {"messageQueueAssignments":[{"messageQueue":{"brokerName","queueId","topic"},
 *   "mode":"PULL"|"POP"}]}. The mode is the one set by 401, else PULL for `%RETRY%` topics, else
 *   `defaultMessageRequestMode` (with `defaultPopShareQueueNum`). Queues: this broker's readable
 *   queues of the topic (tsmq answers for itself only; Apache uses the whole route). BROADCASTING →
 *   every queue. CLUSTERING: serverLoadBalancerEnable=false → every queue; else among the group's
 *   registered clients (heartbeats) with the named strategy; in POP mode with popShareQueueNum ≤ 0
 *   or ≥ clients − 1 every client gets one queue per broker with queueId -1 (pop from every queue),
 *   else its own share plus the shares of the next popShareQueueNum clients (one queue each when
 *   there are more clients than queues). The body has no `messageQueueAssignments` ("no valid
 *   answer": the client keeps what it has) when the topic does not exist, the group has no client,
 *   or the strategy is unknown.
 * 401: no header; body `SetMessageRequestModeRequestBody` {"topic","consumerGroup","mode",
 *   "popShareQueueNum"} → `%RETRY%` topic: NO_PERMISSION (16) "retry topic is not allowed to set
 *   mode"; topic missing: TOPIC_NOT_EXIST (17); group missing: SUBSCRIPTION_GROUP_NOT_EXIST (26);
 *   else stored in config/messageRequestMode.json, SUCCESS.
 * 402: → SUCCESS, body the whole table (message-request-mode-manager.ts).
 * A missing or malformed body answers SYSTEM_ERROR (1) naming the problem (Apache fails the same way).
 */
import type { RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { PermName } from '../broker-config.js';
import type { BrokerContext } from '../broker-context.js';
import { parseLenientJson } from '../config-file/lenient-json.js';
import { ALLOCATE_STRATEGIES, type AllocateStrategy } from '../loadbalance/allocate-message-queue.js';
import { isMessageRequestMode, type MessageRequestModeManager, type MessageRequestModeSetting } from '../loadbalance/message-request-mode-manager.js';
import { compareMessageQueues, messageQueueKey, type MessageQueueRef } from './message-queue-json.js';

const RETRY_GROUP_TOPIC_PREFIX = '%RETRY%';

export interface QueryAssignmentConfig {
  defaultMessageRequestMode: string;
  defaultPopShareQueueNum: number;
  serverLoadBalancerEnable: boolean;
}

class BodyError extends Error {}

function parseBody(body: Buffer | null, what: string): Record<string, unknown> {
  if (!body || body.length === 0) throw new BodyError(`${what}: request body is empty`);
  let doc: unknown;
  try {
    doc = parseLenientJson(body.toString('utf8'));
  } catch (e) {
    throw new BodyError(`${what}: body is not JSON: ${(e as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new BodyError(`${what}: body is not a JSON object`);
  return doc as Record<string, unknown>;
}

function str(o: Record<string, unknown>, name: string, what: string): string {
  const v = o[name];
  if (typeof v !== 'string' || v === '') throw new BodyError(`${what}: ${name} is missing`);
  return v;
}

export class QueryAssignmentProcessor {
  constructor(
    private readonly ctx: BrokerContext,
    private readonly modes: MessageRequestModeManager,
    private readonly config: QueryAssignmentConfig,
  ) {}

  readonly queryAssignmentHandler: RequestHandler = (rc) => this.guard(rc, () => this.queryAssignment(rc));
  readonly setMessageRequestModeHandler: RequestHandler = (rc) => this.guard(rc, () => this.setMessageRequestMode(rc));
  readonly getAllMessageRequestModeHandler: RequestHandler = ({ request }) =>
    createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(JSON.stringify(this.modes.encode()), 'utf8'));

  private async guard(rc: RequestContext, fn: () => Promise<RemotingCommand> | RemotingCommand): Promise<RemotingCommand> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof BodyError) return createResponseCommand(rc.request, ResponseCode.SYSTEM_ERROR, e.message);
      throw e;
    }
  }

  /** The effective setting of a topic/group (401's, else the defaults). */
  modeOf(topic: string, group: string): MessageRequestModeSetting {
    const set = this.modes.get(topic, group);
    if (set) return set;
    const mode = topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) ? 'PULL' : this.config.defaultMessageRequestMode === 'POP' ? 'POP' : 'PULL';
    return { topic, consumerGroup: group, mode, popShareQueueNum: mode === 'POP' ? this.config.defaultPopShareQueueNum : 0 };
  }

  private queryAssignment({ request }: RequestContext): RemotingCommand {
    const what = 'QUERY_ASSIGNMENT';
    const o = parseBody(request.body, what);
    const topic = str(o, 'topic', what);
    const group = str(o, 'consumerGroup', what);
    const clientId = str(o, 'clientId', what);
    const strategyName = typeof o.strategyName === 'string' ? o.strategyName : 'AVG';
    const messageModel = o.messageModel === 'BROADCASTING' ? 'BROADCASTING' : 'CLUSTERING';
    const setting = this.modeOf(topic, group);
    const queues = this.assign(topic, group, clientId, messageModel, strategyName, setting);
    const body = queues === null ? '{}' : JSON.stringify({ messageQueueAssignments: queues.map((mq) => ({ messageQueue: { brokerName: mq.brokerName, queueId: mq.queueId, topic: mq.topic }, mode: setting.mode })) });
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(body, 'utf8'));
  }

  /** Null = no valid answer (the client keeps its current queues). */
  assign(topic: string, group: string, clientId: string, messageModel: string, strategyName: string, setting: MessageRequestModeSetting): MessageQueueRef[] | null {
    const tc = this.ctx.topicConfigManager.selectTopicConfig(topic);
    if (!tc) return null;
    const brokerName = this.ctx.config.brokerName;
    const readable = PermName.isReadable(tc.perm) ? tc.readQueueNums : 0;
    const mqAll: MessageQueueRef[] = Array.from({ length: readable }, (_, queueId) => ({ topic, brokerName, queueId })).sort(compareMessageQueues);
    if (messageModel === 'BROADCASTING' || !this.config.serverLoadBalancerEnable) return mqAll;
    const cidAll = this.ctx.consumerManager.getConsumerGroupInfo(group)?.allClientIds().sort();
    if (!cidAll || cidAll.length === 0) return null;
    const strategy = ALLOCATE_STRATEGIES.get(strategyName);
    if (!strategy) {
      this.ctx.logger.warn(`QUERY_ASSIGNMENT: unsupported strategy [${strategyName}] for group ${group}`);
      return null;
    }
    if (mqAll.length === 0) return [];
    const result = setting.mode === 'POP' ? this.allocateForPop(strategy, clientId, mqAll, cidAll, setting.popShareQueueNum) : strategy(clientId, mqAll, cidAll);
    const seen = new Map<string, MessageQueueRef>();
    for (const mq of result) seen.set(messageQueueKey(mq), mq);
    return [...seen.values()];
  }

  private allocateForPop(strategy: AllocateStrategy, clientId: string, mqAll: MessageQueueRef[], cidAll: string[], popShareQueueNum: number): MessageQueueRef[] {
    if (popShareQueueNum <= 0 || popShareQueueNum >= cidAll.length - 1) {
      return mqAll.map((mq) => ({ topic: mq.topic, brokerName: mq.brokerName, queueId: -1 }));
    }
    if (cidAll.length <= mqAll.length) {
      const out = strategy(clientId, mqAll, cidAll);
      let index = cidAll.indexOf(clientId);
      if (index >= 0) {
        for (let i = 1; i <= popShareQueueNum; i++) {
          index = (index + 1) % cidAll.length;
          out.push(...strategy(cidAll[index]!, mqAll, cidAll));
        }
      }
      return out;
    }
    const index = cidAll.indexOf(clientId);
    return index < 0 ? [] : [mqAll[index % mqAll.length]!];
  }

  private async setMessageRequestMode({ request }: RequestContext): Promise<RemotingCommand> {
    const what = 'SET_MESSAGE_REQUEST_MODE';
    const o = parseBody(request.body, what);
    const topic = str(o, 'topic', what);
    const group = str(o, 'consumerGroup', what);
    const mode = o.mode ?? 'PULL';
    if (!isMessageRequestMode(mode)) throw new BodyError(`${what}: mode must be PULL or POP, got ${JSON.stringify(mode)}`);
    const share = o.popShareQueueNum ?? 0;
    if (typeof share !== 'number' || !Number.isInteger(share)) throw new BodyError(`${what}: popShareQueueNum is not an integer`);
    if (topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) return createResponseCommand(request, ResponseCode.NO_PERMISSION, 'retry topic is not allowed to set mode');
    if (!this.ctx.topicConfigManager.selectTopicConfig(topic)) return createResponseCommand(request, ResponseCode.TOPIC_NOT_EXIST, `topic[${topic}] not exist`);
    if (!this.ctx.subscriptionGroupManager.findSubscriptionGroupConfig(group)) {
      return createResponseCommand(request, ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, 'subscription group does not exist');
    }
    this.modes.set({ topic, consumerGroup: group, mode, popShareQueueNum: share });
    await this.modes.persist();
    this.ctx.logger.info(`message request mode of ${topic} / ${group} set to ${mode} (popShareQueueNum ${share})`);
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  }
}
