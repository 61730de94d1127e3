/**
 * Committed consume offsets per group (mirrors RocketMQ `ConsumerOffsetManager`), persisted as
 * `<storePathRootDir>/config/consumerOffset.json`:
 *   {"offsetTable":{"<topic>@<group>":{"<queueId>":<offset>,...}},"dataVersion":{...}}
 * Apache-written files with bare numeric keys (`{0:12}`) load too.
 *
 * Rules:
 *   - negative commit offsets are ignored (ali-ons sends `-1` for a committed 0, spec A8);
 *   - `clampToMax` / `clampAllToStore` lower offsets above a queue's max after the store lost
 *     its tail (case B35), so consumers re-read what is written again at those offsets.
 */
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import type { Clock } from '../../common/time/clock.js';
import { ConfigManager, asNumber, asObject, type ConfigManagerOptions } from '../config-file/config-manager.js';
import { DataVersion } from '../config-file/data-version.js';

export const TOPIC_GROUP_SEPARATOR = '@';

/** Topic part of `topic@group` (topics cannot contain '@'). */
export function topicOfKey(key: string): string {
  return key.slice(0, key.indexOf(TOPIC_GROUP_SEPARATOR));
}

/** Group part of `topic@group`. */
export function groupOfKey(key: string): string {
  return key.slice(key.indexOf(TOPIC_GROUP_SEPARATOR) + 1);
}

export interface ConsumerOffsetManagerOptions extends ConfigManagerOptions {
  clock: Clock;
}

export class ConsumerOffsetManager extends ConfigManager {
  /** `topic@group` → queueId → offset. */
  private table = new Map<string, Map<number, number>>();
  readonly dataVersion: DataVersion;
  private readonly logger: Logger;

  /** topic@group → queueId → end of the last pull (not persisted). */
  private readonly pullOffsets = new Map<string, Map<number, number>>();
  /** topic@group → queueId → offset of a server-side reset not yet taken by a pull (not persisted). */
  private readonly resetOffsets = new Map<string, Map<number, number>>();
  private readonly groupRemovedListeners: Array<(group: string) => void> = [];

  constructor(filePath: string, opts: ConsumerOffsetManagerOptions) {
    super(filePath, opts);
    this.logger = opts.logger ?? silentLogger;
    this.dataVersion = new DataVersion(opts.clock);
  }

  static key(topic: string, group: string): string {
    return `${topic}${TOPIC_GROUP_SEPARATOR}${group}`;
  }

  /** Stores a committed offset; negative offsets are ignored. Returns whether it was stored. */
  commitOffset(clientHost: string, group: string, topic: string, queueId: number, offset: number): boolean {
    if (!Number.isFinite(offset) || offset < 0) return false;
    const key = ConsumerOffsetManager.key(topic, group);
    let queues = this.table.get(key);
    if (!queues) {
      queues = new Map();
      this.table.set(key, queues);
    }
    const previous = queues.get(queueId);
    if (previous !== undefined && offset < previous) {
      this.logger.debug(`${clientHost} moved ${key} q${queueId} back from ${previous} to ${offset}`);
    }
    queues.set(queueId, offset);
    return true;
  }

  /**
   * Apache 5.x `assignResetOffset` (server-side reset, `useServerSideResetOffset`): commits
   * `offset` and remembers it for the queue's next pull, which answers PULL_OFFSET_MOVED with it
   * (`queryThenEraseResetOffset`), so a consumer that is online moves there instead of committing
   * its own position over the reset. In memory only, as Apache's resetOffsetTable. Negative
   * offsets or queue ids are ignored.
   */
  assignResetOffset(clientHost: string, group: string, topic: string, queueId: number, offset: number): void {
    if (!(queueId >= 0) || !this.commitOffset(clientHost, group, topic, queueId, offset)) return;
    const key = ConsumerOffsetManager.key(topic, group);
    let queues = this.resetOffsets.get(key);
    if (!queues) {
      queues = new Map();
      this.resetOffsets.set(key, queues);
    }
    queues.set(queueId, offset);
  }

  /** The pending reset of the queue (assignResetOffset), forgotten as it is returned; undefined when none. */
  queryThenEraseResetOffset(group: string, topic: string, queueId: number): number | undefined {
    const key = ConsumerOffsetManager.key(topic, group);
    const queues = this.resetOffsets.get(key);
    const offset = queues?.get(queueId);
    if (offset === undefined) return undefined;
    queues!.delete(queueId);
    if (queues!.size === 0) this.resetOffsets.delete(key);
    return offset;
  }

  /** Committed offset, or -1 when none. */
  queryOffset(group: string, topic: string, queueId: number): number {
    return this.table.get(ConsumerOffsetManager.key(topic, group))?.get(queueId) ?? -1;
  }

  /**
   * Where the group's last pull on a queue ended (Apache 5 `commitPullOffset`: the pull's
   * nextBeginOffset); in memory only. ConsumeStats reports it as `pullOffset`, so
   * pullOffset - consumerOffset is what is in flight.
   */
  commitPullOffset(group: string, topic: string, queueId: number, offset: number): void {
    if (!Number.isFinite(offset) || offset < 0) return;
    const key = ConsumerOffsetManager.key(topic, group);
    let queues = this.pullOffsets.get(key);
    if (!queues) {
      queues = new Map();
      this.pullOffsets.set(key, queues);
    }
    queues.set(queueId, offset);
  }

  /** Last pull end on a queue, else the committed offset (-1 when neither). */
  queryPullOffset(group: string, topic: string, queueId: number): number {
    return this.pullOffsets.get(ConsumerOffsetManager.key(topic, group))?.get(queueId) ?? this.queryOffset(group, topic, queueId);
  }

  /** Copies `srcGroup`'s offsets on `topic` to `destGroup` (Apache `cloneOffset`); false when the source has none. */
  cloneOffset(srcGroup: string, destGroup: string, topic: string): boolean {
    const src = this.table.get(ConsumerOffsetManager.key(topic, srcGroup));
    if (!src) return false;
    this.table.set(ConsumerOffsetManager.key(topic, destGroup), new Map(src));
    return true;
  }

  /** Groups with committed offsets on `topic` (Apache `whichGroupByTopic`). */
  groupsOfTopic(topic: string): string[] {
    return [...this.table.keys()].filter((k) => topicOfKey(k) === topic).map(groupOfKey);
  }

  /** Topics `group` has committed offsets for (Apache `whichTopicByConsumer`), sorted. */
  topicsOfGroup(group: string): string[] {
    return [...new Set([...this.table.keys()].filter((k) => groupOfKey(k) === group).map(topicOfKey))].sort();
  }

  /** All queue offsets of one group on one topic (copy). */
  queryOffsets(group: string, topic: string): Map<number, number> {
    return new Map(this.table.get(ConsumerOffsetManager.key(topic, group)) ?? []);
  }

  /** Lowers every group's offset on topic/queue to ≤ `max`; returns how many were changed. */
  clampToMax(topic: string, queueId: number, max: number): number {
    let changed = 0;
    const prefix = `${topic}${TOPIC_GROUP_SEPARATOR}`;
    for (const [key, queues] of this.table) {
      if (!key.startsWith(prefix)) continue;
      const offset = queues.get(queueId);
      if (offset !== undefined && offset > max) {
        this.logger.warn(`consumer offset ${key} q${queueId} = ${offset} is above the queue max ${max}: corrected to ${max}`);
        queues.set(queueId, max);
        changed++;
      }
    }
    if (changed > 0) this.dataVersion.next();
    return changed;
  }

  /**
   * Runs `clampToMax` for every stored offset against the store's current queue max
   * (call at start-up after store recovery). Returns how many offsets were lowered.
   */
  clampAllToStore(maxOffsetOf: (topic: string, queueId: number) => number): number {
    let changed = 0;
    const seen = new Set<string>();
    for (const [key, queues] of this.table) {
      const topic = topicOfKey(key);
      for (const queueId of queues.keys()) {
        const id = `${topic}\u0000${queueId}`;
        if (seen.has(id)) continue;
        seen.add(id);
        changed += this.clampToMax(topic, queueId, maxOffsetOf(topic, queueId));
      }
    }
    return changed;
  }

  /**
   * Drops all offsets of a topic (DELETE_TOPIC_IN_BROKER): committed ones, and the in-memory pull
   * ends and pending resets (Apache cleanOffsetByTopic also empties its pullOffsetTable and
   * resetOffsetTable), so a topic created again does not report a deleted one's pull offsets.
   */
  cleanOffsetByTopic(topic: string): void {
    for (const map of [this.table, this.pullOffsets, this.resetOffsets]) {
      for (const key of [...map.keys()]) if (topicOfKey(key) === topic) map.delete(key);
    }
  }

  /**
   * Drops all offsets of a group (DELETE_SUBSCRIPTIONGROUP with cleanOffset), its pull ends and
   * pending resets included (Apache's cleanOffset leaves those two in memory; they would outlive
   * the group for good).
   */
  removeGroup(group: string): void {
    for (const map of [this.table, this.pullOffsets, this.resetOffsets]) {
      for (const key of [...map.keys()]) if (groupOfKey(key) === group) map.delete(key);
    }
    for (const l of this.groupRemovedListeners) l(group);
  }

  /** Registers a callback run after removeGroup (the pop state of the group goes too). */
  onGroupRemoved(listener: (group: string) => void): void {
    this.groupRemovedListeners.push(listener);
  }

  /** `topic@group` keys currently stored. */
  keys(): string[] {
    return [...this.table.keys()];
  }

  override encode(): object {
    const offsetTable: Record<string, Record<string, number>> = {};
    for (const [key, queues] of this.table) {
      const q: Record<string, number> = {};
      for (const [id, off] of [...queues].sort((a, b) => a[0] - b[0])) q[String(id)] = off;
      offsetTable[key] = q;
    }
    return { offsetTable, dataVersion: this.dataVersion.toJSON() };
  }

  protected override decode(doc: Record<string, unknown>): void {
    const raw = asObject(doc.offsetTable ?? {}, 'offsetTable');
    const table = new Map<string, Map<number, number>>();
    for (const [key, value] of Object.entries(raw)) {
      if (!key.includes(TOPIC_GROUP_SEPARATOR)) throw new Error(`offsetTable key "${key}" is not topic@group`);
      const queues = new Map<number, number>();
      for (const [id, off] of Object.entries(asObject(value, `offsetTable[${key}]`))) {
        const queueId = asNumber(id, `queue id "${id}" of ${key}`);
        queues.set(queueId, asNumber(off, `offset of ${key} q${id}`));
      }
      table.set(key, queues);
    }
    this.table = table;
    this.dataVersion.assign(doc.dataVersion);
  }
}
