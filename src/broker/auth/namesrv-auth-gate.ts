/**
 * Authentication on the nameserver of `tsmq start`, which shares the broker's users
 * (config/users.json): with `authenticationEnabled=true` every nameserver request except a route
 * lookup must be signed by a known, enabled user (remoting-auth-gate.ts; `authenticationWhitelist`
 * adds codes), and is refused with NO_PERMISSION (16) and Apache's remark otherwise. So a forged
 * REGISTER_BROKER cannot hijack routes, and UNREGISTER_BROKER, DELETE_TOPIC_IN_NAMESRV, KV config
 * and cluster/topic listings need credentials; so does a code the nameserver does not serve (NO_PERMISSION
 * before REQUEST_CODE_NOT_SUPPORTED, the broker's order). GET_ROUTEINFO_BY_TOPIC (105) stays open: an
 * unsigned client learns where a topic lives and the broker then refuses it with a clear remark
 * (closing it too would turn every refusal into the client's "No route info"). Nameserver codes
 * name no topic or group resource, so there is no authorization step. Apache's nameserver checks no
 * ACL 2.0 at all; tsmq does so that one switch covers every port.
 *
 * The gate exists before the broker (the nameserver starts first): until `arm()` gives it the
 * broker's users it refuses every request with SYSTEM_BUSY (2), `nameserver is starting`.
 */
import type { AuthConfig } from '../../auth/auth-config.js';
import type { AuthMetadata } from '../../auth/auth-evaluator.js';
import { RemotingAuthGate } from '../../auth/remoting-auth-gate.js';
import type { RateLimitedLog } from '../../common/logging/rate-limited-log.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import type { RemotingChannel } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import type { GateRefusal, RequestGate } from '../../remoting/transport/request-gate.js';

export class NamesrvAuthGate implements RequestGate {
  private inner: RemotingAuthGate | null = null;

  constructor(private readonly refusalLog: RateLimitedLog) {}

  /** Starts checking against the broker's users and switches. */
  arm(config: AuthConfig, metadata: AuthMetadata): void {
    this.inner = new RemotingAuthGate({
      config: { ...config, authorizationEnabled: false, authenticationWhitelist: new Set([...config.authenticationWhitelist, String(RequestCode.GET_ROUTEINFO_BY_TOPIC)]) },
      metadata,
      contextsOf: () => [],
      refusalLog: this.refusalLog,
      name: 'namesrv',
    });
  }

  check(channel: RemotingChannel, request: RemotingCommand, handled: boolean): GateRefusal | null {
    if (!this.inner) return { code: ResponseCode.SYSTEM_BUSY, remark: 'nameserver is starting' };
    return this.inner.check(channel, request, handled);
  }
}
