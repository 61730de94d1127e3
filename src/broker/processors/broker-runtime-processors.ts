/**
 * Broker health for the admin tools (mirror Apache `AdminBrokerProcessor`):
 *
 *   28 GET_BROKER_RUNTIME_INFO → body KVTable {"table":{<key>:<string>,…}} with Apache's keys:
 *      brokerVersion (the MQVersion ordinal the broker speaks, 401) and brokerVersionDesc (its name,
 *      V4_9_4), brokerActive, bootTimestamp, runtime ("[ d days, h hours, m minutes, s seconds ]"),
 *      putTps / getFoundTps / getMissTps / getTotalTps / getTransferredTps ("r10 r60 r600", per second;
 *      getTransferredTps also under 4.x's spelling getTransferedTps),
 *      putMessageTimesTotal, putMessageSizeTotal, putMessageFailedTimes, putMessageAverageSize,
 *      msgPutTotal{YesterdayMorning,TodayMorning,TodayNow}, msgGetTotal{…} (messages, system topics
 *      excluded: BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC / BROKER_GET_NUMS_WITHOUT_SYSTEM_TOPIC, as Apache),
 *      commitLogMinOffset, commitLogMaxOffset, dispatchBehindBytes, remainHowManyDataToFlush
 *      (human readable, e.g. "1.5 KiB"), earliestMessageTimeStamp (ms, -1 when empty),
 *      commitLogDiskRatio, commitLogDiskRatio_<dir>, consumeQueueDiskRatio (used/total of the
 *      partition, 0..1), commitLogDirCapacity ("Total : x, Free : y."),
 *      thread pool queue sizes/capacities and head wait times (tsmq has no thread pools: sizes
 *      and waits 0, Apache's default capacities), timer* (0: tsmq has no timer wheel),
 *      putLatency99/999 and putMessageEntireTimeMax / getMessageEntireTimeMax (0: not measured;
 *      Apache's putMessageDistributeTime histogram is left out for the same reason),
 *      remainTransientStoreBufferNumbs (2147483647, Apache's value without a transient store pool:
 *      tsmq has none),
 *      scheduleMessageOffset_<level> ("<delivered up to>,<queue max>" per delay level with progress,
 *      Apache ScheduleMessageService.buildRunningStats),
 *      totalMemKBytes (tsmq only: the host's memory, os.totalmem() / 1024 rounded down; Apache
 *      5.3.3's mqadmin exportMetrics reads this key as runtimeEnv.totalMemKBytes, but its broker
 *      never sends it, so Apache's export shows none),
 *      tsmq only, controller mode only: commitLogConfirmOffset (CommitLog bytes consumers may read
 *      up to, store/ha/confirm-offset.ts; Apache 5.3.3 computes the same confirm offset but
 *      reports it in no admin reply — the name follows its commitLogMin/MaxOffset keys; mqadmin
 *      brokerStatus prints every key, so operators see it there).
 *   907 GET_BROKER_HA_STATUS → body HARuntimeInfo
 *      {"master","masterCommitLogMaxOffset","inSyncSlaveNums","haConnectionInfo":[{addr,
 *       slaveAckOffset,diff,inSync,transferredByteInSecond,transferFromWhere}],
 *       "haClientRuntimeInfo":{masterAddr,transferredByteInSecond,maxOffset,lastReadTimestamp,
 *       lastWriteTimestamp,masterFlushOffset,activated}}; replication off →
 *      1 SYSTEM_ERROR "Can not get HARuntimeInfo, may be duplicationEnable is true".
 */
import { statfsSync } from 'node:fs';
import { totalmem } from 'node:os';
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { CURRENT_VERSION, createResponseCommand } from '../../remoting/protocol/commands.js';
import { versionDesc } from '../../remoting/protocol/mq-version.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import type { BrokerContext } from '../broker-context.js';
import type { BrokerHAStats } from '../ha/broker-ha.js';
import { javaDoubleText } from '../stats/broker-stats-manager.js';

/** Version the broker reports (tsmq speaks the 4.9.4 remoting dialect; commands.ts CURRENT_VERSION). */
export const BROKER_VERSION_DESC = versionDesc(CURRENT_VERSION);

export interface RuntimeInfoDeps {
  /** CommitLog directory and ConsumeQueue root, for the disk ratios. */
  commitLogDir: string;
  consumeQueueDir: string;
  /** Replication state; null when replication is off or not started. */
  haStats: () => BrokerHAStats | null;
  /** Slave is "not in sync" when its ack is this many bytes behind (store haMaxGapNotInSync). */
  haMaxGapNotInSyncBytes: number;
  /** The delay-level service's scheduleMessageOffset_<level> entries (absent: none). */
  scheduleRunningStats?: () => Record<string, string>;
  /** Controller mode: the CommitLog confirm offset (bytes); absent or null outside controller mode (no key). */
  confirmOffset?: () => number | null;
}

/** Apache `MixAll.humanReadableByteCount(bytes, false)`. */
export function humanReadableByteCount(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const exp = Math.min(6, Math.floor(Math.log(bytes) / Math.log(1024)));
  return `${(bytes / 1024 ** exp).toFixed(1)} ${'KMGTPE'[exp - 1]}iB`;
}

/** Apache `StoreStatsService.getFormatRuntime`. */
export function formatRuntime(elapsedMs: number): string {
  const s = Math.floor(elapsedMs / 1000);
  return `[ ${Math.floor(s / 86400)} days, ${Math.floor((s % 86400) / 3600)} hours, ${Math.floor((s % 3600) / 60)} minutes, ${s % 60} seconds ]`;
}

interface Space {
  totalBytes: number;
  freeBytes: number;
}

function spaceOf(dir: string): Space | null {
  try {
    const s = statfsSync(dir);
    return { totalBytes: s.blocks * s.bsize, freeBytes: s.bfree * s.bsize };
  } catch {
    return null;
  }
}

/** Used share of the partition holding `dir` (Apache getDiskPartitionSpaceUsedPercent), -1 when unknown. */
function usedRatio(space: Space | null): number {
  if (!space || space.totalBytes <= 0) return -1;
  return (space.totalBytes - space.freeBytes) / space.totalBytes;
}

export class BrokerRuntimeProcessors {
  constructor(
    private readonly ctx: BrokerContext,
    private readonly deps: RuntimeInfoDeps,
  ) {}

  /** The runtime info table (also used by tests). */
  async runtimeInfo(): Promise<Record<string, string>> {
    const { ctx, deps } = this;
    const stats = ctx.brokerStats;
    const store = ctx.store;
    const t = stats.totals;
    const now = ctx.clock.nowMs();
    const maxPhy = store.getMaxPhyOffset();
    const flushed = store.getFlushedPhyOffset?.() ?? maxPhy;
    const clSpace = spaceOf(deps.commitLogDir);
    const cqSpace = spaceOf(deps.consumeQueueDir);
    const clRatio = javaDoubleText(usedRatio(clSpace));
    const info: Record<string, string> = {
      brokerVersion: String(CURRENT_VERSION),
      brokerVersionDesc: BROKER_VERSION_DESC,
      brokerActive: String(ctx.config.brokerRole !== 'SLAVE'),
      bootTimestamp: String(stats.bootTimestampMs),
      runtime: formatRuntime(now - stats.bootTimestampMs),
      putTps: stats.tpsText('putMessageTimesTotal'),
      getFoundTps: stats.tpsText('getFoundTimes'),
      getMissTps: stats.tpsText('getMissTimes'),
      getTotalTps: stats.tpsText((x) => x.getFoundTimes + x.getMissTimes),
      getTransferredTps: stats.tpsText('getTransferredMsgCount'),
      // 4.x spelling (4.9.8 mqadmin clusterList reads this key and fails without it)
      getTransferedTps: stats.tpsText('getTransferredMsgCount'),
      putMessageTimesTotal: String(Math.max(1, t.putMessageTimesTotal)),
      putMessageSizeTotal: String(t.putMessageSizeTotal),
      putMessageFailedTimes: String(t.putMessageFailedTimes),
      putMessageAverageSize: javaDoubleText(t.putMessageSizeTotal / Math.max(1, t.putMessageTimesTotal)),
      putMessageEntireTimeMax: '0',
      getMessageEntireTimeMax: '0',
      putLatency99: '0.00',
      putLatency999: '0.00',
      dispatchMaxBuffer: '0',
      commitLogMinOffset: String(store.getMinPhyOffset()),
      commitLogMaxOffset: String(maxPhy),
      dispatchBehindBytes: String(store.dispatchBehindBytes?.() ?? 0),
      remainHowManyDataToFlush: humanReadableByteCount(Math.max(0, maxPhy - flushed)),
      earliestMessageTimeStamp: String((await store.getEarliestMessageTimeOfStore?.()) ?? -1),
      startAcceptSendRequestTimeStamp: '0',
      pageCacheLockTimeMills: '0',
      commitLogDiskRatio: clRatio,
      [`commitLogDiskRatio_${deps.commitLogDir}`]: clRatio,
      consumeQueueDiskRatio: javaDoubleText(usedRatio(cqSpace)),
      timerReadBehind: '0',
      timerOffsetBehind: '0',
      timerCongestNum: '0',
      timerEnqueueTps: '0.0',
      timerDequeueTps: '0.0',
      sendThreadPoolQueueSize: '0',
      sendThreadPoolQueueCapacity: '10000',
      pullThreadPoolQueueSize: '0',
      pullThreadPoolQueueCapacity: '100000',
      litePullThreadPoolQueueSize: '0',
      litePullThreadPoolQueueCapacity: '100000',
      queryThreadPoolQueueSize: '0',
      queryThreadPoolQueueCapacity: '20000',
      ackThreadPoolQueueSize: '0',
      ackThreadPoolQueueCapacity: '100000',
      sendThreadPoolQueueHeadWaitTimeMills: '0',
      pullThreadPoolQueueHeadWaitTimeMills: '0',
      queryThreadPoolQueueHeadWaitTimeMills: '0',
      litePullThreadPoolQueueHeadWaitTimeMills: '0',
      ackThreadPoolQueueHeadWaitTimeMills: '0',
      EndTransactionQueueSize: '0',
      EndTransactionThreadPoolQueueCapacity: '100000',
      remainTransientStoreBufferNumbs: String(2 ** 31 - 1),
      totalMemKBytes: String(Math.floor(totalmem() / 1024)),
    };
    for (const [k, v] of Object.entries(stats.dayTotals())) info[k] = String(v);
    Object.assign(info, deps.scheduleRunningStats?.() ?? {});
    const confirm = deps.confirmOffset?.() ?? null;
    if (confirm !== null) info.commitLogConfirmOffset = String(confirm);
    if (clSpace) info.commitLogDirCapacity = `Total : ${humanReadableByteCount(clSpace.totalBytes)}, Free : ${humanReadableByteCount(clSpace.freeBytes)}.`;
    return info;
  }

  readonly getRuntimeInfo: RequestHandler = async ({ request }) => {
    const body = JSON.stringify({ table: await this.runtimeInfo() });
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(body, 'utf8'));
  };

  readonly getHaStatus: RequestHandler = ({ request }) => {
    const ha = this.deps.haStats();
    const repl = ha?.replication;
    if (!repl) return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, 'Can not get HARuntimeInfo, may be duplicationEnable is true');
    const maxPhy = this.ctx.store.getMaxPhyOffset();
    const client = { masterAddr: null as string | null, transferredByteInSecond: 0, maxOffset: 0, lastReadTimestamp: 0, lastWriteTimestamp: 0, masterFlushOffset: 0, activated: false };
    let body: object;
    if (repl.role === 'master') {
      const conns = repl.master.connections.map((c) => {
        const diff = c.ackOffset >= 0 ? maxPhy - c.ackOffset : maxPhy;
        return {
          addr: c.remoteAddress,
          slaveAckOffset: c.ackOffset,
          diff,
          inSync: c.ackOffset >= 0 && diff < this.deps.haMaxGapNotInSyncBytes,
          transferredByteInSecond: 0,
          transferFromWhere: c.nextTransferFromWhere,
        };
      });
      body = { master: true, masterCommitLogMaxOffset: maxPhy, inSyncSlaveNums: conns.filter((c) => c.inSync).length, haConnectionInfo: conns, haClientRuntimeInfo: client };
    } else {
      const s = repl.slave;
      body = {
        master: false,
        masterCommitLogMaxOffset: 0,
        inSyncSlaveNums: 0,
        haConnectionInfo: [],
        haClientRuntimeInfo: { ...client, masterAddr: s.masterAddress, maxOffset: maxPhy, activated: s.connected },
      };
    }
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(JSON.stringify(body), 'utf8'));
  };
}
