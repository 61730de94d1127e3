/**
 * The hook a remoting server consults before it runs a request's handler (Apache's
 * `RequestPipeline`, which the broker fills with its authentication and authorization steps).
 *
 * The transport owns only this interface; whoever checks requests (src/auth) implements it, so
 * the remoting layer never imports the checker. Order inside ProcessorTable.dispatch, as in
 * Apache's NettyRemotingAbstract.processRequestCommand:
 *   1. no handler for the code → REQUEST_CODE_NOT_SUPPORTED (3), the gate is not consulted;
 *   2. the gate refuses → the refusal's code and remark are answered (Apache: AbortProcessException
 *      → `createResponseCommand(code, errorMessage)`), the handler does not run; a oneway request
 *      gets no answer;
 *   3. the gate throws → SYSTEM_ERROR (1) with the error message, handler not run.
 */
import type { RemotingChannel } from '../processor/request-processor.js';
import type { RemotingCommand } from '../protocol/remoting-command.js';

/** Why a request was refused: the response code and remark sent back. */
export interface GateRefusal {
  code: number;
  remark: string;
}

export interface RequestGate {
  /** null lets the request through. May be async (a metadata lookup). */
  check(channel: RemotingChannel, request: RemotingCommand): GateRefusal | null | Promise<GateRefusal | null>;
}
