/**
 * Request processing contract shared by the transport (src/remoting/transport), the
 * nameserver and the broker. One handler per request code, registered in a registry.
 */
import type { RemotingCommand } from '../protocol/remoting-command.js';

/** One accepted client connection, as seen by processors. */
export interface RemotingChannel {
  /** "ip:port" of the peer. */
  readonly remoteAddress: string;
  /** Unique per connection within the process. */
  readonly id: string;
  readonly closed: boolean;
  /**
   * True for a registry entry that carries no remoting traffic: a gRPC client's entry in the
   * producer or consumer manager (src/grpc). Remoting pushes (check-backs, reply messages) skip it.
   */
  readonly standIn?: boolean;
  /** Writes a command (response or server-initiated request). No-op on a closed channel. */
  send(cmd: RemotingCommand): void;
  close(): void;
  /** Registers a callback run once when the connection closes. */
  onClose(listener: () => void): void;
  /**
   * Server-initiated request answered by the peer (matched by opaque), e.g. the broker asking a
   * consumer for its running info (307). Rejects on timeout or a closed connection. Optional:
   * in-memory test channels may not support it.
   */
  invoke?(request: RemotingCommand, timeoutMs: number): Promise<RemotingCommand>;
}

export interface RequestContext {
  channel: RemotingChannel;
  request: RemotingCommand;
  /**
   * Set by the transport's dispatch (ProcessorTable): a handler may return null and answer later
   * through it instead of returning a promise (no promise per request on a hot path). Absent when
   * the handler is called some other way (a wrapper's rewritten request, a test): then the
   * handler answers by what it returns.
   */
  respond?: Responder;
}

/**
 * The later answer of a request whose handler returned null: exactly one call of `answer` (null:
 * no reply) or `fail` (answered SYSTEM_ERROR with the error's message, as a throwing handler is),
 * after which the dispatch treats it as it treats a returned answer (oneway rules, observer).
 */
export interface Responder {
  answer(response: RemotingCommand | null): void;
  fail(err: unknown): void;
}

/**
 * Handles one request. Returns the response, or null when there is no reply now (a oneway
 * request, or a long-polling pull that will answer later through `ctx.channel.send`).
 * A thrown error becomes a SYSTEM_ERROR (1) response with the error message as remark; the
 * connection stays open.
 */
export type RequestHandler = (ctx: RequestContext) => Promise<RemotingCommand | null> | RemotingCommand | null;
