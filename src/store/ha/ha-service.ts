/**
 * Master side of classic replication (RocketMQ `DefaultHAService` / 4.x `HAService`, spec §9):
 * accepts slaves on the HA port, streams the CommitLog to each (ha-connection.ts) and answers
 * SYNC_MASTER producers waiting for a slave ack (group-transfer-service.ts).
 *
 * Replication semantics are RocketMQ 4.x (docs/ha.md explains the choice):
 *   - `handleHA(nextOffset)`: SLAVE_NOT_AVAILABLE at once when no slave is connected or the
 *     best slave is `haMaxGapNotInSync` (haSlaveFallbehindMax) bytes or more behind `nextOffset`;
 *     otherwise wait until any slave acks ≥ nextOffset (PUT_OK) or `slaveTimeout` passes
 *     (FLUSH_SLAVE_TIMEOUT). The message is stored in every case.
 *   - A slave counts as connected once its first offset report was accepted.
 *   - `push2SlaveMaxOffset` (the highest valid ack of any slave) only moves forward and only
 *     from acks the connection validated (≤ master max, ≤ bytes delivered; case B32).
 *   - Controller mode: each ack wakes the transfer loops, which send the confirm offset
 *     (`confirmOffset` option) to confirm-capable slaves when it changed (ha-connection.ts).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { acceptTls } from '../../common/tls/tls-acceptor.js';
import { TLS_DISABLED, type TlsServerSettings } from '../../common/tls/tls-server-config.js';
import type { Logger } from '../../common/logging/logger.js';
import { HaTlsHint } from './ha-tls-hint.js';
import type { CommitLog } from '../commitlog/commit-log.js';
import { GroupTransferService, type ReplicaStatus } from './group-transfer-service.js';
import { HAConnection, type HAConnectionHost, type HAConnectionStats } from './ha-connection.js';

export interface HAServiceOptions {
  commitLog: CommitLog;
  /** Port to listen on (0 = any free port). */
  listenPort: number;
  /** Listen address; default all interfaces (like RocketMQ). */
  host?: string;
  transferBatchSize: number;
  heartbeatIntervalMs: number;
  housekeepingIntervalMs: number;
  /** haMaxGapNotInSync. */
  maxGapNotInSyncBytes: number;
  /** slaveTimeout. */
  slaveTimeoutMs: number;
  /** TLS of the HA port (`tls.server.*`); default off. */
  tls?: TlsServerSettings;
  /** Controller mode: the confirm offset sent to confirm-capable slaves (default: the CommitLog max offset). */
  confirmOffset?: () => number;
  logger: Logger;
}

export interface HAServiceStats {
  listenPort: number;
  /** Connections whose first report was accepted. */
  slaves: number;
  push2SlaveMaxOffset: number;
  /** SYNC_MASTER producers waiting for an ack. */
  pendingWaiters: number;
  connections: HAConnectionStats[];
}

export type HandleHAResult = { status: 'PUT_OK' | 'FLUSH_SLAVE_TIMEOUT' | 'SLAVE_NOT_AVAILABLE'; remark?: string };

export class HAService implements HAConnectionHost {
  readonly commitLog: CommitLog;
  readonly transferBatchSize: number;
  readonly heartbeatIntervalMs: number;
  readonly housekeepingIntervalMs: number;
  readonly logger: Logger;
  private readonly opts: HAServiceOptions;
  private server: Server | null = null;
  private readonly connections = new Set<HAConnection>();
  private readonly sockets = new Set<Socket>();
  private readonly transfer: GroupTransferService;
  private push2SlaveMaxOffset = 0;
  private readonly dataWaiters = new Set<() => void>();
  private readonly ackListeners = new Set<() => void>();
  private wakeScheduled = false;
  private boundPort = -1;
  private boundHost = '';
  private stopped = false;
  /** TLS hint of a plaintext HA port (ha-tls-hint.ts). */
  private readonly tlsHint: HaTlsHint;

  constructor(opts: HAServiceOptions) {
    this.opts = opts;
    this.commitLog = opts.commitLog;
    this.transferBatchSize = opts.transferBatchSize;
    this.heartbeatIntervalMs = opts.heartbeatIntervalMs;
    this.housekeepingIntervalMs = opts.housekeepingIntervalMs;
    this.logger = opts.logger;
    this.transfer = new GroupTransferService(opts.slaveTimeoutMs, opts.logger);
    this.tlsHint = new HaTlsHint(opts.logger);
  }

  /** Starts listening. @throws the listen error (e.g. EADDRINUSE). */
  async start(): Promise<void> {
    const server = createServer((socket) => this.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.listenPort, this.opts.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (e) => this.logger.error({ err: e }, 'HA server error'));
    const addr = server.address();
    this.boundPort = typeof addr === 'object' && addr ? addr.port : this.opts.listenPort;
    this.boundHost = typeof addr === 'object' && addr ? addr.address : (this.opts.host ?? '');
    this.server = server;
    this.logger.info({ haListenPort: this.boundPort }, 'HA service listening');
  }

  /** Port actually listened on. */
  get port(): number {
    return this.boundPort;
  }

  /** Address actually listened on (`::` or `0.0.0.0` = every interface; '' before start). */
  get host(): string {
    return this.boundHost;
  }

  private accept(socket: Socket): void {
    if (this.stopped) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    acceptTls(socket, this.opts.tls ?? TLS_DISABLED, (stream, secure) => {
      const open = (s: Socket): void => {
        if (this.stopped) s.destroy();
        else this.connections.add(new HAConnection(s, this));
      };
      if (secure || (this.opts.tls ?? TLS_DISABLED).mode !== 'disabled') open(stream);
      else this.tlsHint.screen(stream, this.housekeepingIntervalMs, open);
    });
  }

  /** Called after every valid ack (controller mode waits for sync-state-set members through it). */
  addAckListener(listener: () => void): void {
    this.ackListeners.add(listener);
  }

  removeAckListener(listener: () => void): void {
    this.ackListeners.delete(listener);
  }

  /** Highest ack of the established connections of replica `replicaId` (controller hello), -1 when none. */
  ackOfReplica(replicaId: number): number {
    let best = -1;
    for (const c of this.connections) if (c.established && c.replicaId === replicaId && c.ack > best) best = c.ack;
    return best;
  }

  /** Replica ids (controller hello) of the established connections. */
  connectedReplicaIds(): number[] {
    const ids = new Set<number>();
    for (const c of this.connections) if (c.established && c.replicaId !== null) ids.add(c.replicaId);
    return [...ids];
  }

  confirmOffset(): number {
    return this.opts.confirmOffset ? this.opts.confirmOffset() : this.commitLog.getMaxOffset();
  }

  onAck(_conn: HAConnection, offset: number): void {
    for (const l of this.ackListeners) l();
    if (this.opts.confirmOffset) this.notifyAppended(); // an ack may move the confirm offset: the loops send it
    if (offset > this.push2SlaveMaxOffset) {
      this.push2SlaveMaxOffset = offset;
      this.transfer.notifyAck(offset);
    }
  }

  onClose(conn: HAConnection): void {
    this.connections.delete(conn);
  }

  waitForData(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.dataWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      this.dataWaiters.add(done);
    });
  }

  /** Wakes the transfer loops (called after every append); coalesced per event-loop turn. */
  notifyAppended(): void {
    if (this.wakeScheduled || this.dataWaiters.size === 0) return;
    this.wakeScheduled = true;
    queueMicrotask(() => {
      this.wakeScheduled = false;
      for (const w of [...this.dataWaiters]) w();
    });
  }

  /** Connections whose first report was accepted. */
  slaveCount(): number {
    let n = 0;
    for (const c of this.connections) if (c.established) n++;
    return n;
  }

  getPush2SlaveMaxOffset(): number {
    return this.push2SlaveMaxOffset;
  }

  /** 4.x `isSlaveOK`: a slave is connected and less than haMaxGapNotInSync behind `masterPutWhere`. */
  isSlaveOK(masterPutWhere: number): boolean {
    return this.slaveCount() > 0 && masterPutWhere - this.push2SlaveMaxOffset < this.opts.maxGapNotInSyncBytes;
  }

  /** SYNC_MASTER wait for the message ending at `nextOffset` (see the file comment). */
  handleHA(nextOffset: number): HandleHAResult | Promise<HandleHAResult> {
    if (this.stopped) return { status: 'SLAVE_NOT_AVAILABLE', remark: 'HA service is shut down' };
    const slaves = this.slaveCount();
    if (slaves === 0) return { status: 'SLAVE_NOT_AVAILABLE', remark: 'no slave is connected' };
    const gap = nextOffset - this.push2SlaveMaxOffset;
    if (gap >= this.opts.maxGapNotInSyncBytes) {
      return { status: 'SLAVE_NOT_AVAILABLE', remark: `the slave is ${gap} bytes behind (haMaxGapNotInSync ${this.opts.maxGapNotInSyncBytes})` };
    }
    const waited = this.transfer.waitFor(nextOffset);
    const toResult = (s: ReplicaStatus): HandleHAResult =>
      s === 'PUT_OK' ? { status: s } : { status: s, remark: `no slave acknowledged offset ${nextOffset} within slaveTimeout ${this.opts.slaveTimeoutMs} ms` };
    return typeof waited === 'string' ? toResult(waited) : waited.then(toResult);
  }

  stats(): HAServiceStats {
    return {
      listenPort: this.boundPort,
      slaves: this.slaveCount(),
      push2SlaveMaxOffset: this.push2SlaveMaxOffset,
      pendingWaiters: this.transfer.pending(),
      connections: [...this.connections].map((c) => c.stats()),
    };
  }

  /** Stops listening, closes every slave connection, fails pending waiters. */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.transfer.stop();
    for (const c of [...this.connections]) c.close('master shutting down', 'info');
    for (const s of this.sockets) s.destroy();
    for (const w of [...this.dataWaiters]) w();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
