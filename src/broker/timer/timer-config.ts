/**
 * Timer message configuration: Apache 5.x `MessageStoreConfig` / `BrokerConfig` names and defaults.
 *
 *   timerWheelEnable          true     false: timer messages are refused (WHEEL_TIMER_NOT_ENABLE)
 *   timerPrecisionMs          1000     snapped down to 100, 200, 500 or 1000 (Apache's setter)
 *   timerMaxDelaySec          259200   3 days; a later time is refused (WHEEL_TIMER_MSG_ILLEGAL)
 *   timerRollWindowSlot       172800   timers further out are "rolled" (re-put) instead of wheeled
 *   timerFlushIntervalMs      1000     checkpoint period
 *   mappedFileSizeTimerLog    100 MiB  timerlog segment size
 *   timerCongestNumEachSlot   2^31−1   flow control per slot (Apache `isReject`)
 *   timerEnableRetryUntilSuccess true  Apache default false drops a due message after 3 failed
 *                                      re-puts; tsmq retries until it is stored (see docs)
 *   timerPrefetchWindowMs     30000    tsmq: slots due within this many ms are read, converted and
 *                                      encoded ahead (timer-prefetch.ts); 0 disables
 *   timerPrefetchMaxBytes     2 GiB    tsmq: bytes of prepared deliveries held at most; timers
 *                                      beyond it are read and converted when due, as without prefetch
 *   recallMessageEnable       false    RECALL_MESSAGE (370) and gRPC RecallMessage are refused unless true
 *   allowRecallWhenBrokerNotWriteable true
 */
import { resolveConfig, type ConfigKey, type ConfigValue } from '../../common/config/config-spec.js';

function key<T extends ConfigValue>(k: ConfigKey<T>): ConfigKey<ConfigValue> & { default: T } {
  return k as unknown as ConfigKey<ConfigValue> & { default: T };
}

const positive = (v: number): string | null => (Number.isInteger(v) && v > 0 ? null : 'must be an integer > 0');

export const TIMER_CONFIG_SPEC = {
  timerWheelEnable: key<boolean>({ name: 'timerWheelEnable', type: 'boolean', default: true, doc: 'accept timer messages (TIMER_DELIVER_MS / TIMER_DELAY_SEC / TIMER_DELAY_MS)' }),
  timerPrecisionMs: key<number>({ name: 'timerPrecisionMs', type: 'number', default: 1000, doc: 'timer wheel slot length (ms); snapped down to 100, 200, 500 or 1000 as Apache', validate: positive }),
  timerMaxDelaySec: key<number>({ name: 'timerMaxDelaySec', type: 'number', default: 3 * 24 * 3600, doc: 'longest accepted timer delay (s)', validate: positive }),
  timerRollWindowSlot: key<number>({ name: 'timerRollWindowSlot', type: 'number', default: 2 * 24 * 3600, doc: 'timers due more than this many slots ahead are rolled (re-put to rmq_sys_wheel_timer later)', validate: positive }),
  timerFlushIntervalMs: key<number>({ name: 'timerFlushIntervalMs', type: 'number', default: 1000, doc: 'timer checkpoint period (ms)', validate: positive }),
  mappedFileSizeTimerLog: key<number>({ name: 'mappedFileSizeTimerLog', type: 'number', default: 100 * 1024 * 1024, doc: 'timerlog segment size (bytes)', validate: (v: number) => (Number.isInteger(v) && v >= 68 ? null : 'must be an integer >= 68') }),
  timerCongestNumEachSlot: key<number>({ name: 'timerCongestNumEachSlot', type: 'number', default: 2147483647, doc: 'timers per slot above which new ones are refused at random, all beyond twice this (WHEEL_TIMER_FLOW_CONTROL)', validate: positive }),
  timerEnableRetryUntilSuccess: key<boolean>({ name: 'timerEnableRetryUntilSuccess', type: 'boolean', default: true, doc: 'retry a failed delivery until stored (Apache default false drops it after 3 tries)' }),
  timerPrefetchWindowMs: key<number>({ name: 'timerPrefetchWindowMs', type: 'number', default: 30_000, doc: 'prepare the deliveries of slots due within this many ms ahead of time (0 disables)', validate: (v: number) => (Number.isInteger(v) && v >= 0 ? null : 'must be an integer >= 0') }),
  timerPrefetchMaxBytes: key<number>({ name: 'timerPrefetchMaxBytes', type: 'number', default: 2 * 1024 * 1024 * 1024, doc: 'memory held by deliveries prepared ahead at most (bytes); beyond it timers are read when due', validate: (v: number) => (Number.isInteger(v) && v >= 0 ? null : 'must be an integer >= 0') }),
  recallMessageEnable: key<boolean>({ name: 'recallMessageEnable', type: 'boolean', default: false, doc: 'serve RECALL_MESSAGE (370) and gRPC RecallMessage' }),
  allowRecallWhenBrokerNotWriteable: key<boolean>({ name: 'allowRecallWhenBrokerNotWriteable', type: 'boolean', default: true, doc: 'serve recalls while brokerPermission is not writable' }),
} as const;

export type TimerConfig = ReturnType<typeof resolveTimerConfig>;

/** Apache `MessageStoreConfig.setTimerPrecisionMs`: the largest of 100, 200, 500, 1000 not above `ms` (100 below 200). */
export function snapTimerPrecisionMs(ms: number): number {
  const candidates = [100, 200, 500, 1000];
  for (let i = 1; i < candidates.length; i++) if (ms < candidates[i]!) return candidates[i - 1]!;
  return candidates[candidates.length - 1]!;
}

/** @throws ConfigError on a bad value. */
export function resolveTimerConfig(raw: Record<string, string>) {
  const c = resolveConfig(TIMER_CONFIG_SPEC, raw);
  return { ...c, timerPrecisionMs: snapTimerPrecisionMs(c.timerPrecisionMs) };
}
