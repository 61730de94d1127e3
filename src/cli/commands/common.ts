import { homedir } from 'node:os';
import { join } from 'node:path';

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
