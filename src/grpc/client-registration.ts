/**
 * gRPC clients in the broker's ProducerManager and ConsumerManager, as Apache's proxy registers
 * them (its `ClientActivity` calls `registerProducer` / `registerConsumer` with a
 * `GrpcClientChannel` on every Heartbeat and Telemetry settings):
 * - PRODUCER sessions: one producer entry per publishing topic of their Telemetry settings, under
 *   the topic's name as producer group (Apache: "use topic name as producer group"; its gRPC
 *   sends put the topic into PGROUP of the message). So GET_PRODUCER_CONNECTION_LIST (204,
 *   `mqadmin producerConnection -g <topic> -t <topic>`) lists 5.x producers.
 * - PUSH_CONSUMER / SIMPLE_CONSUMER sessions: one client entry of their group, with
 *   CONSUME_PASSIVELY (push) / CONSUME_ACTIVELY (simple; Apache 5.3.3 ClientActivity
 *   buildConsumeType), CLUSTERING, CONSUME_FROM_LAST_OFFSET and the subscriptions of their
 *   Telemetry settings; as for remoting heartbeats, the group's type is its latest registration's.
 *   So `consume_mode` of rocketmq_consumer_connections reads "pull" for a SimpleConsumer group. So GET_CONSUMER_CONNECTION_LIST (203, `mqadmin consumerConnection`),
 *   consumer-progress client columns and the console list gRPC consumers beside remoting ones;
 *   without it a group consumed only over gRPC was "not online" (206).
 * Both with the language of the user agent and its version ("5.0.8" → V5_0_8; not of that form →
 * V5_0_0, as Apache's proxy used to register every gRPC client).
 *
 * - register(session, peer): on every Heartbeat and Telemetry settings of a session that has
 *   settings (and, for a consumer, a group); refreshes lastUpdateTimestamp (the client heartbeats
 *   every 10 s, the managers drop entries silent for 120 s). A producer whose settings no longer
 *   name a topic leaves that topic's group.
 * - unregister(session): on NotifyClientTermination and session expiry.
 *
 * The entry's channel is a stand-in (`standIn`): it carries no remoting traffic (send is a no-op,
 * no invoke, so GET_CONSUMER_RUNNING_INFO answers "not online" for it; remoting check-backs and
 * reply pushes skip it: a gRPC producer's check-back goes over its Telemetry stream), its id is
 * `grpc:<clientId>`, its remote address the peer of the call that registered it.
 */
import type { RemotingChannel } from '../remoting/processor/request-processor.js';
import type { ConsumerManager } from '../broker/client/consumer-manager.js';
import type { ProducerManager } from '../broker/client/producer-manager.js';
import { buildSubscriptionData, type SubscriptionData } from '../broker/filter/subscription-data.js';
import type { ClientSession } from './client-sessions.js';

/** gRPC consumer ClientType → the ConsumeType it is registered with (Apache ClientActivity.buildConsumeType). */
const CONSUME_TYPES: ReadonlyMap<string, string> = new Map([
  ['PUSH_CONSUMER', 'CONSUME_PASSIVELY'],
  ['SIMPLE_CONSUMER', 'CONSUME_ACTIVELY'],
]);

/** A ConsumerManager entry's channel for one gRPC client (no remoting traffic goes through it). */
class GrpcClientChannel implements RemotingChannel {
  readonly id: string;
  readonly standIn = true;
  private isClosed = false;
  private readonly listeners: Array<() => void> = [];

  constructor(
    clientId: string,
    public remoteAddress: string,
  ) {
    this.id = `grpc:${clientId}`;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  send(): void {
    // gRPC clients do not take remoting commands (NOTIFY_CONSUMER_IDS_CHANGED etc.): nothing to do
  }

  close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    for (const l of this.listeners.splice(0)) l();
  }

  onClose(listener: () => void): void {
    if (this.isClosed) listener();
    else this.listeners.push(listener);
  }
}

/** "ip:port" from a grpc-js peer ("ipv4:1.2.3.4:5", "ipv6:[::1]:5", "1.2.3.4:5"). */
export function peerText(peer: string): string {
  return peer.replace(/^ipv[46]:/, '').replace(/^\[(.*)\]:(\d+)$/, '$1:$2');
}

/** MQVersion ordinal of V5_0_0, what Apache's proxy registered gRPC clients with before it parsed their version. */
const V5_0_0 = 413;

/**
 * MQVersion ordinal of a user-agent version "4.a.b" / "5.a.b" (a, b single digits: the release
 * entry, src/remoting/protocol/mq-version.ts); anything else → V5_0_0.
 */
export function clientVersionOrdinal(version: string | undefined): number {
  const m = /^([45])\.(\d)\.(\d)$/.exec(version ?? '');
  if (!m) return V5_0_0;
  return (m[1] === '4' ? 213 : 413) + 2 * (10 * Number(m[2]) + Number(m[3]));
}

/** The SubscriptionData list of a consumer's Telemetry settings (a bad expression is listed as given, TAG or SQL92). */
function subscriptionsOf(session: ClientSession): SubscriptionData[] {
  const list: SubscriptionData[] = [];
  for (const e of session.settings?.subscription?.subscriptions ?? []) {
    const topic = e.topic?.name;
    if (!topic) continue;
    const sql = e.expression?.type === 'SQL';
    const expr = e.expression?.expression ?? '*';
    try {
      list.push(buildSubscriptionData(topic, expr, 0, sql ? 'SQL92' : 'TAG'));
    } catch {
      list.push({ topic, subString: expr, tagsSet: [], codeSet: [], subVersion: 0, expressionType: sql ? 'SQL92' : 'TAG', classFilterMode: false });
    }
  }
  return list;
}

export class GrpcClientRegistration {
  /** Channel per client id, kept while the client is registered. */
  private readonly channels = new Map<string, GrpcClientChannel>();
  /** Producer groups (topics) each producer client is registered in. */
  private readonly producerTopics = new Map<string, Set<string>>();

  constructor(
    private readonly consumers: ConsumerManager,
    private readonly producers: ProducerManager,
  ) {}

  /** Registers (or refreshes) a producer or consumer session; a session without settings (or a consumer without group) is skipped. */
  register(session: ClientSession, peer: string): void {
    if (session.clientType === 'PRODUCER' && session.settings?.publishing) this.registerProducer(session, peer);
    else if (CONSUME_TYPES.has(session.clientType) && session.group && session.settings?.subscription) this.registerConsumer(session, peer);
  }

  private channelOf(session: ClientSession, peer: string): GrpcClientChannel {
    let channel = this.channels.get(session.clientId);
    if (!channel || channel.closed) {
      channel = new GrpcClientChannel(session.clientId, peerText(peer));
      this.channels.set(session.clientId, channel);
      const registered = channel;
      channel.onClose(() => {
        if (this.channels.get(session.clientId) !== registered) return;
        this.channels.delete(session.clientId);
        this.producerTopics.delete(session.clientId);
      });
    }
    return channel;
  }

  private clientInfo(session: ClientSession, channel: GrpcClientChannel) {
    return { channel, clientId: session.clientId, language: session.language, version: clientVersionOrdinal(session.settings?.user_agent?.version) };
  }

  private registerProducer(session: ClientSession, peer: string): void {
    const channel = this.channelOf(session, peer);
    const topics = new Set((session.settings?.publishing?.topics ?? []).map((t) => t?.name).filter((n): n is string => !!n));
    const before = this.producerTopics.get(session.clientId);
    for (const old of before ?? []) if (!topics.has(old)) this.producers.unregisterProducer(old, channel, session.clientId);
    for (const topic of topics) this.producers.registerProducer(topic, this.clientInfo(session, channel));
    this.producerTopics.set(session.clientId, topics);
  }

  private registerConsumer(session: ClientSession, peer: string): void {
    const channel = this.channelOf(session, peer);
    this.consumers.registerConsumer(
      session.group!,
      this.clientInfo(session, channel),
      { consumeType: CONSUME_TYPES.get(session.clientType)!, messageModel: 'CLUSTERING', consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET', subscriptions: subscriptionsOf(session) },
    );
  }

  /** Removes the session's client from its producer groups and its consumer group (client terminated or session expired). */
  unregister(session: ClientSession): void {
    const channel = this.channels.get(session.clientId);
    if (!channel) return;
    for (const topic of this.producerTopics.get(session.clientId) ?? []) this.producers.unregisterProducer(topic, channel, session.clientId);
    if (session.group) this.consumers.unregisterConsumer(session.group, channel, session.clientId);
    channel.close();
  }
}
