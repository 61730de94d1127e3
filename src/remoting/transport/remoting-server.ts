/**
 * TCP remoting server (Apache's NettyRemotingServer, minus Netty).
 *
 * Each accepted socket becomes a RemotingConnection: frames -> ProcessorTable -> reply.
 * A garbage frame closes only that connection. Responses from clients to server-initiated
 * requests (invoke) are matched by opaque on their connection.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import type { RemotingChannel, RequestHandler } from '../processor/request-processor.js';
import type { RemotingCommand } from '../protocol/remoting-command.js';
import { ProcessorTable, type ResponseObserver } from './processor-table.js';
import type { RequestGate } from './request-gate.js';
import { RemotingConnection, formatAddress } from './remoting-connection.js';
import { PartialFrameBudget } from './partial-frame-budget.js';
import { acceptTls } from '../../common/tls/tls-acceptor.js';
import { TLS_DISABLED, type TlsServerSettings } from '../../common/tls/tls-server-config.js';
import { RateLimitedLog, DEFAULT_BAD_INPUT_LOG_INTERVAL_MS } from '../../common/logging/rate-limited-log.js';
import {
  DEFAULT_CHANNEL_MAX_IDLE_MS,
  DEFAULT_FRAME_READ_TIMEOUT_MS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_PARTIAL_FRAME_BUDGET_BYTES,
  type RemotingServerLimits,
} from './remoting-server-config.js';

export interface RemotingServerOptions extends RemotingServerLimits {
  /** 0 picks a free port (read it back from `port`). */
  listenPort: number;
  /** Listen address; default: all interfaces. */
  host?: string;
  logger?: Logger;
  /** Frame limit including the length field; default 16 MiB (Apache's frameMaxLength). */
  maxFrameBytes?: number;
  /** Name used in logs and channel ids, e.g. "namesrv". */
  name?: string;
  /** Unsent output above which a connection is closed; default 64 MiB. */
  maxPendingWriteBytes?: number;
  /** Minimum time between two bad-input warnings of one kind, ms; default 10000. */
  badInputLogIntervalMs?: number;
  /** Check run before every request handler (authentication/authorization); see request-gate.ts. */
  requestGate?: RequestGate;
  /** `tls.server.*` settings (tls-server-config.ts); default: TLS disabled. */
  tls?: TlsServerSettings;
}

export { DEFAULT_CHANNEL_MAX_IDLE_MS } from './remoting-server-config.js';

export class RemotingServer {
  private readonly logger: Logger;
  private readonly name: string;
  private readonly processors: ProcessorTable;
  private readonly connections = new Map<string, RemotingConnection>();
  private readonly closeListeners: Array<(ch: RemotingChannel) => void> = [];
  private server: net.Server | null = null;
  private boundPort = -1;
  private boundHost = '';
  private nextConnectionId = 1;
  private stopping = false;
  private readonly partialFrameBudget: PartialFrameBudget;
  private readonly badInputLog: RateLimitedLog;
  private readonly maxConnections: number;
  private readonly frameReadTimeoutMs: number;
  private frameDeadlineTimer: NodeJS.Timeout | null = null;

  constructor(private readonly opts: RemotingServerOptions) {
    this.logger = opts.logger ?? silentLogger;
    this.name = opts.name ?? 'remoting';
    this.processors = new ProcessorTable(this.logger);
    if (opts.requestGate) this.processors.setGate(opts.requestGate);
    this.partialFrameBudget = new PartialFrameBudget(opts.partialFrameBudgetBytes ?? DEFAULT_PARTIAL_FRAME_BUDGET_BYTES);
    this.badInputLog = new RateLimitedLog(this.logger, opts.badInputLogIntervalMs ?? DEFAULT_BAD_INPUT_LOG_INTERVAL_MS);
    this.maxConnections = opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
    this.frameReadTimeoutMs = opts.frameReadTimeoutMs ?? DEFAULT_FRAME_READ_TIMEOUT_MS;
  }

  /** Bytes of unfinished inbound frames held over all connections now. */
  get partialFrameBytes(): number {
    return this.partialFrameBudget.usedBytes;
  }

  registerProcessor(code: number, handler: RequestHandler): void {
    this.processors.register(code, handler);
  }

  /** Explains an unsupported `code` after Apache's remark (processor-table.ts). */
  retireCode(code: number, why: string): void {
    this.processors.retire(code, why);
  }

  /** Hears every request answered by a handler, with its latency (processor-table.ts). */
  setResponseObserver(observer: ResponseObserver | null): void {
    this.processors.setResponseObserver(observer);
  }

  /** Listening port; throws before start(). */
  get port(): number {
    if (this.boundPort < 0) throw new Error(`${this.name} server is not started`);
    return this.boundPort;
  }

  /** Address actually bound (`::` or `0.0.0.0` = every interface); throws before start(). */
  get host(): string {
    if (this.boundPort < 0) throw new Error(`${this.name} server is not started`);
    return this.boundHost;
  }

  /** Open connections. */
  get channels(): RemotingChannel[] {
    return [...this.connections.values()];
  }

  /** Called once per connection when it closes (after its own onClose listeners). */
  onChannelClose(listener: (ch: RemotingChannel) => void): void {
    this.closeListeners.push(listener);
  }

  start(): Promise<void> {
    if (this.server) return Promise.reject(new Error(`${this.name} server already started`));
    const server = net.createServer((socket) => this.accept(socket));
    this.server = server;
    server.on('error', (err) => this.logger.error(`${this.name} server error: ${err.message}`));
    return new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => {
        this.server = null;
        reject(err);
      };
      server.once('error', onError);
      server.listen({ port: this.opts.listenPort, host: this.opts.host }, () => {
        server.off('error', onError);
        const bound = server.address() as AddressInfo;
        this.boundPort = bound.port;
        this.boundHost = bound.address;
        this.logger.info(`${this.name} remoting server listening on ${this.opts.host ?? '*'}:${this.boundPort}`);
        this.startFrameDeadlineCheck();
        resolve();
      });
    });
  }

  /**
   * Server-initiated request on one of this server's channels; resolves with the client's
   * response (matched by opaque). Rejects with RemotingTimeoutError / RemotingSendRequestError.
   */
  invoke(channel: RemotingChannel, request: RemotingCommand, timeoutMs: number): Promise<RemotingCommand> {
    return this.connectionOf(channel).invoke(request, timeoutMs);
  }

  /** Server-initiated oneway request (flag bit 1 set; no response expected). */
  invokeOneway(channel: RemotingChannel, request: RemotingCommand): Promise<void> {
    return this.connectionOf(channel).invokeOneway(request);
  }

  /** Stops accepting, closes every connection (pending invokes reject) and waits for the close. */
  async shutdown(): Promise<void> {
    const server = this.server;
    if (!server || this.stopping) return;
    this.stopping = true;
    if (this.frameDeadlineTimer) clearInterval(this.frameDeadlineTimer);
    this.frameDeadlineTimer = null;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const conn of this.connections.values()) conn.close();
    for (const socket of this.sniffing) socket.destroy();
    await closed;
    this.server = null;
    this.logger.info(`${this.name} remoting server stopped`);
  }

  private connectionOf(channel: RemotingChannel): RemotingConnection {
    const conn = this.connections.get(channel.id);
    if (!conn || conn !== channel) throw new Error(`channel ${channel.id} (${channel.remoteAddress}) is not open on the ${this.name} server`);
    return conn;
  }

  /** Closes connections whose unfinished frame is older than frameReadTimeoutMs; checked 4 times per timeout (at most every second). */
  private startFrameDeadlineCheck(): void {
    const timeoutMs = this.frameReadTimeoutMs;
    if (!(timeoutMs > 0)) return;
    const everyMs = Math.max(10, Math.min(1000, Math.floor(timeoutMs / 4)));
    this.frameDeadlineTimer = setInterval(() => {
      const now = performance.now();
      for (const conn of this.connections.values()) {
        const ageMs = conn.frameOverdueMs(now);
        if (ageMs > timeoutMs) {
          conn.warnBadInput('frame-read-timeout',
            `closing remoting connection ${conn.remoteAddress}: a frame begun ${Math.round(ageMs)} ms ago is still incomplete (serverFrameReadTimeoutMs=${timeoutMs})`);
          conn.close();
        }
      }
    }, everyMs);
    this.frameDeadlineTimer.unref();
  }

  /** Sockets accepted and still waiting for their first byte (permissive TLS mode). */
  private readonly sniffing = new Set<net.Socket>();

  private accept(socket: net.Socket): void {
    if (this.stopping) {
      socket.destroy();
      return;
    }
    if (this.maxConnections > 0 && this.connections.size + this.sniffing.size >= this.maxConnections) {
      this.badInputLog.warn('connection-limit',
        `${this.name}: refusing connection from ${formatAddress(socket.remoteAddress, socket.remotePort)}: ${this.connections.size} connections are open (serverMaxConnections=${this.maxConnections})`);
      socket.on('error', () => {});
      socket.destroy();
      return;
    }
    const tls = this.opts.tls ?? TLS_DISABLED;
    const handshakeTimeoutMs = this.frameReadTimeoutMs;
    if (tls.mode !== 'permissive') {
      acceptTls(socket, tls, (stream) => {
        this.open(stream);
      }, { handshakeTimeoutMs });
      return;
    }
    this.sniffing.add(socket);
    socket.once('close', () => this.sniffing.delete(socket));
    acceptTls(socket, tls, (stream) => {
      this.sniffing.delete(socket);
      if (this.stopping) stream.destroy();
      else this.open(stream);
    }, { firstByteTimeoutMs: this.opts.channelMaxIdleMs ?? DEFAULT_CHANNEL_MAX_IDLE_MS, handshakeTimeoutMs });
  }

  /** Wraps an accepted stream (plain or TLS) into a RemotingConnection and tracks it. */
  private open(socket: net.Socket): void {
    const conn = new RemotingConnection(socket, {
      id: `${this.name}-${this.nextConnectionId++}`,
      logger: this.logger,
      maxFrameBytes: this.opts.maxFrameBytes,
      maxPendingWriteBytes: this.opts.maxPendingWriteBytes,
      pauseReadOnBackpressure: true,
      maxIdleMs: this.opts.channelMaxIdleMs ?? DEFAULT_CHANNEL_MAX_IDLE_MS,
      partialFrameBudget: this.partialFrameBudget,
      badInputLog: this.badInputLog,
      refuseTlsHandshake: (this.opts.tls ?? TLS_DISABLED).mode === 'disabled',
      onRequest: (c, request) => {
        void this.processors.dispatch(c, request);
      },
    });
    this.connections.set(conn.id, conn);
    this.logger.debug(`${this.name}: connection ${conn.id} from ${conn.remoteAddress}`);
    conn.onClose(() => {
      this.connections.delete(conn.id);
      this.logger.debug(`${this.name}: connection ${conn.id} from ${conn.remoteAddress} closed`);
      for (const listener of this.closeListeners) {
        try {
          listener(conn);
        } catch (e) {
          this.logger.error(`${this.name}: channel close listener threw: ${(e as Error).message}`);
        }
      }
    });
  }
}
