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
  private readonly logger: Logger;

  constructor(
    private readonly clock: Clock,
    private readonly channelExpiredTimeoutMs = 120_000,
    logger?: Logger,
  ) {
    this.logger = logger ?? silentLogger;
  }

  registerProducer(group: string, info: Omit<ClientChannelInfo, 'lastUpdateTimestamp'>): void {
    upsertChannel(this.groups.getOrCreate(group, () => new Map()), info, this.clock.nowMs());
    this.groups.watch(info.channel, () => this.doChannelCloseEvent(info.channel));
  }

  unregisterProducer(group: string, channel: RemotingChannel, clientId: string): void {
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
   * The open connection of the producer client `clientId` (any group), or undefined (Apache
   * `ProducerManager.findChannel`; the request-reply push, code 326, goes there).
   */
  channelOfClient(clientId: string): RemotingChannel | undefined {
    for (const group of this.groups.names()) {
      for (const info of this.groups.get(group)?.values() ?? []) {
        if (info.clientId === clientId && !info.channel.closed) return info.channel;
      }
    }
    return undefined;
  }

  doChannelCloseEvent(channel: RemotingChannel): void {
    this.groups.closeChannel(channel);
  }

  /** Drops (and closes) producers silent for longer than the expiry. Returns how many. */
  scanNotActiveChannel(): number {
    const expired = this.groups.expire(this.clock.nowMs(), this.channelExpiredTimeoutMs);
    for (const { group, info, silentMs } of expired) {
      this.logger.warn(`producer ${info.clientId} in group ${group}: no heartbeat for ${silentMs} ms, removed`);
    }
    return expired.length;
  }
}
