/**
 * Configuration keys of controller mode (automatic failover on etcd, docs/failover.md). Apache
 * RocketMQ 5 names where Apache has the key; tsmq-only keys say so.
 */
import { resolveConfig, type ConfigKey, type ConfigValue } from '../../common/config/config-spec.js';

function key<T extends ConfigValue>(k: ConfigKey<T>): ConfigKey<ConfigValue> & { default: T } {
  return k as unknown as ConfigKey<ConfigValue> & { default: T };
}

const positive = (v: number): string | null => (Number.isInteger(v) && v > 0 ? null : 'must be an integer > 0');

export const CONTROLLER_CONFIG_SPEC = {
  enableControllerMode: key<boolean>({ name: 'enableControllerMode', type: 'boolean', default: false, doc: 'replicas of the broker group elect their master through the controller (Apache enableControllerMode); brokerRole is then decided at run time' }),
  controllerType: key<string>({ name: 'controllerType', type: 'string', default: 'etcd', doc: 'consensus engine of the controller; tsmq supports etcd only (Apache: DLedger or jRaft)', validate: (v: string) => (v === 'etcd' ? null : 'tsmq supports controllerType=etcd only') }),
  etcdEndpoints: key<string>({ name: 'etcdEndpoints', type: 'string', default: 'http://127.0.0.1:2379', doc: 'etcd client URLs, separated by ";" or "," (tsmq key)', validate: (v: string) => (splitEndpoints(v).length > 0 ? null : 'needs at least one http://host:port') }),
  etcdLeaseTtlSeconds: key<number>({ name: 'etcdLeaseTtlSeconds', type: 'number', default: 3, doc: 'TTL of the replica lease; a master that cannot renew it within this time stops accepting writes and another replica is elected (tsmq key)', validate: positive }),
  controllerKeyPrefix: key<string>({ name: 'controllerKeyPrefix', type: 'string', default: '/tsmq/controller', doc: 'etcd key prefix of the replica metadata (tsmq key)' }),
  brokerElectionPriority: key<number>({ name: 'brokerElectionPriority', type: 'number', default: 2147483647, doc: 'among equally up-to-date replicas the lowest value is elected (Apache brokerElectionPriority)', validate: (v: number) => (Number.isInteger(v) ? null : 'must be an integer') }),
  allAckInSyncStateSet: key<boolean>({ name: 'allAckInSyncStateSet', type: 'boolean', default: false, doc: 'a send is acknowledged only once every sync-state-set member holds it (Apache allAckInSyncStateSet); false: the master alone acknowledges' }),
  enableElectUncleanMaster: key<boolean>({ name: 'enableElectUncleanMaster', type: 'boolean', default: false, doc: 'elect a replica outside the sync state set when no member is alive (may lose acknowledged messages; Apache enableElectUncleanMaster)' }),
  syncStateSetMaxOutOfSyncTimeMs: key<number>({ name: 'syncStateSetMaxOutOfSyncTimeMs', type: 'number', default: 15_000, doc: 'a replica not caught up with the master for this long leaves the sync state set (ms; Apache haMaxTimeSlaveNotCatchup)', validate: positive, aliases: ['haMaxTimeSlaveNotCatchup'] }),
  controllerReplicaId: key<number>({ name: 'controllerReplicaId', type: 'number', default: -1, doc: 'id of this replica in its group (0..65534, unique per brokerName; 65535 is reserved by the HA confirm hello); -1 = brokerId (tsmq key: Apache lets the controller assign it)', validate: (v: number) => (Number.isInteger(v) && v >= -1 && v < 0xffff ? null : 'must be -1 or 0..65534') }),
} as const;

export type ControllerConfig = ReturnType<typeof resolveControllerConfig>;

/** @throws ConfigError on a bad value. */
export function resolveControllerConfig(raw: Record<string, string>) {
  return resolveConfig(CONTROLLER_CONFIG_SPEC, raw);
}

/** `http://a:2379;http://b:2379` → list (trimmed, empties dropped). */
export function splitEndpoints(v: string): string[] {
  return v
    .split(/[;,]/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
