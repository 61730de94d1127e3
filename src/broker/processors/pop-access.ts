/**
 * The checks Apache's POP_MESSAGE, PEEK_MESSAGE and NOTIFICATION processors run before touching a
 * queue (5.x PopMessageProcessor / PeekMessageProcessor / NotificationProcessor), in their order:
 *
 *   broker not readable                    → NO_PERMISSION (16)
 *   topic missing                          → TOPIC_NOT_EXIST (17)
 *   topic not readable                     → NO_PERMISSION (16)
 *   queueId ≥ the topic's readQueueNums    → INVALID_PARAMETER (29)   (queueId < 0 = every queue)
 *   subscription group missing             → SUBSCRIPTION_GROUP_NOT_EXIST (26)
 *   group may not consume                  → NO_PERMISSION (16)
 * Remarks are Apache's wording.
 */
import { ResponseCode } from '../../remoting/codes/response-code.js';
import type { SubscriptionGroupConfig } from '../subscription/subscription-group-manager.js';
import type { TopicConfig } from '../topic/topic-config.js';
import { PermName } from '../broker-config.js';
import type { BrokerContext } from '../broker-context.js';

export interface PopTarget {
  topicConfig: TopicConfig;
  groupConfig: SubscriptionGroupConfig;
}

export interface AccessRefusal {
  code: number;
  remark: string;
}

/** `what` names the operation in remarks ("pop", "peeking"). */
export function checkPopTarget(ctx: BrokerContext, what: string, group: string, topic: string, queueId: number, remoteAddress: string): PopTarget | AccessRefusal {
  const ip = ctx.config.brokerIP1;
  if (!PermName.isReadable(ctx.config.brokerPermission)) return { code: ResponseCode.NO_PERMISSION, remark: `the broker[${ip}] ${what} message is forbidden` };
  const tc = ctx.topicConfigManager.selectTopicConfig(topic);
  if (!tc) return { code: ResponseCode.TOPIC_NOT_EXIST, remark: `topic[${topic}] not exist, apply first please!` };
  if (!PermName.isReadable(tc.perm)) return { code: ResponseCode.NO_PERMISSION, remark: `the topic[${topic}] peeking message is forbidden` };
  if (queueId >= tc.readQueueNums) {
    return {
      code: ResponseCode.INVALID_PARAMETER,
      remark: `queueId[${queueId}] is illegal, topic:[${topic}] topicConfig.readQueueNums:[${tc.readQueueNums}] consumer:[${remoteAddress}]`,
    };
  }
  const sgc = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(group);
  if (!sgc) return { code: ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, remark: `subscription group [${group}] does not exist` };
  if (!sgc.consumeEnable) return { code: ResponseCode.NO_PERMISSION, remark: `subscription group no permission, ${group}` };
  return { topicConfig: tc, groupConfig: sgc };
}

export function isRefusal(x: PopTarget | AccessRefusal): x is AccessRefusal {
  return 'code' in x;
}
