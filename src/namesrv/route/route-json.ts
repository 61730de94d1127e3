/**
 * JSON bodies the nameserver writes and reads, with a stable key order.
 *
 * We always write standard JSON (quoted map keys), which Apache produces for clients whose
 * request version is >= V4_9_4 and which ali-ons's lenient parser and fastjson both accept.
 * Field order follows fastjson's alphabetical SortField output:
 *
 *   TopicRouteData {"brokerDatas":[BrokerData...],"filterServerTable":{},"queueDatas":[QueueData...]}
 *   BrokerData     {"brokerAddrs":{"0":"host:port",...},"brokerName":..,"cluster":..,"enableActingMaster":false}
 *   QueueData      {"brokerName":..,"perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}
 *   ClusterInfo    {"brokerAddrTable":{name: BrokerData},"clusterAddrTable":{cluster:[names]}}
 *   TopicList      {"topicList":[...]}
 *   DataVersion    {"counter":..,"stateVersion":..,"timestamp":..}
 *   KVTable        {"table":{k: v}}
 *
 * orderTopicConf (null) is left out, as fastjson does; topicQueueMappingByBroker
 * {brokerName: TopicQueueMappingInfo} only for static topics.
 * brokerAddrs keys are sorted by numeric broker id; brokerDatas/queueDatas by brokerName.
 */
import type { BrokerData, ClusterInfo, DataVersion, QueueData, TopicRouteData } from './route-types.js';

function byKey<T>(entries: Iterable<[string, T]>): Array<[string, T]> {
  return [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

export function brokerDataJson(bd: BrokerData): Record<string, unknown> {
  const addrs: Record<string, string> = {};
  for (const id of [...bd.brokerAddrs.keys()].sort((a, b) => a - b)) addrs[String(id)] = bd.brokerAddrs.get(id)!;
  return { brokerAddrs: addrs, brokerName: bd.brokerName, cluster: bd.cluster, enableActingMaster: false };
}

export function queueDataJson(q: QueueData): Record<string, unknown> {
  return {
    brokerName: q.brokerName,
    perm: q.perm,
    readQueueNums: q.readQueueNums,
    topicSysFlag: q.topicSysFlag,
    writeQueueNums: q.writeQueueNums,
  };
}

export function encodeTopicRouteData(route: TopicRouteData): Buffer {
  const filterServerTable: Record<string, string[]> = {};
  for (const [addr, list] of byKey(route.filterServerTable)) filterServerTable[addr] = list;
  return Buffer.from(JSON.stringify({
    brokerDatas: route.brokerDatas.map(brokerDataJson),
    filterServerTable,
    queueDatas: route.queueDatas.map(queueDataJson),
    ...(route.topicQueueMappingByBroker ? { topicQueueMappingByBroker: Object.fromEntries(byKey(route.topicQueueMappingByBroker)) } : {}),
  }), 'utf8');
}

export function encodeClusterInfo(info: ClusterInfo): Buffer {
  const brokerAddrTable: Record<string, unknown> = {};
  for (const [name, bd] of byKey(info.brokerAddrTable)) brokerAddrTable[name] = brokerDataJson(bd);
  const clusterAddrTable: Record<string, string[]> = {};
  for (const [cluster, names] of byKey(info.clusterAddrTable)) clusterAddrTable[cluster] = [...names].sort();
  return Buffer.from(JSON.stringify({ brokerAddrTable, clusterAddrTable }), 'utf8');
}

export function encodeTopicList(topics: string[]): Buffer {
  return Buffer.from(JSON.stringify({ topicList: topics }), 'utf8');
}

export function encodeDataVersion(dv: DataVersion): Buffer {
  return Buffer.from(JSON.stringify({ counter: dv.counter, stateVersion: dv.stateVersion, timestamp: dv.timestamp }), 'utf8');
}

export function encodeKvTable(table: Map<string, string> | null): Buffer {
  const out: Record<string, string> = {};
  if (table) for (const [k, v] of byKey(table)) out[k] = v;
  return Buffer.from(JSON.stringify({ table: out }), 'utf8');
}

/** Lenient DataVersion reader: missing numbers are 0. Throws Error on a non-object. */
export function parseDataVersion(v: unknown): DataVersion {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('dataVersion is not an object');
  const o = v as Record<string, unknown>;
  return { stateVersion: num(o.stateVersion, 0), timestamp: num(o.timestamp, 0), counter: num(o.counter, 0) };
}

/** Number from a JSON number or numeric string; `dflt` when absent; throws on garbage. */
export function num(v: unknown, dflt: number): number {
  if (v === undefined || v === null) return dflt;
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new Error(`not a number: ${JSON.stringify(v)}`);
  return n;
}
