/**
 * Request code -> handler table and the dispatch rules of Apache's NettyRemotingAbstract:
 * - no handler: REQUEST_CODE_NOT_SUPPORTED (3), remark ` request type <code> not supported`, and
 *   for a code `retire()`d (one a caller may still send, e.g. ACL 1.0's 50-54 after an upgrade)
 *   ` (<what to use instead>)` after it (tsmq addition); a gate, when set, runs first (Apache's
 *   broker and nameserver send unknown codes to a default processor, behind the auth pipeline);
 * - handler throws (HeaderError included): SYSTEM_ERROR (1), remark = the error message;
 * - a returned response gets the request's opaque, the response flag and the request's
 *   serialize type; null means "no reply now" (the handler may answer later via the channel);
 * - requests flagged oneway never get a reply (a response's `onWritten` hook then runs at once
 *   with an error, so what the response holds is given back);
 * - a RequestGate (request-gate.ts), when set, runs before the handler (or the not-supported
 *   answer); its refusal is answered instead;
 * - a ResponseObserver, when set, hears each handler's answer with its latency (ms from the
 *   handler's call to its answer) and whether the request was oneway (Apache records those with
 *   result "oneway"); a handler that throws is heard with SYSTEM_ERROR, as Apache writes its
 *   SYSTEM_ERROR answer through the same path. Answers sent later through the channel (held
 *   pulls) and gate refusals are not observed. Timing lives here rather than in a wrapper per
 *   handler so that a timed request costs no extra promise.
 */
import type { Logger } from '../../common/logging/logger.js';
import type { RemotingChannel, RequestContext, RequestHandler, Responder } from '../processor/request-processor.js';
import type { RemotingCommand } from '../protocol/remoting-command.js';
import { RPC_TYPE_RESPONSE } from '../protocol/remoting-command.js';
import { createResponseCommand, isOneway } from '../protocol/commands.js';
import { ResponseCode } from '../codes/response-code.js';
import { requestCodeName } from '../codes/request-code.js';
import type { RequestGate } from './request-gate.js';

/** Hears each answered request: its code, the answer's code, the handler's latency in ms and whether the request was oneway. */
export type ResponseObserver = (requestCode: number, responseCode: number, latencyMs: number, oneway: boolean) => void;

export class ProcessorTable {
  private readonly handlers = new Map<number, RequestHandler>();

  private readonly retired = new Map<number, string>();
  private gate: RequestGate | null = null;
  private observer: ResponseObserver | null = null;

  constructor(private readonly logger: Logger) {}

  /** Sets the check run before every handler (request-gate.ts); null removes it. */
  setGate(gate: RequestGate | null): void {
    this.gate = gate;
  }

  /** Sets the observer of answered requests; null removes it. */
  setResponseObserver(observer: ResponseObserver | null): void {
    this.observer = observer;
  }

  register(code: number, handler: RequestHandler): void {
    if (!Number.isInteger(code)) throw new RangeError(`request code must be an integer: ${code}`);
    this.handlers.set(code, handler);
  }

  /** Explains `code` when it has no handler: `why` follows Apache's remark, for the caller and in the log. */
  retire(code: number, why: string): void {
    this.retired.set(code, why);
  }

  has(code: number): boolean {
    return this.handlers.has(code);
  }

  /**
   * Runs the handler for `request` and writes its reply. Never rejects. A handler that answers at
   * once is answered synchronously; one that returns a promise is answered when it settles (no
   * async function of its own: one promise per request less), and the promise returned here
   * settles after that. A handler that returns null and answers later through its context's
   * `respond` (RequestContext.respond) is answered when it calls it: the promise returned here
   * may settle before that.
   */
  dispatch(channel: RemotingChannel, request: RemotingCommand): Promise<void> {
    if (this.gate) return this.dispatchGated(channel, request);
    const oneway = isOneway(request);
    const handler = this.handlers.get(request.code);
    if (!handler) {
      this.notSupported(channel, request, oneway);
      return DISPATCHED;
    }
    const rc = new PendingRequest(this, channel, request, oneway);
    rc.t0 = this.observer ? performance.now() : 0;
    let out: ReturnType<RequestHandler>;
    try {
      out = handler(rc);
    } catch (e) {
      this.failed(channel, request, oneway, rc.t0, e);
      return DISPATCHED;
    }
    if (out instanceof Promise) {
      return out.then(
        (response) => this.answer(channel, request, oneway, rc.t0, response),
        (e: unknown) => this.failed(channel, request, oneway, rc.t0, e),
      );
    }
    this.answer(channel, request, oneway, rc.t0, out);
    return DISPATCHED;
  }

  /** `dispatch` with a RequestGate: the gate's check first (it may wait), then the handler. */
  private async dispatchGated(channel: RemotingChannel, request: RemotingCommand): Promise<void> {
    const oneway = isOneway(request);
    const handler = this.handlers.get(request.code);
    let response: RemotingCommand | null;
    const rc = new PendingRequest(this, channel, request, oneway); // rc.t0 > 0 once the handler was called with an observer set
    try {
      const refusal = await this.gate!.check(channel, request, handler !== undefined);
      if (refusal) {
        if (!oneway) channel.send(createResponseCommand(request, refusal.code, refusal.remark));
        return;
      }
      if (!handler) {
        this.notSupported(channel, request, oneway);
        return;
      }
      rc.t0 = this.observer ? performance.now() : 0;
      response = await handler(rc);
    } catch (e) {
      this.failed(channel, request, oneway, rc.t0, e);
      return;
    }
    this.answer(channel, request, oneway, rc.t0, response);
  }

  private notSupported(channel: RemotingChannel, request: RemotingCommand, oneway: boolean): void {
    const why = this.retired.get(request.code);
    const remark = ` request type ${request.code} not supported${why ? ` (${why})` : ''}`;
    this.logger.warn(`${channel.remoteAddress}${remark}`);
    if (!oneway) channel.send(createResponseCommand(request, ResponseCode.REQUEST_CODE_NOT_SUPPORTED, remark));
  }

  /** A handler threw (or its promise rejected): SYSTEM_ERROR with the error's message. `t0` > 0: the handler was timed. */
  /** @internal PendingRequest's way in. */
  failed(channel: RemotingChannel, request: RemotingCommand, oneway: boolean, t0: number, e: unknown): void {
    if (this.observer && t0 > 0) this.observer(request.code, ResponseCode.SYSTEM_ERROR, performance.now() - t0, oneway);
    const message = e instanceof Error ? e.message : String(e);
    this.logger.warn(`processing ${requestCodeName(request.code)} from ${channel.remoteAddress} failed: ${message}`);
    if (!oneway) channel.send(createResponseCommand(request, ResponseCode.SYSTEM_ERROR, message));
  }

  /** Writes a handler's answer (none when null or for a oneway request) and tells the observer. */
  /** @internal PendingRequest's way in. */
  answer(channel: RemotingChannel, request: RemotingCommand, oneway: boolean, t0: number, response: RemotingCommand | null): void {
    if (this.observer && response && t0 > 0) this.observer(request.code, response.code, performance.now() - t0, oneway);
    if (!response) return;
    if (oneway) {
      // never written: its write hook (a pull reply's store body, read-cache leases) still runs once
      response.onWritten?.(new Error('response to a oneway request is not sent'));
      return;
    }
    // createResponseCommand already sets all three; copy only a response built some other way
    if (
      response.opaque === request.opaque &&
      (response.flag & RPC_TYPE_RESPONSE) !== 0 &&
      response.serializeTypeCurrentRPC === request.serializeTypeCurrentRPC
    ) {
      channel.send(response);
      return;
    }
    channel.send({
      ...response,
      opaque: request.opaque,
      flag: response.flag | RPC_TYPE_RESPONSE,
      serializeTypeCurrentRPC: request.serializeTypeCurrentRPC,
    });
  }
}

/**
 * The context a dispatched handler gets: channel, request and, as its `respond`, itself — a
 * handler that returned null answers through `answer` / `fail` later (RequestContext.respond).
 */
class PendingRequest implements RequestContext, Responder {
  /** performance.now() when the handler was called with an observer set, else 0. */
  t0 = 0;
  readonly respond: Responder = this;

  constructor(
    private readonly table: ProcessorTable,
    readonly channel: RemotingChannel,
    readonly request: RemotingCommand,
    private readonly oneway: boolean,
  ) {}

  answer(response: RemotingCommand | null): void {
    this.table.answer(this.channel, this.request, this.oneway, this.t0, response);
  }

  fail(err: unknown): void {
    this.table.failed(this.channel, this.request, this.oneway, this.t0, err);
  }
}

/** What `dispatch` returns once it answered synchronously. */
const DISPATCHED: Promise<void> = Promise.resolve();
