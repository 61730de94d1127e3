/**
 * Topic administration (mirror 4.9 `AdminBrokerProcessor`):
 *   17 UPDATE_AND_CREATE_TOPIC: extFields topic, readQueueNums, writeQueueNums, perm,
 *      topicFilterType, topicSysFlag, order (missing numbers default to defaultTopicQueueNums /
 *      perm 6), attributes ("+message.type=FIFO,-reserve.time", topic-attributes.ts: applied to
 *      the topic's current attributes, kept when absent). Illegal names, the cluster name, system
 *      topics, more than maxTopicQueueNums queues and refused attributes → 1 SYSTEM_ERROR with a
 *      remark (Apache's attribute messages).
 *   18 UPDATE_AND_CREATE_TOPIC_LIST (5.x `mqadmin updateTopicList`): body CreateTopicListRequestBody
 *      {"topicConfigList":[{topicName, readQueueNums, writeQueueNums, perm, topicFilterType,
 *      topicSysFlag, order, attributes: {"+message.type":"FIFO"}}, …]}, each checked as for 17;
 *      the first refused topic answers 1 SYSTEM_ERROR naming it and none is changed (Apache
 *      checks them all before changing any too); an unreadable body → 1 SYSTEM_ERROR.
 *   21 GET_ALL_TOPIC_CONFIG: body = {"topicConfigTable":{...},"dataVersion":{...}}.
 *   215 DELETE_TOPIC_IN_BROKER: removes the topic config, its consumer offsets, its consume
 *      queues (store.deleteTopics) and its put/get counters. System topics are refused.
 *   305 GET_SYSTEM_TOPIC_LIST_FROM_BROKER: body TopicList {"topicList":[the named system topics]}.
 *   351 GET_TOPIC_CONFIG: header topic → body TopicConfigAndQueueMapping without mappingDetail
 *      (the broker's table registers static-topic/static-topic-admin-handlers.ts's lo-aware 351
 *      over this one);
 *      unknown → 17 TOPIC_NOT_EXIST "No topic in this broker. topic: <topic>".
 *   306 CLEAN_EXPIRED_CONSUMEQUEUE: drops the ConsumeQueues of non-system topics whose every
 *      queue ends below the CommitLog min offset (Apache checks queue by queue; tsmq's store
 *      deletes consume queues per topic, so a topic with one live queue keeps all of them).
 *   316 CLEAN_UNUSED_TOPIC (mqadmin `cleanUnusedTopic`): drops the ConsumeQueues of every topic
 *      that has none in the topic config table (a topic deleted while the broker was down, or
 *      created by a store copied from elsewhere), system topics excepted (Apache
 *      `DefaultMessageStore.cleanUnusedTopic(topicConfigTable.keySet())`). Answers SUCCESS.
 * Changes are on disk before the answer (a failed write answers 1 SYSTEM_ERROR naming it; the
 * change stays in memory and is written again with the next change or retry) and trigger a
 * nameserver re-registration (topic change listener). 17 and 18 answer after that registration
 * (the increment with the created/updated topics) is done, so a route query right after
 * `mqadmin updateTopic` finds the topic, as with Apache, whose registerIncrementBrokerData waits
 * for every nameserver (up to registerBrokerTimeoutMills, 24 s). tsmq waits at most
 * TOPIC_REGISTRATION_ANSWER_WAIT_MS (3 s; the admin client's own timeout is 5 s) and then answers
 * SUCCESS anyway (the registration goes on; a nameserver that does not answer must not fail the
 * admin call).
 */
import type { RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getOptionalBoolean, getOptionalInt, getOptionalString, getString } from '../../remoting/headers/header-fields.js';
import { isSystemTopic, systemTopicNames, validateTopic } from '../../common/message/topic-validator.js';
import type { BrokerContext } from '../broker-context.js';
import { newTopicConfig, type TopicConfig } from '../topic/topic-config.js';
import { checkTopicQueueNums } from '../topic/topic-queue-limit.js';
import { alterTopicAttributes, parseAttributeChanges, TopicAttributeError } from '../topic/topic-attributes.js';

/** Longest UPDATE_AND_CREATE_TOPIC(_LIST) waits for the nameserver registration of its topics before answering (ms). */
export const TOPIC_REGISTRATION_ANSWER_WAIT_MS = 3000;

export class TopicAdminProcessors {
  constructor(private readonly ctx: BrokerContext) {}

  readonly updateAndCreateTopic: RequestHandler = (rc) => this.processUpdateAndCreate(rc);
  readonly updateAndCreateTopicList: RequestHandler = (rc) => this.processUpdateAndCreateList(rc);
  readonly getAllTopicConfig: RequestHandler = (rc) => this.processGetAll(rc);
  readonly deleteTopicInBroker: RequestHandler = (rc) => this.processDelete(rc);

  readonly getSystemTopicList: RequestHandler = ({ request }) =>
    createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(JSON.stringify({ topicList: [...systemTopicNames()] }), 'utf8'));

  readonly getTopicConfig: RequestHandler = ({ request }) => {
    const topic = getString(request.extFields, 'topic');
    const tc = this.ctx.topicConfigManager.selectTopicConfig(topic);
    if (!tc) return createResponseCommand(request, ResponseCode.TOPIC_NOT_EXIST, `No topic in this broker. topic: ${topic}`);
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(JSON.stringify(tc), 'utf8'));
  };

  readonly cleanExpiredConsumeQueue: RequestHandler = async ({ channel, request }) => {
    const store = this.ctx.store;
    const minPhy = store.getMinPhyOffset();
    const expired: string[] = [];
    for (const [topic, queues] of store.getTopicQueueTable()) {
      if (isSystemTopic(topic) || queues.size === 0) continue;
      let allBelow = true;
      for (const [queueId, max] of queues) {
        const last = max > 0 ? store.getCommitLogOffsetInQueue(topic, queueId, max - 1) : -1;
        if (last < 0 || last >= minPhy) {
          allBelow = false;
          break;
        }
      }
      if (allBelow) expired.push(topic);
    }
    if (expired.length > 0) await store.deleteTopics(expired);
    this.ctx.logger.info(`CLEAN_EXPIRED_CONSUMEQUEUE from ${channel.remoteAddress}: ${expired.length ? expired.join(', ') : 'nothing expired'}`);
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  };

  readonly cleanUnusedTopic: RequestHandler = async ({ channel, request }) => {
    const store = this.ctx.store;
    const unused = [...store.getTopicQueueTable().keys()].filter((t) => !isSystemTopic(t) && this.ctx.topicConfigManager.selectTopicConfig(t) === undefined);
    if (unused.length > 0) await store.deleteTopics(unused);
    this.ctx.logger.info(`CLEAN_UNUSED_TOPIC from ${channel.remoteAddress}: ${unused.length ? unused.join(', ') : 'no unused topic'}`);
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  };

  async processUpdateAndCreate({ channel, request }: RequestContext): Promise<RemotingCommand> {
    const ext = request.extFields;
    const topic = getString(ext, 'topic');
    const def = this.ctx.config.defaultTopicQueueNums;
    const filter = getOptionalString(ext, 'topicFilterType');
    const tc = newTopicConfig(topic, {
      readQueueNums: getOptionalInt(ext, 'readQueueNums') ?? def,
      writeQueueNums: getOptionalInt(ext, 'writeQueueNums') ?? def,
      perm: getOptionalInt(ext, 'perm') ?? 6,
      topicFilterType: filter === 'MULTI_TAG' ? 'MULTI_TAG' : 'SINGLE_TAG',
      topicSysFlag: getOptionalInt(ext, 'topicSysFlag') ?? 0,
      order: getOptionalBoolean(ext, 'order') ?? false,
    });
    let refusal: string | null;
    try {
      refusal = this.refuseConfig(tc, parseAttributeChanges(getOptionalString(ext, 'attributes')));
    } catch (e) {
      if (!(e instanceof TopicAttributeError)) throw e;
      refusal = e.message;
    }
    if (refusal) {
      this.ctx.logger.warn(`UPDATE_AND_CREATE_TOPIC from ${channel.remoteAddress} refused: ${refusal}`);
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, refusal);
    }
    this.ctx.logger.info(`UPDATE_AND_CREATE_TOPIC ${topic} from ${channel.remoteAddress}: ${tc.readQueueNums}/${tc.writeQueueNums} perm ${tc.perm}`);
    this.ctx.topicConfigManager.updateTopicConfig(tc);
    const failure = await this.durable(topic);
    if (failure) return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `topic ${topic} is updated in memory but its config could not be written: ${failure}`);
    await this.registered([topic]);
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  }

  /** Waits for the nameserver registration of the topics' latest changes, at most TOPIC_REGISTRATION_ANSWER_WAIT_MS. */
  private async registered(topics: string[]): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), TOPIC_REGISTRATION_ANSWER_WAIT_MS)));
    const all = Promise.all(topics.map((t) => this.ctx.topicConfigManager.registered(t))).then(() => true);
    const done = await Promise.race([all, bound]);
    clearTimeout(timer);
    if (!done) this.ctx.logger.warn(`nameserver registration of ${topics.join(', ')} not done after ${TOPIC_REGISTRATION_ANSWER_WAIT_MS} ms: answering anyway`);
  }

  async processUpdateAndCreateList({ channel, request }: RequestContext): Promise<RemotingCommand> {
    let entries: Array<{ config: TopicConfig; attributeChanges: Record<string, string> }>;
    try {
      entries = parseTopicConfigList(request.body, this.ctx.config.defaultTopicQueueNums);
    } catch (e) {
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `bad topic config list body: ${(e as Error).message}`);
    }
    const list = entries.map((e) => e.config);
    for (const { config: tc, attributeChanges } of entries) {
      let refusal: string | null;
      try {
        refusal = this.refuseConfig(tc, attributeChanges);
      } catch (e) {
        if (!(e instanceof TopicAttributeError)) throw e;
        refusal = `topic ${tc.topicName}: ${e.message}`;
      }
      if (refusal) {
        this.ctx.logger.warn(`UPDATE_AND_CREATE_TOPIC_LIST from ${channel.remoteAddress} refused (nothing changed): ${refusal}`);
        return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, refusal);
      }
    }
    this.ctx.logger.info(`UPDATE_AND_CREATE_TOPIC_LIST from ${channel.remoteAddress}: ${list.map((tc) => `${tc.topicName} ${tc.readQueueNums}/${tc.writeQueueNums} perm ${tc.perm}`).join(', ')}`);
    for (const tc of list) this.ctx.topicConfigManager.updateTopicConfig(tc);
    for (const tc of list) {
      const failure = await this.durable(tc.topicName);
      if (failure) return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `topic ${tc.topicName} is updated in memory but its config could not be written: ${failure}`);
    }
    await this.registered(list.map((tc) => tc.topicName));
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  }

  /**
   * Why a topic config from UPDATE_AND_CREATE_TOPIC(_LIST) is refused (name, numbers, perm), or
   * null; sets `tc.attributes` to the topic's current attributes with `attributeChanges` applied.
   * @throws TopicAttributeError for refused attribute changes.
   */
  private refuseConfig(tc: TopicConfig, attributeChanges: Record<string, string>): string | null {
    const refusal = this.refuse(tc.topicName);
    if (refusal) return refusal;
    if (tc.readQueueNums < 0 || tc.writeQueueNums < 0 || tc.perm < 0 || tc.perm > 7) return `invalid queue numbers or perm for topic ${tc.topicName}`;
    const tooMany = checkTopicQueueNums(tc.topicName, tc.readQueueNums, tc.writeQueueNums, this.ctx.config.maxTopicQueueNums);
    if (tooMany) return tooMany;
    const existing = this.ctx.topicConfigManager.selectTopicConfig(tc.topicName);
    tc.attributes = alterTopicAttributes(!existing, existing?.attributes ?? {}, attributeChanges);
    return null;
  }

  processGetAll({ request }: RequestContext): RemotingCommand {
    const body = Buffer.from(JSON.stringify(this.ctx.topicConfigManager.buildSerializeWrapper()), 'utf8');
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, body);
  }

  async processDelete({ channel, request }: RequestContext): Promise<RemotingCommand> {
    const topic = getString(request.extFields, 'topic');
    if (topic.trim() === '') return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, 'The specified topic is blank.');
    if (isSystemTopic(topic)) return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `The topic[${topic}] is conflict with system topic.`);
    this.ctx.logger.info(`DELETE_TOPIC_IN_BROKER ${topic} from ${channel.remoteAddress}`);
    this.ctx.topicConfigManager.deleteTopicConfig(topic);
    this.ctx.consumerOffsetManager.cleanOffsetByTopic(topic);
    const failure = await this.durable(topic);
    await this.ctx.store.deleteTopics([topic]);
    this.ctx.brokerStats.onTopicDeleted(topic);
    if (failure) return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `topic ${topic} is deleted in memory but topics.json could not be written: ${failure}`);
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  }

  /** Waits until the topic's latest change is on disk; the write's error message, or null. */
  private async durable(topic: string): Promise<string | null> {
    try {
      await this.ctx.topicConfigManager.durable(topic);
      return null;
    } catch (e) {
      return (e as Error).message;
    }
  }

  private refuse(topic: string): string | null {
    const problem = validateTopic(topic);
    if (problem) return `illegal topic: ${problem}`;
    if (topic === this.ctx.config.brokerClusterName) return `The specified topic[${topic}] is conflicted with cluster name.`;
    if (isSystemTopic(topic)) return `The topic[${topic}] is conflict with system topic.`;
    return null;
  }
}

/**
 * The topics of an UPDATE_AND_CREATE_TOPIC_LIST body ({"topicConfigList":[TopicConfig, …]});
 * missing queue numbers default to `defaultQueueNums`, perm to 6; each entry's `attributes` map
 * is returned apart as the requested changes (keys with their +/- prefix).
 * @throws Error for a body that is not such a JSON object (the message says what is wrong).
 */
export function parseTopicConfigList(body: Buffer | null, defaultQueueNums: number): Array<{ config: TopicConfig; attributeChanges: Record<string, string> }> {
  const doc: unknown = JSON.parse((body ?? Buffer.alloc(0)).toString('utf8'));
  const list = typeof doc === 'object' && doc !== null ? (doc as { topicConfigList?: unknown }).topicConfigList : undefined;
  if (!Array.isArray(list)) throw new Error('topicConfigList is not a list');
  return list.map((raw: unknown, i) => {
    if (typeof raw !== 'object' || raw === null) throw new Error(`topicConfigList[${i}] is not an object`);
    const o = raw as Record<string, unknown>;
    if (typeof o.topicName !== 'string') throw new Error(`topicConfigList[${i}].topicName is not a string`);
    const int = (k: string, def: number): number => {
      const v = o[k];
      if (v === undefined || v === null) return def;
      if (typeof v !== 'number' || !Number.isInteger(v)) throw new Error(`topicConfigList[${i}].${k} is not an integer`);
      return v;
    };
    const attributeChanges: Record<string, string> = {};
    if (o.attributes !== undefined && o.attributes !== null) {
      if (typeof o.attributes !== 'object' || Array.isArray(o.attributes)) throw new Error(`topicConfigList[${i}].attributes is not an object`);
      for (const [k, v] of Object.entries(o.attributes as Record<string, unknown>)) attributeChanges[k] = String(v);
    }
    const config = newTopicConfig(o.topicName, {
      readQueueNums: int('readQueueNums', defaultQueueNums),
      writeQueueNums: int('writeQueueNums', defaultQueueNums),
      perm: int('perm', 6),
      topicFilterType: o.topicFilterType === 'MULTI_TAG' ? 'MULTI_TAG' : 'SINGLE_TAG',
      topicSysFlag: int('topicSysFlag', 0),
      order: o.order === true,
    });
    return { config, attributeChanges };
  });
}
