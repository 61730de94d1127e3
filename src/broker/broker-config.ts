/**
 * Broker configuration keys (RocketMQ `BrokerConfig` names, plus the few `MessageStoreConfig`
 * keys the broker itself reads: brokerRole, messageDelayLevel, flushDelayOffsetInterval,
 * enableScheduleMessageStats,
 * haListenPort, storePathRootDir). Values come from broker.conf `key=value` text; the store
 * resolves its own keys from the same raw map (src/store/store-config.ts).
 *
 * Defaults follow Apache RocketMQ 4.9.x except where tsmq's brief chose otherwise
 * (brokerName 'broker-a', namesrvAddr '127.0.0.1:9876', brokerIP1 '127.0.0.1',
 * defaultTopicQueueNums 4 for topics auto-created without a client hint).
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_MAX_TOPIC_QUEUE_NUMS } from './topic/topic-queue-limit.js';
import { resolveConfig, wholeNumberIn, type ConfigKey, type ConfigValue } from '../common/config/config-spec.js';

/** Declares a key while keeping its value type (ConfigKey's validator makes it invariant). */
function key<T extends ConfigValue>(k: ConfigKey<T>): ConfigKey<ConfigValue> & { default: T } {
  return k as unknown as ConfigKey<ConfigValue> & { default: T };
}

const nonNegative = (v: number): string | null => (Number.isInteger(v) && v >= 0 ? null : 'must be an integer >= 0');
const positive = (v: number): string | null => (Number.isInteger(v) && v > 0 ? null : 'must be an integer > 0');
const port = wholeNumberIn(0, 65535, 'a port in 0..65535');

/** Apache's 18 default delay levels (level n = n-th token, units s/m/h/d). */
export const DEFAULT_MESSAGE_DELAY_LEVEL = '1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h';

export const BROKER_CONFIG_SPEC = {
  brokerName: key<string>({ name: 'brokerName', type: 'string', default: 'broker-a', doc: 'broker name (route key); master and slaves share it' }),
  brokerClusterName: key<string>({ name: 'brokerClusterName', type: 'string', default: 'DefaultCluster', doc: 'cluster this broker registers under' }),
  brokerId: key<number>({ name: 'brokerId', type: 'number', default: 0, doc: '0 = master, > 0 = slave', validate: nonNegative }),
  namesrvAddr: key<string>({ name: 'namesrvAddr', type: 'string', default: '127.0.0.1:9876', doc: "nameserver list 'host:port;host:port' (empty = do not register)" }),
  listenPort: key<number>({ name: 'listenPort', type: 'number', default: 10911, doc: 'remoting port (0 = any free port)', validate: port }),
  bindAddress: key<string>({ name: 'bindAddress', type: 'string', default: '', doc: 'address the broker remoting and HA ports bind, empty = every interface (Apache NettyServerConfig.bindAddress; `tsmq start` defaults to 127.0.0.1)' }),
  brokerIP1: key<string>({ name: 'brokerIP1', type: 'string', default: '127.0.0.1', doc: 'IP published to nameservers and written as the store host of records' }),
  brokerIP2: key<string>({ name: 'brokerIP2', type: 'string', default: '', doc: 'HA address IP (empty = brokerIP1)' }),
  haListenPort: key<number>({ name: 'haListenPort', type: 'number', default: -1, doc: 'HA port (-1 = listenPort + 1)', validate: wholeNumberIn(-1, 65535, 'a port in 0..65535, or -1 for listenPort + 1') }),
  brokerPermission: key<number>({ name: 'brokerPermission', type: 'number', default: 6, doc: 'PermName bits: 4 read, 2 write, 1 inherit', validate: wholeNumberIn(0, 7, 'in 0..7') }),
  brokerRole: key<string>({ name: 'brokerRole', type: 'string', default: 'ASYNC_MASTER', doc: 'ASYNC_MASTER | SYNC_MASTER | SLAVE', validate: (v: string) => (['ASYNC_MASTER', 'SYNC_MASTER', 'SLAVE'].includes(v) ? null : 'must be ASYNC_MASTER, SYNC_MASTER or SLAVE') }),
  storePathRootDir: key<string>({ name: 'storePathRootDir', type: 'string', default: join(homedir(), 'store'), doc: 'store root; broker metadata lives in <root>/config' }),
  autoCreateTopicEnable: key<boolean>({ name: 'autoCreateTopicEnable', type: 'boolean', default: true, doc: 'create topics on first send from TBW102' }),
  defaultTopicQueueNums: key<number>({ name: 'defaultTopicQueueNums', type: 'number', default: 4, doc: 'queues of a topic auto-created when the request gives no queue count', validate: positive }),
  autoCreateSubscriptionGroup: key<boolean>({ name: 'autoCreateSubscriptionGroup', type: 'boolean', default: true, doc: 'create subscription groups on first use' }),
  retryMaxTimes: key<number>({ name: 'retryMaxTimes', type: 'number', default: 16, doc: 'retryMaxTimes of auto-created subscription groups', aliases: ['maxReconsumeTimes'], validate: nonNegative }),
  clusterTopicEnable: key<boolean>({ name: 'clusterTopicEnable', type: 'boolean', default: true, doc: 'create a topic named after the cluster' }),
  brokerTopicEnable: key<boolean>({ name: 'brokerTopicEnable', type: 'boolean', default: true, doc: 'create a topic named after the broker' }),
  traceTopicEnable: key<boolean>({ name: 'traceTopicEnable', type: 'boolean', default: false, doc: 'create RMQ_SYS_TRACE_TOPIC' }),
  rejectTransactionMessage: key<boolean>({ name: 'rejectTransactionMessage', type: 'boolean', default: false, doc: 'refuse TRAN_MSG sends with NO_PERMISSION' }),
  slaveReadEnable: key<boolean>({ name: 'slaveReadEnable', type: 'boolean', default: false, doc: 'let pulls be redirected to a slave when the consumer lags' }),
  regionId: key<string>({ name: 'regionId', type: 'string', default: 'DefaultRegion', doc: 'MSG_REGION reply field' }),
  storeReplyMessageEnable: key<boolean>({ name: 'storeReplyMessageEnable', type: 'boolean', default: true, doc: 'also store request-reply answers (SEND_REPLY_MESSAGE 324/325) in their topic, besides pushing them to the requester' }),
  traceOn: key<boolean>({ name: 'traceOn', type: 'boolean', default: true, doc: 'TRACE_ON reply field' }),
  longPollingEnable: key<boolean>({ name: 'longPollingEnable', type: 'boolean', default: true, doc: 'hold pulls for suspendTimeoutMillis when nothing is found' }),
  shortPollingTimeMills: key<number>({ name: 'shortPollingTimeMills', type: 'number', default: 1000, doc: 'hold time when long polling is disabled (ms)', validate: nonNegative }),
  maxLongPollingTimeMills: key<number>({ name: 'maxLongPollingTimeMills', type: 'number', default: 60000, doc: 'longest a PULL (suspendTimeoutMillis), POP_MESSAGE or NOTIFICATION (pollTime) is held for long polling (ms); a longer client value is cut to it (tsmq bound; Apache holds the client value, its clients send 15000-20000)', validate: positive }),
  flushConsumerOffsetInterval: key<number>({ name: 'flushConsumerOffsetInterval', type: 'number', default: 5000, doc: 'consumerOffset.json persist period (ms)', validate: positive }),
  flushDelayOffsetInterval: key<number>({ name: 'flushDelayOffsetInterval', type: 'number', default: 10000, doc: 'delayOffset.json persist period (ms)', validate: positive }),
  estimateAccumulation: key<boolean>({ name: 'estimateAccumulation', type: 'boolean', default: true, doc: 'consumer lag metrics of a group online with a tag subscription count only the messages its tags pass (Apache BrokerConfig key; metrics/consumer-lag.ts)' }),
  enableDetailStat: key<boolean>({ name: 'enableDetailStat', type: 'boolean', default: true, doc: 'keep the per-queue stats QUEUE_PUT_NUMS/QUEUE_PUT_SIZE/QUEUE_GET_NUMS/QUEUE_GET_SIZE (VIEW_BROKER_STATS_DATA; Apache BrokerConfig key, feeds BrokerStatsManager.enableQueueStat, default true)' }),
  enableScheduleMessageStats: key<boolean>({ name: 'enableScheduleMessageStats', type: 'boolean', default: true, doc: 'count delay-level deliveries in the broker stats and metrics (Apache MessageStoreConfig key)' }),
  messageDelayLevel: key<string>({ name: 'messageDelayLevel', type: 'string', default: DEFAULT_MESSAGE_DELAY_LEVEL, doc: 'delay levels, space separated, units s/m/h/d' }),
  registerBrokerTimeoutMills: key<number>({ name: 'registerBrokerTimeoutMills', type: 'number', default: 24000, doc: 'timeout of one REGISTER_BROKER call (ms); Apache 5.x default 24000 (4.9: 6000)', validate: positive }),
  registerNameServerPeriod: key<number>({ name: 'registerNameServerPeriod', type: 'number', default: 30000, doc: 'period of REGISTER_BROKER (ms, clamped to 10 s..60 s as Apache does)', validate: positive }),
  channelExpiredTimeout: key<number>({ name: 'channelExpiredTimeout', type: 'number', default: 120000, doc: 'drop a client after this long without a heartbeat (ms)', aliases: ['clientChannelExpiredTimeoutMs'], validate: positive }),
  enablePropertyFilter: key<boolean>({ name: 'enablePropertyFilter', type: 'boolean', default: false, doc: 'SQL92 message filtering (MessageSelector.bySql, gRPC FilterExpression SQL); off: SQL92 subscriptions are refused (docs/sql92-filter.md)' }),
  maxTopicQueueNums: key<number>({ name: 'maxTopicQueueNums', type: 'number', default: DEFAULT_MAX_TOPIC_QUEUE_NUMS, doc: 'most read/write queues one topic may be given by UPDATE_AND_CREATE_TOPIC (tsmq; Apache has no cap, see src/broker/topic/topic-queue-limit.ts)', validate: positive }),
  maxMessageSize: key<number>({ name: 'maxMessageSize', type: 'number', default: 4 * 1024 * 1024, doc: 'body size limit (bytes); the store enforces it, the broker reports it', validate: positive }),
} as const;

export type BrokerConfig = ReturnType<typeof resolveBrokerConfig>;

/** Typed broker config from raw broker.conf keys. @throws ConfigError on a bad value. */
export function resolveBrokerConfig(raw: Record<string, string>) {
  const cfg = resolveConfig(BROKER_CONFIG_SPEC, raw);
  return {
    ...cfg,
    brokerIP2: cfg.brokerIP2 === '' ? cfg.brokerIP1 : cfg.brokerIP2,
    registerNameServerPeriod: Math.max(10000, Math.min(60000, cfg.registerNameServerPeriod)),
  };
}

/** PermName bits (mirrors `PermName`). */
export const PermName = {
  PERM_PRIORITY: 0x8,
  PERM_READ: 0x4,
  PERM_WRITE: 0x2,
  PERM_INHERIT: 0x1,
  isReadable: (perm: number): boolean => (perm & 0x4) === 0x4,
  isWriteable: (perm: number): boolean => (perm & 0x2) === 0x2,
  isInherited: (perm: number): boolean => (perm & 0x1) === 0x1,
} as const;

/** Splits `host:port;host:port` into addresses, dropping blanks. */
export function splitNamesrvAddr(text: string): string[] {
  return text.split(';').map((s) => s.trim()).filter((s) => s.length > 0);
}
