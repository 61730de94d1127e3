/**
 * The hook a remoting server consults before it runs a request's handler (Apache's
 * `RequestPipeline`, which the broker fills with its authentication and authorization steps).
 *
 * The transport owns only this interface; whoever checks requests (src/auth) implements it, so
 * the remoting layer never imports the checker. Order inside ProcessorTable.dispatch, as in
 * Apache's NettyRemotingAbstract.processRequestCommand:
 *   1. the gate is consulted for every code, a code without a handler too (`handled` false): Apache's
 *      broker and nameserver register a default processor, so an unknown code reaches the request
 *      pipeline before the default processor answers it;
 *   2. the gate refuses → the refusal's code and remark are answered (Apache: AbortProcessException
 *      → `createResponseCommand(code, errorMessage)`), the handler does not run; a oneway request
 *      gets no answer;
 *   3. the gate throws → SYSTEM_ERROR (1) with the error message, handler not run;
 *   4. the gate lets it through and no handler exists → REQUEST_CODE_NOT_SUPPORTED (3) (Apache's
 *      default processors: AdminBrokerProcessor, namesrv DefaultRequestProcessor).
 */
import type { RemotingChannel } from '../processor/request-processor.js';
import type { RemotingCommand } from '../protocol/remoting-command.js';

/** Why a request was refused: the response code and remark sent back. */
export interface GateRefusal {
  code: number;
  remark: string;
}

export interface RequestGate {
  /**
   * null lets the request through. May be async (a metadata lookup). `handled` is false for a
   * code with no handler (answered REQUEST_CODE_NOT_SUPPORTED if let through).
   */
  check(channel: RemotingChannel, request: RemotingCommand, handled: boolean): GateRefusal | null | Promise<GateRefusal | null>;
}
