/**
 * Declarative configuration keys (Kafka LogConfig style): each key is declared once with its
 * RocketMQ name, type, default, validator and doc; values are read at start-up and passed in.
 *
 * Input is RocketMQ's broker.conf `key=value` text (see properties-file.ts) plus overrides.
 * Unknown keys are ignored (as RocketMQ does) but reported: the commands log one warning per
 * unknown key, with the close known key when there is one (findUnknownKeys), never fatal, so an
 * Apache broker.conf loads as is.
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

/**
 * Validator for an integer key in min..max: a fraction is refused as "must be a whole number"
 * (before the range, so `listenPort=10921.5` is not told it is out of 0..65535), then the range
 * with `rangeText` (e.g. "a port in 0..65535").
 */
export function wholeNumberIn(min: number, max: number, rangeText: string): (v: number) => string | null {
  return (v: number) => {
    if (!Number.isInteger(v)) return `must be a whole number (${rangeText})`;
    return v >= min && v <= max ? null : `must be ${rangeText}`;
  };
}

/**
 * A port given outside a config spec (the nameserver's `listenPort`, `tsmq start -n`): the same
 * checks and message as a spec key. @throws ConfigError.
 */
export function parsePortValue(name: string, raw: string): number {
  const text = raw.trim();
  if (!/^-?\d+(\.\d+)?$/.test(text)) throw new ConfigError(name, raw, 'not a number');
  const n = Number(text);
  const problem = wholeNumberIn(0, 65535, 'a port in 0..65535')(n);
  if (problem) throw new ConfigError(name, raw, problem);
  return n;
}

type SpecValues<S extends Record<string, ConfigKey<ConfigValue>>> = {
  [K in keyof S]: S[K]['default'];
};

/**
 * What to add to a refusal of `raw` when it holds a `#`: a .properties file (Java's and tsmq's)
 * has no end-of-line comments, so `key=true   # why` gives the value `true   # why`.
 * '' when there is no `#`.
 */
export function endOfLineCommentHint(raw: string): string {
  return raw.includes('#') ? ' (a .properties value runs to the end of its line: put a # comment on a line of its own)' : '';
}

function parseValue(key: ConfigKey<ConfigValue>, raw: string): ConfigValue {
  const text = raw.trim();
  switch (key.type) {
    case 'number': {
      if (!/^-?\d+(\.\d+)?$/.test(text)) throw new ConfigError(key.name, raw, 'not a number' + endOfLineCommentHint(raw));
      return Number(text);
    }
    case 'boolean': {
      // Java's Boolean.parseBoolean: "true" in any case (TRUE, True) is true. Apache reads every
      // other word (yes, 1, ture) silently as false; tsmq refuses those instead, so a typo does
      // not quietly switch a feature off. "false" in any case is false.
      const lower = text.toLowerCase();
      if (lower === 'true') return true;
      if (lower === 'false') return false;
      throw new ConfigError(key.name, raw, 'expected true or false' + endOfLineCommentHint(raw));
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

/** Edit distance between two short strings: insertions, deletions, substitutions and swaps of neighbours count 1. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The known key `name` was most likely meant as: the same name in another case, else the
 * nearest name within a small edit distance (case-insensitive; 1 for names up to 7 characters,
 * 2 up to 11, 3 beyond). Ties go to the alphabetically first. Null when nothing is close.
 */
export function suggestKnownKey(name: string, known: Iterable<string>): string | null {
  const lower = name.toLowerCase();
  const limit = name.length <= 7 ? 1 : name.length <= 11 ? 2 : 3;
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const k of [...known].sort()) {
    const d = editDistance(lower, k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best !== null && bestDistance <= limit ? best : null;
}

/**
 * Keys of `raw` that no spec knows, in input order, each with a close known key if any. RocketMQ
 * ignores such keys, and so does tsmq; callers log one warning per key (unknownKeyWarning).
 */
export function findUnknownKeys(raw: Record<string, string>, known: Set<string>): { key: string; suggestion: string | null }[] {
  return Object.keys(raw)
    .filter((k) => !known.has(k))
    .map((key) => ({ key, suggestion: suggestKnownKey(key, known) }));
}

/** `config key listenport is not used by tsmq and is ignored (did you mean listenPort?)`. */
export function unknownKeyWarning(u: { key: string; suggestion: string | null }): string {
  const hint = u.suggestion ? ` (did you mean ${u.suggestion}?)` : '';
  return `config key ${u.key} is not used by tsmq and is ignored${hint}`;
}
