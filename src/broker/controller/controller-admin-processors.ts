/**
 * The controller admin requests of Apache RocketMQ 5 (mqadmin getControllerMetaData,
 * getSyncStateSet, electMaster, getBrokerEpoch), answered by every tsmq replica in controller
 * mode from etcd's state (docs/failover.md "Admin tools"). tsmq has no controller process: the
 * address mqadmin takes as `-a <controller>` is any replica's remoting address.
 *
 * - CONTROLLER_GET_METADATA_INFO (1005): response header GetMetaDataResponseHeader
 *   {group = controllerKeyPrefix, controllerLeaderId = "<brokerName>-<replicaId>",
 *   controllerLeaderAddress = this replica's address, isLeader = true, peers = the etcd
 *   endpoints ";"-joined}. mqadmin sends the next request to controllerLeaderAddress, i.e. back
 *   here: every replica can answer.
 * - CONTROLLER_GET_SYNC_STATE_DATA (1006): body = JSON array of broker names (groups of this
 *   replica's cluster); reply body BrokerReplicasInfo
 *   {"replicasInfoTable":{<brokerName>:{masterBrokerId, masterAddress, masterEpoch,
 *   syncStateSetEpoch, inSyncReplicas:[ReplicaIdentity], notInSyncReplicas:[…]}}} with
 *   ReplicaIdentity {brokerName, brokerId (= replica id), brokerAddress, alive}. Groups without
 *   metadata in etcd are left out (Apache does the same).
 * - CONTROLLER_ELECT_MASTER (1002): header ElectMasterRequestHeader {clusterName, brokerName,
 *   brokerId, designateElect}. Apache's DefaultElectPolicy with a preferred broker: unknown group
 *   → 2010 CONTROLLER_BROKER_NEED_TO_BE_REGISTERED; the designated replica is the alive master →
 *   2011 CONTROLLER_MASTER_STILL_EXIST (with the current master in the header); it is not alive,
 *   or outside the sync state set while enableElectUncleanMaster=false → 2012
 *   CONTROLLER_ELECT_MASTER_FAILED. Otherwise the designation is written to etcd
 *   (ControllerMode hands over) and the reply waits, at most ELECT_WAIT_MS (under mqadmin's 3 s
 *   timeout), until the designated replica is master with its sync state set written: header
 *   ElectMasterResponseHeader {masterBrokerId, masterAddress, masterEpoch, syncStateSetEpoch};
 *   body = BrokerMemberGroup {cluster, brokerName, brokerAddrs:{id:addr}} (what mqadmin decodes)
 *   carrying also Apache's ElectMasterResponseBody fields {brokerMemberGroup, syncStateSet}
 *   (what Apache's controller sends; mqadmin 5.3.3 decodes it as BrokerMemberGroup and so prints
 *   no members against Apache — tsmq's body satisfies both readers).
 * - GET_BROKER_EPOCH_CACHE (1007, sent to each broker): body EpochEntryCache {clusterName,
 *   brokerName, brokerId, epochList:[{epoch, startOffset, endOffset}], maxOffset}; endOffset is
 *   the next entry's start, Long.MAX_VALUE for the last (Apache EpochFileCache). Outside
 *   controller mode: 1 SYSTEM_ERROR "this request only for controllerMode " (Apache's text).
 */
import type { RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { getLong, getString } from '../../remoting/headers/header-fields.js';
import type { BrokerConfig } from '../broker-config.js';
import { splitEndpoints, type ControllerConfig } from './controller-config.js';
import { DESIGNATION_TTL_SECONDS, type ControllerMode } from './controller-mode.js';
import type { GroupView } from './etcd-group-store.js';

/** How long electMaster waits for the designated replica to become master (ms). */
export const ELECT_WAIT_MS = 2500;
const POLL_MS = 50;
const LONG_MAX = '9223372036854775807';

export interface ControllerAdminOptions {
  config: BrokerConfig;
  controller: ControllerConfig;
  /** The broker's remoting address `host:port`. */
  brokerAddr: () => string;
  /** The replica's controller mode; null before it started (or outside controller mode). */
  mode: () => ControllerMode | null;
  maxPhyOffset: () => number;
}

interface ReplicaIdentity {
  brokerName: string;
  brokerId: number;
  brokerAddress: string;
  alive: boolean;
}

/** Master, epochs and members of one group as Apache's controller reports them. */
export interface ReplicasInfo {
  masterBrokerId: number | null;
  masterAddress: string | null;
  masterEpoch: number;
  syncStateSetEpoch: number;
  inSyncReplicas: ReplicaIdentity[];
  notInSyncReplicas: ReplicaIdentity[];
}

/** BrokerReplicasInfo.ReplicasInfo of a group view; null when etcd holds nothing for the group. */
export function replicasInfoOf(brokerName: string, v: GroupView): ReplicasInfo | null {
  if (v.known.length === 0 && v.replicas.length === 0 && !v.master) return null;
  const addrs = new Map<number, string>();
  for (const k of v.known) addrs.set(k.replicaId, k.addr);
  for (const r of v.replicas) addrs.set(r.replicaId, r.addr);
  const members = new Set(v.syncStateSet?.members ?? []);
  const inSync: ReplicaIdentity[] = [];
  const notInSync: ReplicaIdentity[] = [];
  for (const id of [...addrs.keys()].sort((a, b) => a - b)) {
    const r: ReplicaIdentity = { brokerName, brokerId: id, brokerAddress: addrs.get(id)!, alive: v.replicas.some((x) => x.replicaId === id) };
    (members.has(id) ? inSync : notInSync).push(r);
  }
  return {
    masterBrokerId: v.master?.record.replicaId ?? null,
    masterAddress: v.master?.record.addr ?? null,
    masterEpoch: v.master?.epoch ?? v.syncStateSet?.masterEpoch ?? 0,
    syncStateSetEpoch: v.syncStateSet?.syncStateSetEpoch ?? 0,
    inSyncReplicas: inSync,
    notInSyncReplicas: notInSync,
  };
}

export class ControllerAdminProcessors {
  constructor(private readonly o: ControllerAdminOptions) {}

  /** Request code → handler, registered by the broker in controller mode only (1007 always). */
  handlers(): Array<[number, RequestHandler]> {
    const list: Array<[number, RequestHandler]> = [[RequestCode.GET_BROKER_EPOCH_CACHE, (rc) => this.getBrokerEpochCache(rc)]];
    if (!this.o.controller.enableControllerMode) return list;
    list.push(
      [RequestCode.CONTROLLER_GET_METADATA_INFO, (rc) => this.getMetaData(rc)],
      [RequestCode.CONTROLLER_GET_SYNC_STATE_DATA, (rc) => this.getSyncStateData(rc)],
      [RequestCode.CONTROLLER_ELECT_MASTER, (rc) => this.electMaster(rc)],
    );
    return list;
  }

  private modeOrError(request: RemotingCommand): ControllerMode | RemotingCommand {
    const m = this.o.mode();
    return m ?? createResponseCommand(request, ResponseCode.SYSTEM_ERROR, 'controller mode is not started yet');
  }

  getMetaData({ request }: RequestContext): RemotingCommand {
    const m = this.modeOrError(request);
    if (!('replicaId' in m)) return m;
    return createResponseCommand(request, ResponseCode.SUCCESS, null, {
      group: this.o.controller.controllerKeyPrefix,
      controllerLeaderId: `${this.o.config.brokerName}-${m.replicaId}`,
      controllerLeaderAddress: this.o.brokerAddr(),
      isLeader: 'true',
      peers: splitEndpoints(this.o.controller.etcdEndpoints).join(';'),
    });
  }

  async getSyncStateData({ request }: RequestContext): Promise<RemotingCommand> {
    const m = this.modeOrError(request);
    if (!('replicaId' in m)) return m;
    let names: unknown;
    try {
      names = JSON.parse(request.body?.toString('utf8') ?? '');
    } catch {
      names = null;
    }
    if (!Array.isArray(names) || !names.every((n) => typeof n === 'string')) {
      return createResponseCommand(request, ResponseCode.CONTROLLER_INVALID_REQUEST, 'body must be a JSON array of broker names');
    }
    const table: Record<string, ReplicasInfo> = {};
    for (const name of names as string[]) {
      const info = replicasInfoOf(name, await m.groupStore(this.o.config.brokerClusterName, name).view());
      if (info) table[name] = info;
    }
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(JSON.stringify({ replicasInfoTable: table })));
  }

  async electMaster({ request }: RequestContext): Promise<RemotingCommand> {
    const m = this.modeOrError(request);
    if (!('replicaId' in m)) return m;
    const ext = request.extFields;
    const cluster = getString(ext, 'clusterName');
    const brokerName = getString(ext, 'brokerName');
    const id = getLong(ext, 'brokerId');
    const store = m.groupStore(cluster, brokerName);
    const v = await store.view();
    const fail = (code: number, remark: string): RemotingCommand => createResponseCommand(request, code, remark);
    if (v.known.length === 0 && v.replicas.length === 0) return fail(ResponseCode.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED, "Broker hasn't been registered");
    const alive = v.replicas.some((r) => r.replicaId === id);
    if (v.master && v.master.record.replicaId === id && alive) {
      return this.electReply(request, ResponseCode.CONTROLLER_MASTER_STILL_EXIST, `The old master ${id} is still alive, not need to elect new master for broker ${brokerName}`, cluster, brokerName, v);
    }
    const members = v.syncStateSet?.members ?? null;
    const eligible = alive && (members === null || members.includes(id) || this.o.controller.enableElectUncleanMaster);
    if (!eligible) return fail(ResponseCode.CONTROLLER_ELECT_MASTER_FAILED, `Failed to elect a new master: replica ${id} is ${alive ? 'not in the sync state set' : 'not alive'}`);
    await store.designateMaster(id, DESIGNATION_TTL_SECONDS);
    const deadline = Date.now() + ELECT_WAIT_MS;
    for (;;) {
      const now = await store.view();
      const mm = now.master;
      if (mm && mm.record.replicaId === id && mm.record.epochs !== null && now.syncStateSet?.masterEpoch === mm.epoch) {
        return this.electReply(request, ResponseCode.SUCCESS, null, cluster, brokerName, now);
      }
      if (Date.now() >= deadline) return fail(ResponseCode.CONTROLLER_ELECT_MASTER_FAILED, `Failed to elect a new master: replica ${id} did not become master within ${ELECT_WAIT_MS} ms (the request stays for ${DESIGNATION_TTL_SECONDS} s)`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  private electReply(request: RemotingCommand, code: number, remark: string | null, cluster: string, brokerName: string, v: GroupView): RemotingCommand {
    const addrs: Record<string, string> = {};
    for (const k of v.known) addrs[String(k.replicaId)] = k.addr;
    const group = { cluster, brokerName, brokerAddrs: addrs };
    const body = { ...group, brokerMemberGroup: group, syncStateSet: v.syncStateSet?.members ?? [] };
    const header = v.master
      ? {
          masterBrokerId: String(v.master.record.replicaId),
          masterAddress: v.master.record.addr,
          masterEpoch: String(v.master.epoch),
          syncStateSetEpoch: String(v.syncStateSet?.syncStateSetEpoch ?? 0),
        }
      : null;
    return createResponseCommand(request, code, remark, header, Buffer.from(JSON.stringify(body)));
  }

  getBrokerEpochCache({ request }: RequestContext): RemotingCommand {
    const m = this.o.mode();
    if (!this.o.controller.enableControllerMode || !m) return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, 'this request only for controllerMode ');
    const entries = m.epochEntries();
    const list = entries.map((e, i) => `{"endOffset":${i + 1 < entries.length ? entries[i + 1]!.startOffset : LONG_MAX},"epoch":${e.epoch},"startOffset":${e.startOffset}}`);
    const c = this.o.config;
    const body = `{"brokerId":${c.brokerId},"brokerName":${JSON.stringify(c.brokerName)},"clusterName":${JSON.stringify(c.brokerClusterName)},"epochList":[${list.join(',')}],"maxOffset":${this.o.maxPhyOffset()}}`;
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(body));
  }
}
