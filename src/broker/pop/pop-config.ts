/**
 * Configuration keys of pop consumption (durable invisibility / ack state under
 * `<storePathRootDir>/pop/`). Read from the broker.conf `key=value` map.
 */
import { resolveConfig, type ConfigKey, type ConfigValue } from '../../common/config/config-spec.js';

function key<T extends ConfigValue>(k: ConfigKey<T>): ConfigKey<ConfigValue> & { default: T } {
  return k as unknown as ConfigKey<ConfigValue> & { default: T };
}

const positive = (v: number): string | null => (Number.isInteger(v) && v > 0 ? null : 'must be an integer > 0');

export const POP_CONFIG_SPEC = {
  popInitFromMin: key<boolean>({ name: 'popInitFromMin', type: 'boolean', default: true, doc: 'a group that never consumed a queue (and has no committed offset) starts at its min offset; false: at its max offset (Apache ConsumeInitMode.MAX)' }),
  popFlushIntervalMs: key<number>({ name: 'popFlushIntervalMs', type: 'number', default: 200, doc: 'fdatasync period of the pop state log (ms)', validate: positive }),
  popSyncFlush: key<boolean>({ name: 'popSyncFlush', type: 'boolean', default: false, doc: 'answer receive/ack/change only after their pop log record is fdatasync-ed' }),
  popCompactLogBytes: key<number>({ name: 'popCompactLogBytes', type: 'number', default: 16 * 1024 * 1024, doc: 'compact the pop log (snapshot + fresh log) once it is this large (bytes)', validate: positive }),
  maxPopPollingSize: key<number>({ name: 'maxPopPollingSize', type: 'number', default: 100_000, doc: 'most remoting POP_MESSAGE / NOTIFICATION requests parked for long polling at once; more are answered POLLING_FULL (209) (Apache maxPopPollingSize)', validate: positive }),
  defaultMessageRequestMode: key<string>({ name: 'defaultMessageRequestMode', type: 'string', default: 'PULL', doc: 'QUERY_ASSIGNMENT mode of a topic/group that SET_MESSAGE_REQUEST_MODE never set: PULL or POP (Apache defaultMessageRequestMode)', validate: (v: string) => (v === 'PULL' || v === 'POP' ? null : 'must be PULL or POP') }),
  defaultPopShareQueueNum: key<number>({ name: 'defaultPopShareQueueNum', type: 'number', default: -1, doc: 'popShareQueueNum of a topic/group in POP mode by default; ≤ 0: every consumer pops every queue (Apache defaultPopShareQueueNum)', validate: (v: number) => (Number.isInteger(v) ? null : 'must be an integer') }),
  serverLoadBalancerEnable: key<boolean>({ name: 'serverLoadBalancerEnable', type: 'boolean', default: true, doc: 'QUERY_ASSIGNMENT splits the queues among the group\'s clients; false: every client gets every queue (Apache serverLoadBalancerEnable)' }),
  reviveQueueNum: key<number>({ name: 'reviveQueueNum', type: 'number', default: 8, doc: 'queues of Apache\'s revive topic rmq_sys_REVIVE_LOG_<cluster> read at start to take over its pops in flight (Apache reviveQueueNum; tsmq itself writes no revive topic)', validate: positive }),
  popApacheImportWindowMs: key<number>({ name: 'popApacheImportWindowMs', type: 'number', default: 3_600_000, doc: 'at start, how far back (store time, ms) the timer topic and the revive topic are searched for Apache pop checkpoints / acks not yet revived (apache-revive-import.ts)', validate: positive }),
  popMaxScanMessages: key<number>({ name: 'popMaxScanMessages', type: 'number', default: 2048, doc: 'most queue entries one pop looks at per queue before giving up', validate: positive }),
} as const;

export type PopConfig = ReturnType<typeof resolvePopConfig>;

/** @throws ConfigError on a bad value. */
export function resolvePopConfig(raw: Record<string, string>) {
  return resolveConfig(POP_CONFIG_SPEC, raw);
}
