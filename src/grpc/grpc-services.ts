/**
 * Everything the gRPC handlers share (built once by GrpcFront), plus the small helpers every
 * handler uses: metadata, peer address, advertised endpoints, unary wrapper.
 */
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '../common/logging/logger.js';
import type { SocketAddress } from '../common/message/message.js';
import { socketAddressOf } from '../common/message/msgid.js';
import type { BrokerContext } from '../broker/broker-context.js';
import type { PopService } from '../broker/pop/pop-service.js';
import type { TransactionalMessageService } from '../broker/transaction/transactional-message-service.js';
import type { RecallMessageService } from '../broker/timer/recall-message-service.js';
import type { ClientSessions } from './client-sessions.js';
import type { GrpcConfig } from './grpc-config.js';
import { Code, status, type Endpoints, type Status } from './proto/v2-types.js';
import type { ReceiptRenewer } from './receipt-renewer.js';
import type { GrpcClientRegistration } from './client-registration.js';
import type { ClusterRoutes } from './cluster-route.js';

export interface GrpcServices {
  ctx: BrokerContext;
  config: GrpcConfig;
  pop: PopService;
  /** Recall of timer messages (the broker's, src/broker/timer). */
  recall: RecallMessageService;
  transactions: TransactionalMessageService;
  sessions: ClientSessions;
  /** Mirrors producer and consumer sessions into the broker's ProducerManager / ConsumerManager (mqadmin producerConnection, consumerConnection). */
  registration: GrpcClientRegistration;
  renewer: ReceiptRenewer;
  /** The topic's queues on the other brokers (from the nameservers); absent without a nameserver. */
  clusterRoutes?: ClusterRoutes;
  logger: Logger;
  /** Port the gRPC server listens on (known after bind). */
  port(): number;
  /** True once shutdown began: long polls end at once. */
  stopping(): boolean;
}

/** `x-mq-client-id` of a call, '' when absent. */
export function clientIdOf(call: { metadata: grpc.Metadata }): string {
  const v = call.metadata.get('x-mq-client-id')[0];
  return v === undefined ? '' : String(v);
}

/** The peer of a call as a SocketAddress (0.0.0.0:0 when unparseable). Handles "ipv4:1.2.3.4:5", "[::1]:5", "1.2.3.4:5". */
export function peerAddress(peer: string): SocketAddress {
  try {
    const text = peer.replace(/^ipv[46]:/, '');
    const i = text.lastIndexOf(':');
    const host = text.slice(0, i).replace(/^\[|\]$/g, '');
    const port = Number(text.slice(i + 1));
    return socketAddressOf(host === 'localhost' ? '127.0.0.1' : host, Number.isInteger(port) ? port : 0);
  } catch {
    return socketAddressOf('0.0.0.0', 0);
  }
}

/**
 * Endpoints put into routes (where clients send everything else): the access point the client
 * used when it names one, else brokerIP1:<gRPC port>.
 */
export function advertisedEndpoints(s: GrpcServices, accessPoint: Endpoints | null | undefined): Endpoints {
  const first = accessPoint?.addresses?.[0];
  if (first && first.host && first.port > 0) {
    return { scheme: accessPoint!.scheme || schemeOf(first.host), addresses: [{ host: first.host, port: first.port }] };
  }
  const host = s.ctx.config.brokerIP1;
  return { scheme: schemeOf(host), addresses: [{ host, port: s.port() }] };
}

function schemeOf(host: string): string {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host)) return 'IPv4';
  if (host.includes(':')) return 'IPv6';
  return 'DOMAIN_NAME';
}

/** Wraps an async unary handler: a thrown error becomes `{status: INTERNAL_ERROR}` (never a gRPC error). */
export function unary<Req, Res>(
  s: GrpcServices,
  name: string,
  fn: (req: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res> | Res,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    Promise.resolve()
      .then(() => fn(call.request, call))
      .then(
        (res) => callback(null, res),
        (e: Error) => {
          s.logger.error(`${name} failed: ${e.stack ?? e.message}`);
          callback(null, { status: status(Code.INTERNAL_SERVER_ERROR, e.message) } as unknown as Res);
        },
      );
  };
}

export type StatusOnly = { status: Status };
