/**
 * The nameserver's route tables (Apache RocketMQ's RouteInfoManager, 4.9 semantics):
 *
 *   topicQueueTable   topic -> brokerName -> QueueData
 *   brokerAddrTable   brokerName -> BrokerData {cluster, brokerName, brokerAddrs {id: addr}}
 *   clusterAddrTable  cluster -> brokerNames
 *   brokerLiveTable   brokerAddr -> BrokerLiveInfo (last heartbeat, dataVersion, HA address)
 *   filterServerTable brokerAddr -> filter servers
 *   topicQueueMappingInfoTable topic -> brokerName -> TopicQueueMappingInfo (5.x static topics,
 *                     served as the route's topicQueueMappingByBroker)
 *
 * Deleted topics: DELETE_TOPIC_IN_NAMESRV remembers the topic (at most 10000, oldest
 * forgotten first) until a broker registers it again, so the TBW102 fallback route
 * (pickupAutoCreateRouteData) is not offered for it: a deleted topic does not come back in
 * routes. Topics never seen keep the fallback (ali-ons needs it to auto-create).
 *
 * Node runs this single-threaded, so no locks. Time comes from a Clock; a broker not heard
 * from for longer than its heartbeat timeout (default 120 s) is dropped by scanNotActiveBroker.
 */
import type { Clock } from '../../common/time/clock.js';
import { systemClock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import {
  AUTO_CREATE_TOPIC_KEY_TOPIC, MASTER_ID, PERM_INHERIT, PERM_READ, PERM_WRITE,
  type BrokerData, type BrokerLiveInfo, type ClusterInfo, type DataVersion, type QueueData,
  type RegisterBrokerRequest, type RegisterBrokerResult, type TopicConfig, type TopicQueueMappingInfoJson, type TopicRouteData,
} from './route-types.js';

/** Apache BROKER_CHANNEL_EXPIRED_TIME. */
export const DEFAULT_BROKER_EXPIRED_MS = 120_000;
/** Queue count a producer asks for when a topic is auto-created (Apache defaultTopicQueueNums). */
export const DEFAULT_TOPIC_QUEUE_NUMS = 4;
/** How many deleted topics the nameserver remembers (oldest forgotten first). */
const MAX_DELETED_TOPICS = 10_000;

export interface RouteInfoManagerOptions {
  clock?: Clock;
  logger?: Logger;
  brokerExpiredMs?: number;
  defaultTopicQueueNums?: number;
  /** Apache 5 option: a master's registration removes its topics missing from the body. Default false. */
  deleteTopicWithBrokerRegistration?: boolean;
}

/** A broker dropped by scanNotActiveBroker or onChannelDestroy. */
export interface RemovedBroker {
  brokerAddr: string;
  channelId: string | null;
}

export class RouteInfoManager {
  readonly topicQueueTable = new Map<string, Map<string, QueueData>>();
  readonly topicQueueMappingInfoTable = new Map<string, Map<string, TopicQueueMappingInfoJson>>();
  readonly brokerAddrTable = new Map<string, BrokerData>();
  readonly clusterAddrTable = new Map<string, Set<string>>();
  readonly brokerLiveTable = new Map<string, BrokerLiveInfo>();
  readonly filterServerTable = new Map<string, string[]>();
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly brokerExpiredMs: number;
  private readonly defaultTopicQueueNums: number;
  private readonly deleteTopicWithBrokerRegistration: boolean;
  /** Topics deleted by an admin and not registered since (insertion ordered, bounded). */
  private readonly deletedTopics = new Set<string>();

  constructor(opts: RouteInfoManagerOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.logger = opts.logger ?? silentLogger;
    this.brokerExpiredMs = opts.brokerExpiredMs ?? DEFAULT_BROKER_EXPIRED_MS;
    this.defaultTopicQueueNums = opts.defaultTopicQueueNums ?? DEFAULT_TOPIC_QUEUE_NUMS;
    this.deleteTopicWithBrokerRegistration = opts.deleteTopicWithBrokerRegistration ?? false;
  }

  /**
   * Adds/refreshes a broker and merges its topics (Apache 5.3.3 RouteInfoManager.registerBroker).
   * The body may hold every topic (the broker's periodic registerBrokerAll) or only the changed
   * ones (registerIncrementBrokerData); both merge per topic, so topics absent from the body are
   * kept, unless deleteTopicWithBrokerRegistration (then a master's body is its whole topic set
   * and absent topics are removed; skipped when the body carries static-topic mappings, as Apache).
   *
   * From a master (id 0), a topic's queue data is (re)written when the broker registers first,
   * when its dataVersion differs from the stored one, or when this broker has no queue data for
   * the topic yet (Apache isTopicConfigChanged); with an unchanged dataVersion nothing else is
   * touched. Static-topic mappings are merged only on a first registration or a new dataVersion.
   * The stored dataVersion becomes the body's.
   *
   * Refused (null, nothing changed) as Apache 5.3.3 refuses it: a body of exactly one topic from
   * a broker id that is not registered under its broker name ("Register single topic route info
   * should be after the broker completes the first registration": an increment reaching a
   * nameserver that restarted or expired the broker). The processor answers SYSTEM_ERROR
   * "register broker failed"; tsmq's broker then registers in full at once. (Apache also adds
   * the broker name to its cluster and an empty broker entry before refusing; tsmq does not.
   * Apache 4.9 accepted such a body.)
   *
   * One address keeps one id: an older entry for the same address under another id is removed
   * (slave -> master switch).
   */
  registerBroker(req: RegisterBrokerRequest): RegisterBrokerResult | null {
    const { clusterName, brokerAddr, brokerName, brokerId } = req;
    const wrapper = req.topicConfigWrapper;
    if (wrapper && wrapper.topicConfigTable.size === 1 && !this.brokerAddrTable.get(brokerName)?.brokerAddrs.has(brokerId)) {
      this.logger.warn(`Can't register topic ${[...wrapper.topicConfigTable.keys()][0]} because broker[${brokerId}]=${brokerAddr} has not registered.`);
      return null;
    }
    let names = this.clusterAddrTable.get(clusterName);
    if (!names) this.clusterAddrTable.set(clusterName, (names = new Set()));
    names.add(brokerName);

    let brokerData = this.brokerAddrTable.get(brokerName);
    let registerFirst = false;
    if (!brokerData) {
      registerFirst = true;
      brokerData = { cluster: clusterName, brokerName, brokerAddrs: new Map() };
      this.brokerAddrTable.set(brokerName, brokerData);
    }
    for (const [id, addr] of [...brokerData.brokerAddrs]) {
      if (addr === brokerAddr && id !== brokerId) brokerData.brokerAddrs.delete(id);
    }
    const oldAddr = brokerData.brokerAddrs.get(brokerId);
    brokerData.brokerAddrs.set(brokerId, brokerAddr);
    registerFirst ||= oldAddr === undefined;

    if (wrapper && brokerId === MASTER_ID) {
      const versionChanged = registerFirst || this.isBrokerTopicConfigChanged(brokerAddr, wrapper.dataVersion);
      const mappings = wrapper.topicQueueMappingInfoMap;
      if (this.deleteTopicWithBrokerRegistration && (!mappings || mappings.size === 0)) this.removeTopicsMissingFrom(brokerName, wrapper.topicConfigTable);
      for (const tc of wrapper.topicConfigTable.values()) {
        if (versionChanged || !this.topicQueueTable.get(tc.topicName)?.has(brokerName)) this.createAndUpdateQueueData(brokerName, tc);
      }
      if (versionChanged) {
        // Apache 5: keyed by the info's own bname
        for (const [topic, info] of mappings ?? []) {
          let byBroker = this.topicQueueMappingInfoTable.get(topic);
          if (!byBroker) this.topicQueueMappingInfoTable.set(topic, (byBroker = new Map()));
          byBroker.set(info.bname, info);
        }
      }
    }

    const previous = this.brokerLiveTable.get(brokerAddr);
    this.brokerLiveTable.set(brokerAddr, {
      lastUpdateTimestampMs: this.clock.nowMs(),
      heartbeatTimeoutMs: req.heartbeatTimeoutMs ?? this.brokerExpiredMs,
      dataVersion: wrapper ? { ...wrapper.dataVersion } : { stateVersion: 0, timestamp: 0, counter: 0 },
      haServerAddr: req.haServerAddr,
      clusterName,
      channelId: req.channelId ?? null,
    });
    if (!previous) this.logger.info(`new broker registered, ${brokerAddr} HAServer: ${req.haServerAddr}`);

    if (req.filterServerList) {
      if (req.filterServerList.length === 0) this.filterServerTable.delete(brokerAddr);
      else this.filterServerTable.set(brokerAddr, [...req.filterServerList]);
    }

    const result: RegisterBrokerResult = { haServerAddr: null, masterAddr: null };
    if (brokerId !== MASTER_ID) {
      const masterAddr = brokerData.brokerAddrs.get(MASTER_ID);
      const masterLive = masterAddr !== undefined ? this.brokerLiveTable.get(masterAddr) : undefined;
      if (masterAddr !== undefined && masterLive) {
        result.haServerAddr = masterLive.haServerAddr;
        result.masterAddr = masterAddr;
      }
    }
    return result;
  }

  /** Removes one broker (Apache unregisterBroker); drops the broker group's topics when its last address goes. */
  unregisterBroker(clusterName: string, brokerAddr: string, brokerName: string, brokerId: number): void {
    this.brokerLiveTable.delete(brokerAddr);
    this.filterServerTable.delete(brokerAddr);
    const brokerData = this.brokerAddrTable.get(brokerName);
    let removeBrokerName = false;
    if (brokerData) {
      brokerData.brokerAddrs.delete(brokerId);
      if (brokerData.brokerAddrs.size === 0) {
        this.brokerAddrTable.delete(brokerName);
        removeBrokerName = true;
      }
    }
    if (removeBrokerName) {
      const names = this.clusterAddrTable.get(clusterName);
      if (names) {
        names.delete(brokerName);
        if (names.size === 0) this.clusterAddrTable.delete(clusterName);
      }
      this.removeTopicByBrokerName(brokerName);
    }
    this.logger.info(`unregisterBroker ${brokerAddr} (${brokerName}, id ${brokerId}) from cluster ${clusterName}`);
  }

  /** Route for a known topic: its queue datas plus the brokers serving them; null when unknown. */
  pickupTopicRouteData(topic: string): TopicRouteData | null {
    const queueMap = this.topicQueueTable.get(topic);
    if (!queueMap || queueMap.size === 0) return null;
    const route = this.buildRoute([...queueMap.values()].map((q) => ({ ...q })));
    const mapping = this.topicQueueMappingInfoTable.get(topic);
    if (route && mapping && mapping.size > 0) route.topicQueueMappingByBroker = new Map(mapping);
    return route;
  }

  /**
   * Route a producer/consumer may use for a topic that does not exist yet, built from the
   * brokers that registered the auto-create topic TBW102: per broker, min(defaultTopicQueueNums,
   * TBW102 writeQueueNums) read and write queues and TBW102's perm without the inherit bit
   * (what the broker creates on first send). Null when no broker registered TBW102.
   */
  pickupAutoCreateRouteData(topic = ''): TopicRouteData | null {
    if (this.deletedTopics.has(topic)) return null;
    const template = this.topicQueueTable.get(AUTO_CREATE_TOPIC_KEY_TOPIC);
    if (!template || template.size === 0) return null;
    // %RETRY%<group> and %DLQ%<group> are created by the broker with one queue (heartbeat,
    // send-back); a route asked for before that must not promise more queues than will exist.
    const oneQueue = topic.startsWith('%RETRY%') || topic.startsWith('%DLQ%');
    const queueDatas = [...template.values()].map((q) => {
      const nums = oneQueue ? 1 : Math.min(this.defaultTopicQueueNums, q.writeQueueNums);
      return { brokerName: q.brokerName, readQueueNums: nums, writeQueueNums: nums, perm: q.perm & ~PERM_INHERIT, topicSysFlag: 0 };
    });
    return this.buildRoute(queueDatas);
  }

  /** Drops brokers silent for longer than their timeout; returns them so their channels can be closed. */
  scanNotActiveBroker(): RemovedBroker[] {
    const now = this.clock.nowMs();
    const removed: RemovedBroker[] = [];
    for (const [addr, live] of [...this.brokerLiveTable]) {
      if (live.lastUpdateTimestampMs + live.heartbeatTimeoutMs < now) {
        this.logger.warn(`The broker channel expired, ${addr} ${live.heartbeatTimeoutMs}ms`);
        this.removeBrokerAddr(addr);
        removed.push({ brokerAddr: addr, channelId: live.channelId });
      }
    }
    return removed;
  }

  /** A broker's connection closed: remove whichever broker registered over it. */
  onChannelDestroy(channelId: string): RemovedBroker | null {
    for (const [addr, live] of this.brokerLiveTable) {
      if (live.channelId === channelId) {
        this.logger.info(`the broker's channel destroyed, ${addr}, clean it's data structure at once`);
        this.removeBrokerAddr(addr);
        return { brokerAddr: addr, channelId };
      }
    }
    return null;
  }

  /** True when the broker is unknown or its stored DataVersion differs (Apache isBrokerTopicConfigChanged). */
  isBrokerTopicConfigChanged(brokerAddr: string, dataVersion: DataVersion): boolean {
    const prev = this.queryBrokerTopicConfig(brokerAddr);
    return prev === null || !dataVersionEquals(prev, dataVersion);
  }

  queryBrokerTopicConfig(brokerAddr: string): DataVersion | null {
    return this.brokerLiveTable.get(brokerAddr)?.dataVersion ?? null;
  }

  /** Heartbeat: refreshes the last-update time. False when the broker is not registered. */
  updateBrokerInfoUpdateTimestamp(brokerAddr: string): boolean {
    const live = this.brokerLiveTable.get(brokerAddr);
    if (!live) return false;
    live.lastUpdateTimestampMs = this.clock.nowMs();
    return true;
  }

  getAllClusterInfo(): ClusterInfo {
    const brokerAddrTable = new Map<string, BrokerData>();
    for (const [name, bd] of this.brokerAddrTable) brokerAddrTable.set(name, copyBrokerData(bd));
    const clusterAddrTable = new Map<string, Set<string>>();
    for (const [cluster, names] of this.clusterAddrTable) clusterAddrTable.set(cluster, new Set(names));
    return { brokerAddrTable, clusterAddrTable };
  }

  getAllTopicList(): string[] {
    return [...this.topicQueueTable.keys()].sort();
  }

  /** Deletes a topic everywhere, or only on the broker groups of `clusterName`; a topic gone everywhere is remembered as deleted. */
  deleteTopic(topic: string, clusterName?: string): void {
    if (!clusterName) {
      this.topicQueueTable.delete(topic);
      this.topicQueueMappingInfoTable.delete(topic);
      this.rememberDeleted(topic);
      return;
    }
    const queueMap = this.topicQueueTable.get(topic);
    const names = this.clusterAddrTable.get(clusterName);
    if (!queueMap || !names) return;
    for (const name of names) {
      queueMap.delete(name);
      this.topicQueueMappingInfoTable.get(topic)?.delete(name);
    }
    if (queueMap.size === 0) {
      this.topicQueueTable.delete(topic);
      this.topicQueueMappingInfoTable.delete(topic);
      this.rememberDeleted(topic);
    }
  }

  /** Whether `topic` was deleted by an admin and not registered again since. */
  isDeletedTopic(topic: string): boolean {
    return this.deletedTopics.has(topic);
  }

  /**
   * WIPE_WRITE_PERM_OF_BROKER / ADD_WRITE_PERM_OF_BROKER (Apache operateWritePermOfBroker): on
   * every queue data of `brokerName`, wipe clears the write bit, add sets the perm to read+write.
   * Returns how many topics were changed. The broker's next registration with a new data version
   * rewrites the perms (as in Apache).
   */
  operateWritePermOfBroker(brokerName: string, op: 'wipe' | 'add'): number {
    let count = 0;
    for (const queueMap of this.topicQueueTable.values()) {
      const qd = queueMap.get(brokerName);
      if (!qd) continue;
      qd.perm = op === 'wipe' ? qd.perm & ~PERM_WRITE : PERM_READ | PERM_WRITE;
      count++;
    }
    return count;
  }

  /** Topics with queues on any broker group of `clusterName` (Apache getTopicsByCluster), sorted. */
  getTopicsByCluster(clusterName: string): string[] {
    const names = this.clusterAddrTable.get(clusterName);
    if (!names) return [];
    const topics: string[] = [];
    for (const [topic, queueMap] of this.topicQueueTable) {
      if ([...queueMap.keys()].some((n) => names.has(n))) topics.push(topic);
    }
    return topics.sort();
  }

  /**
   * GET_SYSTEM_TOPIC_LIST_FROM_NS: every cluster name and broker name (the topics named after
   * them), and the address of one broker (Apache getSystemTopicList).
   */
  getSystemTopicList(): { topicList: string[]; brokerAddr: string | null } {
    const topics = new Set<string>();
    for (const [cluster, names] of this.clusterAddrTable) {
      topics.add(cluster);
      for (const n of names) topics.add(n);
    }
    let brokerAddr: string | null = null;
    for (const bd of this.brokerAddrTable.values()) {
      const first = bd.brokerAddrs.values().next();
      if (!first.done) {
        brokerAddr = first.value;
        break;
      }
    }
    return { topicList: [...topics], brokerAddr };
  }

  private rememberDeleted(topic: string): void {
    this.deletedTopics.delete(topic);
    this.deletedTopics.add(topic);
    if (this.deletedTopics.size > MAX_DELETED_TOPICS) this.deletedTopics.delete(this.deletedTopics.values().next().value as string);
  }

  private createAndUpdateQueueData(brokerName: string, tc: TopicConfig): void {
    const queueData: QueueData = {
      brokerName,
      readQueueNums: tc.readQueueNums,
      writeQueueNums: tc.writeQueueNums,
      perm: tc.perm,
      topicSysFlag: tc.topicSysFlag,
    };
    this.deletedTopics.delete(tc.topicName);
    let queueMap = this.topicQueueTable.get(tc.topicName);
    if (!queueMap) {
      this.topicQueueTable.set(tc.topicName, (queueMap = new Map()));
      this.logger.info(`new topic registered, ${tc.topicName} ${JSON.stringify(queueData)}`);
    }
    queueMap.set(brokerName, queueData);
  }

  private removeTopicsMissingFrom(brokerName: string, table: Map<string, TopicConfig>): void {
    const present = new Set([...table.values()].map((tc) => tc.topicName));
    for (const [topic, queueMap] of [...this.topicQueueTable]) {
      if (present.has(topic) || !queueMap.has(brokerName)) continue;
      queueMap.delete(brokerName);
      if (queueMap.size === 0) this.topicQueueTable.delete(topic);
    }
  }

  private removeTopicByBrokerName(brokerName: string): void {
    for (const [topic, byBroker] of [...this.topicQueueMappingInfoTable]) {
      if (byBroker.delete(brokerName) && byBroker.size === 0) this.topicQueueMappingInfoTable.delete(topic);
    }
    for (const [topic, queueMap] of [...this.topicQueueTable]) {
      if (queueMap.delete(brokerName) && queueMap.size === 0) {
        this.topicQueueTable.delete(topic);
        this.logger.info(`removeTopicByBrokerName, remove the topic all queue ${topic}`);
      }
    }
  }

  /** Removes every trace of one broker address (Apache onChannelDestroy's table cleanup). */
  private removeBrokerAddr(brokerAddr: string): void {
    this.brokerLiveTable.delete(brokerAddr);
    this.filterServerTable.delete(brokerAddr);
    const removedNames: string[] = [];
    for (const [name, bd] of [...this.brokerAddrTable]) {
      for (const [id, addr] of [...bd.brokerAddrs]) if (addr === brokerAddr) bd.brokerAddrs.delete(id);
      if (bd.brokerAddrs.size === 0) {
        this.brokerAddrTable.delete(name);
        removedNames.push(name);
      }
    }
    for (const name of removedNames) {
      for (const [cluster, names] of [...this.clusterAddrTable]) {
        if (names.delete(name) && names.size === 0) this.clusterAddrTable.delete(cluster);
      }
      this.removeTopicByBrokerName(name);
    }
  }

  private buildRoute(queueDatas: QueueData[]): TopicRouteData | null {
    const brokerDatas: BrokerData[] = [];
    const filterServerTable = new Map<string, string[]>();
    const names = [...new Set(queueDatas.map((q) => q.brokerName))].sort();
    for (const name of names) {
      const bd = this.brokerAddrTable.get(name);
      if (!bd) continue;
      brokerDatas.push(copyBrokerData(bd));
      for (const addr of bd.brokerAddrs.values()) {
        const fs = this.filterServerTable.get(addr);
        if (fs) filterServerTable.set(addr, [...fs]);
      }
    }
    if (brokerDatas.length === 0 || queueDatas.length === 0) return null;
    queueDatas.sort((a, b) => (a.brokerName < b.brokerName ? -1 : a.brokerName > b.brokerName ? 1 : 0));
    return { queueDatas, brokerDatas, filterServerTable };
  }
}

export function dataVersionEquals(a: DataVersion, b: DataVersion): boolean {
  return a.stateVersion === b.stateVersion && a.timestamp === b.timestamp && a.counter === b.counter;
}

function copyBrokerData(bd: BrokerData): BrokerData {
  return { cluster: bd.cluster, brokerName: bd.brokerName, brokerAddrs: new Map(bd.brokerAddrs) };
}
