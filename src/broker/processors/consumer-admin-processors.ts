/**
 * Who consumes what, and group offset copies (mirror Apache `AdminBrokerProcessor`):
 *
 *   300 QUERY_TOPIC_CONSUME_BY_WHO  header topic → body GroupList {"groupList":[…]}: groups
 *       whose live clients subscribe to the topic plus groups with committed offsets on it.
 *   343 QUERY_TOPICS_BY_CONSUMER    header group → body TopicList {"topicList":[…],"brokerAddr"}:
 *       topics the group has committed offsets for.
 *   314 CLONE_GROUP_OFFSET  header srcGroup, destGroup, topic (blank: every topic of srcGroup),
 *       offline. Copies srcGroup's committed offsets to destGroup for each topic that has a
 *       topic config and, unless offline, that srcGroup's live clients subscribe to (when they
 *       subscribe to anything). Apache copies `topic` from the header even when it is blank
 *       (so a blank topic copies nothing, a known bug); tsmq copies each topic found.
 */
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getOptionalBoolean, getOptionalString, getString } from '../../remoting/headers/header-fields.js';
import type { BrokerContext } from '../broker-context.js';

export class ConsumerAdminProcessors {
  constructor(private readonly ctx: BrokerContext) {}

  /** Groups consuming `topic`: live subscribers first (sorted), then groups with offsets. */
  groupsConsuming(topic: string): string[] {
    const cm = this.ctx.consumerManager;
    const live = cm.groupNames().filter((g) => cm.findSubscriptionData(g, topic) !== undefined);
    return [...new Set([...live.sort(), ...this.ctx.consumerOffsetManager.groupsOfTopic(topic).sort()])];
  }

  readonly queryTopicConsumeByWho: RequestHandler = ({ request }) => {
    const topic = getString(request.extFields, 'topic');
    const body = JSON.stringify({ groupList: this.groupsConsuming(topic) });
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(body, 'utf8'));
  };

  readonly queryTopicsByConsumer: RequestHandler = ({ request }) => {
    const group = getString(request.extFields, 'group');
    const body = JSON.stringify({ brokerAddr: this.ctx.brokerAddr, topicList: this.ctx.consumerOffsetManager.topicsOfGroup(group) });
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(body, 'utf8'));
  };

  readonly cloneGroupOffset: RequestHandler = ({ channel, request }) => {
    const ext = request.extFields;
    const src = getString(ext, 'srcGroup');
    const dest = getString(ext, 'destGroup');
    const only = getOptionalString(ext, 'topic')?.trim();
    const offline = getOptionalBoolean(ext, 'offline') ?? false;
    const topics = only ? [only] : this.ctx.consumerOffsetManager.topicsOfGroup(src);
    const live = this.ctx.consumerManager.getConsumerGroupInfo(src);
    const cloned: string[] = [];
    for (const topic of topics) {
      if (!this.ctx.topicConfigManager.selectTopicConfig(topic)) continue;
      if (!offline && live && live.subscriptions.size > 0 && !live.findSubscriptionData(topic)) continue;
      if (this.ctx.consumerOffsetManager.cloneOffset(src, dest, topic)) cloned.push(topic);
    }
    this.ctx.logger.info(`CLONE_GROUP_OFFSET ${src} -> ${dest} from ${channel.remoteAddress}: ${cloned.join(', ') || 'nothing'}`);
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  };
}
