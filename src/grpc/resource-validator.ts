/**
 * Topic and consumer-group checks of the gRPC front, applied before any lookup or write, the way
 * Apache's proxy validates every RPC that names a topic or a group:
 *
 *   topic   the remoting rules (common/message/topic-validator.ts: not blank, `[%|a-zA-Z0-9_-]`,
 *           at most 127 characters, 255 for %RETRY%), then no system topic at all (TBW102,
 *           SCHEDULE_TOPIC_XXXX, the transaction topics, SELF_TEST_TOPIC, OFFSET_MOVED_EVENT,
 *           BenchmarkTest, RMQ_SYS_TRACE_TOPIC, CHECKPOINT_TOPIC, any `rmq_sys_` topic)
 *           → ILLEGAL_TOPIC (40002). Remoting refuses only sends to a subset of these (16
 *           NO_PERMISSION); gRPC clients have no business with any of them.
 *   group   the remoting rules (not blank, `[%|a-zA-Z0-9_-]`, at most 120 characters), then no
 *           broker-internal `CID_RMQ_SYS_` group → ILLEGAL_CONSUMER_GROUP (40003).
 *
 * Used by QueryRoute, QueryAssignment, SendMessage, ReceiveMessage, AckMessage,
 * ChangeInvisibleDuration, ForwardMessageToDeadLetterQueue, EndTransaction, the offset RPCs,
 * Heartbeat (group) and the Telemetry settings (publishing topics, subscription group).
 */
import { isSysConsumerGroup, isSystemTopic, validateGroup, validateTopic } from '../common/message/topic-validator.js';
import { Code, status, type Status } from './proto/v2-types.js';

/** The status for the reply when `topic` may not be used by a gRPC client, else null. */
export function checkTopicName(topic: string | undefined | null): Status | null {
  const name = topic ?? '';
  const problem = validateTopic(name);
  if (problem) return status(Code.ILLEGAL_TOPIC, problem);
  if (isSystemTopic(name)) return status(Code.ILLEGAL_TOPIC, systemTopicMessage(name));
  return null;
}

/** The status for the reply when `group` may not be used by a gRPC client, else null. */
export function checkGroupName(group: string | undefined | null): Status | null {
  const name = group ?? '';
  const problem = validateGroup(name);
  if (problem) return status(Code.ILLEGAL_CONSUMER_GROUP, problem);
  if (isSysConsumerGroup(name)) return status(Code.ILLEGAL_CONSUMER_GROUP, `group ${name} is a system group and cannot be used by clients`);
  return null;
}

/** Status message for a system topic. */
export function systemTopicMessage(topic: string): string {
  return `topic ${topic} is a system topic and cannot be accessed by clients`;
}

/** The first failing check of a topic and a group (topic first), else null. */
export function checkTopicAndGroup(topic: string | undefined | null, group: string | undefined | null): Status | null {
  return checkTopicName(topic) ?? checkGroupName(group);
}
