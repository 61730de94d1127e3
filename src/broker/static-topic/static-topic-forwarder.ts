/**
 * Broker-to-broker forwarding for static topics (Apache 5 `RpcClientImpl` as the processors use
 * it): a request on a logic queue item that lives on another broker, already rewritten to that
 * item's physical queue with `lo=false`, is sent to the master of broker `bname` and its answer
 * returned. The master's address comes from the nameservers' cluster info
 * (GET_BROKER_CLUSTER_INFO 106, brokerAddrTable[bname].brokerAddrs["0"]), cached and looked up
 * again on a miss or a failed call.
 *
 * Errors: no nameserver answers, no master for `bname`, or the call fails or times out
 * (forwardTimeoutMs, Apache brokerConfig.forwardTimeout 3000) → Error naming the broker; the
 * rewriting handler turns it into 1 SYSTEM_ERROR, as Apache does.
 */
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createRequestCommand } from '../../remoting/protocol/commands.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { parseLenientJson } from '../config-file/lenient-json.js';
import type { Logger } from '../../common/logging/logger.js';
import { resolveTlsClientOptions } from '../../common/tls/tls-client-config.js';
import type { AuthConfig } from '../../auth/auth-config.js';
import { RemotingClient } from '../../remoting/transport/remoting-client.js';
import { innerRequestSigner } from '../auth/inner-request-signer.js';
import { splitNamesrvAddr } from '../broker-config.js';

/** What the forwarder needs of a remoting client (RemotingClient). */
export interface ForwardingClient {
  invokeSync(addr: string, request: RemotingCommand, timeoutMs: number): Promise<RemotingCommand>;
}

export interface StaticTopicForwarderOptions {
  client: ForwardingClient;
  /** Nameserver addresses ("host:port"), asked in order. */
  namesrvAddrs: () => string[];
  /** Default 3000 ms. */
  forwardTimeoutMs?: number;
}

export class StaticTopicForwarder {
  private readonly masters = new Map<string, string>();
  private readonly timeoutMs: number;

  constructor(private readonly opts: StaticTopicForwarderOptions) {
    this.timeoutMs = opts.forwardTimeoutMs ?? 3000;
  }

  /** Sends a copy of `request` (fresh opaque) to the master of `bname`. @throws Error (see the file comment). */
  async forward(bname: string, request: RemotingCommand): Promise<RemotingCommand> {
    let addr = this.masters.get(bname) ?? (await this.lookup(bname));
    const copy = (): RemotingCommand => createRequestCommand(request.code, request.extFields, request.body);
    try {
      return await this.opts.client.invokeSync(addr, copy(), this.timeoutMs);
    } catch (e) {
      // the broker may have moved: look it up once more
      this.masters.delete(bname);
      const again = await this.lookup(bname);
      if (again === addr) throw new Error(`broker ${bname} (${addr}) cannot be reached: ${(e as Error).message}`);
      addr = again;
      return await this.opts.client.invokeSync(addr, copy(), this.timeoutMs);
    }
  }

  private async lookup(bname: string): Promise<string> {
    let lastError = 'no nameserver configured';
    for (const ns of this.opts.namesrvAddrs()) {
      try {
        const res = await this.opts.client.invokeSync(ns, createRequestCommand(RequestCode.GET_BROKER_CLUSTER_INFO), this.timeoutMs);
        if (res.code !== ResponseCode.SUCCESS || !res.body) {
          lastError = `${ns} answered ${res.code} ${res.remark ?? ''}`;
          continue;
        }
        const info = parseLenientJson(res.body.toString('utf8')) as { brokerAddrTable?: Record<string, { brokerAddrs?: Record<string, string> }> };
        for (const [name, bd] of Object.entries(info.brokerAddrTable ?? {})) {
          const master = bd.brokerAddrs?.['0'];
          if (master) this.masters.set(name, master);
        }
        const found = this.masters.get(bname);
        if (found) return found;
        lastError = `no master of broker ${bname} is registered`;
      } catch (e) {
        lastError = `${ns}: ${(e as Error).message}`;
      }
    }
    throw new Error(`cannot find broker ${bname}: ${lastError}`);
  }
}

/** A forwarder over its own remoting client (ACL-signed and TLS as the nameserver client is); close() at shutdown. */
export function createStaticTopicForwarding(o: {
  namesrvAddr: string;
  rawConfig: Record<string, string>;
  authConfig: AuthConfig;
  logger: Logger;
  forwardTimeoutMs?: number;
}): { forwarder: StaticTopicForwarder; close: () => Promise<void> } {
  const tls = resolveTlsClientOptions(o.rawConfig);
  const client = new RemotingClient({ logger: o.logger, ...(tls ? { tls } : {}), ...innerRequestSigner(o.authConfig) });
  const forwarder = new StaticTopicForwarder({
    client,
    namesrvAddrs: () => splitNamesrvAddr(o.namesrvAddr),
    ...(o.forwardTimeoutMs !== undefined ? { forwardTimeoutMs: o.forwardTimeoutMs } : {}),
  });
  return { forwarder, close: () => client.close() };
}
