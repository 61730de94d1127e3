/**
 * Timing of topic and subscription group creation for the metrics
 * rocketmq_topic_create_execution_time_milliseconds{invocation_status,is_system} and
 * rocketmq_consumer_group_create_execution_time_milliseconds{invocation_status}, as Apache
 * 5.3.3's AdminBrokerProcessor records them: ms from the request to its answer (config durable),
 * "success" when it answered SUCCESS, else "failure"; is_system of UPDATE_AND_CREATE_TOPIC is
 * TopicValidator.isSystemTopic(topic), of UPDATE_AND_CREATE_TOPIC_LIST that of Apache's
 * "<name>;<name>;" text of the list (so true only when it begins with an rmq_sys_ name).
 * A handler that throws is not timed (the dispatch answers SYSTEM_ERROR). Without a stats
 * listener the handler runs untouched.
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getString } from '../../remoting/headers/header-fields.js';
import { isSystemTopic } from '../../common/message/topic-validator.js';
import type { BrokerStatsManager } from '../stats/broker-stats-manager.js';

/** Which request a create handler serves. */
export type CreateRequest = 'topic' | 'topicList' | 'group';

/** `handler`, timed for the stats listener of `stats` when one is set. */
export function timedCreate(stats: BrokerStatsManager, kind: CreateRequest, handler: RequestHandler): RequestHandler {
  return async (rc) => {
    const listener = stats.listener;
    if (!listener?.onCreateExecuted) return handler(rc);
    const t0 = performance.now();
    const response = await handler(rc);
    const success = response?.code === ResponseCode.SUCCESS;
    listener.onCreateExecuted(kind === 'group' ? 'consumerGroup' : 'topic', success, performance.now() - t0, kind === 'group' ? false : isSystemTopic(topicText(kind, rc.request)));
    return response;
  };
}

/** The topic name (or Apache's joined list text) of a create request; "" when unreadable. */
function topicText(kind: 'topic' | 'topicList', request: Parameters<RequestHandler>[0]['request']): string {
  try {
    if (kind === 'topic') return getString(request.extFields, 'topic');
    const doc = JSON.parse((request.body ?? Buffer.alloc(0)).toString('utf8')) as { topicConfigList?: Array<{ topicName?: string }> };
    return (doc.topicConfigList ?? []).map((tc) => `${tc.topicName};`).join('');
  } catch {
    return '';
  }
}
