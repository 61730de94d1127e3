/**
 * Consumer group settings (mirrors RocketMQ `SubscriptionGroupManager`), persisted as
 * `<storePathRootDir>/config/subscriptionGroup.json`:
 *   {"subscriptionGroupTable":{"<group>":{groupName, consumeEnable, consumeFromMinEnable,
 *     consumeBroadcastEnable, consumeMessageOrderly, retryQueueNums, retryMaxTimes, brokerId,
 *     whichBrokerWhenConsumeSlowly, notifyConsumerIdsChangedEnable, groupSysFlag,
 *     consumeTimeoutMinute, attributes}}, "forbiddenTable":{}, "dataVersion":{...}}
 * Groups are auto-created on first use when autoCreateSubscriptionGroup is on (retryQueueNums 1,
 * retryMaxTimes 16 by default), but only with a legal name (`validateGroup`: not blank,
 * `[%|a-zA-Z0-9_-]`, at most 120 characters), as Apache's broker does.
 */
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import { ConfigManager, asNumber, asObject, type ConfigManagerOptions } from '../config-file/config-manager.js';
import { DataVersion } from '../config-file/data-version.js';
import { validateGroup } from '../../common/message/topic-validator.js';

export interface SubscriptionGroupConfig {
  groupName: string;
  consumeEnable: boolean;
  consumeFromMinEnable: boolean;
  consumeBroadcastEnable: boolean;
  consumeMessageOrderly: boolean;
  retryQueueNums: number;
  retryMaxTimes: number;
  brokerId: number;
  whichBrokerWhenConsumeSlowly: number;
  notifyConsumerIdsChangedEnable: boolean;
  groupSysFlag: number;
  consumeTimeoutMinute: number;
  attributes: Record<string, string>;
}

/** Groups Apache creates at start-up. */
const SYSTEM_GROUPS = [
  'TOOLS_CONSUMER',
  'FILTERSRV_CONSUMER',
  'SELF_TEST_C_GROUP',
  'CID_ONS-HTTP-PROXY',
  'CID_ONSAPI_PULL',
  'CID_ONSAPI_PERMISSION',
  'CID_ONSAPI_OWNER',
  'CID_RMQ_SYS_TRANS',
];

export interface SubscriptionGroupManagerOptions extends ConfigManagerOptions {
  clock: Clock;
  autoCreateSubscriptionGroup: boolean;
  /** retryMaxTimes of auto-created groups (Apache 16). */
  retryMaxTimes?: number;
}

export class SubscriptionGroupManager extends ConfigManager {
  private table = new Map<string, SubscriptionGroupConfig>();
  private forbiddenTable: Record<string, unknown> = {};
  readonly dataVersion: DataVersion;
  private readonly logger: Logger;

  constructor(filePath: string, private readonly opts: SubscriptionGroupManagerOptions) {
    super(filePath, opts);
    this.logger = opts.logger ?? silentLogger;
    this.dataVersion = new DataVersion(opts.clock);
    for (const g of SYSTEM_GROUPS) this.table.set(g, this.defaults(g));
  }

  /** Apache's `SubscriptionGroupConfig` defaults for `groupName`. */
  defaults(groupName: string): SubscriptionGroupConfig {
    return {
      groupName,
      consumeEnable: true,
      consumeFromMinEnable: true,
      consumeBroadcastEnable: true,
      consumeMessageOrderly: false,
      retryQueueNums: 1,
      retryMaxTimes: this.opts.retryMaxTimes ?? 16,
      brokerId: 0,
      whichBrokerWhenConsumeSlowly: 1,
      notifyConsumerIdsChangedEnable: true,
      groupSysFlag: 0,
      consumeTimeoutMinute: 15,
      attributes: {},
    };
  }

  /**
   * The group's config; auto-created (and persisted) when absent and auto-creation is on,
   * else undefined (the caller answers SUBSCRIPTION_GROUP_NOT_EXIST). Illegal names are never
   * auto-created.
   */
  findSubscriptionGroupConfig(group: string): SubscriptionGroupConfig | undefined {
    const existing = this.table.get(group);
    if (existing || !this.opts.autoCreateSubscriptionGroup) return existing;
    const problem = validateGroup(group);
    if (problem) {
      this.logger.warn(`subscription group not auto-created: ${problem}`);
      return undefined;
    }
    const created = this.defaults(group);
    this.table.set(group, created);
    this.logger.info(`auto-created subscription group ${group}`);
    this.changed(group);
    return created;
  }

  /** Looks up without creating. */
  get(group: string): SubscriptionGroupConfig | undefined {
    return this.table.get(group);
  }

  updateSubscriptionGroupConfig(config: SubscriptionGroupConfig): void {
    this.table.set(config.groupName, { ...config, attributes: { ...config.attributes } });
    this.changed(config.groupName);
  }

  deleteSubscriptionGroupConfig(group: string): boolean {
    if (!this.table.delete(group)) return false;
    this.changed(group);
    return true;
  }

  allGroups(): SubscriptionGroupConfig[] {
    return [...this.table.values()];
  }

  override encode(): object {
    return {
      subscriptionGroupTable: Object.fromEntries(this.table),
      forbiddenTable: this.forbiddenTable,
      dataVersion: this.dataVersion.toJSON(),
    };
  }

  protected override decode(doc: Record<string, unknown>): void {
    const raw = asObject(doc.subscriptionGroupTable ?? {}, 'subscriptionGroupTable');
    const decoded: SubscriptionGroupConfig[] = [];
    for (const [name, value] of Object.entries(raw)) decoded.push(this.decodeGroup(value, name));
    for (const g of decoded) this.table.set(g.groupName, g);
    if (doc.forbiddenTable && typeof doc.forbiddenTable === 'object') this.forbiddenTable = doc.forbiddenTable as Record<string, unknown>;
    this.dataVersion.assign(doc.dataVersion);
  }

  /**
   * A `SubscriptionGroupConfig` JSON object (file entry or UPDATE_AND_CREATE_SUBSCRIPTIONGROUP
   * body) with Apache's defaults for missing fields; `name` is used when groupName is absent.
   * Unknown fields (groupRetryPolicy, subscriptionDataSet...) are dropped. @throws on a non-number where a number is due.
   */
  decodeGroup(value: unknown, name: string): SubscriptionGroupConfig {
    const o = asObject(value, `subscription group ${name}`);
    const d = this.defaults(typeof o.groupName === 'string' ? o.groupName : name);
    const bool = (v: unknown, def: boolean): boolean => (typeof v === 'boolean' ? v : v === 'true' ? true : v === 'false' ? false : def);
    const num = (v: unknown, def: number, what: string): number => (v === undefined || v === null ? def : asNumber(v, `${name}.${what}`));
    return {
      groupName: d.groupName,
      consumeEnable: bool(o.consumeEnable, d.consumeEnable),
      consumeFromMinEnable: bool(o.consumeFromMinEnable, d.consumeFromMinEnable),
      consumeBroadcastEnable: bool(o.consumeBroadcastEnable, d.consumeBroadcastEnable),
      consumeMessageOrderly: bool(o.consumeMessageOrderly, d.consumeMessageOrderly),
      retryQueueNums: num(o.retryQueueNums, d.retryQueueNums, 'retryQueueNums'),
      retryMaxTimes: num(o.retryMaxTimes, d.retryMaxTimes, 'retryMaxTimes'),
      brokerId: num(o.brokerId, d.brokerId, 'brokerId'),
      whichBrokerWhenConsumeSlowly: num(o.whichBrokerWhenConsumeSlowly, d.whichBrokerWhenConsumeSlowly, 'whichBrokerWhenConsumeSlowly'),
      notifyConsumerIdsChangedEnable: bool(o.notifyConsumerIdsChangedEnable, d.notifyConsumerIdsChangedEnable),
      groupSysFlag: num(o.groupSysFlag, d.groupSysFlag, 'groupSysFlag'),
      consumeTimeoutMinute: num(o.consumeTimeoutMinute, d.consumeTimeoutMinute, 'consumeTimeoutMinute'),
      attributes: o.attributes && typeof o.attributes === 'object' ? Object.fromEntries(Object.entries(o.attributes).map(([k, v]) => [k, String(v)])) : {},
    };
  }

  private changed(group: string): void {
    this.dataVersion.next();
    this.persistChange(group, (m) => this.logger.error(m));
  }
}
