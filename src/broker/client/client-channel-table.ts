/**
 * Connection bookkeeping shared by the producer and consumer managers (RocketMQ keeps the same
 * structure twice, in `ProducerManager` and `ConsumerGroupInfo`): per group, the live client
 * connections keyed by channel id (`ClientChannelInfo`, refreshed by every HEART_BEAT), removed
 * on UNREGISTER_CLIENT (by channel and by client id), when the connection closes, or when no
 * heartbeat arrived for the expiry (Apache: 120 s). A group with no channel left is dropped.
 * Times are epoch ms from the caller's clock. Logging stays with the managers: removals are
 * returned to them.
 */
import type { RemotingChannel } from '../../remoting/processor/request-processor.js';

export interface ClientChannelInfo {
  channel: RemotingChannel;
  clientId: string;
  language: string;
  version: number;
  lastUpdateTimestamp: number;
}

/** One removed registration: its group, its entry, and how long it had been silent (expiry only). */
export interface RemovedClient {
  group: string;
  info: ClientChannelInfo;
  silentMs: number;
}

/** Adds or refreshes a channel entry; returns true when it is new (or now holds another client id). */
export function upsertChannel(channels: Map<string, ClientChannelInfo>, info: Omit<ClientChannelInfo, 'lastUpdateTimestamp'>, now: number): boolean {
  const existing = channels.get(info.channel.id);
  if (existing && existing.clientId === info.clientId) {
    existing.lastUpdateTimestamp = now;
    return false;
  }
  channels.set(info.channel.id, { ...info, lastUpdateTimestamp: now });
  return true;
}

/** Distinct client ids, in registration order. */
export function distinctClientIds(channels: Map<string, ClientChannelInfo>): string[] {
  return [...new Set([...channels.values()].map((c) => c.clientId))];
}

/** Groups of `G`, each holding a channel table reachable through `channelsOf`. */
export class ClientGroupRegistry<G> {
  readonly groups = new Map<string, G>();
  private readonly watched = new WeakSet<RemotingChannel>();

  constructor(private readonly channelsOf: (group: G) => Map<string, ClientChannelInfo>) {}

  get(name: string): G | undefined {
    return this.groups.get(name);
  }

  getOrCreate(name: string, create: () => G): G {
    let g = this.groups.get(name);
    if (!g) {
      g = create();
      this.groups.set(name, g);
    }
    return g;
  }

  names(): string[] {
    return [...this.groups.keys()];
  }

  /** Calls `onClose` when `channel` closes; a channel is watched once, whatever the calls. */
  watch(channel: RemotingChannel, onClose: () => void): void {
    if (this.watched.has(channel)) return;
    this.watched.add(channel);
    channel.onClose(onClose);
  }

  /** Removes a client from a group by connection and by client id; returns whether anything was removed. */
  unregister(name: string, channel: RemotingChannel, clientId: string): boolean {
    const g = this.groups.get(name);
    if (!g) return false;
    const channels = this.channelsOf(g);
    let removed = channels.delete(channel.id);
    for (const [id, info] of [...channels]) {
      if (info.clientId === clientId) {
        channels.delete(id);
        removed = true;
      }
    }
    if (channels.size === 0) this.groups.delete(name);
    return removed;
  }

  /** Drops every registration made over `channel` (connection closed) and every empty group. */
  closeChannel(channel: RemotingChannel): RemovedClient[] {
    const removed: RemovedClient[] = [];
    for (const [name, g] of [...this.groups]) {
      const channels = this.channelsOf(g);
      const info = channels.get(channel.id);
      if (info && channels.delete(channel.id)) removed.push({ group: name, info, silentMs: 0 });
      if (channels.size === 0) this.groups.delete(name);
    }
    return removed;
  }

  /** Drops and closes clients whose last heartbeat is more than `timeoutMs` before `now`. */
  expire(now: number, timeoutMs: number): RemovedClient[] {
    const removed: RemovedClient[] = [];
    for (const [name, g] of [...this.groups]) {
      const channels = this.channelsOf(g);
      for (const [id, info] of [...channels]) {
        const silentMs = now - info.lastUpdateTimestamp;
        if (silentMs > timeoutMs) {
          removed.push({ group: name, info, silentMs });
          channels.delete(id);
          info.channel.close();
        }
      }
      if (channels.size === 0) this.groups.delete(name);
    }
    return removed;
  }
}
