/**
 * The static topics this broker hosts (mirrors Apache 5 `TopicQueueMappingManager`): topic →
 * TopicQueueMappingDetail, persisted as `<storePathRootDir>/config/topicQueueMapping.json`
 * beside topics.json, in Apache's TopicQueueMappingSerializeWrapper form:
 *
 *   {"topicQueueMappingInfoMap":{"<topic>":TopicQueueMappingDetail},"dataVersion":{...}}
 *
 * Changes come only from UPDATE_AND_CREATE_STATIC_TOPIC (513) and DELETE_TOPIC_IN_BROKER; each
 * bumps the data version and is written before the request is answered (`update` resolves after
 * the write). A detail naming another broker is refused (Apache asserts it).
 */
import type { Clock } from '../../common/time/clock.js';
import { ConfigManager, asObject, type ConfigManagerOptions } from '../config-file/config-manager.js';
import { DataVersion } from '../config-file/data-version.js';
import {
  decodeMappingDetail, encodeMappingDetail, encodeMappingInfo, mergeMappingDetail, toMappingInfo, type TopicQueueMappingDetail,
} from './topic-queue-mapping-detail.js';

export interface TopicQueueMappingManagerOptions extends ConfigManagerOptions {
  clock: Clock;
  /** This broker's brokerName: every detail it accepts must name it as `bname`. */
  brokerName: string;
}

export class TopicQueueMappingManager extends ConfigManager {
  readonly dataVersion: DataVersion;
  private readonly table = new Map<string, TopicQueueMappingDetail>();
  private readonly brokerName: string;

  constructor(filePath: string, opts: TopicQueueMappingManagerOptions) {
    super(filePath, opts);
    this.dataVersion = new DataVersion(opts.clock);
    this.brokerName = opts.brokerName;
  }

  /** The topic's mapping on this broker; undefined for an ordinary (non-static) topic. */
  get(topic: string): TopicQueueMappingDetail | undefined {
    return this.table.get(topic);
  }

  /** True when no static topic is hosted (lets request paths skip the lookup). */
  get isEmpty(): boolean {
    return this.table.size === 0;
  }

  topics(): string[] {
    return [...this.table.keys()];
  }

  /**
   * Stores `next` merged with the held detail (mergeMappingDetail rules) and waits until it is
   * on disk. @throws Error (nothing changed) for a detail of another broker or one the rules
   * refuse; the write's error after a failed write (the change stays in memory).
   */
  async update(next: TopicQueueMappingDetail, force: boolean): Promise<void> {
    if (next.bname !== this.brokerName) throw new Error(`the mapping detail is for broker ${next.bname}, this broker is ${this.brokerName}`);
    const merged = mergeMappingDetail(this.table.get(next.topic) ?? null, next, force);
    this.table.set(next.topic, merged);
    this.dataVersion.next();
    await this.persist();
  }

  /** Drops a topic's mapping (DELETE_TOPIC_IN_BROKER); false when it had none. */
  delete(topic: string): boolean {
    if (!this.table.delete(topic)) return false;
    this.dataVersion.next();
    this.persistChange(topic, () => undefined);
    return true;
  }

  /**
   * `topicQueueMappingInfoMap` of REGISTER_BROKER (Apache TopicConfigAndMappingSerializeWrapper):
   * topic → TopicQueueMappingInfo JSON for every hosted static topic.
   */
  mappingInfoMap(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [topic, d] of this.table) out[topic] = encodeMappingInfo(toMappingInfo(d));
    return out;
  }

  /** `mappingInfoMap()` restricted to the named topics (an incremental registration). */
  mappingInfoMapOf(topicNames: Iterable<string>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const topic of topicNames) {
      const d = this.table.get(topic);
      if (d) out[topic] = encodeMappingInfo(toMappingInfo(d));
    }
    return out;
  }

  override encode(): object {
    const map: Record<string, unknown> = {};
    for (const [topic, d] of this.table) map[topic] = encodeMappingDetail(d);
    return { topicQueueMappingInfoMap: map, dataVersion: this.dataVersion.toJSON() };
  }

  protected override decode(doc: Record<string, unknown>): void {
    const map = asObject(doc.topicQueueMappingInfoMap ?? {}, 'topicQueueMappingInfoMap');
    const decoded = Object.entries(map).map(([topic, v]) => decodeMappingDetail(v, `topicQueueMappingInfoMap[${topic}]`));
    for (const d of decoded) this.table.set(d.topic, d);
    this.dataVersion.assign(doc.dataVersion);
  }
}
