/**
 * Transaction check configuration (Apache `BrokerConfig` names and defaults).
 */
import { resolveConfig, type ConfigKey, type ConfigValue } from '../../common/config/config-spec.js';

function key<T extends ConfigValue>(k: ConfigKey<T>): ConfigKey<ConfigValue> & { default: T } {
  return k as unknown as ConfigKey<ConfigValue> & { default: T };
}

const positive = (v: number): string | null => (Number.isInteger(v) && v > 0 ? null : 'must be an integer > 0');
const nonNegative = (v: number): string | null => (Number.isInteger(v) && v >= 0 ? null : 'must be an integer >= 0');

export const TRANSACTION_CONFIG_SPEC = {
  transactionTimeOut: key<number>({ name: 'transactionTimeOut', type: 'number', default: 6000, doc: 'a half message older than this is checked back with its producer (ms)', validate: nonNegative }),
  transactionCheckMax: key<number>({ name: 'transactionCheckMax', type: 'number', default: 15, doc: 'check-backs before a half message is discarded (moved to TRANS_CHECK_MAX_TIME_TOPIC)', validate: positive }),
  transactionCheckInterval: key<number>({ name: 'transactionCheckInterval', type: 'number', default: 30_000, doc: 'period of the transaction check scan (ms)', validate: positive }),
} as const;

export type TransactionConfig = ReturnType<typeof resolveTransactionConfig>;

/** @throws ConfigError on a bad value. */
export function resolveTransactionConfig(raw: Record<string, string>) {
  return resolveConfig(TRANSACTION_CONFIG_SPEC, raw);
}
