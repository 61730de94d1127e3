/**
 * TCP remoting client (Apache's NettyRemotingClient, minus Netty): one connection per
 * "host:port", opened on demand and re-opened on the next call after it closes. Requests are
 * matched to responses by opaque on their connection.
 *
 * Errors: RemotingConnectError (cannot connect / connect timeout), RemotingTimeoutError (no
 * response in time; the connection stays open), RemotingSendRequestError (write failed or the
 * connection closed before the response arrived).
 */
import net from 'node:net';
import tls from 'node:tls';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import type { RequestHandler } from '../processor/request-processor.js';
import type { RemotingCommand } from '../protocol/remoting-command.js';
import { ProcessorTable } from './processor-table.js';
import { RemotingConnection } from './remoting-connection.js';
import { RemotingConnectError, RemotingTimeoutError } from './remoting-errors.js';

export interface RemotingClientOptions {
  /** Default 3000 ms (Apache's connectTimeoutMillis). */
  connectTimeoutMs?: number;
  logger?: Logger;
  maxFrameBytes?: number;
  /**
   * Connect over TLS (Apache's client `tls.enable=true`). `rejectUnauthorized: false` trusts any
   * server certificate, as Apache's `tls.test.mode.enable=true` client does; give `ca` to verify.
   * Absent: plain TCP.
   */
  tls?: Pick<tls.ConnectionOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;
  /**
   * Runs on every request just before it is sent (Apache's RPCHook.doBeforeRequest), e.g. to sign
   * it with ACL credentials (auth/acl-signature.ts signRemotingCommand). Must not throw.
   */
  beforeRequest?: (request: RemotingCommand) => void;
}

let clientSeq = 0;

export class RemotingClient {
  private readonly logger: Logger;
  private readonly connectTimeoutMs: number;
  private readonly connections = new Map<string, Promise<RemotingConnection>>();
  private readonly processors: ProcessorTable;
  private readonly idPrefix = `client${++clientSeq}`;
  private nextConnectionId = 1;
  private isClosed = false;

  constructor(private readonly opts: RemotingClientOptions = {}) {
    this.logger = opts.logger ?? silentLogger;
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 3000;
    this.processors = new ProcessorTable(this.logger);
  }

  /** Handler for requests the server sends us (unknown codes get REQUEST_CODE_NOT_SUPPORTED). */
  registerProcessor(code: number, handler: RequestHandler): void {
    this.processors.register(code, handler);
  }

  /** Sends `request` to `addr` ("host:port") and waits up to `timeoutMs` (connect time included). */
  async invokeSync(addr: string, request: RemotingCommand, timeoutMs: number): Promise<RemotingCommand> {
    const started = performance.now();
    const conn = await this.connection(addr, Math.min(this.connectTimeoutMs, timeoutMs));
    this.opts.beforeRequest?.(request);
    const left = timeoutMs - (performance.now() - started);
    if (left <= 0) throw new RemotingTimeoutError(addr, timeoutMs, `invokeSync call the addr[${addr}] timeout`);
    return conn.invoke(request, left, timeoutMs);
  }

  /** Sends `request` with the oneway flag; resolves when it is written. */
  async invokeOneway(addr: string, request: RemotingCommand): Promise<void> {
    const conn = await this.connection(addr, this.connectTimeoutMs);
    this.opts.beforeRequest?.(request);
    await conn.invokeOneway(request);
  }

  /** Closes every connection; pending calls reject. Later calls fail. */
  async close(): Promise<void> {
    this.isClosed = true;
    const conns = await Promise.allSettled([...this.connections.values()]);
    this.connections.clear();
    await Promise.all(
      conns.map((r) => {
        if (r.status !== 'fulfilled' || r.value.closed) return undefined;
        return new Promise<void>((resolve) => {
          r.value.onClose(resolve);
          r.value.close();
        });
      }),
    );
  }

  /** Closes the connection to `addr` if open (the next call reconnects). */
  closeConnection(addr: string): void {
    const p = this.connections.get(addr);
    if (!p) return;
    this.connections.delete(addr);
    p.then((c) => c.close(), () => undefined);
  }

  private async connection(addr: string, timeoutMs: number): Promise<RemotingConnection> {
    for (;;) {
      if (this.isClosed) throw new RemotingConnectError(addr, 'remoting client is closed');
      const existing = this.connections.get(addr);
      if (!existing) break;
      const conn = await existing; // a failed connect rejects every caller that waited on it
      if (!conn.closed) return conn;
      if (this.connections.get(addr) === existing) {
        this.connections.delete(addr);
        break;
      }
    }
    const created = this.connect(addr, timeoutMs);
    this.connections.set(addr, created);
    created.catch(() => {
      if (this.connections.get(addr) === created) this.connections.delete(addr);
    });
    return created;
  }

  private connect(addr: string, timeoutMs: number): Promise<RemotingConnection> {
    const { host, port } = parseAddress(addr);
    return new Promise<RemotingConnection>((resolve, reject) => {
      const secure = this.opts.tls;
      const socket = secure ? tls.connect({ host, port, ...secure, ...(secure.servername === undefined && net.isIP(host) === 0 ? { servername: host } : {}) }) : net.connect({ host, port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new RemotingConnectError(addr, `connect to <${addr}> timed out after ${timeoutMs}ms`));
      }, timeoutMs);
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(new RemotingConnectError(addr, `connect to <${addr}> failed: ${err.message}`, { cause: err }));
      });
      socket.once(secure ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        const conn = new RemotingConnection(socket, {
          id: `${this.idPrefix}-${this.nextConnectionId++}`,
          logger: this.logger,
          maxFrameBytes: this.opts.maxFrameBytes,
          pauseReadOnBackpressure: false,
          onRequest: (c, request) => {
            void this.processors.dispatch(c, request);
          },
        });
        conn.onClose(() => this.logger.debug(`connection to ${addr} closed`));
        if (this.isClosed) conn.close();
        resolve(conn);
      });
    });
  }
}

/** Splits "host:port" or "[v6]:port". Throws RemotingConnectError for a malformed address. */
export function parseAddress(addr: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(addr) ?? /^([^:]+|.*:.*):(\d+)$/.exec(addr);
  const port = m ? Number(m[2]) : Number.NaN;
  if (!m || !m[1] || !Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new RemotingConnectError(addr, `invalid address "${addr}", expected host:port`);
  }
  return { host: m[1], port };
}
