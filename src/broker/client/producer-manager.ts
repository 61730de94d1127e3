/**
 * Live producers per group (mirrors RocketMQ `ProducerManager`, minimal): registered by
 * HEART_BEAT, removed on UNREGISTER_CLIENT, connection close, or heartbeat expiry. Gives the
 * open channels of a group to the transaction check-back (`channelsOf`) and a client's channel to
 * the request-reply push (`channelOfClient`).
 */
import type { RemotingChannel } from '../../remoting/processor/request-processor.js';
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import { ClientGroupRegistry, distinctClientIds, upsertChannel, type ClientChannelInfo } from './client-channel-table.js';

export class ProducerManager {
  /** Group → channel id → entry (client-channel-table.ts, shared with the ConsumerManager). */
  private readonly groups = new ClientGroupRegistry<Map<string, ClientChannelInfo>>((g) => g);
  /**
   * Client id → channel id → (channel, the groups it is registered in over that channel): the
   * index `channelOfClient` reads instead of scanning every group (one lookup per reply message).
   * Kept in step with `groups` by every method below that adds or removes an entry.
   */
  private readonly byClient = new Map<string, Map<string, { channel: RemotingChannel; groups: Set<string> }>>();
  private readonly logger: Logger;

  constructor(
    private readonly clock: Clock,
    private readonly channelExpiredTimeoutMs = 120_000,
    logger?: Logger,
  ) {
    this.logger = logger ?? silentLogger;
  }

  registerProducer(group: string, info: Omit<ClientChannelInfo, 'lastUpdateTimestamp'>): void {
    const channels = this.groups.getOrCreate(group, () => new Map());
    const previous = channels.get(info.channel.id);
    if (previous && previous.clientId !== info.clientId) this.unindex(group, previous);
    upsertChannel(channels, info, this.clock.nowMs());
    this.index(group, info.clientId, info.channel);
    this.groups.watch(info.channel, () => this.doChannelCloseEvent(info.channel));
  }

  unregisterProducer(group: string, channel: RemotingChannel, clientId: string): void {
    const channels = this.groups.get(group);
    if (!channels) return;
    for (const info of channels.values()) {
      if (info.channel.id === channel.id || info.clientId === clientId) this.unindex(group, info);
    }
    this.groups.unregister(group, channel, clientId);
  }

  /** Client ids of a group's live producers. */
  clientIds(group: string): string[] {
    const g = this.groups.get(group);
    return g ? distinctClientIds(g) : [];
  }

  /** Live producer entries of a group (one per connection). */
  entriesOf(group: string): ClientChannelInfo[] {
    return [...(this.groups.get(group)?.values() ?? [])];
  }

  groupNames(): string[] {
    return this.groups.names();
  }

  /** Open channels of a producer group (transaction check-back, code 39). */
  channelsOf(group: string): RemotingChannel[] {
    return [...(this.groups.get(group)?.values() ?? [])].map((i) => i.channel).filter((c) => !c.closed);
  }

  /**
   * The open remoting connection of the producer client `clientId` (any group; a gRPC stand-in
   * does not count), or undefined (Apache
   * `ProducerManager.findChannel`; the request-reply push, code 326, goes there).
   */
  channelOfClient(clientId: string): RemotingChannel | undefined {
    for (const { channel } of this.byClient.get(clientId)?.values() ?? []) {
      if (!channel.closed && !channel.standIn) return channel;
    }
    return undefined;
  }

  doChannelCloseEvent(channel: RemotingChannel): void {
    for (const { group, info } of this.groups.closeChannel(channel)) this.unindex(group, info);
  }

  private index(group: string, clientId: string, channel: RemotingChannel): void {
    let channels = this.byClient.get(clientId);
    if (!channels) this.byClient.set(clientId, (channels = new Map()));
    let entry = channels.get(channel.id);
    if (!entry) channels.set(channel.id, (entry = { channel, groups: new Set() }));
    entry.groups.add(group);
  }

  private unindex(group: string, info: ClientChannelInfo): void {
    const channels = this.byClient.get(info.clientId);
    const entry = channels?.get(info.channel.id);
    if (!channels || !entry) return;
    entry.groups.delete(group);
    if (entry.groups.size === 0) channels.delete(info.channel.id);
    if (channels.size === 0) this.byClient.delete(info.clientId);
  }

  /** Drops (and closes) producers silent for longer than the expiry. Returns how many. */
  scanNotActiveChannel(): number {
    const expired = this.groups.expire(this.clock.nowMs(), this.channelExpiredTimeoutMs);
    for (const { group, info, silentMs } of expired) {
      this.unindex(group, info);
      this.logger.warn(`producer ${info.clientId} in group ${group}: no heartbeat for ${silentMs} ms, removed`);
    }
    return expired.length;
  }
}
