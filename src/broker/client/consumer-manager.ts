/**
 * Live consumers per group, fed by HEART_BEAT (mirrors RocketMQ `ConsumerManager` and
 * `ConsumerGroupInfo`). A client entry is keyed by its connection; it disappears on
 * UNREGISTER_CLIENT, when its connection closes, or when no heartbeat arrived for
 * `channelExpiredTimeoutMs` (Apache: 120 s, scanned every 10 s). The channel tables are kept by
 * client-channel-table.ts (shared with the ProducerManager). After a client joined, changed its
 * subscriptions or left (unregister, closed connection, expiry), the optional change listener
 * gets the group's remaining clients (Apache's CHANGE event; consumer-ids-change-notifier.ts).
 */
import type { RemotingChannel } from '../../remoting/processor/request-processor.js';
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import type { SubscriptionData } from '../filter/subscription-data.js';
import { ClientGroupRegistry, distinctClientIds, upsertChannel, type ClientChannelInfo } from './client-channel-table.js';
import type { ConsumerIdsChangeListener } from './consumer-ids-change-notifier.js';

export type { ClientChannelInfo } from './client-channel-table.js';

export class ConsumerGroupInfo {
  readonly channels = new Map<string, ClientChannelInfo>();
  readonly subscriptions = new Map<string, SubscriptionData>();
  lastUpdateTimestamp: number;

  constructor(
    readonly groupName: string,
    public consumeType: string,
    public messageModel: string,
    public consumeFromWhere: string,
    now: number,
  ) {
    this.lastUpdateTimestamp = now;
  }

  /** Distinct client ids, in registration order. */
  allClientIds(): string[] {
    return distinctClientIds(this.channels);
  }

  findSubscriptionData(topic: string): SubscriptionData | undefined {
    return this.subscriptions.get(topic);
  }

  /** Adds or refreshes a channel; returns true when it is new. */
  updateChannel(info: ClientChannelInfo, now: number): boolean {
    this.lastUpdateTimestamp = now;
    return upsertChannel(this.channels, info, now);
  }

  /**
   * Apache's `updateSubscription`: new topics are added, a topic is replaced only by a newer
   * subVersion, topics missing from the list are removed. Returns whether anything changed.
   */
  updateSubscription(list: SubscriptionData[], now: number): boolean {
    let changed = false;
    const topics = new Set<string>();
    for (const sub of list) {
      topics.add(sub.topic);
      const old = this.subscriptions.get(sub.topic);
      if (!old || sub.subVersion > old.subVersion) {
        this.subscriptions.set(sub.topic, sub);
        changed = changed || !old;
      }
    }
    for (const topic of [...this.subscriptions.keys()]) {
      if (!topics.has(topic)) {
        this.subscriptions.delete(topic);
        changed = true;
      }
    }
    this.lastUpdateTimestamp = now;
    return changed;
  }
}

export interface ConsumerRegistration {
  consumeType: string;
  messageModel: string;
  consumeFromWhere: string;
  subscriptions: SubscriptionData[];
}

export class ConsumerManager {
  private readonly groups = new ClientGroupRegistry<ConsumerGroupInfo>((g) => g.channels);
  private readonly logger: Logger;

  constructor(
    private readonly clock: Clock,
    private readonly channelExpiredTimeoutMs = 120_000,
    logger?: Logger,
    private readonly onChange?: ConsumerIdsChangeListener,
  ) {
    this.logger = logger ?? silentLogger;
  }

  /** Hands the group's remaining clients to the change listener (none left: nothing to tell). */
  private changed(group: string): void {
    const remaining = [...(this.groups.get(group)?.channels.values() ?? [])];
    if (this.onChange && remaining.length > 0) this.onChange(group, remaining);
  }

  /** Registers/refreshes a consumer client from a heartbeat. Returns whether membership or subscriptions changed. */
  registerConsumer(group: string, info: Omit<ClientChannelInfo, 'lastUpdateTimestamp'>, reg: ConsumerRegistration): boolean {
    const now = this.clock.nowMs();
    const g = this.groups.getOrCreate(group, () => new ConsumerGroupInfo(group, reg.consumeType, reg.messageModel, reg.consumeFromWhere, now));
    g.consumeType = reg.consumeType;
    g.messageModel = reg.messageModel;
    g.consumeFromWhere = reg.consumeFromWhere;
    const added = g.updateChannel({ ...info, lastUpdateTimestamp: now }, now);
    if (added) this.logger.info(`consumer ${info.clientId} (${info.channel.remoteAddress}) joined group ${group}`);
    const subsChanged = g.updateSubscription(reg.subscriptions, now);
    this.groups.watch(info.channel, () => this.doChannelCloseEvent(info.channel));
    if (added || subsChanged) this.changed(group);
    return added || subsChanged;
  }

  /** Removes a client from a group (by connection and by client id). Returns whether something was removed. */
  unregisterConsumer(group: string, channel: RemotingChannel, clientId: string): boolean {
    const removed = this.groups.unregister(group, channel, clientId);
    if (removed) {
      this.logger.info(`consumer ${clientId} left group ${group}`);
      this.changed(group);
    }
    return removed;
  }

  getConsumerGroupInfo(group: string): ConsumerGroupInfo | undefined {
    return this.groups.get(group);
  }

  findSubscriptionData(group: string, topic: string): SubscriptionData | undefined {
    return this.groups.get(group)?.findSubscriptionData(topic);
  }

  groupNames(): string[] {
    return this.groups.names();
  }

  /** Drops every registration made over `channel` (connection closed). */
  doChannelCloseEvent(channel: RemotingChannel): void {
    for (const { group, info } of this.groups.closeChannel(channel)) {
      this.logger.info(`consumer ${info.clientId} left group ${group}: connection ${channel.remoteAddress} closed`);
      this.changed(group);
    }
  }

  /** Drops (and closes) clients whose last heartbeat is older than the expiry. Returns how many. */
  scanNotActiveChannel(): number {
    const expired = this.groups.expire(this.clock.nowMs(), this.channelExpiredTimeoutMs);
    for (const { group, info, silentMs } of expired) {
      this.logger.warn(`consumer ${info.clientId} in group ${group}: no heartbeat for ${silentMs} ms, removed`);
    }
    for (const group of new Set(expired.map((e) => e.group))) this.changed(group);
    return expired.length;
  }
}
