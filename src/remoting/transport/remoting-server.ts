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
import { ProcessorTable } from './processor-table.js';
import { RemotingConnection } from './remoting-connection.js';

export interface RemotingServerOptions {
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
  /**
   * Close connections idle (no bytes either way) this long; default 120000 like Apache's
   * serverChannelMaxIdleTimeSeconds; 0 disables. Clients reconnect on their next call.
   */
  channelMaxIdleMs?: number;
}

export const DEFAULT_CHANNEL_MAX_IDLE_MS = 120_000;

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

  constructor(private readonly opts: RemotingServerOptions) {
    this.logger = opts.logger ?? silentLogger;
    this.name = opts.name ?? 'remoting';
    this.processors = new ProcessorTable(this.logger);
  }

  registerProcessor(code: number, handler: RequestHandler): void {
    this.processors.register(code, handler);
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
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const conn of this.connections.values()) conn.close();
    await closed;
    this.server = null;
    this.logger.info(`${this.name} remoting server stopped`);
  }

  private connectionOf(channel: RemotingChannel): RemotingConnection {
    const conn = this.connections.get(channel.id);
    if (!conn || conn !== channel) throw new Error(`channel ${channel.id} (${channel.remoteAddress}) is not open on the ${this.name} server`);
    return conn;
  }

  private accept(socket: net.Socket): void {
    if (this.stopping) {
      socket.destroy();
      return;
    }
    const conn = new RemotingConnection(socket, {
      id: `${this.name}-${this.nextConnectionId++}`,
      logger: this.logger,
      maxFrameBytes: this.opts.maxFrameBytes,
      maxPendingWriteBytes: this.opts.maxPendingWriteBytes,
      pauseReadOnBackpressure: true,
      maxIdleMs: this.opts.channelMaxIdleMs ?? DEFAULT_CHANNEL_MAX_IDLE_MS,
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
