/**
 * Who becomes master of a broker group (Apache RocketMQ 5 `DefaultElectPolicy`, facts only):
 *
 * 1. Only alive replicas (holding a registration key in etcd) can be elected.
 * 2. Members of the last sync state set come first. When the group has no sync state set yet
 *    (its first election), every alive replica is eligible.
 * 3. When no sync-state-set member is alive, another replica is elected only with
 *    `enableElectUncleanMaster=true` (it may miss acknowledged messages); otherwise nobody.
 * 4. Among the eligible: highest last epoch, then highest CommitLog max offset, then the lowest
 *    `brokerElectionPriority`, then the lowest replica id.
 */

export interface ReplicaRegistration {
  replicaId: number;
  /** Remoting address `host:port`. */
  addr: string;
  /** HA address `host:port` this replica listens on when master. */
  haAddr: string;
  /** brokerElectionPriority (lower wins). */
  priority: number;
  /** Last epoch of its epoch file (0 = none). */
  lastEpoch: number;
  /** CommitLog max offset (bytes) when it last refreshed its key. */
  maxOffset: number;
}

/** Eligible replicas, best first (see the file comment); empty when nobody may be elected. */
export function rankCandidates(alive: readonly ReplicaRegistration[], syncStateSet: readonly number[] | null, allowUnclean: boolean): ReplicaRegistration[] {
  let pool: ReplicaRegistration[];
  if (syncStateSet === null) pool = [...alive];
  else {
    pool = alive.filter((r) => syncStateSet.includes(r.replicaId));
    if (pool.length === 0 && allowUnclean) pool = [...alive];
  }
  return pool.sort((a, b) => b.lastEpoch - a.lastEpoch || b.maxOffset - a.maxOffset || a.priority - b.priority || a.replicaId - b.replicaId);
}
