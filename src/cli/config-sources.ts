/**
 * Merges the configuration sources of a command, lowest precedence first:
 * built-in defaults of the command, the `-c broker.conf` file (RocketMQ `key=value` names),
 * then dedicated flags, then `-o key=value` overrides.
 */
import { resolve } from 'node:path';
import { readPropertiesFile } from '../common/config/properties-file.js';

export function collectOption(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function parseOverrides(pairs: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs ?? []) {
    const i = pair.indexOf('=');
    if (i <= 0) throw new Error(`expected key=value, got ${JSON.stringify(pair)}`);
    out[pair.slice(0, i).trim()] = pair.slice(i + 1).trim();
  }
  return out;
}

export function mergeConfig(
  defaults: Record<string, string>,
  configFile: string | undefined,
  flags: Record<string, string | undefined>,
  overrides: string[] | undefined,
): Record<string, string> {
  const merged: Record<string, string> = { ...defaults };
  if (configFile) Object.assign(merged, readPropertiesFile(configFile));
  for (const [k, v] of Object.entries(flags)) if (v !== undefined) merged[k] = v;
  Object.assign(merged, parseOverrides(overrides));
  return merged;
}

/**
 * A broker's merged config with `brokerConfigPath` = the absolute path of its `-c` file (unless
 * set explicitly): the broker writes UPDATE_BROKER_CONFIG changes there, as Apache's
 * BrokerStartup points its config path (BrokerPathConfigHelper) at the `-c` file.
 */
export function withBrokerConfigPath(cfg: Record<string, string>, configFile: string | undefined): Record<string, string> {
  if (configFile && cfg.brokerConfigPath === undefined) cfg.brokerConfigPath = resolve(configFile);
  return cfg;
}
