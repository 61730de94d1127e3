/**
 * Live producers per group (mirrors RocketMQ `ProducerManager`, minimal): registered by
 * HEART_BEAT, removed on UNREGISTER_CLIENT, connection close, or heartbeat expiry.
 * Only used for bookkeeping (no transaction check-back is sent: ali-ons ignores server requests).
 */
import type { RemotingChannel } from '../../remoting/processor/request-processor.js';
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import type { ClientChannelInfo } from './consumer-manager.js';

export class ProducerManager {
  private readonly groups = new Map<string, Map<string, ClientChannelInfo>>();
  private readonly watched = new WeakSet<RemotingChannel>();
  private readonly logger: Logger;

  constructor(
    private readonly clock: Clock,
    private readonly channelExpiredTimeoutMs = 120_000,
    logger?: Logger,
  ) {
    this.logger = logger ?? silentLogger;
  }

  registerProducer(group: string, info: Omit<ClientChannelInfo, 'lastUpdateTimestamp'>): void {
    let g = this.groups.get(group);
    if (!g) {
      g = new Map();
      this.groups.set(group, g);
    }
    const existing = g.get(info.channel.id);
    if (existing && existing.clientId === info.clientId) existing.lastUpdateTimestamp = this.clock.nowMs();
    else g.set(info.channel.id, { ...info, lastUpdateTimestamp: this.clock.nowMs() });
    if (!this.watched.has(info.channel)) {
      this.watched.add(info.channel);
      info.channel.onClose(() => this.doChannelCloseEvent(info.channel));
    }
  }

  unregisterProducer(group: string, channel: RemotingChannel, clientId: string): void {
    const g = this.groups.get(group);
    if (!g) return;
    g.delete(channel.id);
    for (const [id, info] of [...g]) if (info.clientId === clientId) g.delete(id);
    if (g.size === 0) this.groups.delete(group);
  }

  /** Client ids of a group's live producers. */
  clientIds(group: string): string[] {
    return [...new Set([...(this.groups.get(group)?.values() ?? [])].map((i) => i.clientId))];
  }

  groupNames(): string[] {
    return [...this.groups.keys()];
  }

  /** Open channels of a producer group (transaction check-back, code 39). */
  channelsOf(group: string): RemotingChannel[] {
    return [...(this.groups.get(group)?.values() ?? [])].map((i) => i.channel).filter((c) => !c.closed);
  }

  doChannelCloseEvent(channel: RemotingChannel): void {
    for (const [name, g] of [...this.groups]) {
      g.delete(channel.id);
      if (g.size === 0) this.groups.delete(name);
    }
  }

  /** Drops (and closes) producers silent for longer than the expiry. Returns how many. */
  scanNotActiveChannel(): number {
    const now = this.clock.nowMs();
    let dropped = 0;
    for (const [name, g] of [...this.groups]) {
      for (const [id, info] of [...g]) {
        if (now - info.lastUpdateTimestamp > this.channelExpiredTimeoutMs) {
          this.logger.warn(`producer ${info.clientId} in group ${name}: no heartbeat for ${now - info.lastUpdateTimestamp} ms, removed`);
          g.delete(id);
          info.channel.close();
          dropped++;
        }
      }
      if (g.size === 0) this.groups.delete(name);
    }
    return dropped;
  }
}
