/**
 * What the console shows, read from the broker's own services (the ones the admin request codes
 * read: TopicConfigManager, ConsumerOffsetManager, ConsumerManager, the store, BrokerStatsManager,
 * the runtime-info table of code 28 and the HA stats of code 907). Plain JSON-ready objects; offsets
 * are message counts, sizes bytes, times ms since the epoch, rates per second.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { BrokerController } from '../broker/broker-controller.js';
import { PermName, splitNamesrvAddr } from '../broker/broker-config.js';
import { RequestCode } from '../remoting/codes/request-code.js';
import { createRequestCommand } from '../remoting/protocol/commands.js';
import { dlqTopicOf, retryTopicOf } from '../common/message/topic-validator.js';
import { DefaultMessageStore } from '../store/default-message-store.js';
import { resolveStoreConfig, commitLogDir } from '../store/store-config.js';
import { Stats } from '../broker/stats/broker-stats-manager.js';
import { diskUsageBytes } from '../metrics/broker-metrics.js';
import { consumerLags } from '../metrics/consumer-lag.js';
import { invokeInProcess } from './in-process-request.js';

export interface QueueView {
  queueId: number;
  minOffset: number;
  maxOffset: number;
}

export interface TopicView {
  topic: string;
  readQueueNums: number;
  writeQueueNums: number;
  perm: number;
  permText: string;
  order: boolean;
  system: boolean;
  queues: QueueView[];
  /** Messages stored over all queues (sum of max offsets). */
  totalMessages: number;
  putTps: number;
}

export interface GroupQueueView {
  topic: string;
  queueId: number;
  brokerOffset: number;
  consumerOffset: number;
  lag: number;
}

export interface GroupView {
  group: string;
  online: boolean;
  clients: Array<{ clientId: string; address: string; language: string; version: number }>;
  messageModel: string | null;
  consumeType: string | null;
  subscriptions: string[];
  topics: Array<{ topic: string; lag: number; inflight: number; consumeTps: number; lagLatencyMs: number }>;
  queues: GroupQueueView[];
  totalLag: number;
  retryMessages: number;
  dlqMessages: number;
}

function permText(perm: number): string {
  return `${PermName.isReadable(perm) ? 'R' : '-'}${PermName.isWriteable(perm) ? 'W' : '-'}`;
}

function sumMax(b: BrokerController, topic: string): number {
  const queues = b.ctx.store.getTopicQueueTable().get(topic);
  let n = 0;
  if (queues) for (const q of queues.keys()) n += Math.max(0, b.ctx.store.getMaxOffsetInQueue(topic, q));
  return n;
}

export class BrokerView {
  constructor(private readonly broker: BrokerController) {}

  /** GET_BROKER_RUNTIME_INFO (28)'s table. */
  async runtimeInfo(): Promise<Record<string, string>> {
    const res = await invokeInProcess(this.broker, createRequestCommand(RequestCode.GET_BROKER_RUNTIME_INFO));
    return (JSON.parse(res.body?.toString('utf8') ?? '{}') as { table: Record<string, string> }).table ?? {};
  }

  async cluster(): Promise<object> {
    const b = this.broker;
    const rt = await this.runtimeInfo();
    const cfg = b.config;
    const role = b.controller ? b.controller.stats().role : (b.replication?.stats().role ?? cfg.brokerRole);
    return {
      clusterName: cfg.brokerClusterName,
      nameservers: splitNamesrvAddr(cfg.namesrvAddr),
      brokers: [
        {
          brokerName: cfg.brokerName,
          brokerId: cfg.brokerId,
          address: b.brokerAddr,
          role: String(role),
          version: rt.brokerVersionDesc ?? '',
          tsmqVersion: TSMQ_VERSION,
          bootTimestamp: Number(rt.bootTimestamp ?? 0),
          runtime: rt.runtime ?? '',
          putTps: rt.putTps ?? '',
          getTransferredTps: rt.getTransferredTps ?? '',
          commitLogDiskRatio: Number(rt.commitLogDiskRatio ?? -1),
          commitLogDirCapacity: rt.commitLogDirCapacity ?? '',
          commitLogMaxOffset: b.ctx.store.getMaxPhyOffset(),
          storePathRootDir: cfg.storePathRootDir,
        },
      ],
    };
  }

  topics(): TopicView[] {
    const b = this.broker;
    const store = b.ctx.store;
    return b.ctx.topicConfigManager
      .allTopicConfigs()
      .map((tc) => {
        const queues: QueueView[] = [];
        let total = 0;
        for (let q = 0; q < Math.max(tc.readQueueNums, tc.writeQueueNums); q++) {
          const maxOffset = Math.max(0, store.getMaxOffsetInQueue(tc.topicName, q));
          queues.push({ queueId: q, minOffset: Math.max(0, store.getMinOffsetInQueue(tc.topicName, q)), maxOffset });
          total += maxOffset;
        }
        return {
          topic: tc.topicName,
          readQueueNums: tc.readQueueNums,
          writeQueueNums: tc.writeQueueNums,
          perm: tc.perm,
          permText: permText(tc.perm),
          order: tc.order,
          system: isSystemTopic(tc.topicName),
          queues,
          totalMessages: total,
          putTps: b.ctx.brokerStats.tpsTopicPutNums(tc.topicName),
        };
      })
      .sort((x, y) => Number(x.system) - Number(y.system) || x.topic.localeCompare(y.topic));
  }

  async groups(): Promise<GroupView[]> {
    const b = this.broker;
    const ctx = b.ctx;
    const lags = await consumerLags(b, ctx.clock.nowMs(), false);
    const names = new Set<string>([...ctx.subscriptionGroupManager.allGroups().map((g) => g.groupName), ...ctx.consumerManager.groupNames(), ...lags.map((l) => l.group)]);
    const out: GroupView[] = [];
    for (const group of [...names].sort()) {
      if (group.startsWith('CID_RMQ_SYS_') || group === 'TOOLS_CONSUMER' || group === 'FILTERSRV_CONSUMER' || group === 'SELF_TEST_C_GROUP' || group === 'CID_ONSAPI_OWNER' || group === 'CID_ONSAPI_PERMISSION' || group === 'CID_ONSAPI_PULL' || group === 'CID_ONS-HTTP-PROXY') continue;
      const info = ctx.consumerManager.getConsumerGroupInfo(group);
      const queues: GroupQueueView[] = [];
      const topics = lags
        .filter((l) => l.group === group && !l.topic.startsWith('%RETRY%'))
        .map((l) => {
          for (const [queueId, committed] of ctx.consumerOffsetManager.queryOffsets(group, l.topic)) {
            const brokerOffset = Math.max(0, ctx.store.getMaxOffsetInQueue(l.topic, queueId));
            const consumerOffset = Math.max(0, committed);
            queues.push({ topic: l.topic, queueId, brokerOffset, consumerOffset, lag: Math.max(0, brokerOffset - consumerOffset) });
          }
          return { topic: l.topic, lag: l.lagMessages, inflight: l.inflightMessages, consumeTps: ctx.brokerStats.tpsGroupGetNums(group, l.topic), lagLatencyMs: l.lagLatencyMs };
        });
      queues.sort((x, y) => x.topic.localeCompare(y.topic) || x.queueId - y.queueId);
      out.push({
        group,
        online: !!info && info.channels.size > 0,
        clients: [...(info?.channels.values() ?? [])].map((c) => ({ clientId: c.clientId, address: c.channel.remoteAddress, language: c.language, version: c.version })),
        messageModel: info?.messageModel ?? null,
        consumeType: info?.consumeType ?? null,
        subscriptions: [...(info?.subscriptions.values() ?? [])].map((s) => `${s.topic} ${s.subString}`),
        topics,
        queues,
        totalLag: topics.reduce((s, t) => s + t.lag, 0),
        retryMessages: sumMax(b, retryTopicOf(group)),
        dlqMessages: sumMax(b, dlqTopicOf(group)),
      });
    }
    return out;
  }

  /** Messages moved to each group's DLQ by send-back (BrokerStatsManager DLQ_PUT_NUMS), for the groups page. */
  dlqCounts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const item of this.broker.ctx.brokerStats.itemsOf(Stats.DLQ_PUT_NUMS)) out[item.statsKey] = item.value;
    return out;
  }

  async store(): Promise<object> {
    const b = this.broker;
    const store = b.ctx.store;
    const sc = resolveStoreConfig({ ...b.rawBrokerConfig });
    const clDir = commitLogDir(sc);
    const root = sc.storePathRootDir;
    const segments = await listFiles(clDir);
    const cqRoot = join(root, 'consumequeue');
    let cqFiles = 0;
    let cqQueues = 0;
    for (const topic of await listNames(cqRoot)) {
      for (const q of await listNames(join(cqRoot, topic))) {
        cqQueues++;
        cqFiles += (await listNames(join(cqRoot, topic, q))).length;
      }
    }
    const maxPhy = store.getMaxPhyOffset();
    const flushed = store.getFlushedPhyOffset?.() ?? maxPhy;
    const recovery = store instanceof DefaultMessageStore ? store.recoveryReport : null;
    return {
      storePathRootDir: root,
      flushDiskType: sc.flushDiskType,
      commitLog: {
        dir: clDir,
        segmentSizeBytes: sc.mappedFileSizeCommitLog,
        minOffset: store.getMinPhyOffset(),
        maxOffset: maxPhy,
        flushedOffset: flushed,
        segments: segments.map((s) => ({ ...s, fromOffset: Number.parseInt(s.name, 10) })),
      },
      consumeQueue: { dir: cqRoot, queues: cqQueues, files: cqFiles, diskBytes: await diskUsageBytes(cqRoot) },
      index: { dir: join(root, 'index'), files: await listFiles(join(root, 'index')) },
      flushBehindBytes: Math.max(0, maxPhy - flushed),
      dispatchBehindBytes: store.dispatchBehindBytes?.() ?? 0,
      diskBytes: await diskUsageBytes(root),
      retention: {
        fileReservedTimeHours: sc.fileReservedTime,
        deleteWhen: sc.deleteWhen,
        diskMaxUsedSpaceRatio: sc.diskMaxUsedSpaceRatio,
        diskSpaceCleanForciblyRatio: sc.diskSpaceCleanForciblyRatio,
        diskSpaceWarningLevelRatio: sc.diskSpaceWarningLevelRatio,
      },
      recovery: recovery ? { durationMs: recovery.durationMs, commitLogMinOffset: recovery.commitLogMinOffset, commitLogMaxOffset: recovery.commitLogMaxOffset, cqEntriesRebuilt: recovery.cqEntriesRebuilt } : null,
    };
  }

  /** GET_BROKER_HA_STATUS (907)'s body, or {available:false,reason} when replication is off. */
  async ha(): Promise<object> {
    const res = await invokeInProcess(this.broker, createRequestCommand(RequestCode.GET_BROKER_HA_STATUS));
    const role = this.broker.replication?.stats().role ?? this.broker.config.brokerRole;
    if (res.code !== 0) return { available: false, role, reason: res.remark ?? '' };
    return { available: true, role, ...(JSON.parse(res.body!.toString('utf8')) as object) };
  }
}

/** System topics (TBW102, RMQ_SYS_*, SCHEDULE_TOPIC_XXXX, %RETRY%, %DLQ%, the cluster/broker-name topics). */
export function isSystemTopic(topic: string): boolean {
  return topic === 'TBW102' || topic.startsWith('RMQ_SYS_') || topic.startsWith('rmq_sys_') || topic === 'SCHEDULE_TOPIC_XXXX' || topic.startsWith('%RETRY%') || topic.startsWith('%DLQ%') || topic === 'OFFSET_MOVED_EVENT' || topic === 'SELF_TEST_TOPIC' || topic === 'BenchmarkTest' || topic === 'DefaultCluster' || topic.startsWith('broker-');
}

async function listNames(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch {
    return [];
  }
}

async function listFiles(dir: string): Promise<Array<{ name: string; sizeBytes: number; diskBytes: number; modifiedMs: number }>> {
  const out = [];
  for (const name of await listNames(dir)) {
    try {
      const st = await stat(join(dir, name));
      if (st.isFile()) out.push({ name, sizeBytes: st.size, diskBytes: st.blocks * 512, modifiedMs: st.mtimeMs });
    } catch {
      // deleted meanwhile (retention)
    }
  }
  return out;
}

/** tsmq's package version (shown beside the RocketMQ dialect version). */
export const TSMQ_VERSION = '0.1.0';
