/**
 * Which gRPC message types a topic takes, from its `message.type` attribute
 * (broker/topic/topic-attributes.ts; set with mqadmin `updateTopic -a +message.type=FIFO`):
 *
 *   NORMAL | FIFO | DELAY | TRANSACTION  only that type: QueryRoute advertises it alone in
 *                                        accept_message_types (rocketmq-client-java then refuses
 *                                        another type before sending) and SendMessage refuses
 *                                        another type (below)
 *   MIXED                                all four
 *   absent or UNSPECIFIED                all four. **Difference from Apache:** its proxy treats a
 *                                        topic without the attribute as NORMAL (FIFO, DELAY and
 *                                        transactional sends to such a topic fail); tsmq keeps
 *                                        accepting them, so topics created by a first send or by
 *                                        tools that set no attribute work for every client.
 *
 * A refused send answers MESSAGE_PROPERTY_CONFLICT_WITH_TYPE with Apache's proxy text
 * "TopicMessageType validate failed, the expected type is <topic type>, but actual type is <type>".
 */
import type { TopicConfig } from '../broker/topic/topic-config.js';
import { MESSAGE_TYPE_ATTRIBUTE } from '../broker/topic/topic-attributes.js';
import type { MessageKind } from './message-converter.js';

export const ALL_MESSAGE_TYPES: readonly MessageKind[] = ['NORMAL', 'FIFO', 'DELAY', 'TRANSACTION'];

/** The message types `tc` accepts (accept_message_types of its queues). */
export function acceptedMessageTypes(tc: TopicConfig): readonly MessageKind[] {
  const t = tc.attributes[MESSAGE_TYPE_ATTRIBUTE];
  return (ALL_MESSAGE_TYPES as readonly string[]).includes(t ?? '') ? [t as MessageKind] : ALL_MESSAGE_TYPES;
}

/** Why a message of `kind` may not go to `tc`, or null. */
export function messageTypeRefusal(tc: TopicConfig, kind: MessageKind): string | null {
  const accepted = acceptedMessageTypes(tc);
  if (accepted.includes(kind)) return null;
  return `TopicMessageType validate failed, the expected type is ${accepted[0]}, but actual type is ${kind}`;
}
