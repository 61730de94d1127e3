/**
 * QueryRoute, QueryAssignment, Heartbeat, NotifyClientTermination (spec B2-B4).
 *
 * QueryRoute: one MessageQueue per queue id of the topic, permission from the queue id being
 * below readQueueNums / writeQueueNums and the topic perm; broker = this broker, endpoints = the
 * advertised gRPC endpoints; accept_message_types from the topic's message.type attribute
 * (topic-message-type.ts: its type alone, or all four when it has none or MIXED). An unknown
 * topic is auto-created from TBW102 when autoCreateTopicEnable is on (else TOPIC_NOT_FOUND).
 * QueryAssignment: one assignment per readable broker with queue id -1, meaning "all queues"
 * (pop consumption spreads over them, as Apache's proxy does).
 * Topics and groups are checked first (resource-validator.ts): system topics and illegal names
 * → ILLEGAL_TOPIC, illegal or system groups → ILLEGAL_CONSUMER_GROUP.
 */
import type * as grpc from '@grpc/grpc-js';
import { TopicValidator } from '../common/message/topic-validator.js';
import { PermName } from '../broker/broker-config.js';
import type { TopicConfig } from '../broker/topic/topic-config.js';
import { checkGroupName, checkTopicAndGroup, checkTopicName } from './resource-validator.js';
import { acceptedMessageTypes } from './topic-message-type.js';
import { advertisedEndpoints, clientIdOf, unary, type GrpcServices, type StatusOnly } from './grpc-services.js';
import { Code, OK_STATUS, status, type Endpoints, type MessageQueue, type Resource, type Status } from './proto/v2-types.js';


/**
 * The topic's config, auto-created like a first send when allowed; or an error status
 * (ILLEGAL_TOPIC for an illegal name or a system topic, resource-validator.ts; TOPIC_NOT_FOUND).
 */
export function findTopic(s: GrpcServices, topic: string | undefined, create: boolean): TopicConfig | Status {
  const name = topic ?? '';
  const refused = checkTopicName(name);
  if (refused) return refused;
  const tcm = s.ctx.topicConfigManager;
  const existing = tcm.selectTopicConfig(name);
  if (existing) return existing;
  if (create && s.ctx.config.autoCreateTopicEnable) {
    const tc = tcm.createTopicInSendMessageMethod(name, TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC, s.ctx.config.defaultTopicQueueNums, 0);
    if (tc) return tc;
  }
  return status(Code.TOPIC_NOT_FOUND, `topic ${name} does not exist`);
}

export function isStatus(v: unknown): v is Status {
  return typeof v === 'object' && v !== null && 'code' in v && 'message' in v && !('topicName' in v);
}

function permissionOf(tc: TopicConfig, queueId: number): string {
  const r = queueId < tc.readQueueNums && PermName.isReadable(tc.perm);
  const w = queueId < tc.writeQueueNums && PermName.isWriteable(tc.perm);
  return r && w ? 'READ_WRITE' : r ? 'READ' : w ? 'WRITE' : 'NONE';
}

export function messageQueue(s: GrpcServices, topic: Resource, tc: TopicConfig, id: number, permission: string, endpoints: Endpoints): MessageQueue {
  return {
    topic: { name: topic.name, resource_namespace: topic.resource_namespace ?? '' },
    id,
    permission,
    broker: { name: s.ctx.config.brokerName, id: 0, endpoints },
    accept_message_types: [...acceptedMessageTypes(tc)],
  };
}

interface QueryRouteRequest {
  topic: Resource | null;
  endpoints: Endpoints | null;
}

interface QueryAssignmentRequest {
  topic: Resource | null;
  group: Resource | null;
  endpoints: Endpoints | null;
}

interface HeartbeatRequest {
  group?: Resource | null;
  client_type: string;
}

export function routeHandlers(s: GrpcServices): Record<string, grpc.UntypedHandleCall> {
  return {
    QueryRoute: unary<QueryRouteRequest, { status: Status; message_queues: MessageQueue[] }>(s, 'QueryRoute', (req, call) => {
      s.sessions.touch(clientIdOf(call));
      const tc = findTopic(s, req.topic?.name, true);
      if (isStatus(tc)) return { status: tc, message_queues: [] };
      const endpoints = advertisedEndpoints(s, req.endpoints);
      const n = Math.max(tc.readQueueNums, tc.writeQueueNums);
      const queues: MessageQueue[] = [];
      for (let id = 0; id < n; id++) queues.push(messageQueue(s, req.topic!, tc, id, permissionOf(tc, id), endpoints));
      return { status: OK_STATUS, message_queues: queues };
    }),

    QueryAssignment: unary<QueryAssignmentRequest, { status: Status; assignments: Array<{ message_queue: MessageQueue }> }>(s, 'QueryAssignment', (req, call) => {
      s.sessions.touch(clientIdOf(call));
      const refused = checkTopicAndGroup(req.topic?.name, req.group?.name);
      if (refused) return { status: refused, assignments: [] };
      const tc = findTopic(s, req.topic?.name, false);
      if (isStatus(tc)) return { status: tc, assignments: [] };
      if (!PermName.isReadable(tc.perm) || tc.readQueueNums <= 0) return { status: OK_STATUS, assignments: [] };
      const mq = messageQueue(s, req.topic!, tc, -1, PermName.isWriteable(tc.perm) ? 'READ_WRITE' : 'READ', advertisedEndpoints(s, req.endpoints));
      return { status: OK_STATUS, assignments: [{ message_queue: mq }] };
    }),

    Heartbeat: unary<HeartbeatRequest, StatusOnly>(s, 'Heartbeat', (req, call) => {
      const clientId = clientIdOf(call);
      if (clientId === '') return { status: status(Code.CLIENT_ID_REQUIRED, 'x-mq-client-id metadata is missing') };
      const session = s.sessions.touch(clientId);
      if (req.client_type && req.client_type !== 'CLIENT_TYPE_UNSPECIFIED') session.clientType = req.client_type;
      const group = req.group?.name;
      if (group) {
        const badGroup = checkGroupName(group);
        if (badGroup) return { status: badGroup };
        session.group = group;
        if (!s.ctx.subscriptionGroupManager.findSubscriptionGroupConfig(group)) {
          return { status: status(Code.CONSUMER_GROUP_NOT_FOUND, `consumer group ${group} does not exist`) };
        }
        s.consumers.register(session, call.getPeer());
      }
      return { status: OK_STATUS };
    }),

    NotifyClientTermination: unary<{ group?: Resource | null }, StatusOnly>(s, 'NotifyClientTermination', (_req, call) => {
      s.sessions.remove(clientIdOf(call));
      return { status: OK_STATUS };
    }),
  };
}
