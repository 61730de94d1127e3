import { homedir } from 'node:os';
import { join } from 'node:path';
import type { BrokerController } from '../../broker/broker-controller.js';
import { GrpcFront } from '../../grpc/grpc-front.js';
import { createLogger } from '../../common/logging/logger.js';

/** Default storePathRootDir for tsmq: `~/tsmq/store`. */
export function defaultStoreRoot(): string {
  return join(homedir(), 'tsmq', 'store');
}

export function describeBroker(cfg: Record<string, string>, port: number): string {
  const name = cfg.brokerName ?? 'broker-a';
  const id = cfg.brokerId ?? '0';
  const ip = cfg.brokerIP1 ?? '127.0.0.1';
  return `broker ${name} (brokerId ${id}) at ${ip}:${port}, store ${cfg.storePathRootDir}, flushDiskType ${cfg.flushDiskType ?? 'ASYNC_FLUSH'}`;
}

/**
 * Starts the gRPC v2 front beside a started broker when `grpcListenPort` ≥ 0 (default 8081),
 * sharing the broker's services and transaction service. Returns null when disabled.
 */
export async function startGrpcFront(broker: BrokerController, cfg: Record<string, string>): Promise<GrpcFront | null> {
  if (!GrpcFront.isEnabled(cfg)) return null;
  const front = await GrpcFront.create({ ctx: broker.ctx, rawConfig: cfg, transactions: broker.transactionService, logger: createLogger('grpc') });
  await front.start();
  broker.addMessageArrivingListener((topic) => front.notifyMessageArriving(topic));
  return front;
}
