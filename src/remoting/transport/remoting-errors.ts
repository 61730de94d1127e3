/**
 * Errors raised by the remoting transport (mirroring Apache's RemotingConnectException,
 * RemotingTimeoutException and RemotingSendRequestException).
 */
import { TsmqError } from '../../common/errors.js';

/** Could not open a connection to the address (refused, unreachable, connect timeout). */
export class RemotingConnectError extends TsmqError {
  constructor(readonly addr: string, message: string, options?: { cause?: unknown }) {
    super('REMOTING_CONNECT', message, options);
  }
}

/** No response arrived within the caller's timeout. The connection stays open. */
export class RemotingTimeoutError extends TsmqError {
  constructor(readonly addr: string, readonly timeoutMs: number, message?: string) {
    super('REMOTING_TIMEOUT', message ?? `wait response on the channel <${addr}> timeout, ${timeoutMs}(ms)`);
  }
}

/** The request could not be written, or the connection closed before the response arrived. */
export class RemotingSendRequestError extends TsmqError {
  constructor(readonly addr: string, message: string, options?: { cause?: unknown }) {
    super('REMOTING_SEND_REQUEST', message, options);
  }
}
