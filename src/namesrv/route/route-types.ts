/**
 * Route data held by the nameserver, named like Apache RocketMQ's route classes
 * (QueueData, BrokerData, TopicRouteData, ClusterInfo, DataVersion, TopicConfig).
 */

/** Permission bits of a topic/queue (Apache PermName). */
export const PERM_PRIORITY = 0x8;
export const PERM_READ = 0x4;
export const PERM_WRITE = 0x2;
export const PERM_INHERIT = 0x1;

/** Apache's auto-create template topic; registered by brokers with autoCreateTopicEnable. */
export const AUTO_CREATE_TOPIC_KEY_TOPIC = 'TBW102';
/** Broker id of a master. */
export const MASTER_ID = 0;

/** One broker group's queues for one topic. */
export interface QueueData {
  brokerName: string;
  readQueueNums: number;
  writeQueueNums: number;
  perm: number;
  topicSysFlag: number;
}

/** One broker group: brokerId (0 = master) -> "host:port". */
export interface BrokerData {
  cluster: string;
  brokerName: string;
  brokerAddrs: Map<number, string>;
}

/**
 * A static topic's route form as one broker registered it (Apache TopicQueueMappingInfo JSON,
 * kept as received: {topic, scope, totalQueues, bname, epoch, dirty, currIdMap}).
 */
export type TopicQueueMappingInfoJson = Record<string, unknown> & { bname: string };

export interface TopicRouteData {
  /** Sorted by brokerName. */
  queueDatas: QueueData[];
  /** Sorted by brokerName; brokerAddrs is a copy. */
  brokerDatas: BrokerData[];
  /** brokerAddr -> filter server addresses. */
  filterServerTable: Map<string, string[]>;
  /** Static topics (Apache topicQueueMappingByBroker): brokerName -> mapping info; absent for ordinary topics. */
  topicQueueMappingByBroker?: Map<string, TopicQueueMappingInfoJson>;
}

/** Apache DataVersion: a broker's topic-table version. Two versions are equal when all fields are. */
export interface DataVersion {
  stateVersion: number;
  timestamp: number;
  counter: number;
}

/** The part of Apache's TopicConfig the nameserver uses (from a REGISTER_BROKER body). */
export interface TopicConfig {
  topicName: string;
  readQueueNums: number;
  writeQueueNums: number;
  perm: number;
  topicSysFlag: number;
}

export interface TopicConfigWrapper {
  topicConfigTable: Map<string, TopicConfig>;
  dataVersion: DataVersion;
  /** Apache TopicConfigAndMappingSerializeWrapper.topicQueueMappingInfoMap: topic -> mapping info. */
  topicQueueMappingInfoMap?: Map<string, TopicQueueMappingInfoJson>;
}

export interface BrokerLiveInfo {
  lastUpdateTimestampMs: number;
  /** Expiry after this much silence (Apache 5 heartbeatTimeoutMillis, default 120 s). */
  heartbeatTimeoutMs: number;
  dataVersion: DataVersion;
  haServerAddr: string;
  clusterName: string;
  /** RemotingChannel.id of the broker's connection, when registered over the network. */
  channelId: string | null;
}

export interface RegisterBrokerRequest {
  clusterName: string;
  brokerAddr: string;
  brokerName: string;
  brokerId: number;
  haServerAddr: string;
  topicConfigWrapper: TopicConfigWrapper | null;
  filterServerList?: string[];
  channelId?: string | null;
  heartbeatTimeoutMs?: number;
}

/** For a slave: its master's address and the master's HA address. Both null for a master. */
export interface RegisterBrokerResult {
  haServerAddr: string | null;
  masterAddr: string | null;
}

export interface ClusterInfo {
  brokerAddrTable: Map<string, BrokerData>;
  clusterAddrTable: Map<string, Set<string>>;
}
