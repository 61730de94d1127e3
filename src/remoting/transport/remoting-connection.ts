/**
 * One remoting TCP connection (either side): frame decoding, writes with backpressure,
 * and the opaque -> pending-call table for requests this side sent.
 *
 * Inbound requests go to `onRequest`; inbound responses complete the matching pending call
 * (a late response after a timeout is dropped with a debug log). A FrameError closes only this
 * connection. Socket errors are logged and end in 'close'; nothing here throws to the caller's
 * event loop.
 *
 * Output is gathered: `send` encodes the frame at once into a FrameBatch (encode errors are
 * still reported synchronously), and every frame queued in the same event-loop turn goes to the
 * socket in one write at the end of the turn (process.nextTick, which runs after the promise
 * jobs that produced the replies). Under pipelined load this turns one write syscall per
 * response into one per batch of responses; frames keep their order. `close()` writes what is
 * queued first, so a reply sent just before a close is not lost.
 */
import type { Socket } from 'node:net';
import type { Logger } from '../../common/logging/logger.js';
import type { RemotingChannel } from '../processor/request-processor.js';
import type { RemotingCommand } from '../protocol/remoting-command.js';
import { isResponse, markOneway } from '../protocol/commands.js';
import { FrameDecoder, FrameError } from '../protocol/frame-codec.js';
import { FrameBatch } from '../protocol/frame-batch.js';
import { RemotingSendRequestError, RemotingTimeoutError } from './remoting-errors.js';
import type { PartialFrameBudget } from './partial-frame-budget.js';
import type { RateLimitedLog } from '../../common/logging/rate-limited-log.js';
import { TLS_HANDSHAKE_RECORD_TYPE, TLS_ON_PLAINTEXT_PORT_LOG_KEY, tlsOnPlaintextPortWarning } from '../../common/tls/tls-acceptor.js';

/** Above this much unsent output the peer is considered stuck and the connection is closed. */
export const DEFAULT_MAX_PENDING_WRITE_BYTES = 64 * 1024 * 1024;

type WriteCallback = (err?: Error | null) => void;

export interface RemotingConnectionOptions {
  id: string;
  logger: Logger;
  maxFrameBytes?: number;
  maxPendingWriteBytes?: number;
  /**
   * Stop reading while our own output waits for 'drain' (server side: a peer that does not read
   * its responses gets no more requests processed). Keep false on the client side.
   */
  pauseReadOnBackpressure?: boolean;
  /** Close after this long without reads or writes; 0 = never (default). */
  maxIdleMs?: number;
  /**
   * Server-wide budget the bytes of this connection's unfinished frame are charged to; a read
   * that would exceed it closes this connection. Absent: no budget (client side).
   */
  partialFrameBudget?: PartialFrameBudget;
  /** Where bad-input warnings go (rate-limited); absent: `logger` directly, one line per event. */
  badInputLog?: RateLimitedLog;
  /**
   * Server side of a plaintext port (tls.server.mode=disabled): a connection whose first byte is
   * 0x16 (a TLS ClientHello; as a frame length it would be > 369 MB) is closed with the
   * tlsOnPlaintextPortWarning (key TLS_ON_PLAINTEXT_PORT_LOG_KEY) instead of a frame-size error.
   */
  refuseTlsHandshake?: boolean;
  onRequest: (conn: RemotingConnection, request: RemotingCommand) => void;
}

interface PendingCall {
  resolve: (cmd: RemotingCommand) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export class RemotingConnection implements RemotingChannel {
  readonly id: string;
  readonly remoteAddress: string;
  private isClosed = false;
  private readonly pending = new Map<number, PendingCall>();
  private readonly closeListeners: Array<() => void> = [];
  private readonly decoder: FrameDecoder;
  private readonly logger: Logger;
  private readonly maxPendingWriteBytes: number;
  private waitingForDrain = false;
  /** Frames queued this turn, not yet handed to the socket (see the file comment). */
  private readonly out = new FrameBatch();
  private outCallbacks: WriteCallback[] | null = null;
  private flushScheduled = false;
  /** Bytes of the unfinished frame charged to opts.partialFrameBudget. */
  private chargedBytes = 0;
  /** performance.now() when the unfinished frame began (its first byte arrived), or -1. */
  private partialSinceMs = -1;
  /** decoder.framesDecoded when partialSinceMs was taken (a change means a new frame began). */
  private partialFrameSeq = 0;
  /** True until the first read when opts.refuseTlsHandshake is set. */
  private firstReadPending: boolean;
  /** Reads and writes so far (a counter: cheaper per read than refreshing a socket timeout). */
  private activity = 0;
  /** The idle check's timer (opts.maxIdleMs), null without one or once closed. */
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(private readonly socket: Socket, private readonly opts: RemotingConnectionOptions) {
    this.id = opts.id;
    this.logger = opts.logger;
    this.remoteAddress = formatAddress(socket.remoteAddress, socket.remotePort);
    this.maxPendingWriteBytes = opts.maxPendingWriteBytes ?? DEFAULT_MAX_PENDING_WRITE_BYTES;
    this.decoder = new FrameDecoder((cmd) => this.onCommand(cmd), { maxFrameBytes: opts.maxFrameBytes });
    this.firstReadPending = opts.refuseTlsHandshake === true;
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 60_000);
    if (opts.maxIdleMs && opts.maxIdleMs > 0) this.startIdleCheck(opts.maxIdleMs);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('drain', () => this.onDrain());
    socket.on('error', (err) => {
      this.logger.debug(`remoting connection ${this.remoteAddress} error: ${err.message}`);
    });
    socket.on('close', () => this.onSocketClose());
    if (socket.destroyed) queueMicrotask(() => this.onSocketClose());
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Calls still waiting for a response. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /**
   * Encodes `cmd` and queues it for the end-of-turn write. No-op on a closed connection; encode
   * errors are logged. `onWritten` (and the command's own `onWritten`) runs once the frame was
   * handed to the OS (or failed).
   */
  send(cmd: RemotingCommand, onWrittenArg?: WriteCallback): boolean {
    const hook = cmd.onWritten;
    const onWritten: WriteCallback | undefined =
      hook === undefined ? onWrittenArg : onWrittenArg === undefined ? hook : (err) => { onWrittenArg(err); hook(err); };
    if (this.isClosed || this.socket.destroyed) {
      onWritten?.(new RemotingSendRequestError(this.remoteAddress, `connection to ${this.remoteAddress} is closed`));
      return false;
    }
    try {
      this.out.add(cmd);
    } catch (e) {
      this.logger.error(`cannot encode command code=${cmd.code} opaque=${cmd.opaque} for ${this.remoteAddress}: ${(e as Error).message}`);
      onWritten?.(e as Error);
      return false;
    }
    if (onWritten) (this.outCallbacks ??= []).push(onWritten);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      process.nextTick(flushConnection, this);
    }
    return true;
  }

  /** Hands every queued frame to the socket in one write (see the file comment). */
  flushOutput(): void {
    this.flushScheduled = false;
    if (this.out.count === 0) return;
    this.activity++;
    const pieces = this.out.take();
    const callbacks = this.outCallbacks;
    this.outCallbacks = null;
    if (this.socket.destroyed) {
      if (callbacks) {
        const err = new RemotingSendRequestError(this.remoteAddress, `connection to ${this.remoteAddress} closed before the write`);
        for (const cb of callbacks) cb(err);
      }
      return;
    }
    const done: WriteCallback | undefined =
      callbacks === null ? undefined : callbacks.length === 1 ? callbacks[0] : (err) => { for (const cb of callbacks) cb(err); };
    let flushed: boolean;
    if (pieces.length === 1) {
      flushed = this.socket.write(pieces[0]!, done);
    } else {
      // several chunks or large frames: one writev
      this.socket.cork();
      const last = pieces.length - 1;
      for (let i = 0; i < last; i++) this.socket.write(pieces[i]!);
      flushed = this.socket.write(pieces[last]!, done);
      this.socket.uncork();
    }
    if (!flushed) this.onBackpressure();
  }

  /**
   * Sends a request and resolves with the response matched by opaque.
   * `reportedTimeoutMs` (default timeoutMs) is the value named in a timeout error.
   */
  invoke(request: RemotingCommand, timeoutMs: number, reportedTimeoutMs = timeoutMs): Promise<RemotingCommand> {
    if (isResponse(request)) return Promise.reject(new Error('invoke() needs a request, got a response command'));
    if (this.isClosed) {
      return Promise.reject(new RemotingSendRequestError(this.remoteAddress, `connection to ${this.remoteAddress} is closed`));
    }
    if (this.pending.has(request.opaque)) {
      return Promise.reject(new Error(`opaque ${request.opaque} is already waiting for a response on ${this.remoteAddress}`));
    }
    return new Promise<RemotingCommand>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(request.opaque);
        reject(new RemotingTimeoutError(this.remoteAddress, reportedTimeoutMs));
      }, Math.max(0, timeoutMs));
      this.pending.set(request.opaque, { resolve, reject, timer });
      this.send(request, (err) => {
        if (!err) return;
        const call = this.pending.get(request.opaque);
        if (!call) return;
        this.pending.delete(request.opaque);
        clearTimeout(call.timer);
        reject(new RemotingSendRequestError(this.remoteAddress, `send request to <${this.remoteAddress}> failed: ${err.message}`, { cause: err }));
      });
    });
  }

  /** Marks the request oneway and resolves once it has been handed to the OS. */
  invokeOneway(request: RemotingCommand): Promise<void> {
    markOneway(request);
    return new Promise<void>((resolve, reject) => {
      this.send(request, (err) => {
        if (err) reject(new RemotingSendRequestError(this.remoteAddress, `send oneway request to <${this.remoteAddress}> failed: ${err.message}`, { cause: err }));
        else resolve();
      });
    });
  }

  /** Writes what is queued, then destroys the socket. */
  close(): void {
    if (this.socket.destroyed) return;
    if (this.out.count > 0) this.flushOutput();
    if (!this.socket.destroyed) this.socket.destroy();
  }

  onClose(listener: () => void): void {
    if (this.isClosed) queueMicrotask(listener);
    else this.closeListeners.push(listener);
  }

  private onData(chunk: Buffer): void {
    if (this.isClosed) return;
    this.activity++;
    if (this.firstReadPending && chunk.length > 0) {
      this.firstReadPending = false;
      if (chunk[0] === TLS_HANDSHAKE_RECORD_TYPE) {
        this.warnBadInput(TLS_ON_PLAINTEXT_PORT_LOG_KEY, tlsOnPlaintextPortWarning('remoting', this.remoteAddress));
        this.close();
        return;
      }
    }
    try {
      this.decoder.push(chunk);
    } catch (e) {
      if (e instanceof FrameError) {
        this.warnBadInput('bad-frame', `closing remoting connection ${this.remoteAddress}: ${e.message}`);
      } else {
        this.logger.error(`closing remoting connection ${this.remoteAddress} after an unexpected error: ${(e as Error).stack ?? e}`);
      }
      this.close();
      return;
    }
    if (this.isClosed) return;
    this.trackPartialFrame();
  }

  /**
   * Closes the connection once it has had no read and no write for `maxIdleMs` (what
   * `socket.setTimeout` did, without re-arming a timer on every read and write; Apache's
   * IdleStateHandler on channelMaxIdleTimeSeconds). Checked every maxIdleMs / 4, so the close
   * comes between maxIdleMs and 1.25 × maxIdleMs after the last traffic.
   */
  private startIdleCheck(maxIdleMs: number): void {
    let seen = this.activity;
    let quietSinceMs = performance.now();
    this.idleTimer = setInterval(() => {
      const now = performance.now();
      if (this.activity !== seen) {
        seen = this.activity;
        quietSinceMs = now;
        return;
      }
      if (now - quietSinceMs < maxIdleMs) return;
      this.logger.info(`closing idle remoting connection ${this.remoteAddress} (${maxIdleMs}ms without traffic)`);
      this.close();
    }, Math.max(1, Math.floor(maxIdleMs / 4)));
    this.idleTimer.unref();
  }

  /**
   * After a read: notes when the unfinished frame began (for frameOverdueMs) and charges its
   * bytes to the server's budget, closing this connection when the budget is exhausted.
   */
  private trackPartialFrame(): void {
    const buffered = this.decoder.bufferedBytes;
    // frameInProgress, not buffered > 0: once the 4-byte length field is read nothing may be
    // buffered, yet the frame began (its clock must not restart with the first body byte).
    if (!this.decoder.frameInProgress) {
      this.partialSinceMs = -1;
    } else if (this.partialSinceMs < 0 || this.partialFrameSeq !== this.decoder.framesDecoded) {
      this.partialSinceMs = performance.now();
      this.partialFrameSeq = this.decoder.framesDecoded;
    }
    const budget = this.opts.partialFrameBudget;
    if (!budget) return;
    const delta = buffered - this.chargedBytes;
    if (delta < 0) {
      budget.release(-delta);
      this.chargedBytes = buffered;
    } else if (delta > 0) {
      if (budget.tryCharge(delta)) {
        this.chargedBytes = buffered;
      } else {
        this.warnBadInput('partial-frame-budget',
          `closing remoting connection ${this.remoteAddress}: its unfinished frame (${buffered} bytes) would exceed the server-wide budget for unfinished frames (${budget.usedBytes} of ${budget.limitBytes} bytes in use)`);
        this.close();
      }
    }
  }

  /**
   * How long the current unfinished frame has been arriving, ms (0 when no frame is unfinished).
   * A trickle of bytes does not reset it: only completing the frame does.
   */
  frameOverdueMs(nowMs: number): number {
    return this.partialSinceMs < 0 ? 0 : nowMs - this.partialSinceMs;
  }

  /** Bad-input warning through the rate-limited log when there is one. */
  warnBadInput(key: string, message: string): void {
    if (this.opts.badInputLog) this.opts.badInputLog.warn(key, message);
    else this.logger.warn(message);
  }

  private onCommand(cmd: RemotingCommand): void {
    if (!isResponse(cmd)) {
      this.opts.onRequest(this, cmd);
      return;
    }
    const call = this.pending.get(cmd.opaque);
    if (!call) {
      this.logger.debug(`response opaque=${cmd.opaque} from ${this.remoteAddress} matches no pending call (late or unknown)`);
      return;
    }
    this.pending.delete(cmd.opaque);
    clearTimeout(call.timer);
    call.resolve(cmd);
  }

  private onBackpressure(): void {
    if (this.socket.writableLength > this.maxPendingWriteBytes) {
      this.logger.warn(`closing remoting connection ${this.remoteAddress}: ${this.socket.writableLength} bytes of output not drained`);
      this.close();
      return;
    }
    if (this.opts.pauseReadOnBackpressure && !this.waitingForDrain) {
      this.waitingForDrain = true;
      this.socket.pause();
    }
  }

  private onDrain(): void {
    if (this.waitingForDrain) {
      this.waitingForDrain = false;
      if (!this.isClosed) this.socket.resume();
    }
  }

  private onSocketClose(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    if (this.idleTimer !== null) clearInterval(this.idleTimer);
    this.idleTimer = null;
    this.decoder.release();
    this.partialSinceMs = -1;
    if (this.chargedBytes > 0) {
      this.opts.partialFrameBudget?.release(this.chargedBytes);
      this.chargedBytes = 0;
    }
    for (const [opaque, call] of this.pending) {
      clearTimeout(call.timer);
      call.reject(new RemotingSendRequestError(this.remoteAddress, `connection to <${this.remoteAddress}> closed before the response to opaque ${opaque} arrived`));
    }
    this.pending.clear();
    for (const listener of this.closeListeners.splice(0)) {
      try {
        listener();
      } catch (e) {
        this.logger.error(`close listener of ${this.remoteAddress} threw: ${(e as Error).message}`);
      }
    }
  }
}

function flushConnection(conn: RemotingConnection): void {
  conn.flushOutput();
}

/** "ip:port" with IPv4-mapped IPv6 prefixes removed. */
export function formatAddress(host: string | undefined, port: number | undefined): string {
  let h = host ?? 'unknown';
  if (h.startsWith('::ffff:')) h = h.slice(7);
  return `${h}:${port ?? 0}`;
}
