/**
 * `tsmq admin` equivalents of mqadmin's controller commands (docs/failover.md "Admin tools").
 * The controller address (`-a`) is any replica of a controller-mode group: every tsmq replica
 * answers controller requests from etcd's state. Output is mqadmin's text, or `--json`.
 *
 * - `get-controller-metadata -a <addr>` (mqadmin getControllerMetaData, 1005): #ControllerGroup,
 *   #ControllerLeaderId, #ControllerLeaderAddress, one #Peer line per etcd endpoint.
 *   --json {group, controllerLeaderId, controllerLeaderAddress, isLeader, peers:[…]}.
 * - `get-sync-state-set -a <addr> (-b <brokerName[,…]> | -c <cluster> -n <namesrv>)` (mqadmin
 *   getSyncStateSet, 1006): per group #brokerName, #MasterBrokerId, #MasterAddr, #MasterEpoch,
 *   #SyncStateSetEpoch, #SyncStateSetNums and InSyncReplica / NotInSyncReplica lines.
 *   --json: BrokerReplicasInfo's replicasInfoTable.
 * - `get-broker-epoch (-b <brokerName> | -c <cluster>) -n <namesrv>`, or `--broker-addr <addr>`
 *   for one broker (mqadmin getBrokerEpoch, 1007 to every broker of the group(s) in the
 *   nameserver's cluster info 106): #clusterName, #brokerName, #brokerAddr, #brokerId and one
 *   #Epoch line per entry (the last one ends at the broker's max offset, as mqadmin prints).
 *   --json: [{brokerAddr, clusterName, brokerName, brokerId, epochList, maxOffset}].
 * - `elect-master -a <addr> -c <cluster> -B <brokerName> -b <replicaId>` (mqadmin electMaster,
 *   1002 with designateElect): #ClusterName, #BrokerName, #BrokerMasterAddr, #MasterEpoch,
 *   #SyncStateSetEpoch and a `\t#Broker\t<id>\t<addr>` line per replica. Refusals (2010, 2011,
 *   2012) are errors naming the code. --json {masterBrokerId, masterAddress, masterEpoch,
 *   syncStateSetEpoch, brokerAddrs}.
 */
import type { Command } from 'commander';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { createRequestCommand } from '../../remoting/protocol/commands.js';
import { RemotingClient } from '../../remoting/transport/remoting-client.js';
import { adminClientOptions } from './admin-connection.js';
import { addressList, adminCommand, intOption, invokeAdmin, parseFastjson, printJson, successBody, timeoutOf, withCommonOptions, type CommonAdminOptions } from './admin-support.js';

const LONG_MAX = 9223372036854775807;

interface ReplicaIdentityJson {
  brokerName: string;
  brokerId: number;
  brokerAddress: string;
  alive: boolean;
}

interface ReplicasInfoJson {
  masterBrokerId?: number | null;
  masterAddress?: string | null;
  masterEpoch: number;
  syncStateSetEpoch: number;
  inSyncReplicas: ReplicaIdentityJson[];
  notInSyncReplicas: ReplicaIdentityJson[];
}

const identity = (r: ReplicaIdentityJson): string => `ReplicaIdentity{brokerName='${r.brokerName}', brokerId=${r.brokerId}, brokerAddress='${r.brokerAddress}', alive=${r.alive}}`;

function asObject(v: unknown, what: string): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error(`the reply is not ${what}`);
  return v as Record<string, unknown>;
}

/** Broker names of `cluster` from the nameserver's cluster info (106). @throws when the cluster is unknown. */
async function brokerNamesOf(namesrv: string, cluster: string, timeoutMs: number): Promise<string[]> {
  const { addr, response } = await invokeAdmin(addressList(namesrv, 'nameserver'), RequestCode.GET_BROKER_CLUSTER_INFO, null, timeoutMs);
  const info = asObject(parseFastjson(successBody(addr, response).toString('utf8')), 'cluster info');
  const names = asObject(info.clusterAddrTable ?? {}, 'cluster info')[cluster];
  if (!Array.isArray(names) || names.length === 0) throw new Error(`cluster ${cluster} is not known to the nameserver`);
  return (names as string[]).sort();
}

/** Every broker address (master and slaves) of the given groups from the nameserver (106). */
async function brokerAddrsOf(namesrv: string, brokerNames: string[], timeoutMs: number): Promise<string[]> {
  const { addr, response } = await invokeAdmin(addressList(namesrv, 'nameserver'), RequestCode.GET_BROKER_CLUSTER_INFO, null, timeoutMs);
  const info = asObject(parseFastjson(successBody(addr, response).toString('utf8')), 'cluster info');
  const table = asObject(info.brokerAddrTable ?? {}, 'cluster info');
  const out: string[] = [];
  for (const name of brokerNames) {
    const data = table[name] as { brokerAddrs?: Record<string, string> } | undefined;
    if (!data?.brokerAddrs) throw new Error(`broker ${name} is not known to the nameserver`);
    for (const a of Object.values(data.brokerAddrs)) if (!out.includes(a)) out.push(a);
  }
  return out;
}

interface MetadataOptions extends CommonAdminOptions {
  controllerAddr: string;
}

export async function runGetControllerMetadata(opts: MetadataOptions): Promise<void> {
  const { addr, response } = await invokeAdmin(addressList(opts.controllerAddr, 'controller'), RequestCode.CONTROLLER_GET_METADATA_INFO, null, timeoutOf(opts));
  successBody(addr, response);
  const h = response.extFields ?? {};
  const peers = String(h.peers ?? '').split(';').filter((p) => p !== '');
  if (opts.json) {
    printJson({ group: h.group ?? null, controllerLeaderId: h.controllerLeaderId ?? null, controllerLeaderAddress: h.controllerLeaderAddress ?? null, isLeader: String(h.isLeader) === 'true', peers });
    return;
  }
  console.log(`#ControllerGroup\t${String(h.group)}`);
  console.log(`#ControllerLeaderId\t${String(h.controllerLeaderId)}`);
  console.log(`#ControllerLeaderAddress\t${String(h.controllerLeaderAddress)}`);
  for (const p of peers) console.log(`#Peer:\t${p}`);
}

interface SyncStateSetOptions extends CommonAdminOptions {
  controllerAddr: string;
  brokerName?: string;
  clusterName?: string;
  namesrvAddr?: string;
}

export async function runGetSyncStateSet(opts: SyncStateSetOptions): Promise<void> {
  const timeoutMs = timeoutOf(opts);
  let names: string[];
  if (opts.brokerName) names = opts.brokerName.split(',').map((s) => s.trim()).filter((s) => s !== '');
  else if (opts.clusterName && opts.namesrvAddr) names = await brokerNamesOf(opts.namesrvAddr, opts.clusterName, timeoutMs);
  else throw new Error('give -b <brokerName> or -c <cluster> with -n <namesrv>');
  const addrs = addressList(opts.controllerAddr, 'controller');
  const client = new RemotingClient(adminClientOptions({ connectTimeoutMs: Math.min(3000, timeoutMs) }));
  let table: Record<string, ReplicasInfoJson>;
  try {
    const req = createRequestCommand(RequestCode.CONTROLLER_GET_SYNC_STATE_DATA, null, Buffer.from(JSON.stringify(names)));
    const response = await client.invokeSync(addrs[0]!, req, timeoutMs);
    const body = asObject(parseFastjson(successBody(addrs[0]!, response).toString('utf8')), 'BrokerReplicasInfo');
    table = asObject(body.replicasInfoTable ?? {}, 'BrokerReplicasInfo') as unknown as Record<string, ReplicasInfoJson>;
  } finally {
    await client.close();
  }
  if (opts.json) {
    printJson(table);
    return;
  }
  for (const [name, r] of Object.entries(table)) {
    console.log(`\n#brokerName\t${name}\n#MasterBrokerId\t${r.masterBrokerId ?? 'null'}\n#MasterAddr\t${r.masterAddress ?? 'null'}\n#MasterEpoch\t${r.masterEpoch}\n#SyncStateSetEpoch\t${r.syncStateSetEpoch}\n#SyncStateSetNums\t${r.inSyncReplicas.length}`);
    for (const m of r.inSyncReplicas) console.log(`\nInSyncReplica:\t${identity(m)}`);
    for (const m of r.notInSyncReplicas) console.log(`\nNotInSyncReplica:\t${identity(m)}`);
  }
}

interface BrokerEpochOptions extends CommonAdminOptions {
  brokerName?: string;
  clusterName?: string;
  namesrvAddr?: string;
  brokerAddr?: string;
}

export async function runGetBrokerEpoch(opts: BrokerEpochOptions): Promise<void> {
  const timeoutMs = timeoutOf(opts);
  let brokers: string[];
  if (opts.brokerAddr) brokers = addressList(opts.brokerAddr, 'broker');
  else if (opts.namesrvAddr && (opts.brokerName || opts.clusterName)) {
    const names = opts.brokerName ? [opts.brokerName.trim()] : await brokerNamesOf(opts.namesrvAddr, opts.clusterName!, timeoutMs);
    brokers = await brokerAddrsOf(opts.namesrvAddr, names, timeoutMs);
  } else throw new Error('give --broker-addr <addr>, or -n <namesrv> with -b <brokerName> or -c <cluster>');
  const caches: Array<Record<string, unknown>> = [];
  for (const b of brokers) {
    const { response } = await invokeAdmin([b], RequestCode.GET_BROKER_EPOCH_CACHE, null, timeoutMs);
    const c = asObject(parseFastjson(successBody(b, response).toString('utf8')), 'EpochEntryCache');
    const list = (Array.isArray(c.epochList) ? c.epochList : []) as Array<{ epoch: number; startOffset: number; endOffset: number }>;
    const maxOffset = Number(c.maxOffset);
    const epochList = list.map((e, i) => ({ epoch: e.epoch, startOffset: e.startOffset, endOffset: i === list.length - 1 ? maxOffset : e.endOffset >= LONG_MAX ? maxOffset : e.endOffset }));
    caches.push({ brokerAddr: b, clusterName: c.clusterName, brokerName: c.brokerName, brokerId: c.brokerId, epochList, maxOffset });
  }
  if (opts.json) {
    printJson(caches);
    return;
  }
  for (const c of caches) {
    const lines = [`\n#clusterName\t${String(c.clusterName)}`, `#brokerName\t${String(c.brokerName)}`, `#brokerAddr\t${String(c.brokerAddr)}`, `#brokerId\t${String(c.brokerId)}`];
    for (const e of c.epochList as Array<{ epoch: number; startOffset: number; endOffset: number }>) lines.push(`#Epoch: EpochEntry{epoch=${e.epoch}, startOffset=${e.startOffset}, endOffset=${e.endOffset}}`);
    console.log(lines.join('\n'));
  }
}

interface ElectMasterOptions extends CommonAdminOptions {
  controllerAddr: string;
  clusterName: string;
  brokerName: string;
  brokerId: string;
}

export async function runElectMaster(opts: ElectMasterOptions): Promise<void> {
  const brokerId = intOption('-b/--broker-id', opts.brokerId, 0, 0xffff);
  const header = { clusterName: opts.clusterName, brokerName: opts.brokerName, brokerId: String(brokerId), designateElect: 'true', invokeTime: String(Date.now()) };
  const { addr, response } = await invokeAdmin(addressList(opts.controllerAddr, 'controller'), RequestCode.CONTROLLER_ELECT_MASTER, header, timeoutOf(opts));
  const body = asObject(parseFastjson(successBody(addr, response).toString('utf8')), 'BrokerMemberGroup');
  const h = response.extFields ?? {};
  const brokerAddrs = asObject(body.brokerAddrs ?? {}, 'BrokerMemberGroup') as Record<string, string>;
  const result = { masterBrokerId: Number(h.masterBrokerId), masterAddress: String(h.masterAddress), masterEpoch: Number(h.masterEpoch), syncStateSetEpoch: Number(h.syncStateSetEpoch), brokerAddrs };
  if (opts.json) {
    printJson(result);
    return;
  }
  console.log(`\n#ClusterName\t${opts.clusterName}\n#BrokerName\t${opts.brokerName}\n#BrokerMasterAddr\t${result.masterAddress}\n#MasterEpoch\t${result.masterEpoch}\n#SyncStateSetEpoch\t${result.syncStateSetEpoch}`);
  for (const [id, a] of Object.entries(brokerAddrs).sort(([x], [y]) => Number(x) - Number(y))) console.log(`\t#Broker\t${id}\t${a}`);
}

export function registerAdminController(program: Command): void {
  const admin = adminCommand(program);
  withCommonOptions(
    admin
      .command('get-controller-metadata')
      .description('controller metadata of a controller-mode replica (mqadmin getControllerMetaData, request code 1005)')
      .requiredOption('-a, --controller-addr <host:port>', 'any replica of a controller-mode group'),
  ).action(runGetControllerMetadata);
  withCommonOptions(
    admin
      .command('get-sync-state-set')
      .description('master, epochs and sync state set of broker groups (mqadmin getSyncStateSet, request code 1006)')
      .requiredOption('-a, --controller-addr <host:port>', 'any replica of a controller-mode group')
      .option('-b, --broker-name <name[,name]>', 'broker group(s)')
      .option('-c, --cluster-name <cluster>', 'every group of the cluster (needs -n)')
      .option('-n, --namesrv-addr <host:port>', 'nameserver address(es), host:port;host:port'),
  ).action(runGetSyncStateSet);
  withCommonOptions(
    admin
      .command('get-broker-epoch')
      .description("each broker's epoch history (mqadmin getBrokerEpoch, request code 1007)")
      .option('-n, --namesrv-addr <host:port>', 'nameserver address(es), host:port;host:port')
      .option('-b, --broker-name <name>', 'broker group')
      .option('-c, --cluster-name <cluster>', 'every group of the cluster')
      .option('--broker-addr <host:port>', 'ask this broker only'),
  ).action(runGetBrokerEpoch);
  withCommonOptions(
    admin
      .command('elect-master')
      .description('make a replica the master of its group (mqadmin electMaster, request code 1002)')
      .requiredOption('-a, --controller-addr <host:port>', 'any replica of a controller-mode group')
      .requiredOption('-c, --cluster-name <cluster>', 'cluster of the group')
      .requiredOption('-B, --broker-name <name>', 'broker group (mqadmin -bn)')
      .requiredOption('-b, --broker-id <replicaId>', 'replica to elect'),
  ).action(runElectMaster);
}
