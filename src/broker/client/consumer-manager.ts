/**
 * Live consumers per group, fed by HEART_BEAT (mirrors RocketMQ `ConsumerManager` and
 * `ConsumerGroupInfo`). A client entry is keyed by its connection; it disappears on
 * UNREGISTER_CLIENT, when its connection closes, or when no heartbeat arrived for
 * `channelExpiredTimeoutMs` (Apache: 120 s, scanned every 10 s).
 */
import type { RemotingChannel } from '../../remoting/processor/request-processor.js';
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import type { SubscriptionData } from '../filter/subscription-data.js';

export interface ClientChannelInfo {
  channel: RemotingChannel;
  clientId: string;
  language: string;
  version: number;
  lastUpdateTimestamp: number;
}

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
    return [...new Set([...this.channels.values()].map((c) => c.clientId))];
  }

  findSubscriptionData(topic: string): SubscriptionData | undefined {
    return this.subscriptions.get(topic);
  }

  /** Adds or refreshes a channel; returns true when it is new. */
  updateChannel(info: ClientChannelInfo, now: number): boolean {
    const existing = this.channels.get(info.channel.id);
    this.lastUpdateTimestamp = now;
    if (!existing || existing.clientId !== info.clientId) {
      this.channels.set(info.channel.id, { ...info, lastUpdateTimestamp: now });
      return true;
    }
    existing.lastUpdateTimestamp = now;
    return false;
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
  private readonly groups = new Map<string, ConsumerGroupInfo>();
  private readonly watched = new WeakSet<RemotingChannel>();
  private readonly logger: Logger;

  constructor(
    private readonly clock: Clock,
    private readonly channelExpiredTimeoutMs = 120_000,
    logger?: Logger,
  ) {
    this.logger = logger ?? silentLogger;
  }

  /** Registers/refreshes a consumer client from a heartbeat. Returns whether membership or subscriptions changed. */
  registerConsumer(group: string, info: Omit<ClientChannelInfo, 'lastUpdateTimestamp'>, reg: ConsumerRegistration): boolean {
    const now = this.clock.nowMs();
    let g = this.groups.get(group);
    if (!g) {
      g = new ConsumerGroupInfo(group, reg.consumeType, reg.messageModel, reg.consumeFromWhere, now);
      this.groups.set(group, g);
    }
    g.consumeType = reg.consumeType;
    g.messageModel = reg.messageModel;
    g.consumeFromWhere = reg.consumeFromWhere;
    const added = g.updateChannel({ ...info, lastUpdateTimestamp: now }, now);
    if (added) this.logger.info(`consumer ${info.clientId} (${info.channel.remoteAddress}) joined group ${group}`);
    const subsChanged = g.updateSubscription(reg.subscriptions, now);
    this.watch(info.channel);
    return added || subsChanged;
  }

  /** Removes a client from a group (by connection and by client id). Returns whether something was removed. */
  unregisterConsumer(group: string, channel: RemotingChannel, clientId: string): boolean {
    const g = this.groups.get(group);
    if (!g) return false;
    let removed = g.channels.delete(channel.id);
    for (const [id, info] of [...g.channels]) {
      if (info.clientId === clientId) {
        g.channels.delete(id);
        removed = true;
      }
    }
    if (removed) this.logger.info(`consumer ${clientId} left group ${group}`);
    if (g.channels.size === 0) this.groups.delete(group);
    return removed;
  }

  getConsumerGroupInfo(group: string): ConsumerGroupInfo | undefined {
    return this.groups.get(group);
  }

  findSubscriptionData(group: string, topic: string): SubscriptionData | undefined {
    return this.groups.get(group)?.findSubscriptionData(topic);
  }

  groupNames(): string[] {
    return [...this.groups.keys()];
  }

  /** Drops every registration made over `channel` (connection closed). */
  doChannelCloseEvent(channel: RemotingChannel): void {
    for (const [name, g] of [...this.groups]) {
      const info = g.channels.get(channel.id);
      if (info && g.channels.delete(channel.id)) {
        this.logger.info(`consumer ${info.clientId} left group ${name}: connection ${channel.remoteAddress} closed`);
      }
      if (g.channels.size === 0) this.groups.delete(name);
    }
  }

  /** Drops (and closes) clients whose last heartbeat is older than the expiry. Returns how many. */
  scanNotActiveChannel(): number {
    const now = this.clock.nowMs();
    let dropped = 0;
    for (const [name, g] of [...this.groups]) {
      for (const [id, info] of [...g.channels]) {
        if (now - info.lastUpdateTimestamp > this.channelExpiredTimeoutMs) {
          this.logger.warn(`consumer ${info.clientId} in group ${name}: no heartbeat for ${now - info.lastUpdateTimestamp} ms, removed`);
          g.channels.delete(id);
          info.channel.close();
          dropped++;
        }
      }
      if (g.channels.size === 0) this.groups.delete(name);
    }
    return dropped;
  }

  private watch(channel: RemotingChannel): void {
    if (this.watched.has(channel)) return;
    this.watched.add(channel);
    channel.onClose(() => this.doChannelCloseEvent(channel));
  }
}
