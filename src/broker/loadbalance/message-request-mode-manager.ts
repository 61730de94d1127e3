/**
 * How each (topic, consumer group) is told to consume by QUERY_ASSIGNMENT: PULL or POP, and for
 * POP how many other clients' queues each client shares (mirrors Apache `MessageRequestModeManager`),
 * set by SET_MESSAGE_REQUEST_MODE (401, `mqadmin setConsumeMode`) and persisted as
 * `<storePathRootDir>/config/messageRequestMode.json`, Apache's `MessageRequestModeSerializeWrapper`:
 *
 *   {"messageRequestModeMap":{"<topic>":{"<group>":{"topic","consumerGroup","mode":"POP"|"PULL","popShareQueueNum":n}}}}
 */
import type { Logger } from '../../common/logging/logger.js';
import { ConfigManager, asNumber, asObject, type ConfigManagerOptions } from '../config-file/config-manager.js';

export type MessageRequestMode = 'PULL' | 'POP';

/** Apache `SetMessageRequestModeRequestBody`. */
export interface MessageRequestModeSetting {
  topic: string;
  consumerGroup: string;
  mode: MessageRequestMode;
  /** POP only: ≤ 0 = every client pops every queue; n = also the queues of the next n clients. */
  popShareQueueNum: number;
}

export function isMessageRequestMode(v: unknown): v is MessageRequestMode {
  return v === 'PULL' || v === 'POP';
}

export class MessageRequestModeManager extends ConfigManager {
  private table = new Map<string, Map<string, MessageRequestModeSetting>>();

  constructor(filePath: string, opts: ConfigManagerOptions & { logger?: Logger } = {}) {
    super(filePath, opts);
  }

  get(topic: string, group: string): MessageRequestModeSetting | undefined {
    return this.table.get(topic)?.get(group);
  }

  /** Stores the setting (replacing an earlier one); persist() makes it durable. */
  set(setting: MessageRequestModeSetting): void {
    let groups = this.table.get(setting.topic);
    if (!groups) {
      groups = new Map();
      this.table.set(setting.topic, groups);
    }
    groups.set(setting.consumerGroup, { ...setting });
  }

  override encode(): object {
    const map: Record<string, Record<string, MessageRequestModeSetting>> = {};
    for (const [topic, groups] of this.table) map[topic] = Object.fromEntries(groups);
    return { messageRequestModeMap: map };
  }

  protected override decode(doc: Record<string, unknown>): void {
    const next = new Map<string, Map<string, MessageRequestModeSetting>>();
    const map = asObject(doc.messageRequestModeMap ?? {}, 'messageRequestModeMap');
    for (const [topic, groupsRaw] of Object.entries(map)) {
      const groups = new Map<string, MessageRequestModeSetting>();
      for (const [group, raw] of Object.entries(asObject(groupsRaw, `messageRequestModeMap.${topic}`))) {
        const o = asObject(raw, `messageRequestModeMap.${topic}.${group}`);
        const mode = o.mode ?? 'PULL';
        if (!isMessageRequestMode(mode)) throw new Error(`messageRequestModeMap.${topic}.${group}.mode is not PULL or POP`);
        groups.set(group, { topic, consumerGroup: group, mode, popShareQueueNum: asNumber(o.popShareQueueNum ?? 0, `messageRequestModeMap.${topic}.${group}.popShareQueueNum`) });
      }
      next.set(topic, groups);
    }
    this.table = next;
  }
}
