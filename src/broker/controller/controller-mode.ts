/**
 * Controller mode of one replica (`enableControllerMode=true`, docs/failover.md): the broker
 * group elects its master through etcd and roles change live, without a restart.
 *
 * Life of a replica (one loop, every TICK_MS):
 * - Holds an etcd lease (`etcdLeaseTtlSeconds`), renewed every third of the TTL, and a
 *   registration key bound to it (replica id, addresses, priority, last epoch, max offset).
 * - Starts as a SLAVE. When the group has no master, the replicas rank the alive candidates
 *   (election-policy.ts); the best campaigns at once, the k-th best after k × CAMPAIGN_STEP_MS.
 *   Winning = creating the `master` key in an etcd transaction; its create revision is the
 *   epoch. The winner appends (epoch, its max offset) to its epoch file, publishes its epoch
 *   history in the master key, writes the sync state set {itself}, switches the store to master
 *   (HA server on the HA port), starts the master services (delay delivery, transaction check)
 *   and registers as brokerId 0 with the nameservers.
 * - A slave that sees a master with a published history compares it with its epoch file
 *   (epoch-file.ts `findConsistentPoint`), truncates what it holds beyond the common point
 *   (epoch file first, then CommitLog, ConsumeQueues, index and consumer offsets), adopts the
 *   master's history and replicates from the master's HA address, sending its replica id.
 * - Fencing: a master's writes are allowed only until (send time of the last acknowledged
 *   keepalive + TTL − FENCE_MARGIN_MS) on the monotonic clock, checked on every put and before
 *   every acknowledgement; etcd deletes the master key only after the TTL, so a new master can
 *   exist only after the old one refuses writes — even after SIGSTOP/SIGCONT, when timers have
 *   not run yet. A master that lost its lease or sees another master steps down to SLAVE.
 * - electMaster (an admin designates a replica, controller-admin-processors.ts): while the
 *   `electMaster` key names an alive replica, only that replica campaigns. A master that sees
 *   another replica designated hands over: it refuses new writes, waits up to
 *   HANDOVER_CATCH_UP_MS for the designated replica to ack its whole CommitLog, steps down and
 *   deletes its master key (guarded by its epoch); the designated replica then wins at once.
 */
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import type { TlsServerSettings } from '../../common/tls/tls-server-config.js';
import type { TlsClientOptions } from '../../common/tls/tls-client-config.js';
import { performance } from 'node:perf_hooks';
import type { Lease } from 'etcd3';
import type { Logger } from '../../common/logging/logger.js';
import { RemotingClient } from '../../remoting/transport/remoting-client.js';
import type { DefaultMessageStore } from '../../store/default-message-store.js';
import { EpochFile, findConsistentPoint } from '../../store/ha/epoch-file.js';
import { HA_CONFIRM_HELLO_ID } from '../../store/ha/ha-protocol.js';
import type { TruncateReport } from '../../store/ha/replicated-log.js';
import type { BrokerConfig } from '../broker-config.js';
import type { BrokerContext } from '../broker-context.js';
import type { ScheduleMessageService } from '../schedule/schedule-message-service.js';
import type { TransactionalMessageService } from '../transaction/transactional-message-service.js';
import { SlaveSynchronize } from '../ha/slave-synchronize.js';
import type { TimerSlaveSync } from '../timer/timer-sync.js';
import type { PopSlaveSync } from '../pop/pop-state-sync.js';
import { splitEndpoints, type ControllerConfig } from './controller-config.js';
import { rankCandidates, type ReplicaRegistration } from './election-policy.js';
import { EtcdGroupStore, type GroupView, type MasterRecord } from './etcd-group-store.js';
import { SyncStateSet } from './sync-state-set.js';

const TICK_MS = 200;
/** Delay between campaigns of successive candidates (ms). */
const CAMPAIGN_STEP_MS = 1500;
/** Safety margin of the local lease clock (ms). */
const FENCE_MARGIN_MS = 300;
/** How long a master handing over waits for the designated replica to catch up (ms). */
const HANDOVER_CATCH_UP_MS = 1000;
/** Lifetime of an electMaster designation nobody could satisfy (s). */
export const DESIGNATION_TTL_SECONDS = 5;

export interface ControllerModeOptions {
  config: BrokerConfig;
  controller: ControllerConfig;
  ctx: BrokerContext;
  store: DefaultMessageStore;
  schedule: ScheduleMessageService;
  transactions: TransactionalMessageService;
  /**
   * Timer service (src/broker/timer), started here as a slave (enqueue only, bounded by the
   * master's synced timer checkpoint); delivery starts when this replica becomes master and stops
   * when it steps down (Apache `changeScheduleServiceStatus` → `setShouldRunningDequeue`).
   */
  timers?: { start(shouldRunningDequeue: boolean): Promise<void>; setShouldRunningDequeue(on: boolean): void } | null;
  /** A slave's timer checkpoint/metrics sync with the master it follows (timer-sync.ts). */
  timerSync?: TimerSlaveSync | null;
  /** A replica's pop state sync from the master it follows (pop/pop-state-sync.ts). */
  popStateSync?: PopSlaveSync | null;
  /** HA port the replica listens on while master. */
  haPort: number;
  slaveSynchronizeIntervalMs: number;
  logger: Logger;
  /** `tls.server.*` of the broker: the HA port while master (same switch as the remoting port). */
  tls?: TlsServerSettings;
  /** `tls.enable` / `tls.client.*`: TLS of this replica's connections to the master (HA, sync). */
  clientTls?: TlsClientOptions;
  /** Signs the sync calls to the master (innerClientAuthenticationCredentials); absent: unsigned. */
  beforeRequest?: (request: RemotingCommand) => void;
}

export interface ControllerStats {
  replicaId: number;
  role: 'MASTER' | 'SLAVE';
  /** Epoch of the current master as this replica knows it (0 = none). */
  masterEpoch: number;
  masterReplicaId: number | null;
  epochs: Array<{ epoch: number; startOffset: number }>;
  syncStateSet: number[] | null;
  leaseValidForMs: number;
  truncations: TruncateReport[];
  elections: number;
  /**
   * CommitLog confirm offset of this replica's store (bytes; Apache getConfirmOffset): a master's
   * is what its sync state set holds, a slave's the master's last confirm frame; consumers read
   * up to it (runtime info key commitLogConfirmOffset).
   */
  confirmOffset: number;
}

export class ControllerMode {
  readonly replicaId: number;
  readonly haServerAddr: string;
  private readonly etcd: EtcdGroupStore;
  private readonly epochs: EpochFile;
  private readonly sync: SlaveSynchronize;
  private readonly syncClient: RemotingClient;
  private lease: Lease | null = null;
  private leaseId = '';
  /** performance.now() until which this replica may act as master. */
  private leaseValidUntil = 0;
  private role: 'MASTER' | 'SLAVE' = 'SLAVE';
  private myEpoch = 0;
  private followedEpoch = 0;
  private followedMaster: MasterRecord | null = null;
  private sss: SyncStateSet | null = null;
  private lastView: GroupView | null = null;
  private noMasterSinceMs = 0;
  private timer: NodeJS.Timeout | null = null;
  private renewTimer: NodeJS.Timeout | null = null;
  private busy = false;
  private stopped = false;
  private elections = 0;
  /** Replica id this master is handing over to (electMaster), or null. */
  private handingOverTo: number | null = null;
  private readonly adminStores = new Map<string, EtcdGroupStore>();
  private readonly truncations: TruncateReport[] = [];
  private readonly roleListeners: Array<(role: 'MASTER' | 'SLAVE') => void> = [];

  private constructor(private readonly o: ControllerModeOptions) {
    const id = o.controller.controllerReplicaId >= 0 ? o.controller.controllerReplicaId : o.config.brokerId;
    if (!Number.isInteger(id) || id < 0 || id >= HA_CONFIRM_HELLO_ID) throw new Error(`controller mode: replica id ${id} (controllerReplicaId, else brokerId) must be 0..${HA_CONFIRM_HELLO_ID - 1}`);
    this.replicaId = id;
    this.haServerAddr = `${o.config.brokerIP2}:${o.haPort}`;
    this.etcd = new EtcdGroupStore(splitEndpoints(o.controller.etcdEndpoints), o.controller.controllerKeyPrefix, o.config.brokerClusterName, o.config.brokerName, Math.max(500, (o.controller.etcdLeaseTtlSeconds * 1000) / 3));
    this.epochs = EpochFile.load(o.config.storePathRootDir);
    this.syncClient = new RemotingClient({ logger: o.logger, ...(o.clientTls ? { tls: o.clientTls } : {}), ...(o.beforeRequest ? { beforeRequest: o.beforeRequest } : {}) });
    this.sync = new SlaveSynchronize({ client: this.syncClient, ctx: o.ctx, schedule: o.schedule, intervalMs: o.slaveSynchronizeIntervalMs, logger: o.logger, timer: o.timerSync ?? null, popState: o.popStateSync ?? null });
  }

  /** Starts as a SLAVE with the store's replication, the lease and the election loop. @throws when etcd cannot be reached. */
  static async start(o: ControllerModeOptions): Promise<ControllerMode> {
    const c = new ControllerMode(o);
    (o.config as { brokerId: number }).brokerId = c.replicaId;
    (o.config as { brokerRole: string }).brokerRole = 'SLAVE';
    await o.store.switchReplication('SLAVE', { listenPort: 0, masterAddress: null, helloReplicaId: c.replicaId, reconnectIntervalMs: 1000 });
    o.store.setControllerHooks({ fence: () => c.fenceReason(), ack: null });
    await c.newLease();
    await c.etcd.putKnownReplica({ replicaId: c.replicaId, addr: o.ctx.brokerAddr, haAddr: c.haServerAddr });
    c.sync.start();
    await o.timers?.start(false);
    c.timer = setInterval(() => void c.tick(), TICK_MS);
    c.timer.unref();
    o.logger.info(`controller mode: replica ${c.replicaId} of ${o.config.brokerName} started as SLAVE (epoch file last epoch ${c.epochs.lastEpoch()})`);
    return c;
  }

  /** Called after every role change (the broker re-registers with the nameservers). */
  onRoleChange(listener: (role: 'MASTER' | 'SLAVE') => void): void {
    this.roleListeners.push(listener);
  }

  get isMaster(): boolean {
    return this.role === 'MASTER';
  }

  /** Why puts are refused now, or null (see the file comment). */
  fenceReason(): string | null {
    if (this.role !== 'MASTER') return 'this replica is not the master (controller mode)';
    if (this.handingOverTo !== null) return `master of epoch ${this.myEpoch} is handing over to replica ${this.handingOverTo} (electMaster)`;
    if (performance.now() >= this.leaseValidUntil) return `master lease of epoch ${this.myEpoch} may have expired: writes are fenced`;
    return null;
  }

  private async newLease(): Promise<void> {
    const ttl = this.o.controller.etcdLeaseTtlSeconds;
    const sentAt = performance.now();
    const { lease, id } = await this.etcd.grantLease(ttl);
    this.lease = lease;
    this.leaseId = id;
    this.leaseValidUntil = sentAt + ttl * 1000 - FENCE_MARGIN_MS;
    await this.etcd.putReplica(id, this.registration());
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = setInterval(() => void this.renew(lease), Math.max(200, (ttl * 1000) / 3));
    this.renewTimer.unref();
  }

  private renewing = false;

  private async renew(lease: Lease): Promise<void> {
    if (this.renewing || this.stopped || lease !== this.lease) return;
    this.renewing = true;
    const sentAt = performance.now();
    try {
      // a keep-alive that never answers (a stuck etcd connection) must not stop renewals for good
      const ttl = await withTimeout(this.etcd.keepAlive(lease), this.o.controller.etcdLeaseTtlSeconds * 1000, 'lease keep-alive');
      if (ttl <= 0) throw new Error('lease expired');
      if (lease === this.lease) this.leaseValidUntil = Math.max(this.leaseValidUntil, sentAt + ttl * 1000 - FENCE_MARGIN_MS);
    } catch (e) {
      if (lease === this.lease && performance.now() >= this.leaseValidUntil) {
        this.o.logger.warn(`controller: lease lost (${(e as Error).message})`);
        this.lease = null;
        if (this.role === 'MASTER') await this.stepDown('lease lost');
        await this.newLease().catch((err: Error) => this.o.logger.warn(`controller: new lease failed: ${err.message}`));
      }
    } finally {
      this.renewing = false;
    }
  }

  private registration(): ReplicaRegistration {
    return {
      replicaId: this.replicaId,
      addr: this.o.ctx.brokerAddr,
      haAddr: this.haServerAddr,
      priority: this.o.controller.brokerElectionPriority,
      lastEpoch: this.epochs.lastEpoch(),
      maxOffset: this.o.store.getMaxPhyOffset(),
    };
  }

  private async tick(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      if (this.lease && performance.now() >= this.leaseValidUntil + this.o.controller.etcdLeaseTtlSeconds * 1000) {
        // renewals have not confirmed the lease for a whole TTL past its end: it is gone in etcd
        this.o.logger.warn(`controller: lease of replica ${this.replicaId} not renewed for a TTL past its end: taking a new one`);
        this.lease = null;
        if (this.role === 'MASTER') await this.stepDown('lease not renewed');
      }
      if (!this.lease) {
        await this.newLease();
        return;
      }
      await this.etcd.putReplica(this.leaseId, this.registration());
      const view = await this.etcd.view();
      this.lastView = view;
      await this.act(view);
    } catch (e) {
      this.o.logger.debug(`controller tick: ${(e as Error).message}`);
    } finally {
      this.busy = false;
    }
  }

  private async act(view: GroupView): Promise<void> {
    const m = view.master;
    const alive = (id: number): boolean => view.replicas.some((r) => r.replicaId === id);
    const designated = view.designation && alive(view.designation.replicaId) ? view.designation.replicaId : null;
    if (this.role === 'MASTER') {
      if (!m || m.epoch !== this.myEpoch) await this.stepDown(m ? `replica ${m.record.replicaId} is master of epoch ${m.epoch}` : 'the master key is gone');
      else if (designated !== null && designated !== this.replicaId) await this.handOver(designated);
      else if (designated === this.replicaId) await this.etcd.clearDesignation();
      else await this.sss?.check();
      return;
    }
    if (m) {
      this.noMasterSinceMs = 0;
      if (m.record.replicaId === this.replicaId && m.leaseId === this.leaseId) {
        await this.etcd.resignMaster(m.epoch); // a hand-over whose resign failed: we no longer act as master
        return;
      }
      if (m.record.replicaId === this.replicaId || m.record.epochs === null) return; // our stale key (old lease) or not published yet
      if (m.epoch !== this.followedEpoch) await this.follow(m.record, m.epoch);
      return;
    }
    if (designated !== null) {
      if (designated === this.replicaId) await this.campaign();
      return;
    }
    const now = Date.now();
    if (this.noMasterSinceMs === 0) this.noMasterSinceMs = now;
    const ranked = rankCandidates(view.replicas, view.syncStateSet?.members ?? null, this.o.controller.enableElectUncleanMaster);
    const rank = ranked.findIndex((r) => r.replicaId === this.replicaId);
    if (rank < 0 || now - this.noMasterSinceMs < rank * CAMPAIGN_STEP_MS) return;
    await this.campaign();
  }

  private async campaign(): Promise<void> {
    const record: MasterRecord = { replicaId: this.replicaId, addr: this.o.ctx.brokerAddr, haAddr: this.haServerAddr, epochs: null };
    const epoch = await this.etcd.campaign(this.leaseId, record);
    if (epoch === null) return;
    this.elections++;
    this.myEpoch = epoch;
    this.handingOverTo = null;
    const { store, logger } = this.o;
    // stop replicating first, so the start offset of the epoch is final
    const replication = await store.switchReplication('MASTER', { listenPort: this.o.haPort, ...(this.o.tls ? { tls: this.o.tls } : {}) });
    const startOffset = await store.prepareReplicaForWrites();
    await this.epochs.append(epoch, startOffset);
    if (!(await this.etcd.updateMaster(epoch, this.leaseId, { ...record, epochs: this.epochs.entries() }))) throw new Error(`epoch ${epoch} ended before it was published`);
    const ha = replication.master;
    if (!ha) throw new Error('master replication has no HA service');
    const sss = new SyncStateSet({
      selfId: this.replicaId,
      masterEpoch: epoch,
      epochStartOffset: startOffset,
      ha,
      maxOffset: () => store.getMaxPhyOffset(),
      writeRecord: (r) => this.etcd.writeSyncStateSet(r),
      allAckInSyncStateSet: this.o.controller.allAckInSyncStateSet,
      maxOutOfSyncMs: this.o.controller.syncStateSetMaxOutOfSyncTimeMs,
      slaveTimeoutMs: store.config.slaveTimeout,
      fence: () => this.fenceReason(),
      onConfirmChanged: () => store.confirmOffsetChanged(),
      logger,
    });
    if (!(await sss.init())) throw new Error(`epoch ${epoch} ended before its sync state set was written`);
    this.sss = sss;
    store.setControllerHooks({ fence: () => this.fenceReason(), ack: sss, confirm: sss });
    this.followedEpoch = epoch;
    this.followedMaster = null;
    this.sync.setMasterAddr(null);
    (this.o.config as { brokerId: number; brokerRole: string }).brokerId = 0;
    (this.o.config as { brokerRole: string }).brokerRole = 'SYNC_MASTER';
    this.role = 'MASTER';
    await this.o.transactions.start().catch((e: Error) => logger.error(`transaction service start failed: ${e.message}`));
    this.o.schedule.start();
    this.o.timers?.setShouldRunningDequeue(true);
    logger.warn(`controller: replica ${this.replicaId} is MASTER of ${this.o.config.brokerName}, epoch ${epoch}, from offset ${startOffset}`);
    for (const l of this.roleListeners) l('MASTER');
    await this.etcd.clearDesignation().catch(() => undefined);
  }

  /**
   * electMaster hand-over to `to`: refuse new writes at once, let `to` ack the whole CommitLog
   * (at most HANDOVER_CATCH_UP_MS), step down, then delete the master key of this epoch.
   */
  private async handOver(to: number): Promise<void> {
    const { store, logger } = this.o;
    this.handingOverTo = to;
    const target = store.getMaxPhyOffset();
    const deadline = performance.now() + HANDOVER_CATCH_UP_MS;
    while (performance.now() < deadline && (this.sss?.ackOf(to) ?? -1) < target) await new Promise((r) => setTimeout(r, 20));
    const acked = this.sss?.ackOf(to) ?? -1;
    logger.warn(`controller: master ${this.replicaId} of epoch ${this.myEpoch} hands over to replica ${to} (electMaster); it acked ${acked} of ${target}`);
    const epoch = this.myEpoch;
    await this.stepDown(`electMaster designated replica ${to}`);
    await this.etcd.resignMaster(epoch);
  }

  private async stepDown(reason: string): Promise<void> {
    const { store, logger } = this.o;
    logger.warn(`controller: replica ${this.replicaId} steps down from MASTER of epoch ${this.myEpoch}: ${reason}`);
    this.role = 'SLAVE';
    this.handingOverTo = null;
    this.sss?.stop(`master of epoch ${this.myEpoch} stepped down: ${reason}`);
    this.sss = null;
    // the confirm source stays (frozen by stop): the unconfirmed tail must not become consumable
    store.setControllerHooks({ fence: () => this.fenceReason(), ack: null });
    await this.o.schedule.shutdown().catch(() => undefined);
    await this.o.transactions.shutdown().catch(() => undefined);
    this.o.timers?.setShouldRunningDequeue(false);
    (this.o.config as { brokerId: number }).brokerId = this.replicaId;
    (this.o.config as { brokerRole: string }).brokerRole = 'SLAVE';
    this.followedEpoch = 0;
    await store.switchReplication('SLAVE', { listenPort: 0, masterAddress: null, helloReplicaId: this.replicaId, reconnectIntervalMs: 1000 });
    for (const l of this.roleListeners) l('SLAVE');
  }

  /** Handshake with a new master: truncate to the common point, adopt its history, replicate. */
  private async follow(master: MasterRecord, epoch: number): Promise<void> {
    const { store, logger } = this.o;
    const remote = master.epochs ?? [];
    // stop replicating from the previous master before touching the log
    const replication = await store.switchReplication('SLAVE', { listenPort: 0, masterAddress: null, helloReplicaId: this.replicaId, reconnectIntervalMs: 1000, ...(this.o.clientTls ? { clientTls: this.o.clientTls } : {}) });
    const localMax = store.getMaxPhyOffset();
    const point = findConsistentPoint(this.epochs.entries(), localMax, remote, Number.MAX_SAFE_INTEGER);
    await this.epochs.replace(remote.filter((e) => e.epoch <= epoch)); // the epoch file first: a crash now re-truncates at the next handshake
    if (point < localMax) {
      logger.warn(`controller: replica ${this.replicaId} holds [${point}, ${localMax}) that master ${master.replicaId} (epoch ${epoch}) does not: truncating`);
      const r = await store.truncateReplica(point);
      this.truncations.push(r);
      const clamped = this.o.ctx.consumerOffsetManager.clampAllToStore((t, q) => store.getMaxOffsetInQueue(t, q));
      this.o.schedule.correctDelayOffsets();
      await this.o.ctx.consumerOffsetManager.persist().catch(() => undefined);
      logger.warn(`controller: truncated to ${point}; ${clamped} consumer offsets lowered`);
    }
    replication.slave?.updateMasterAddress(master.haAddr);
    this.sync.setMasterAddr(master.addr);
    this.followedEpoch = epoch;
    this.followedMaster = master;
    logger.info(`controller: replica ${this.replicaId} follows master ${master.replicaId} (${master.addr}), epoch ${epoch}`);
  }

  /** One on-demand topic-config round from the master followed (false: none followed, or it did not answer). */
  syncTopicConfig(): Promise<boolean> {
    return this.sync.syncTopicConfig();
  }

  stats(): ControllerStats {
    const v = this.lastView;
    return {
      replicaId: this.replicaId,
      role: this.role,
      masterEpoch: v?.master?.epoch ?? 0,
      masterReplicaId: v?.master?.record.replicaId ?? null,
      epochs: this.epochs.entries(),
      syncStateSet: v?.syncStateSet?.members ?? null,
      leaseValidForMs: Math.max(0, Math.round(this.leaseValidUntil - performance.now())),
      truncations: [...this.truncations],
      elections: this.elections,
      confirmOffset: this.o.store.getConfirmOffset(),
    };
  }

  /** The group as last read from etcd (null before the first read). */
  groupView(): GroupView | null {
    return this.lastView;
  }

  /** This replica's epoch history (epoch file order). */
  epochEntries(): Array<{ epoch: number; startOffset: number }> {
    return this.epochs.entries();
  }

  /**
   * The etcd metadata of any broker group of `cluster` under this replica's key prefix, for the
   * controller admin requests (one client per group, closed on shutdown).
   */
  groupStore(cluster: string, brokerName: string): EtcdGroupStore {
    if (cluster === this.o.config.brokerClusterName && brokerName === this.o.config.brokerName) return this.etcd;
    const k = `${cluster}/${brokerName}`;
    let s = this.adminStores.get(k);
    if (!s) {
      const c = this.o.controller;
      s = new EtcdGroupStore(splitEndpoints(c.etcdEndpoints), c.controllerKeyPrefix, cluster, brokerName, Math.max(500, (c.etcdLeaseTtlSeconds * 1000) / 3));
      this.adminStores.set(k, s);
    }
    return s;
  }

  /** Stops the loop, fails waiting sends, revokes the lease (the group elects another master at once). */
  async shutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.renewTimer) clearInterval(this.renewTimer);
    while (this.busy) await new Promise((r) => setTimeout(r, 10));
    this.role = 'SLAVE';
    this.sss?.stop('broker shutting down');
    await this.sync.shutdown();
    await this.syncClient.close();
    if (this.lease) await this.etcd.revoke(this.lease);
    this.etcd.close();
    for (const s of this.adminStores.values()) s.close();
  }
}

/** `p`, or a rejection naming `what` after `ms` (the timer does not keep the process alive). */
function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
