/**
 * GET_TOPIC_STATS_INFO (202) and GET_CONSUME_STATS (208), the admin tools' offset reports
 * (mirror 4.9 `AdminBrokerProcessor.getTopicStatsInfo/getConsumeStats`). Bodies are fastjson
 * maps keyed by MessageQueue objects (message-queue-json.ts); offsets are Java longs.
 *
 *   202: header `topic` → body TopicStatsTable
 *          {"offsetTable":{<mq>:{"lastUpdateTimestamp":t,"maxOffset":max,"minOffset":min},…},"topicPutTps":tps}
 *        one entry per write queue; min/max are the store's (negative → 0); lastUpdateTimestamp
 *        is the store time of entry max-1 (0 for an empty queue).
 *        Unknown topic → 17 TOPIC_NOT_EXIST "topic[<topic>] not exist".
 *   208: header `consumerGroup`, optional `topic` (blank: every topic the group has committed
 *        offsets for) → body ConsumeStats
 *          {"consumeTps":0.0,"offsetTable":{<mq>:{"brokerOffset":max,"consumerOffset":c,"lastTimestamp":t,"pullOffset":p},…}}
 *        one entry per read queue; consumerOffset is the committed offset (none → 0);
 *        lastTimestamp the store time of entry consumerOffset-1 (0 when none). Topics without a
 *        topic config are skipped, and so are topics the group's live clients do not subscribe
 *        to when they subscribe to something. consumeTps is the messages per second the group
 *        pulled from those topics over the last minute (BrokerStatsManager GROUP_GET_NUMS).
 *        An unknown group gets an empty offsetTable; the Java admin then reports
 *        CONSUMER_NOT_ONLINE itself.
 *   315 VIEW_BROKER_STATS_DATA: header statsName (TOPIC_PUT_NUMS, GROUP_GET_NUMS, ...), statsKey
 *        (`<topic>` or `<topic>@<group>`) → body BrokerStatsData
 *          {"statsDay":{"avgpt","sum","tps"},"statsHour":{…},"statsMinute":{…}};
 *        a counter never touched → 1 SYSTEM_ERROR "The stats <name> <key> not exist" (Apache).
 *   317 GET_BROKER_CONSUME_STATS: header isOrder → body ConsumeStatsList
 *          {"brokerAddr","consumeStatsList":[{<group>:[ConsumeStats,…]},…],"totalDiff","totalInflightDiff"}
 *        one entry per subscription group; per topic the group has offsets for (order topics only
 *        when isOrder), one ConsumeStats over the write queues, as Apache.
 */
import type { RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getOptionalBoolean, getOptionalString, getString } from '../../remoting/headers/header-fields.js';
import type { BrokerContext } from '../broker-context.js';
import { javaDoubleJson, javaLongJson, messageQueueMapJson, type MessageQueueRef } from './message-queue-json.js';

export interface TopicOffset {
  minOffset: number;
  maxOffset: number;
  lastUpdateTimestamp: number;
}

export interface OffsetWrapper {
  brokerOffset: number;
  consumerOffset: number;
  lastTimestamp: number;
  /** Where the group's last pull ended (5.x field; max(consumerOffset, pull end)). */
  pullOffset: number;
}

/** TopicStatsTable body text (topicPutTps: 5.x field, messages per second over the last minute). */
export function topicStatsTableJson(table: Iterable<readonly [MessageQueueRef, TopicOffset]>, topicPutTps = 0): string {
  const value = (o: TopicOffset): string =>
    `{"lastUpdateTimestamp":${javaLongJson(o.lastUpdateTimestamp)},"maxOffset":${javaLongJson(o.maxOffset)},"minOffset":${javaLongJson(o.minOffset)}}`;
  return `{"offsetTable":${messageQueueMapJson(table, value)},"topicPutTps":${javaDoubleJson(topicPutTps)}}`;
}

/** ConsumeStats body text. */
export function consumeStatsJson(table: Iterable<readonly [MessageQueueRef, OffsetWrapper]>, consumeTps: number): string {
  const value = (o: OffsetWrapper): string =>
    `{"brokerOffset":${javaLongJson(o.brokerOffset)},"consumerOffset":${javaLongJson(o.consumerOffset)},"lastTimestamp":${javaLongJson(o.lastTimestamp)},"pullOffset":${javaLongJson(o.pullOffset)}}`;
  return `{"consumeTps":${javaDoubleJson(consumeTps)},"offsetTable":${messageQueueMapJson(table, value)}}`;
}

export class AdminStatsProcessors {
  constructor(private readonly ctx: BrokerContext) {}

  readonly getTopicStatsInfo: RequestHandler = (rc) => this.processTopicStats(rc);
  readonly getConsumeStats: RequestHandler = (rc) => this.processConsumeStats(rc);
  readonly viewBrokerStatsData: RequestHandler = (rc) => this.processViewStats(rc);
  readonly getBrokerConsumeStats: RequestHandler = (rc) => this.processBrokerConsumeStats(rc);

  async processTopicStats({ request }: RequestContext): Promise<RemotingCommand> {
    const topic = getString(request.extFields, 'topic');
    const tc = this.ctx.topicConfigManager.selectTopicConfig(topic);
    if (!tc) return createResponseCommand(request, ResponseCode.TOPIC_NOT_EXIST, `topic[${topic}] not exist`);
    const store = this.ctx.store;
    const table: Array<[MessageQueueRef, TopicOffset]> = [];
    for (let queueId = 0; queueId < tc.writeQueueNums; queueId++) {
      const minOffset = Math.max(0, store.getMinOffsetInQueue(topic, queueId));
      const maxOffset = Math.max(0, store.getMaxOffsetInQueue(topic, queueId));
      const lastUpdateTimestamp = maxOffset > 0 ? await store.getMessageStoreTimeStamp(topic, queueId, maxOffset - 1) : 0;
      table.push([this.mq(topic, queueId), { minOffset, maxOffset, lastUpdateTimestamp }]);
    }
    const body = topicStatsTableJson(table, this.ctx.brokerStats.tpsTopicPutNums(topic));
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(body, 'utf8'));
  }

  async processConsumeStats({ request }: RequestContext): Promise<RemotingCommand> {
    const group = getString(request.extFields, 'consumerGroup');
    const only = getOptionalString(request.extFields, 'topic')?.trim();
    const topics = only ? [only] : this.topicsOfGroup(group);
    const groupInfo = this.ctx.consumerManager.getConsumerGroupInfo(group);
    const table: Array<[MessageQueueRef, OffsetWrapper]> = [];
    let consumeTps = 0;
    for (const topic of topics) {
      const tc = this.ctx.topicConfigManager.selectTopicConfig(topic);
      if (!tc) {
        this.ctx.logger.warn(`consumeStats: topic config of ${topic} does not exist`);
        continue;
      }
      if (groupInfo && groupInfo.subscriptions.size > 0 && !groupInfo.findSubscriptionData(topic)) {
        this.ctx.logger.warn(`consumeStats: group ${group} does not subscribe to ${topic}`);
        continue;
      }
      consumeTps += this.ctx.brokerStats.tpsGroupGetNums(group, topic);
      table.push(...(await this.offsetTable(group, topic, tc.readQueueNums)));
    }
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(consumeStatsJson(table, consumeTps), 'utf8'));
  }

  /** One OffsetWrapper per queue 0..queueNums-1 of `group` on `topic`. */
  private async offsetTable(group: string, topic: string, queueNums: number): Promise<Array<[MessageQueueRef, OffsetWrapper]>> {
    const store = this.ctx.store;
    const table: Array<[MessageQueueRef, OffsetWrapper]> = [];
    for (let queueId = 0; queueId < queueNums; queueId++) {
      const brokerOffset = Math.max(0, store.getMaxOffsetInQueue(topic, queueId));
      const consumerOffset = Math.max(0, this.ctx.consumerOffsetManager.queryOffset(group, topic, queueId));
      let lastTimestamp = 0;
      if (consumerOffset > 0) {
        const ts = await store.getMessageStoreTimeStamp(topic, queueId, consumerOffset - 1);
        if (ts > 0) lastTimestamp = ts;
      }
      const pullOffset = Math.max(consumerOffset, this.ctx.consumerOffsetManager.queryPullOffset(group, topic, queueId));
      table.push([this.mq(topic, queueId), { brokerOffset, consumerOffset, lastTimestamp, pullOffset }]);
    }
    return table;
  }

  /** Topics the group has committed offsets for (Apache `whichTopicByConsumer`), sorted. */
  private topicsOfGroup(group: string): string[] {
    return this.ctx.consumerOffsetManager.topicsOfGroup(group);
  }

  processViewStats({ request }: RequestContext): RemotingCommand {
    const name = getString(request.extFields, 'statsName');
    const key = getString(request.extFields, 'statsKey');
    const item = this.ctx.brokerStats.getStatsItem(name, key);
    if (!item) return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `The stats <${name}> <${key}> not exist`);
    const now = this.ctx.clock.nowMs();
    const part = (w: 'minute' | 'hour' | 'day'): string => {
      const s = item.stats(w, now);
      return `{"avgpt":${javaDoubleJson(s.avgpt)},"sum":${javaLongJson(s.sum)},"tps":${javaDoubleJson(s.tps)}}`;
    };
    const body = `{"statsDay":${part('day')},"statsHour":${part('hour')},"statsMinute":${part('minute')}}`;
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(body, 'utf8'));
  }

  async processBrokerConsumeStats({ request }: RequestContext): Promise<RemotingCommand> {
    const isOrder = getOptionalBoolean(request.extFields, 'isOrder') ?? false;
    const groups: string[] = [];
    let totalDiff = 0;
    let totalInflightDiff = 0;
    for (const g of this.ctx.subscriptionGroupManager.allGroups()) {
      const group = g.groupName;
      const live = this.ctx.consumerManager.getConsumerGroupInfo(group);
      const stats: string[] = [];
      for (const topic of this.topicsOfGroup(group)) {
        const tc = this.ctx.topicConfigManager.selectTopicConfig(topic);
        if (!tc || (isOrder && !tc.order)) continue;
        if (live && live.subscriptions.size > 0 && !live.findSubscriptionData(topic)) continue;
        const table = await this.offsetTable(group, topic, tc.writeQueueNums);
        for (const [, o] of table) {
          totalDiff += o.brokerOffset - o.consumerOffset;
          totalInflightDiff += o.pullOffset - o.consumerOffset;
        }
        stats.push(consumeStatsJson(table, this.ctx.brokerStats.tpsGroupGetNums(group, topic)));
      }
      groups.push(`{${JSON.stringify(group)}:[${stats.join(',')}]}`);
    }
    const body = `{"brokerAddr":${JSON.stringify(this.ctx.brokerAddr)},"consumeStatsList":[${groups.join(',')}],"totalDiff":${javaLongJson(totalDiff)},"totalInflightDiff":${javaLongJson(totalInflightDiff)}}`;
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(body, 'utf8'));
  }

  private mq(topic: string, queueId: number): MessageQueueRef {
    return { topic, brokerName: this.ctx.config.brokerName, queueId };
  }
}
