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
 * With a nameserver, both also list the topic's queues on the OTHER brokers of the cluster, each
 * with that broker's endpoint `<its brokerIP1>:<this gRPC port>` (cluster-route.ts, Apache's
 * LOCAL-mode proxy); the client then sends to and receives from each broker's own front. A topic
 * only other brokers hold is answered with their queues (no local auto-creation then).
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
import type { RemoteBrokerQueues } from './cluster-route.js';
import { ALL_MESSAGE_TYPES } from './topic-message-type.js';
import { namespacedResource } from './resource-namespace.js';


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

function permissionOf(tc: { readQueueNums: number; writeQueueNums: number; perm: number }, queueId: number): string {
  const r = queueId < tc.readQueueNums && PermName.isReadable(tc.perm);
  const w = queueId < tc.writeQueueNums && PermName.isWriteable(tc.perm);
  return r && w ? 'READ_WRITE' : r ? 'READ' : w ? 'WRITE' : 'NONE';
}

/** Where another broker's front is: its brokerIP1 with this front's gRPC port (Apache's convention). */
function remoteEndpoints(s: GrpcServices, b: RemoteBrokerQueues): Endpoints {
  const scheme = /^\d{1,3}(\.\d{1,3}){3}$/.test(b.host) ? 'IPv4' : b.host.includes(':') ? 'IPv6' : 'DOMAIN_NAME';
  return { scheme, addresses: [{ host: b.host, port: s.port() }] };
}

function remoteQueue(s: GrpcServices, topic: Resource, b: RemoteBrokerQueues, id: number, permission: string, accept: readonly string[]): MessageQueue {
  return {
    topic: namespacedResource(topic.name),
    id,
    permission,
    broker: { name: b.brokerName, id: 0, endpoints: remoteEndpoints(s, b) },
    accept_message_types: [...accept],
  };
}

/** Other brokers of the topic from the nameservers ([] without a nameserver or a bad name). */
async function otherBrokers(s: GrpcServices, topic: string | undefined): Promise<RemoteBrokerQueues[]> {
  if (!s.clusterRoutes || !topic || checkTopicName(topic)) return [];
  return s.clusterRoutes.otherBrokers(topic);
}

export function messageQueue(s: GrpcServices, topic: Resource, tc: TopicConfig, id: number, permission: string, endpoints: Endpoints): MessageQueue {
  return {
    topic: namespacedResource(topic.name),
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
    QueryRoute: unary<QueryRouteRequest, { status: Status; message_queues: MessageQueue[] }>(s, 'QueryRoute', async (req, call) => {
      s.sessions.touch(clientIdOf(call));
      const others = await otherBrokers(s, req.topic?.name);
      const tc = findTopic(s, req.topic?.name, others.length === 0);
      if (isStatus(tc) && (tc.code !== Code.TOPIC_NOT_FOUND || others.length === 0)) return { status: tc, message_queues: [] };
      const queues: MessageQueue[] = [];
      if (!isStatus(tc)) {
        const endpoints = advertisedEndpoints(s, req.endpoints);
        const n = Math.max(tc.readQueueNums, tc.writeQueueNums);
        for (let id = 0; id < n; id++) queues.push(messageQueue(s, req.topic!, tc, id, permissionOf(tc, id), endpoints));
      }
      const accept = isStatus(tc) ? ALL_MESSAGE_TYPES : acceptedMessageTypes(tc);
      for (const b of others) {
        const n = Math.max(b.readQueueNums, b.writeQueueNums);
        for (let id = 0; id < n; id++) queues.push(remoteQueue(s, req.topic!, b, id, permissionOf(b, id), accept));
      }
      return { status: OK_STATUS, message_queues: queues };
    }),

    QueryAssignment: unary<QueryAssignmentRequest, { status: Status; assignments: Array<{ message_queue: MessageQueue }> }>(s, 'QueryAssignment', async (req, call) => {
      s.sessions.touch(clientIdOf(call));
      const refused = checkTopicAndGroup(req.topic?.name, req.group?.name);
      if (refused) return { status: refused, assignments: [] };
      const others = await otherBrokers(s, req.topic?.name);
      const tc = findTopic(s, req.topic?.name, false);
      if (isStatus(tc) && others.length === 0) return { status: tc, assignments: [] };
      const assignments: Array<{ message_queue: MessageQueue }> = [];
      if (!isStatus(tc) && PermName.isReadable(tc.perm) && tc.readQueueNums > 0) {
        assignments.push({ message_queue: messageQueue(s, req.topic!, tc, -1, PermName.isWriteable(tc.perm) ? 'READ_WRITE' : 'READ', advertisedEndpoints(s, req.endpoints)) });
      }
      const accept = isStatus(tc) ? ALL_MESSAGE_TYPES : acceptedMessageTypes(tc);
      for (const b of others) {
        if (!PermName.isReadable(b.perm) || b.readQueueNums <= 0) continue;
        assignments.push({ message_queue: remoteQueue(s, req.topic!, b, -1, PermName.isWriteable(b.perm) ? 'READ_WRITE' : 'READ', accept) });
      }
      return { status: OK_STATUS, assignments };
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
        s.registration.register(session, call.getPeer());
      } else if (session.clientType === 'PRODUCER') {
        s.registration.register(session, call.getPeer());
      }
      return { status: OK_STATUS };
    }),

    NotifyClientTermination: unary<{ group?: Resource | null }, StatusOnly>(s, 'NotifyClientTermination', (_req, call) => {
      s.sessions.remove(clientIdOf(call));
      return { status: OK_STATUS };
    }),
  };
}
