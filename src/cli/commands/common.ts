import { homedir } from 'node:os';
import { join } from 'node:path';
import type { BrokerController } from '../../broker/broker-controller.js';
import { GrpcFront } from '../../grpc/grpc-front.js';
import { createLogger } from '../../common/logging/logger.js';

/** Default storePathRootDir for tsmq: `~/tsmq/store`. */
export function defaultStoreRoot(): string {
  return join(homedir(), 'tsmq', 'store');
}

/** `host:port` of a bound socket as `ss -ltn` shows it: the IPv6 any-address `::` as `*`, IPv6 in brackets. */
export function formatBound(host: string, port: number): string {
  if (host === '::' || host === '') return `*:${port}`;
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** True for a bind that accepts connections on every interface. */
function isWildcard(bound: string): boolean {
  return bound.startsWith('*:') || bound.startsWith('0.0.0.0:') || bound.startsWith('[::]:');
}

/** What the start-up banner says about a started broker: effective identity and real binds. */
export interface BrokerBanner {
  brokerName: string;
  /** Effective brokerId (a master always runs as 0, whatever was configured). */
  brokerId: number;
  /** Remoting bind, e.g. `*:10911`. */
  listen: string;
  /** Address registered with the nameservers and handed to clients (brokerIP1:port). */
  brokerAddr: string;
  /** HA bind of a master, null for a slave or when HA is off. */
  ha: string | null;
  /** gRPC bind, null when the front is not running. */
  grpc: string | null;
  storePathRootDir: string;
  flushDiskType: string;
}

export function brokerBanner(broker: BrokerController, cfg: Record<string, string>, grpc: GrpcFront | null): BrokerBanner {
  const config = broker.ctx.config;
  const haMaster = broker.replication?.replication?.master ?? null;
  return {
    brokerName: config.brokerName,
    brokerId: config.brokerId,
    listen: formatBound(broker.listenHost, broker.port),
    brokerAddr: broker.brokerAddr,
    ha: haMaster ? formatBound(haMaster.host, haMaster.port) : null,
    grpc: grpc ? formatBound(grpc.config.grpcListenHost, grpc.port) : null,
    storePathRootDir: config.storePathRootDir,
    flushDiskType: cfg.flushDiskType ?? 'ASYNC_FLUSH',
  };
}

/**
 * `broker broker-a (brokerId 0) listening on *:10911 (clients are given 127.0.0.1:10911), HA *:10912,
 * gRPC 0.0.0.0:8081, store /root/tsmq/store, flushDiskType ASYNC_FLUSH; * and 0.0.0.0 mean every interface`
 */
export function describeBroker(b: BrokerBanner, more: string[] = []): string {
  const parts = [`broker ${b.brokerName} (brokerId ${b.brokerId}) listening on ${b.listen} (clients are given ${b.brokerAddr})`];
  if (b.ha) parts.push(`HA ${b.ha}`);
  if (b.grpc) parts.push(`gRPC ${b.grpc}`);
  parts.push(`store ${b.storePathRootDir}`, `flushDiskType ${b.flushDiskType}`, ...more);
  const wildcard = [b.listen, b.ha, b.grpc].some((x) => x !== null && isWildcard(x));
  return parts.join(', ') + (wildcard ? '; * and 0.0.0.0 mean every interface' : '');
}

/** Starts the gRPC v2 front beside a started broker (GrpcFront.startBeside); null when grpcListenPort < 0. */
export function startGrpcFront(broker: BrokerController, cfg: Record<string, string>): Promise<GrpcFront | null> {
  return GrpcFront.startBeside(broker, cfg, createLogger('grpc'));
}
