/**
 * The store's replication role, started by `DefaultMessageStore.startHA` once the broker knows
 * its ports (RocketMQ starts its HA service inside `DefaultMessageStore.start`):
 *
 *   - ASYNC_MASTER / SYNC_MASTER: an HAService listening on the HA port (ha-service.ts);
 *     SYNC_MASTER puts wait for a slave ack through `handleHA`.
 *   - SLAVE: an HAClient replicating from the master (ha-client.ts).
 */
import type { Logger } from '../../common/logging/logger.js';
import type { CommitLog } from '../commitlog/commit-log.js';
import type { StoreConfig } from '../store-config.js';
import { HAClient, type HAClientStats, type ReplicaStore } from './ha-client.js';
import { HAService, type HAServiceStats, type HandleHAResult } from './ha-service.js';
import type { TruncateReport } from './replicated-log.js';
import type { TlsServerSettings } from '../../common/tls/tls-server-config.js';
import type { TlsClientOptions } from '../../common/tls/tls-client-config.js';

export interface StartHAOptions {
  /** Master roles: HA port to listen on (0 = any free port). */
  listenPort: number;
  /** Master roles: listen address (default all interfaces). */
  host?: string;
  /** SLAVE: the master's HA address; default the store's `haMasterAddress` (may be learned later). */
  masterAddress?: string | null;
  /** SLAVE: reconnect delay (default 5000 ms, RocketMQ). */
  reconnectIntervalMs?: number;
  /** Master roles: TLS of the HA port (`tls.server.*`, same switch as the remoting port); default off. */
  tls?: TlsServerSettings;
  /** SLAVE: connect to the master's HA port with TLS (`tls.enable`); absent: plain TCP. */
  clientTls?: TlsClientOptions;
  /** SLAVE in controller mode: the replica id sent as a hello (ha-protocol.ts `encodeHello`). */
  helloReplicaId?: number;
  /** Start as this role instead of the store config's brokerRole (controller mode role changes). */
  role?: 'SLAVE' | 'MASTER';
  /** Master in controller mode: the confirm offset sent to confirm-capable slaves (ha-protocol.ts). */
  confirmOffset?: () => number;
}

export type ReplicationStats = { role: 'master'; master: HAServiceStats } | { role: 'slave'; slave: HAClientStats };

export class StoreReplication {
  private constructor(
    readonly master: HAService | null,
    readonly slave: HAClient | null,
  ) {}

  /** @throws the listen error of a master (e.g. EADDRINUSE). */
  static async start(config: StoreConfig, commitLog: CommitLog, replica: ReplicaStore, opts: StartHAOptions, logger: Logger): Promise<StoreReplication> {
    if ((opts.role ?? (config.brokerRole === 'SLAVE' ? 'SLAVE' : 'MASTER')) === 'SLAVE') {
      const masterAddress = opts.masterAddress ?? (config.haMasterAddress !== '' ? config.haMasterAddress : null);
      const client = new HAClient({
        store: replica,
        masterAddress,
        heartbeatIntervalMs: config.haSendHeartbeatInterval,
        housekeepingIntervalMs: config.haHousekeepingInterval,
        ...(opts.reconnectIntervalMs !== undefined ? { reconnectIntervalMs: opts.reconnectIntervalMs } : {}),
        ...(opts.clientTls ? { tls: opts.clientTls } : {}),
        ...(opts.helloReplicaId !== undefined ? { helloReplicaId: opts.helloReplicaId } : {}),
        logger,
      });
      client.start();
      return new StoreReplication(null, client);
    }
    const service = new HAService({
      commitLog,
      listenPort: opts.listenPort,
      ...(opts.host !== undefined ? { host: opts.host } : {}),
      transferBatchSize: config.haTransferBatchSize,
      heartbeatIntervalMs: config.haSendHeartbeatInterval,
      housekeepingIntervalMs: config.haHousekeepingInterval,
      maxGapNotInSyncBytes: config.haMaxGapNotInSync,
      slaveTimeoutMs: config.slaveTimeout,
      ...(opts.tls ? { tls: opts.tls } : {}),
      ...(opts.confirmOffset ? { confirmOffset: opts.confirmOffset } : {}),
      logger,
    });
    await service.start();
    return new StoreReplication(service, null);
  }

  /** Wakes the master's transfer loops after an append. */
  notifyAppended(): void {
    this.master?.notifyAppended();
  }

  /** SYNC_MASTER: wait for a slave ack of `nextOffset` (SLAVE_NOT_AVAILABLE without a master service). */
  handleHA(nextOffset: number): HandleHAResult | Promise<HandleHAResult> {
    return this.master ? this.master.handleHA(nextOffset) : { status: 'SLAVE_NOT_AVAILABLE', remark: 'this store does not run an HA service' };
  }

  /** Slave: called after a truncation (diverged data dropped). */
  onTruncated(listener: (r: TruncateReport) => void): void {
    this.slave?.onTruncated(listener);
  }

  stats(): ReplicationStats {
    return this.master ? { role: 'master', master: this.master.stats() } : { role: 'slave', slave: this.slave!.stats() };
  }

  async shutdown(): Promise<void> {
    await this.master?.shutdown();
    await this.slave?.shutdown();
  }
}
