/**
 * The replica metadata of one broker group in etcd (docs/failover.md), through the `etcd3`
 * client. Keys under `<controllerKeyPrefix>/<brokerClusterName>/<brokerName>/`:
 *
 *   replica/<replicaId>  ReplicaRegistration JSON, bound to the replica's lease (alive = present)
 *   master               MasterRecord JSON, bound to the master's lease; its create revision is
 *                        the master's epoch (monotonic: etcd revisions only grow)
 *   syncStateSet         SyncStateSetRecord JSON, written only by the master of `masterEpoch`
 *                        (transaction guarded by the master key's create revision)
 *   known/<replicaId>    KnownReplica JSON, no lease: every replica that ever joined (Apache's
 *                        controller brokerIdTable; lets admin tools list dead replicas too)
 *   electMaster          MasterDesignation JSON on a short lease: an admin asked for this replica
 *                        as master (mqadmin electMaster); see ControllerMode
 *
 * Every call has a deadline (`callTimeoutMs`): a replica cut off from etcd sees errors, never a hang.
 */
import { Etcd3, type Lease } from 'etcd3';
import type { EpochEntry } from '../../store/ha/epoch-file.js';
import type { ReplicaRegistration } from './election-policy.js';

export interface MasterRecord {
  replicaId: number;
  addr: string;
  haAddr: string;
  /** The master's epoch history once published (null right after the campaign). */
  epochs: EpochEntry[] | null;
}

export interface SyncStateSetRecord {
  masterReplicaId: number;
  masterEpoch: number;
  /** Bumped on every change (Apache syncStateSetEpoch). */
  syncStateSetEpoch: number;
  members: number[];
}

/** A replica that once joined the group (kept after it dies). */
export interface KnownReplica {
  replicaId: number;
  addr: string;
  haAddr: string;
}

/** An admin's request that `replicaId` become master (CONTROLLER_ELECT_MASTER with designateElect). */
export interface MasterDesignation {
  replicaId: number;
  /** Wall-clock ms when it was requested (for logs). */
  requestedAtMs: number;
}

export interface GroupView {
  /** Alive replicas (their registration keys exist). */
  replicas: ReplicaRegistration[];
  /** Every replica that ever joined, by id. */
  known: KnownReplica[];
  designation: MasterDesignation | null;
  /** Master and its epoch (= the key's create revision), null when there is none. */
  master: { record: MasterRecord; epoch: number; leaseId: string } | null;
  syncStateSet: SyncStateSetRecord | null;
}

export class EtcdGroupStore {
  private readonly client: Etcd3;
  private readonly prefix: string;

  constructor(
    endpoints: string[],
    keyPrefix: string,
    cluster: string,
    brokerName: string,
    private readonly callTimeoutMs: number,
  ) {
    this.client = new Etcd3({ hosts: endpoints, dialTimeout: callTimeoutMs });
    this.prefix = `${keyPrefix.replace(/\/+$/, '')}/${cluster}/${brokerName}/`;
  }

  private withDeadline<T>(what: string, p: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`etcd ${what} timed out after ${this.callTimeoutMs} ms`)), this.callTimeoutMs);
    });
    return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
  }

  /** A new lease of `ttlSeconds` (no automatic keepalive: ControllerMode renews it and fences on its own clock). */
  async grantLease(ttlSeconds: number): Promise<{ lease: Lease; id: string }> {
    const lease = this.client.lease(ttlSeconds, { autoKeepAlive: false });
    lease.on('lost', () => undefined); // handled by the caller's renew loop
    const id = await this.withDeadline('lease grant', lease.grant());
    return { lease, id };
  }

  /** Renews once; returns the TTL etcd granted (0 or less = the lease is gone). */
  async keepAlive(lease: Lease): Promise<number> {
    const r = await this.withDeadline('lease keepalive', lease.keepaliveOnce());
    return Number(r.TTL);
  }

  async revoke(lease: Lease): Promise<void> {
    await this.withDeadline('lease revoke', lease.revoke()).catch(() => undefined);
  }

  async putReplica(leaseId: string, r: ReplicaRegistration): Promise<void> {
    await this.withDeadline('put replica', this.client.put(`${this.prefix}replica/${r.replicaId}`).value(JSON.stringify(r)).lease(leaseId).exec());
  }

  /** Records the replica in `known/<id>` (no lease) when it is new or its addresses changed. */
  async putKnownReplica(r: KnownReplica): Promise<void> {
    const key = `${this.prefix}known/${r.replicaId}`;
    const value = JSON.stringify({ replicaId: r.replicaId, addr: r.addr, haAddr: r.haAddr });
    const cur = await this.withDeadline('read known replica', this.client.get(key).string());
    if (cur !== value) await this.withDeadline('put known replica', this.client.put(key).value(value).exec());
  }

  /**
   * Asks for `replicaId` as the next master: the designation key lives `ttlSeconds` (its own
   * lease), so a request nobody can satisfy expires by itself.
   */
  async designateMaster(replicaId: number, ttlSeconds: number): Promise<void> {
    const lease = this.client.lease(ttlSeconds, { autoKeepAlive: false });
    lease.on('lost', () => undefined);
    const leaseId = await this.withDeadline('designation lease', lease.grant());
    const d: MasterDesignation = { replicaId, requestedAtMs: Date.now() };
    await this.withDeadline('put designation', this.client.put(`${this.prefix}electMaster`).value(JSON.stringify(d)).lease(leaseId).exec());
  }

  /** Removes the designation (the designated replica became master). */
  async clearDesignation(): Promise<void> {
    await this.withDeadline('delete designation', this.client.delete().key(`${this.prefix}electMaster`).exec());
  }

  /** Deletes the master key of `epoch` (a graceful hand-over); false when that master is already gone. */
  async resignMaster(epoch: number): Promise<boolean> {
    const key = `${this.prefix}master`;
    const r = await this.withDeadline('resign master', this.client.if(key, 'Create', '==', epoch).then(this.client.delete().key(key)).commit());
    return r.succeeded;
  }

  async view(): Promise<GroupView> {
    const res = await this.withDeadline('read group', this.client.getAll().prefix(this.prefix).exec());
    const view: GroupView = { replicas: [], known: [], designation: null, master: null, syncStateSet: null };
    for (const kv of res.kvs) {
      const k = kv.key.toString().slice(this.prefix.length);
      const v = JSON.parse(kv.value.toString()) as unknown;
      if (k.startsWith('replica/')) view.replicas.push(v as ReplicaRegistration);
      else if (k === 'master') view.master = { record: v as MasterRecord, epoch: Number(kv.create_revision), leaseId: String(kv.lease) };
      else if (k === 'syncStateSet') view.syncStateSet = v as SyncStateSetRecord;
      else if (k.startsWith('known/')) view.known.push(v as KnownReplica);
      else if (k === 'electMaster') view.designation = v as MasterDesignation;
    }
    return view;
  }

  /** Creates the master key when absent; returns the new epoch (the key's create revision) or null when another replica won. */
  async campaign(leaseId: string, record: MasterRecord): Promise<number | null> {
    const key = `${this.prefix}master`;
    const r = await this.withDeadline(
      'campaign',
      this.client.if(key, 'Create', '==', 0).then(this.client.put(key).value(JSON.stringify(record)).lease(leaseId)).commit(),
    );
    return r.succeeded ? Number(r.header.revision) : null;
  }

  /** Rewrites the master key of `epoch` (keeps its lease); false when that master is gone. */
  async updateMaster(epoch: number, leaseId: string, record: MasterRecord): Promise<boolean> {
    const key = `${this.prefix}master`;
    const r = await this.withDeadline(
      'update master',
      this.client.if(key, 'Create', '==', epoch).then(this.client.put(key).value(JSON.stringify(record)).lease(leaseId)).commit(),
    );
    return r.succeeded;
  }

  /** Writes the sync state set if the master key still has create revision `s.masterEpoch`; false otherwise. */
  async writeSyncStateSet(s: SyncStateSetRecord): Promise<boolean> {
    const r = await this.withDeadline(
      'write sync state set',
      this.client.if(`${this.prefix}master`, 'Create', '==', s.masterEpoch).then(this.client.put(`${this.prefix}syncStateSet`).value(JSON.stringify(s))).commit(),
    );
    return r.succeeded;
  }

  close(): void {
    this.client.close();
  }
}
