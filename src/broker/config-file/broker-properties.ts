/**
 * The broker's configuration as GET_BROKER_CONFIG (26) shows it and UPDATE_BROKER_CONFIG (25)
 * changes it (mirrors Apache `Configuration` registered with BrokerConfig, NettyServerConfig,
 * NettyClientConfig and MessageStoreConfig).
 *
 * - `allConfigs()`: every broker key (broker-config.ts, resolved values), every store key
 *   (store-config.ts, resolved values) and any other raw broker.conf key, as strings, sorted.
 *   Then the keys of the broker's components read from the same broker.conf at start
 *   (COMPONENT_CONFIGS: transactions, timers, pop, controller mode, remoting server limits —
 *   Apache shows e.g. transactionTimeOut, timerWheelEnable, maxPopPollingSize,
 *   enableControllerMode, serverChannelMaxIdleTimeSeconds in the same list) with the values the
 *   broker resolved from it.
 *   Plus `clientCallbackExecutorThreads` (Apache NettyClientConfig, default the number of
 *   processors): tsmq has no callback thread pool, so it shows the host's CPU count
 *   (os.availableParallelism) unless broker.conf sets the key; mqadmin exportMetrics reports it
 *   as runtimeEnv.cpuNum. And `configBlackList` (the keys an update may not change, `;`-separated,
 *   Apache's text).
 * - `formatAll()`: the same as Java `Properties` text, "key=value\n" per key (escaped where a
 *   value needs it, so Java's Properties.load reads it back exactly; Apache writes it unescaped).
 * - `update(props)`: keys in Apache's default `configBlackList` (configBlackList,
 *   brokerConfigPath) refuse the whole update; unknown keys are ignored (Apache merges only keys
 *   it knows). Broker keys are validated with their spec (a bad value refuses the update with
 *   the reason) and applied to the live BrokerConfig object at once, so code that reads the
 *   config per request (brokerPermission, autoCreateTopicEnable, slaveReadEnable...) sees it;
 *   periods read at start (flushConsumerOffsetInterval...) apply after a restart, as in Apache.
 *   Store keys and component keys are validated by their resolver and recorded (shown and
 *   persisted), but the open store and the running components keep their values until restart
 *   (Apache changes its config objects live).
 *   Persisted as Apache's broker does: started with `-c broker.conf` (the CLI passes its path as
 *   `brokerConfigPath`, as Apache's BrokerStartup sets BrokerPathConfigHelper's path to the -c
 *   file), the updated keys are written into that file, so the next start reads them (Apache
 *   rewrites the file with every key; tsmq sets only the changed keys' lines and keeps the rest,
 *   comments included). Started without a config file, the whole configuration is written to
 *   `<storePathRootDir>/config/broker.properties` (Apache's default brokerConfigPath), which,
 *   as in Apache, no start reads back. A key given by `-o key=value` on the command line still
 *   wins over the file at the next start (flags come after the file).
 * - `setLive(key, value)`: a key the broker itself changes (see the method).
 * - `dataVersion`: bumped by every update; GET_BROKER_CONFIG sends it as header `version`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { availableParallelism } from 'node:os';
import type { Clock } from '../../common/time/clock.js';
import { ConfigError, resolveConfig, type ConfigKey, type ConfigValue } from '../../common/config/config-spec.js';
import { TRANSACTION_CONFIG_SPEC, resolveTransactionConfig } from '../transaction/transaction-config.js';
import { TIMER_CONFIG_SPEC, resolveTimerConfig } from '../timer/timer-config.js';
import { POP_CONFIG_SPEC, resolvePopConfig } from '../pop/pop-config.js';
import { CONTROLLER_CONFIG_SPEC, resolveControllerConfig } from '../controller/controller-config.js';
import { REMOTING_SERVER_CONFIG_SPEC, resolveRemotingServerLimits } from '../../remoting/transport/remoting-server-config.js';
import { BROKER_CONFIG_SPEC, resolveBrokerConfig, type BrokerConfig } from '../broker-config.js';
import { resolveStoreConfig, storeConfigSpec } from '../../store/store-config.js';
import { DataVersion } from './data-version.js';
import { setPropertiesInFile } from '../../common/config/properties-file.js';
import { formatPropertiesText } from '../../common/config/properties-text.js';

/**
 * Components whose keys come from broker.conf too: the spec (key names, defaults) and the resolver
 * the component itself uses at start (its checks beyond one key included).
 */
const COMPONENT_CONFIGS: ReadonlyArray<{ spec: Record<string, ConfigKey<ConfigValue>>; resolve: (raw: Record<string, string>) => unknown }> = [
  { spec: TRANSACTION_CONFIG_SPEC, resolve: resolveTransactionConfig },
  { spec: TIMER_CONFIG_SPEC, resolve: resolveTimerConfig },
  { spec: POP_CONFIG_SPEC, resolve: resolvePopConfig },
  { spec: CONTROLLER_CONFIG_SPEC, resolve: resolveControllerConfig },
  { spec: REMOTING_SERVER_CONFIG_SPEC, resolve: resolveRemotingServerLimits },
];

/** Apache's default `configBlackList`. */
export const CONFIG_BLACK_LIST = ['configBlackList', 'brokerConfigPath'];

export type UpdateOutcome = { ok: true; applied: string[]; ignored: string[] } | { ok: false; code: 'NO_PERMISSION' | 'INVALID'; remark: string };

export class BrokerProperties {
  readonly dataVersion: DataVersion;
  readonly filePath: string;

  constructor(
    private readonly config: BrokerConfig,
    private readonly raw: Record<string, string>,
    clock: Clock,
  ) {
    this.dataVersion = new DataVersion(clock);
    const configFile = raw.brokerConfigPath?.trim();
    this.configFileGiven = configFile !== undefined && configFile !== '';
    this.filePath = this.configFileGiven ? configFile! : path.join(config.storePathRootDir, 'config', 'broker.properties');
  }

  /** True when `filePath` is the broker.conf the broker was started with (`brokerConfigPath`). */
  private readonly configFileGiven: boolean;
  /** Keys changed by `setLive` since the last persist (written with the next update). */
  private readonly liveChanged = new Set<string>();

  /** Every key with its current value, sorted by key. */
  allConfigs(): Map<string, string> {
    const all = new Map<string, string>();
    for (const [k, v] of Object.entries(this.raw)) all.set(k, v);
    let store: Record<string, unknown> = {};
    try {
      store = resolveStoreConfig(this.raw) as unknown as Record<string, unknown>;
    } catch {
      /* raw values were validated at start; a later bad store key only shows raw */
    }
    for (const k of Object.keys(storeConfigSpec)) if (store[k] !== undefined) all.set(k, String(store[k]));
    for (const { spec, resolve } of COMPONENT_CONFIGS) {
      try {
        // the component's own resolver first (e.g. timerPrecisionMs snapped as the wheel uses it)
        const used = resolve(this.raw) as Record<string, unknown>;
        const values = resolveConfig(spec, this.raw) as Record<string, unknown>;
        for (const [field, key] of Object.entries(spec)) all.set(key.name, String(field in used ? used[field] : values[field]));
      } catch {
        /* validated at start; a later bad value only shows raw */
      }
    }
    for (const k of Object.keys(BROKER_CONFIG_SPEC)) all.set(k, String((this.config as Record<string, unknown>)[k]));
    if (!all.has('clientCallbackExecutorThreads')) all.set('clientCallbackExecutorThreads', String(availableParallelism()));
    all.set('configBlackList', CONFIG_BLACK_LIST.join(';'));
    return new Map([...all].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** Java Properties text of `allConfigs()`. */
  formatAll(): string {
    return formatPropertiesText(this.allConfigs());
  }

  /** Applies and persists an update; see the file comment. */
  update(props: Map<string, string>): UpdateOutcome {
    for (const k of props.keys()) {
      if (CONFIG_BLACK_LIST.includes(k)) return { ok: false, code: 'NO_PERMISSION', remark: 'Can not update config in black list.' };
    }
    const brokerKeys = new Set(Object.keys(BROKER_CONFIG_SPEC));
    const storeKeys = new Set(Object.keys(storeConfigSpec));
    const componentOf = new Map<string, (typeof COMPONENT_CONFIGS)[number]>();
    for (const c of COMPONENT_CONFIGS) for (const key of Object.values(c.spec)) componentOf.set(key.name, c);
    const applied: string[] = [];
    const ignored: string[] = [];
    const nextRaw = { ...this.raw };
    for (const [k, v] of props) {
      if (brokerKeys.has(k) || storeKeys.has(k) || componentOf.has(k) || k in this.raw) {
        nextRaw[k] = v;
        applied.push(k);
      } else ignored.push(k);
    }
    let resolved: BrokerConfig;
    try {
      resolved = resolveBrokerConfig(nextRaw);
      if (applied.some((k) => storeKeys.has(k))) resolveStoreConfig(nextRaw);
      for (const c of new Set(applied.map((k) => componentOf.get(k)))) c?.resolve(nextRaw);
    } catch (e) {
      const msg = e instanceof ConfigError ? e.message : (e as Error).message;
      return { ok: false, code: 'INVALID', remark: msg };
    }
    Object.assign(this.raw, nextRaw);
    const live = this.config as Record<string, unknown>;
    for (const k of applied) if (brokerKeys.has(k)) live[k] = (resolved as Record<string, unknown>)[k];
    this.dataVersion.next();
    this.persist(applied);
    return { ok: true, applied, ignored };
  }

  /**
   * Sets one key the broker changes by itself (e.g. `dataReadAheadEnable` by
   * SET_COMMITLOG_READ_MODE): shown by `allConfigs()` at once and persisted with the next
   * `update`, but not written now and no `dataVersion` bump (Apache's setter on its config object).
   */
  setLive(key: string, value: string): void {
    this.raw[key] = value;
    this.liveChanged.add(key);
  }

  /**
   * Writes the configuration (temp file + rename): into the broker.conf the broker was started
   * with, the lines of `changedKeys` and of keys changed by `setLive` (setPropertiesInFile);
   * otherwise `formatAll()` into `<storePathRootDir>/config/broker.properties`.
   * @throws the file system's error.
   */
  persist(changedKeys: readonly string[] = []): void {
    if (this.configFileGiven) {
      const updates = new Map<string, string>();
      for (const k of [...this.liveChanged, ...changedKeys]) updates.set(k, this.raw[k] ?? '');
      setPropertiesInFile(this.filePath, updates);
      this.liveChanged.clear();
      return;
    }
    this.liveChanged.clear();
    fs.mkdirSync(path.dirname(this.filePath), { recursive: true });
    const tmp = `${this.filePath}.tmp`;
    fs.writeFileSync(tmp, this.formatAll());
    fs.renameSync(tmp, this.filePath);
  }
}
