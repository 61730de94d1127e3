/**
 * Declarative configuration keys (Kafka LogConfig style): each key is declared once with its
 * RocketMQ name, type, default, validator and doc; values are read at start-up and passed in.
 *
 * Input is RocketMQ's broker.conf `key=value` text (see properties-file.ts) plus overrides.
 * Unknown keys are kept and reported, never fatal, so an Apache broker.conf loads as is.
 */

export type ConfigValue = string | number | boolean;

export interface ConfigKey<T extends ConfigValue> {
  /** RocketMQ's key name, e.g. `mappedFileSizeCommitLog`. */
  name: string;
  type: T extends number ? 'number' : T extends boolean ? 'boolean' : 'string';
  default: T;
  doc: string;
  /** Returns null when valid, else a short reason. (Method syntax keeps specs of mixed types assignable.) */
  validate?(value: T): string | null;
  /** Other accepted spellings (RocketMQ keeps misspelled keys for compatibility). */
  aliases?: string[];
}

/** Thrown for a value that does not parse or validate; names the key and the value. */
export class ConfigError extends Error {
  constructor(
    readonly key: string,
    readonly value: string,
    reason: string,
  ) {
    super(`invalid config ${key}=${value}: ${reason}`);
    this.name = 'ConfigError';
  }
}

type SpecValues<S extends Record<string, ConfigKey<ConfigValue>>> = {
  [K in keyof S]: S[K]['default'];
};

function parseValue(key: ConfigKey<ConfigValue>, raw: string): ConfigValue {
  const text = raw.trim();
  switch (key.type) {
    case 'number': {
      if (!/^-?\d+(\.\d+)?$/.test(text)) throw new ConfigError(key.name, raw, 'not a number');
      return Number(text);
    }
    case 'boolean': {
      if (text === 'true') return true;
      if (text === 'false') return false;
      throw new ConfigError(key.name, raw, 'expected true or false');
    }
    default:
      return text;
  }
}

/**
 * Resolves a spec against raw string values (from a broker.conf file and flags).
 * Returns the typed values with defaults filled in; throws ConfigError on a bad value.
 */
export function resolveConfig<S extends Record<string, ConfigKey<ConfigValue>>>(
  spec: S,
  raw: Record<string, string>,
): SpecValues<S> {
  const out: Record<string, ConfigValue> = {};
  for (const [field, key] of Object.entries(spec)) {
    let value: ConfigValue = key.default;
    for (const name of [key.name, ...(key.aliases ?? [])]) {
      if (Object.prototype.hasOwnProperty.call(raw, name)) {
        value = parseValue(key, raw[name]!);
        break;
      }
    }
    const problem = key.validate?.(value as never);
    if (problem) throw new ConfigError(key.name, String(value), problem);
    out[field] = value;
  }
  return out as SpecValues<S>;
}

/** All key names (and aliases) a spec knows, for reporting unknown keys. */
export function knownKeyNames(spec: Record<string, ConfigKey<ConfigValue>>): Set<string> {
  const names = new Set<string>();
  for (const key of Object.values(spec)) {
    names.add(key.name);
    for (const a of key.aliases ?? []) names.add(a);
  }
  return names;
}
