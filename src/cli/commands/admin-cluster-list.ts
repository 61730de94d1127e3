/**
 * `tsmq admin cluster-list -n <namesrv> [-c <cluster>]`: every broker of every cluster (or of
 * one) with its version, put and get rates, age of its oldest message and disk use (mqadmin
 * `clusterList`: GET_BROKER_CLUSTER_INFO 106 on the nameserver, then GET_BROKER_RUNTIME_INFO 28
 * on each broker). Columns as mqadmin: #Cluster Name, #Broker Name, #BID (0 = master), #Addr,
 * #Version, #InTPS(LOAD) (`putTps` over the last 10 s, then (send queue size,head wait ms)),
 * #OutTPS(LOAD) (`getTransferredTps`, then (pull queue,wait|ack queue,wait)), #Timer(Progress),
 * #PCWait(ms), #Hour (hours since the oldest stored message), #SPACE (CommitLog disk use,
 * 0..1), #ACTIVATED. Rows by cluster, broker name, broker id. A broker that does not answer 28
 * keeps its row with empty figures and the error in --json. `--json`: `[{cluster, brokerName,
 * brokerId, addr, version, inTps, outTps, hour, space, activated, error?}]`.
 */
import type { Command } from 'commander';
import { adminCommand, printJson, renderTable, timeoutOf, withCommonOptions, type CommonAdminOptions } from './admin-support.js';
import { fetchClusterInfo, withNamesrvOption } from './admin-nameserver.js';
import { fetchRuntimeInfo } from './admin-broker-status.js';

export interface ClusterListOptions extends CommonAdminOptions {
  namesrvAddr: string;
  cluster?: string;
}

export interface ClusterBrokerRow {
  cluster: string;
  brokerName: string;
  brokerId: number;
  addr: string;
  version: string;
  /** Messages put per second (the broker's 10 s rate). */
  inTps: number;
  /** Messages delivered per second (the broker's 10 s rate). */
  outTps: number;
  /** Hours since the oldest message in the store; 0 when it has none. */
  hour: number;
  /** Used fraction of the CommitLog disk, 0..1. */
  space: number;
  activated: boolean;
  /** Why the broker's runtime info is missing. */
  error?: string;
  /** The runtime info as received (for the LOAD details). */
  table: Record<string, string>;
}

const firstNumber = (text: string | undefined): number => {
  const n = Number((text ?? '').trim().split(' ')[0]);
  return Number.isFinite(n) ? n : 0;
};

/** One row from a broker's runtime info (`table` empty when it did not answer). */
export function clusterRowOf(cluster: string, brokerName: string, brokerId: number, addr: string, table: Record<string, string>, nowMs: number, error?: string): ClusterBrokerRow {
  const earliest = Number(table.earliestMessageTimeStamp);
  return {
    cluster,
    brokerName,
    brokerId,
    addr,
    version: table.brokerVersionDesc ?? '',
    inTps: firstNumber(table.putTps),
    outTps: firstNumber(table.getTransferredTps),
    hour: earliest > 0 ? (nowMs - earliest) / 3_600_000 : 0,
    space: firstNumber(table.commitLogDiskRatio),
    activated: table.brokerActive === 'true',
    ...(error ? { error } : {}),
    table,
  };
}

export function clusterListLines(rows: ClusterBrokerRow[]): string[] {
  const t = (r: ClusterBrokerRow, k: string, d = ''): string => r.table[k] ?? d;
  return renderTable(
    ['#Cluster Name', '#Broker Name', '#BID', '#Addr', '#Version', '#InTPS(LOAD)', '#OutTPS(LOAD)', '#Timer(Progress)', '#PCWait(ms)', '#Hour', '#SPACE', '#ACTIVATED'],
    rows.map((r) => [
      r.cluster,
      r.brokerName,
      r.brokerId,
      r.addr,
      r.version,
      `${r.inTps.toFixed(2)}(${t(r, 'sendThreadPoolQueueSize')},${t(r, 'sendThreadPoolQueueHeadWaitTimeMills')}ms)`,
      `${r.outTps.toFixed(2)}(${t(r, 'pullThreadPoolQueueSize')},${t(r, 'pullThreadPoolQueueHeadWaitTimeMills')}ms|${t(r, 'ackThreadPoolQueueSize', 'N')},${t(r, 'ackThreadPoolQueueHeadWaitTimeMills', 'N')}ms)`,
      `${firstNumber(r.table.timerReadBehind)}-${firstNumber(r.table.timerOffsetBehind)}(${(firstNumber(r.table.timerCongestNum) / 10000).toFixed(1)}w, ${firstNumber(r.table.timerEnqueueTps).toFixed(1)}, ${firstNumber(r.table.timerDequeueTps).toFixed(1)})`,
      t(r, 'pageCacheLockTimeMills'),
      r.hour.toFixed(2),
      r.space.toFixed(4),
      String(r.activated),
    ]),
  );
}

export async function collectClusterRows(namesrv: string, onlyCluster: string | undefined, timeoutMs: number): Promise<ClusterBrokerRow[]> {
  const info = await fetchClusterInfo(namesrv, timeoutMs);
  const clusters = onlyCluster ? [onlyCluster] : Object.keys(info.clusterAddrTable).sort();
  if (onlyCluster && !info.clusterAddrTable[onlyCluster]) throw new Error(`cluster ${onlyCluster} is not known to the nameserver`);
  const rows: ClusterBrokerRow[] = [];
  for (const cluster of clusters) {
    for (const brokerName of [...(info.clusterAddrTable[cluster] ?? [])].sort()) {
      const addrs = Object.entries(info.brokerAddrTable[brokerName]?.brokerAddrs ?? {}).sort(([a], [b]) => Number(a) - Number(b));
      for (const [id, addr] of addrs) {
        try {
          rows.push(clusterRowOf(cluster, brokerName, Number(id), addr, await fetchRuntimeInfo(addr, timeoutMs), Date.now()));
        } catch (e) {
          rows.push(clusterRowOf(cluster, brokerName, Number(id), addr, {}, Date.now(), (e as Error).message));
        }
      }
    }
  }
  return rows;
}

export async function runClusterList(opts: ClusterListOptions): Promise<void> {
  const rows = await collectClusterRows(opts.namesrvAddr, opts.cluster?.trim(), timeoutOf(opts));
  if (opts.json) {
    printJson(rows.map(({ table: _table, ...r }) => r));
    return;
  }
  for (const l of clusterListLines(rows)) console.log(l);
  for (const r of rows) if (r.error) console.log(`${r.addr}: no runtime info: ${r.error}`);
}

export function registerAdminClusterList(program: Command): void {
  withCommonOptions(
    withNamesrvOption(
      adminCommand(program)
        .command('cluster-list')
        .description('the brokers of each cluster with version, rates and disk use (mqadmin clusterList, request codes 106 and 28)'),
    ).option('-c, --cluster <cluster>', 'only this cluster'),
  ).action(runClusterList);
}
