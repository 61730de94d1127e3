/**
 * ACL 2.0 on a remoting port: the RequestGate (src/remoting/transport/request-gate.ts) that
 * authenticates, then authorizes, every request before its handler runs (Apache's broker
 * AuthenticationPipeline + AuthorizationPipeline).
 *
 * - authentication (authenticationEnabled): the request's AccessKey names a user whose password
 *   verifies the Signature over the other extFields and the body (acl-signature.ts). A request
 *   code in authenticationWhitelist is not checked.
 * - authorization (authorizationEnabled): every (resource, actions) pair `contextsOf` derives from
 *   the request must be allowed for that user (auth-evaluator.ts); Super users may do anything.
 * - a refusal answers NO_PERMISSION (16) with Apache's message as remark; it is logged through a
 *   rate-limited log (one line per kind per interval) with the access key, code and resource.
 * - a failure to derive the contexts (undecodable body) is refused the same way with Apache's
 *   "parse authorization context error.".
 * - a code without a handler is checked too (`handled` false), as Apache's broker runs its auth
 *   pipeline before its default processor answers REQUEST_CODE_NOT_SUPPORTED: an unsigned or
 *   wrongly signed caller gets NO_PERMISSION, an authenticated one the not-supported answer.
 */
import type { GateRefusal, RequestGate } from '../remoting/transport/request-gate.js';
import type { RemotingChannel } from '../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../remoting/protocol/remoting-command.js';
import { ResponseCode } from '../remoting/codes/response-code.js';
import { requestCodeName } from '../remoting/codes/request-code.js';
import type { RateLimitedLog } from '../common/logging/rate-limited-log.js';
import { ACCESS_KEY, SIGNATURE, remotingSignContent } from './acl-signature.js';
import type { AuthConfig } from './auth-config.js';
import { AuthenticationError, AuthorizationError } from './auth-error.js';
import { authenticate, authorize, type AuthMetadata, type AuthorizationContext } from './auth-evaluator.js';
import { resourceKey } from './auth-model.js';

/**
 * The (resource, actions) pairs one request touches; the gate fills in username and source IP.
 * `handled` is false for a code the server has no handler for (it will answer
 * REQUEST_CODE_NOT_SUPPORTED once the request passes).
 */
export type RemotingAuthContexts = (request: RemotingCommand, handled: boolean) => Array<Omit<AuthorizationContext, 'username' | 'sourceIp'>>;

export interface RemotingAuthGateOptions {
  config: Pick<AuthConfig, 'authenticationEnabled' | 'authorizationEnabled' | 'authenticationWhitelist' | 'authorizationWhitelist'>;
  metadata: AuthMetadata;
  contextsOf: RemotingAuthContexts;
  /** Refusals are logged here (keys 'auth-authentication', 'auth-authorization'). */
  refusalLog: RateLimitedLog;
  /** Name for log lines, e.g. "broker". */
  name: string;
  /**
   * An explanation appended to a refusal's log line (not to the client's remark), e.g. that
   * ACL 1.0 let this address in (src/auth/v1/plain-acl-white-address.ts); null for none.
   */
  refusalHint?: (sourceIp: string, accessKey: string | undefined) => string | null;
}

/** Source IP of "ip:port" (IPv6 "[::1]:port" too), as Apache's substringBeforeLast(addr, ":"). */
export function sourceIpOf(remoteAddress: string): string {
  const i = remoteAddress.lastIndexOf(':');
  const ip = i < 0 ? remoteAddress : remoteAddress.slice(0, i);
  return ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
}

export class RemotingAuthGate implements RequestGate {
  constructor(private readonly opts: RemotingAuthGateOptions) {}

  /** Whether this gate checks anything at all. */
  get enabled(): boolean {
    return this.opts.config.authenticationEnabled || this.opts.config.authorizationEnabled;
  }

  check(channel: RemotingChannel, request: RemotingCommand, handled = true): GateRefusal | null {
    const { config, metadata } = this.opts;
    const code = String(request.code);
    const ext = request.extFields ?? {};
    const accessKey = typeof ext[ACCESS_KEY] === 'string' ? (ext[ACCESS_KEY] as string) : undefined;
    if (config.authenticationEnabled && !config.authenticationWhitelist.has(code)) {
      try {
        const signature = ext[SIGNATURE];
        authenticate(
          {
            username: accessKey,
            signature: signature === undefined ? undefined : String(signature),
            content: accessKey === undefined ? Buffer.alloc(0) : remotingSignContent(ext, request.body, request.version),
          },
          metadata,
        );
      } catch (e) {
        return this.refuse('auth-authentication', 'authentication', channel, request, accessKey, null, e);
      }
    }
    if (config.authorizationEnabled && !config.authorizationWhitelist.has(code)) {
      let contexts: ReturnType<RemotingAuthContexts>;
      try {
        contexts = this.opts.contextsOf(request, handled);
      } catch (e) {
        const cause = e instanceof AuthorizationError ? e : new AuthorizationError('parse authorization context error.');
        return this.refuse('auth-authorization', 'authorization', channel, request, accessKey, null, cause);
      }
      const sourceIp = sourceIpOf(channel.remoteAddress);
      for (const c of contexts) {
        try {
          authorize({ ...c, username: accessKey, sourceIp }, metadata);
        } catch (e) {
          return this.refuse('auth-authorization', 'authorization', channel, request, accessKey, resourceKey(c.resource), e);
        }
      }
    }
    return null;
  }

  private refuse(logKey: string, what: string, channel: RemotingChannel, request: RemotingCommand, accessKey: string | undefined, resource: string | null, e: unknown): GateRefusal {
    if (!(e instanceof AuthenticationError || e instanceof AuthorizationError)) throw e;
    const hint = this.opts.refusalHint?.(sourceIpOf(channel.remoteAddress), accessKey) ?? null;
    this.opts.refusalLog.warn(
      logKey,
      `${this.opts.name}: ${what} refused for ${requestCodeName(request.code)} (${request.code}) from ${channel.remoteAddress}, AccessKey ${accessKey === undefined ? '(none)' : JSON.stringify(accessKey)}${resource ? `, resource ${resource}` : ''}: ${e.message}${hint ? ` [upgraded from ACL 1.0: ${hint}]` : ''}`,
    );
    return { code: ResponseCode.NO_PERMISSION, remark: e.message };
  }
}
