/**
 * Topic metadata of this broker (mirrors RocketMQ 4.9 `TopicConfigManager`), persisted as
 * `<storePathRootDir>/config/topics.json`:
 *   {"topicConfigTable":{"<topic>":{topicName, readQueueNums, writeQueueNums, perm,
 *     topicFilterType, topicSysFlag, order, attributes}}, "dataVersion":{...}}
 *
 * System topics created at construction (Apache's values; a loaded file overrides them):
 *   SELF_TEST_TOPIC 1/1 perm 6; TBW102 8/8 perm 7 (only with autoCreateTopicEnable);
 *   <brokerClusterName> 16/16 perm 7 (1 without clusterTopicEnable); <brokerName> 1/1 perm 7
 *   (1 without brokerTopicEnable); OFFSET_MOVED_EVENT 1/1 perm 6; SCHEDULE_TOPIC_XXXX one queue
 *   per delay level (at least 18) perm 6; RMQ_SYS_TRACE_TOPIC 1/1 (traceTopicEnable);
 *   <brokerClusterName>_REPLY_TOPIC 1/1 perm 6.
 * Every change bumps the data version, persists (coalesced: a burst of changes is one write;
 * `durable(topic)` is the write a request that created the topic waits for before answering),
 * and notifies change listeners with the topic's name ('' for `touch()`): the broker registers the
 * changed topics with the nameservers (an increment, coalesced too; namesrv-client/namesrv-registrar.ts).
 */
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import { TopicValidator, isSystemTopic, validateTopic } from '../../common/message/topic-validator.js';
import { ConfigManager, asObject, type ConfigManagerOptions } from '../config-file/config-manager.js';
import { DataVersion } from '../config-file/data-version.js';
import { PermName } from '../broker-config.js';
import { decodeTopicConfig, newTopicConfig, type TopicConfig } from './topic-config.js';

/** Queue count of TBW102 (Apache's BrokerConfig.defaultTopicQueueNums = 8). */
export const AUTO_CREATE_TOPIC_QUEUE_NUMS = 8;
const TABLE_OPEN = Buffer.from('{\n  "topicConfigTable": {\n', 'utf8');
const ENTRY_SEPARATOR = Buffer.from(',\n', 'utf8');

/** Queue count of SCHEDULE_TOPIC_XXXX with the default 18 delay levels. */
export const SCHEDULE_TOPIC_QUEUE_NUM = 18;

export interface TopicConfigManagerOptions extends ConfigManagerOptions {
  clock: Clock;
  brokerName: string;
  brokerClusterName: string;
  /** At start: whether TBW102 (perm 7) is created. */
  autoCreateTopicEnable: boolean;
  /**
   * Read at every send that would create a topic from TBW102 (Apache reads BrokerConfig each
   * time, so `updateBrokerConfig autoCreateTopicEnable=false` stops auto-creation at once).
   * Default: the start value.
   */
  autoCreateTopicEnableNow?: () => boolean;
  clusterTopicEnable?: boolean;
  brokerTopicEnable?: boolean;
  traceTopicEnable?: boolean;
  /** Number of delay levels (queues of SCHEDULE_TOPIC_XXXX = max(18, this)). */
  delayLevelCount?: number;
  /**
   * Current `maxTopicQueueNums` (read at each retry/DLQ topic creation): the queue count asked
   * for there (a group's retryQueueNums) is clamped to it. Default: no clamp.
   */
  maxTopicQueueNumsNow?: () => number;
}

export class TopicConfigManager extends ConfigManager {
  private readonly table = new Map<string, TopicConfig>();
  readonly dataVersion: DataVersion;
  private readonly logger: Logger;
  private readonly autoCreateTopicEnable: () => boolean;
  private readonly listeners: Array<(topic: string) => unknown> = [];
  /** Per topic: what the listeners returned for its latest change, until it settles (see `registered`). */
  private readonly followUps = new Map<string, Promise<void>>();
  /** renderDocument's cache: topic → the TopicConfig object it rendered and its bytes. */
  private readonly renderedEntries = new Map<string, { tc: TopicConfig; bytes: Buffer }>();

  constructor(filePath: string, private readonly opts: TopicConfigManagerOptions) {
    super(filePath, opts);
    this.logger = opts.logger ?? silentLogger;
    this.dataVersion = new DataVersion(opts.clock);
    this.autoCreateTopicEnable = opts.autoCreateTopicEnableNow ?? (() => opts.autoCreateTopicEnable);
    this.addSystemTopics();
  }

  private addSystemTopics(): void {
    const o = this.opts;
    const put = (tc: TopicConfig): void => void this.table.set(tc.topicName, tc);
    const rw = PermName.PERM_READ | PermName.PERM_WRITE;
    put(newTopicConfig(TopicValidator.RMQ_SYS_SELF_TEST_TOPIC, { readQueueNums: 1, writeQueueNums: 1 }));
    if (o.autoCreateTopicEnable) {
      put(newTopicConfig(TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC, {
        readQueueNums: AUTO_CREATE_TOPIC_QUEUE_NUMS,
        writeQueueNums: AUTO_CREATE_TOPIC_QUEUE_NUMS,
        perm: PermName.PERM_INHERIT | rw,
      }));
    }
    put(newTopicConfig(o.brokerClusterName, { perm: PermName.PERM_INHERIT | ((o.clusterTopicEnable ?? true) ? rw : 0) }));
    put(newTopicConfig(o.brokerName, {
      readQueueNums: 1,
      writeQueueNums: 1,
      perm: PermName.PERM_INHERIT | ((o.brokerTopicEnable ?? true) ? rw : 0),
    }));
    put(newTopicConfig(TopicValidator.RMQ_SYS_OFFSET_MOVED_EVENT, { readQueueNums: 1, writeQueueNums: 1 }));
    const scheduleQueues = Math.max(SCHEDULE_TOPIC_QUEUE_NUM, o.delayLevelCount ?? 0);
    put(newTopicConfig(TopicValidator.RMQ_SYS_SCHEDULE_TOPIC, { readQueueNums: scheduleQueues, writeQueueNums: scheduleQueues }));
    if (o.traceTopicEnable) put(newTopicConfig(TopicValidator.RMQ_SYS_TRACE_TOPIC, { readQueueNums: 1, writeQueueNums: 1 }));
    put(newTopicConfig(`${o.brokerClusterName}_REPLY_TOPIC`, { readQueueNums: 1, writeQueueNums: 1 }));
  }

  /**
   * Registers a callback run after any topic is created, updated or deleted. A listener may
   * return a promise (the nameserver registration of the change): `registered(topic)` waits for it.
   */
  onChange(listener: (topic: string) => unknown): void {
    this.listeners.push(listener);
  }

  /**
   * Settles when the promises the change listeners returned for the topic's latest change have
   * settled (the nameserver registration carrying it), or at once when there are none. Never rejects.
   */
  registered(topic: string): Promise<void> {
    return this.followUps.get(topic) ?? Promise.resolve();
  }

  selectTopicConfig(topic: string): TopicConfig | undefined {
    return this.table.get(topic);
  }

  isOrderTopic(topic: string): boolean {
    return this.table.get(topic)?.order === true;
  }

  /** Snapshot of all topic configs. */
  allTopicConfigs(): TopicConfig[] {
    return [...this.table.values()];
  }

  /**
   * Send-path auto-creation (Apache `createTopicInSendMessageMethod`): an existing topic is
   * returned as is; otherwise the topic inherits from `defaultTopic` when that topic has the
   * inherit bit: queues = min(clientDefaultTopicQueueNums, default's writeQueueNums), perm =
   * default's perm without inherit. Returns undefined when the default topic is missing or
   * not inheritable (the caller answers TOPIC_NOT_EXIST).
   */
  createTopicInSendMessageMethod(topic: string, defaultTopic: string, clientDefaultTopicQueueNums: number, topicSysFlag: number): TopicConfig | undefined {
    const existing = this.table.get(topic);
    if (existing) return existing;
    const def = this.table.get(defaultTopic);
    if (!def) {
      this.logger.warn(`create topic ${topic} failed: default topic ${defaultTopic} does not exist`);
      return undefined;
    }
    let defPerm = def.perm;
    if (defaultTopic === TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC && !this.autoCreateTopicEnable()) {
      defPerm = PermName.PERM_READ | PermName.PERM_WRITE;
    }
    if (!PermName.isInherited(defPerm)) {
      this.logger.warn(`create topic ${topic} failed: default topic ${defaultTopic} has no inherit permission (perm ${defPerm})`);
      return undefined;
    }
    const queueNums = Math.max(0, Math.min(clientDefaultTopicQueueNums, def.writeQueueNums));
    const tc = newTopicConfig(topic, {
      readQueueNums: queueNums,
      writeQueueNums: queueNums,
      perm: defPerm & ~PermName.PERM_INHERIT,
      topicSysFlag,
      topicFilterType: def.topicFilterType,
    });
    this.logger.info(`auto-created topic ${topic} from ${defaultTopic}: ${queueNums} queues, perm ${tc.perm}`);
    this.putAndNotify(tc);
    return tc;
  }

  /**
   * Retry/DLQ creation (Apache `createTopicInSendMessageBackMethod`): existing topics are kept as
   * is; `queueNums` is clamped to maxTopicQueueNums (tsmq; Apache creates any count).
   */
  createTopicInSendMessageBackMethod(topic: string, queueNums: number, perm: number, topicSysFlag: number): TopicConfig {
    const existing = this.table.get(topic);
    if (existing) return existing;
    const max = this.opts.maxTopicQueueNumsNow?.();
    if (max !== undefined && queueNums > max) {
      // a group's retryQueueNums from an old subscriptionGroup.json (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP refuses it now)
      this.logger.warn(`topic ${topic}: ${queueNums} queues asked for, created with maxTopicQueueNums=${max}`);
      queueNums = max;
    }
    const tc = newTopicConfig(topic, { readQueueNums: queueNums, writeQueueNums: queueNums, perm, topicSysFlag });
    this.logger.info(`created topic ${topic}: ${queueNums} queues, perm ${perm}`);
    this.putAndNotify(tc);
    return tc;
  }

  /** Creates or replaces a topic (UPDATE_AND_CREATE_TOPIC). */
  updateTopicConfig(tc: TopicConfig): void {
    this.putAndNotify({ ...tc, attributes: { ...tc.attributes } });
  }

  /** Removes a topic; returns false when it did not exist. */
  deleteTopicConfig(topic: string): boolean {
    if (!this.table.delete(topic)) return false;
    this.changed(topic);
    return true;
  }

  /**
   * Re-creates the topics that hold ConsumeQueues but have no config (topics.json lost a change:
   * a crash before the write, or a store written by a broker that crashed that way). Apache has
   * no such step: there such a topic answers TOPIC_NOT_EXIST (17) while its messages are stored.
   * Each comes back with queues = highest queue id + 1 and perm read+write (6); system topics and
   * illegal names are left alone. `queueTable` is the store's topic → queueId → max offset map.
   * Returns the re-created names (persisted in one write; await `whenPersisted()`).
   */
  recoverFromConsumeQueues(queueTable: ReadonlyMap<string, ReadonlyMap<number, number>>): string[] {
    const recovered: string[] = [];
    for (const [topic, queues] of queueTable) {
      const tc = this.configFromConsumeQueues(topic, queues);
      if (!tc) continue;
      this.table.set(topic, tc);
      recovered.push(topic);
    }
    if (recovered.length > 0) {
      const shown = recovered.slice(0, 10).join(', ');
      const more = recovered.length > 10 ? ` and ${recovered.length - 10} more` : '';
      this.logger.warn(`re-created ${recovered.length} topic(s) found in the ConsumeQueues but missing from ${this.filePath}: ${shown}${more}`);
      this.dataVersion.next();
      void this.persist().catch((e: Error) => this.logger.error(`persist ${this.filePath} failed: ${e.message}`));
    }
    return recovered;
  }

  /**
   * One topic of `recoverFromConsumeQueues`, with a change notification (a replica that holds
   * replicated messages of a topic its master's config never reached, ha/replica-topic-learner.ts).
   * `queues` is the topic's queueId → max offset map. Returns the new config, the existing one,
   * or undefined for a system topic, an illegal name or no queues.
   */
  recreateFromConsumeQueues(topic: string, queues: ReadonlyMap<number, number>): TopicConfig | undefined {
    const existing = this.table.get(topic);
    if (existing) return existing;
    const tc = this.configFromConsumeQueues(topic, queues);
    if (!tc) return undefined;
    this.logger.warn(`created topic ${topic} from its ConsumeQueues: ${tc.readQueueNums} queues, perm ${tc.perm}`);
    this.putAndNotify(tc);
    return tc;
  }

  private configFromConsumeQueues(topic: string, queues: ReadonlyMap<number, number>): TopicConfig | undefined {
    if (this.table.has(topic) || isSystemTopic(topic) || validateTopic(topic) !== null || queues.size === 0) return undefined;
    const queueNums = Math.max(...queues.keys()) + 1;
    return newTopicConfig(topic, { readQueueNums: queueNums, writeQueueNums: queueNums, perm: PermName.PERM_READ | PermName.PERM_WRITE });
  }

  /**
   * `{topicConfigTable, dataVersion}` (TopicConfigSerializeWrapper), used by REGISTER_BROKER and
   * GET_ALL_TOPIC_CONFIG. `permMask`: every topic's perm is ANDed with it (a registration of a
   * broker whose brokerPermission is not read-write, Apache 5.3.3).
   */
  buildSerializeWrapper(permMask?: number): { topicConfigTable: Record<string, TopicConfig>; dataVersion: object } {
    const topicConfigTable: Record<string, TopicConfig> = {};
    for (const [name, tc] of this.table) topicConfigTable[name] = permMask === undefined ? tc : { ...tc, perm: tc.perm & permMask };
    return { topicConfigTable, dataVersion: this.dataVersion.toJSON() };
  }

  /**
   * The same wrapper holding only the named topics that still exist (Apache
   * `registerIncrementBrokerData`'s TopicConfigAndMappingSerializeWrapper), with the current
   * dataVersion; null when none exists.
   */
  buildIncrementWrapper(topicNames: Iterable<string>, permMask?: number): { topicConfigTable: Record<string, TopicConfig>; dataVersion: object } | null {
    const topicConfigTable: Record<string, TopicConfig> = {};
    let n = 0;
    for (const name of topicNames) {
      const tc = this.table.get(name);
      if (!tc) continue;
      topicConfigTable[name] = permMask === undefined ? tc : { ...tc, perm: tc.perm & permMask };
      n++;
    }
    return n === 0 ? null : { topicConfigTable, dataVersion: this.dataVersion.toJSON() };
  }

  override encode(): object {
    return this.buildSerializeWrapper();
  }

  /**
   * The UTF-8 bytes of `JSON.stringify(encode(), null, 2)`, assembled from a per-topic cache: a
   * topic's entry is rendered again only when its TopicConfig object was replaced (every change
   * stores a new object), so a change costs one entry's rendering plus a copy of the bytes, not a
   * stringify of the whole table (topics.json is rewritten whole on every change, as in Apache).
   */
  protected override renderDocument(): Buffer {
    const dataVersion = JSON.stringify(this.dataVersion.toJSON(), null, 2).replaceAll('\n', '\n  ');
    if (this.table.size === 0) return Buffer.from(`{\n  "topicConfigTable": {},\n  "dataVersion": ${dataVersion}\n}`, 'utf8');
    if (this.renderedEntries.size > this.table.size * 2) this.renderedEntries.clear(); // forget deleted topics now and then
    const parts: Buffer[] = [TABLE_OPEN];
    let first = true;
    for (const [name, tc] of this.table) {
      let cached = this.renderedEntries.get(name);
      if (cached?.tc !== tc) {
        cached = { tc, bytes: Buffer.from(`    ${JSON.stringify(name)}: ${JSON.stringify(tc, null, 2).replaceAll('\n', '\n    ')}`, 'utf8') };
        this.renderedEntries.set(name, cached);
      }
      if (!first) parts.push(ENTRY_SEPARATOR);
      first = false;
      parts.push(cached.bytes);
    }
    parts.push(Buffer.from(`\n  },\n  "dataVersion": ${dataVersion}\n}`, 'utf8'));
    return Buffer.concat(parts);
  }

  protected override decode(doc: Record<string, unknown>): void {
    const table = asObject(doc.topicConfigTable ?? {}, 'topicConfigTable');
    const decoded = Object.entries(table).map(([name, value]) => decodeTopicConfig(name, value));
    for (const tc of decoded) this.table.set(tc.topicName, tc);
    this.dataVersion.assign(doc.dataVersion);
  }

  private putAndNotify(tc: TopicConfig): void {
    this.table.set(tc.topicName, tc);
    this.changed(tc.topicName);
  }

  /**
   * New data version and a change notification without a topic change (Apache does this when
   * brokerPermission changes, so the next registration carries the new permission).
   */
  touch(): void {
    this.changed('');
  }

  private changed(topic: string): void {
    this.dataVersion.next();
    this.persistChange(topic, (m) => this.logger.error(m));
    const pending: Array<PromiseLike<unknown>> = [];
    for (const l of this.listeners) {
      try {
        const r = l(topic);
        if (r instanceof Promise) pending.push(r);
      } catch (e) {
        this.logger.error(`topic change listener failed: ${(e as Error).message}`);
      }
    }
    if (topic !== '' && pending.length > 0) {
      const done: Promise<void> = Promise.allSettled(pending).then(() => {
        if (this.followUps.get(topic) === done) this.followUps.delete(topic);
      });
      this.followUps.set(topic, done);
    }
  }
}
