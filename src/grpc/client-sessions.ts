/**
 * gRPC clients known to this server, keyed by the `x-mq-client-id` metadata every call carries
 * (spec B1). A session records the client type, its consumer group, the settings it sent over
 * Telemetry and its open Telemetry streams (used to push server commands such as
 * RecoverOrphanedTransactionCommand). Sessions end on NotifyClientTermination, or on expiry:
 * - a session that had a Telemetry stream and has none open any more (the client's process died,
 *   or its connection broke: grpc-js cancels the stream when the TCP connection closes), with no
 *   call since the stream closed, for `streamLostExpireMs`. rocketmq-client-java reopens a broken
 *   Telemetry stream about a second later, so a live client is not caught by this;
 * - any session that sent nothing (no call, no stream message) for `expireMs` (120 s), open
 *   streams or not: Apache's broker drops a client entry (its proxy's GrpcClientChannel included)
 *   whose last heartbeat is older than channelExpiredTimeout, 120 s (ProducerManager /
 *   ConsumerManager scanNotActiveChannel), and a live client heartbeats every 10 s. This catches a
 *   Telemetry stream whose HTTP/2 connection stays half-open (the peer vanished without a FIN or
 *   RST: grpc-js never hears of it). The session's streams are ended by the server.
 * `onRemoved` hears every end (the front unregisters the client from the broker's ConsumerManager
 * and releases the push deliveries it still held, receipt-renewer.ts).
 */
import type { Settings, TelemetryCommand } from './proto/v2-types.js';

export interface TelemetryWriter {
  /**
   * Queues `cmd` on the stream; false when it was dropped: the stream is closed, or its client
   * has not read the commands already queued (telemetry-handler.ts TELEMETRY_MAX_PENDING_COMMANDS).
   */
  write(cmd: TelemetryCommand): boolean;
  readonly closed: boolean;
  /** Ends the stream from the server side (session expired); no-op when closed. */
  end(): void;
}

export interface ClientSession {
  clientId: string;
  clientType: string;
  group?: string;
  settings?: Settings;
  /** Language from the user agent ('NODE_JS', 'JAVA', ...). */
  language: string;
  /** Last call, stream message or stream close of this client (ms, the sessions' clock). */
  lastSeenMs: number;
  streams: Set<TelemetryWriter>;
  /** True once the client opened a Telemetry stream (stream-loss expiry applies only then). */
  hadStream: boolean;
}

export class ClientSessions {
  private readonly sessions = new Map<string, ClientSession>();

  constructor(
    private readonly now: () => number,
    private readonly expireMs = 120_000,
    private readonly onRemoved: (session: ClientSession) => void = () => {},
    private readonly streamLostExpireMs = Number.POSITIVE_INFINITY,
  ) {}

  /** The session of `clientId`, created when new; refreshes its last-seen time. */
  touch(clientId: string): ClientSession {
    let s = this.sessions.get(clientId);
    if (!s) {
      s = { clientId, clientType: 'CLIENT_TYPE_UNSPECIFIED', language: 'LANGUAGE_UNSPECIFIED', lastSeenMs: this.now(), streams: new Set(), hadStream: false };
      this.sessions.set(clientId, s);
    }
    s.lastSeenMs = this.now();
    return s;
  }

  /** Adds an open Telemetry stream to the session of `clientId` (created when new). */
  addStream(clientId: string, stream: TelemetryWriter): ClientSession {
    const s = this.touch(clientId);
    s.streams.add(stream);
    s.hadStream = true;
    return s;
  }

  /** A Telemetry stream of `session` closed (ended, cancelled or broken): stream-loss expiry counts from now. */
  streamClosed(session: ClientSession, stream: TelemetryWriter): void {
    session.streams.delete(stream);
    session.lastSeenMs = this.now();
  }

  get(clientId: string): ClientSession | undefined {
    return this.sessions.get(clientId);
  }

  remove(clientId: string): void {
    const s = this.sessions.get(clientId);
    if (!s) return;
    this.sessions.delete(clientId);
    this.onRemoved(s);
  }

  /** Producer sessions with an open Telemetry stream, those publishing `topic` first. */
  producersFor(topic: string): Array<{ session: ClientSession; stream: TelemetryWriter }> {
    const matching: Array<{ session: ClientSession; stream: TelemetryWriter }> = [];
    const others: typeof matching = [];
    for (const s of this.sessions.values()) {
      if (s.clientType !== 'PRODUCER') continue;
      const stream = [...s.streams].find((w) => !w.closed);
      if (!stream) continue;
      const topics = s.settings?.publishing?.topics?.map((t) => t.name) ?? [];
      (topics.includes(topic) ? matching : others).push({ session: s, stream });
    }
    return [...matching, ...others];
  }

  /** Consumer client ids of a group (live sessions). */
  consumersOf(group: string): string[] {
    return [...this.sessions.values()].filter((s) => s.group === group && s.clientType !== 'PRODUCER').map((s) => s.clientId);
  }

  /**
   * Drops sessions silent longer than their expiry: `expireMs` with open streams (which are ended)
   * or without a stream ever, `streamLostExpireMs` (at most `expireMs`) once every stream they had
   * closed; returns how many.
   */
  expire(): number {
    const now = this.now();
    let n = 0;
    for (const [id, s] of [...this.sessions]) {
      for (const w of [...s.streams]) if (w.closed) s.streams.delete(w);
      const limitMs = s.hadStream && s.streams.size === 0 ? Math.min(this.streamLostExpireMs, this.expireMs) : this.expireMs;
      if (now - s.lastSeenMs > limitMs) {
        this.sessions.delete(id);
        for (const w of s.streams) w.end();
        s.streams.clear();
        this.onRemoved(s);
        n++;
      }
    }
    return n;
  }

  get size(): number {
    return this.sessions.size;
  }
}
