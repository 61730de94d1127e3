/**
 * Static topic administration (Apache 5 `AdminBrokerProcessor`):
 *
 *   513 UPDATE_AND_CREATE_STATIC_TOPIC (mqadmin updateStaticTopic / remappingStaticTopic): header
 *     CreateTopicRequestHeader (topic, readQueueNums, writeQueueNums, perm, topicFilterType,
 *     topicSysFlag, force); body TopicQueueMappingDetail JSON (fastjson, integer map keys may be
 *     bare). The mapping is checked and merged (topic-queue-mapping-detail.ts rules) before
 *     anything changes, then stored (topicQueueMapping.json) and the topic config replaced
 *     (topics.json, which also re-registers with the nameservers, mapping included). An illegal
 *     or system topic → 29 INVALID_PARAMETER; an unreadable body or a refused mapping → 1
 *     SYSTEM_ERROR with the reason (nothing changed).
 *   351 GET_TOPIC_CONFIG: header topic, lo → body TopicConfigAndQueueMapping: the TopicConfig
 *     JSON plus `mappingDetail` when lo=true and the topic is static here;
 *     unknown → 17 TOPIC_NOT_EXIST "No topic in this broker. topic: <topic>".
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getOptionalBoolean, getOptionalInt, getOptionalString, getString } from '../../remoting/headers/header-fields.js';
import type { Logger } from '../../common/logging/logger.js';
import { isSystemTopic, validateTopic } from '../../common/message/topic-validator.js';
import { parseLenientJson } from '../config-file/lenient-json.js';
import { newTopicConfig } from '../topic/topic-config.js';
import type { TopicConfigManager } from '../topic/topic-config-manager.js';
import { decodeMappingDetail, encodeMappingDetail } from './topic-queue-mapping-detail.js';
import type { TopicQueueMappingManager } from './topic-queue-mapping-manager.js';

export interface StaticTopicAdminDeps {
  topics: TopicConfigManager;
  mappings: TopicQueueMappingManager;
  logger: Logger;
}

/** Request code → handler for 513 and 351 (replaces the plain 351). */
export function buildStaticTopicAdminHandlers(deps: StaticTopicAdminDeps): Map<number, RequestHandler> {
  const { topics, mappings, logger } = deps;
  const handlers = new Map<number, RequestHandler>();

  handlers.set(RequestCode.UPDATE_AND_CREATE_STATIC_TOPIC, async ({ channel, request }) => {
    const ext = request.extFields ?? {};
    const topic = getString(ext, 'topic');
    const problem = validateTopic(topic);
    if (problem) return createResponseCommand(request, ResponseCode.INVALID_PARAMETER, problem);
    if (isSystemTopic(topic)) return createResponseCommand(request, ResponseCode.INVALID_PARAMETER, `The topic[${topic}] is conflict with system topic.`);
    let detail;
    try {
      if (!request.body || request.body.length === 0) throw new Error('the request has no TopicQueueMappingDetail body');
      detail = decodeMappingDetail(parseLenientJson(request.body.toString('utf8')));
      if (detail.topic !== topic) throw new Error(`the mapping detail is for topic ${detail.topic}, the header names ${topic}`);
    } catch (e) {
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `bad static topic mapping: ${(e as Error).message}`);
    }
    const filter = getOptionalString(ext, 'topicFilterType');
    const tc = newTopicConfig(topic, {
      readQueueNums: getOptionalInt(ext, 'readQueueNums') ?? 0,
      writeQueueNums: getOptionalInt(ext, 'writeQueueNums') ?? 0,
      perm: getOptionalInt(ext, 'perm') ?? 6,
      topicFilterType: filter === 'MULTI_TAG' ? 'MULTI_TAG' : 'SINGLE_TAG',
      topicSysFlag: getOptionalInt(ext, 'topicSysFlag') ?? 0,
    });
    const force = getOptionalBoolean(ext, 'force') ?? false;
    try {
      await mappings.update(detail, force);
    } catch (e) {
      logger.warn(`UPDATE_AND_CREATE_STATIC_TOPIC ${topic} from ${channel.remoteAddress} refused: ${(e as Error).message}`);
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, (e as Error).message);
    }
    logger.info(`UPDATE_AND_CREATE_STATIC_TOPIC ${topic} from ${channel.remoteAddress}: ${tc.readQueueNums}/${tc.writeQueueNums} perm ${tc.perm}, epoch ${detail.epoch}, logic queues ${[...detail.hostedQueues.keys()].join(',')}${force ? ' (force)' : ''}`);
    topics.updateTopicConfig(tc);
    try {
      await topics.durable(topic);
    } catch (e) {
      return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, `topic ${topic} is updated in memory but its config could not be written: ${(e as Error).message}`);
    }
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  });

  handlers.set(RequestCode.GET_TOPIC_CONFIG, ({ request }) => {
    const ext = request.extFields ?? {};
    const topic = getString(ext, 'topic');
    const tc = topics.selectTopicConfig(topic);
    if (!tc) return createResponseCommand(request, ResponseCode.TOPIC_NOT_EXIST, `No topic in this broker. topic: ${topic}`);
    const detail = getOptionalBoolean(ext, 'lo') === true ? mappings.get(topic) : undefined;
    const body = detail ? { ...tc, mappingDetail: encodeMappingDetail(detail) } : tc;
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(JSON.stringify(body), 'utf8'));
  });

  return handlers;
}
