/**
 * Slave side of timer replication (Apache `SlaveSynchronize.syncTimerCheckPoint` and
 * `syncTimerMetrics`): the timer wheel is not shipped; every replica builds its own from the
 * replicated rmq_sys_wheel_timer queue (TimerMessageService, slave mode), and this keeps it in step
 * with the master:
 *
 *   syncCheckPoint  GET_TIMER_CHECK_POINT (60) → the master's 56-byte checkpoint; its
 *                   lastReadTimeMs, masterTimerQueueOffset and data version are adopted
 *                   (applyMasterCheckpoint). Skipped while this replica delivers (master).
 *                   SlaveSynchronize runs it every min(3 s, slaveSynchronizeInterval) (Apache: 3 s).
 *   syncMetrics     GET_TIMER_METRICS (61) → the master's TimerMetrics JSON; the local table is
 *                   replaced when the data versions differ, then persisted. Runs with syncAll.
 * Errors (network, non-SUCCESS, a malformed body) throw with a reason; SlaveSynchronize logs them.
 */
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { createRequestCommand } from '../../remoting/protocol/commands.js';
import type { RemotingClient } from '../../remoting/transport/remoting-client.js';
import { decodeTimerCheckpoint } from '../../store/timer/timer-checkpoint.js';
import { asObject } from '../config-file/config-manager.js';
import { parseLenientJson } from '../config-file/lenient-json.js';
import type { TimerMessageService } from './timer-message-service.js';
import type { TimerMetrics } from './timer-metrics.js';

/** Apache's period of syncTimerCheckPoint (ms). */
export const TIMER_CHECKPOINT_SYNC_INTERVAL_MS = 3000;

export interface TimerSyncReport {
  checkpointsApplied: number;
  metricsReplaced: number;
  lastMasterReadTimeMs: number;
  lastMasterTimerQueueOffset: number;
}

export class TimerSlaveSync {
  private readonly report: TimerSyncReport = { checkpointsApplied: 0, metricsReplaced: 0, lastMasterReadTimeMs: 0, lastMasterTimerQueueOffset: 0 };

  constructor(
    private readonly service: TimerMessageService,
    private readonly metrics: TimerMetrics,
    private readonly timeoutMs = 3000,
  ) {}

  /** GET_TIMER_CHECK_POINT from `masterAddr`, adopted unless this replica delivers. Returns whether applied. */
  async syncCheckPoint(client: RemotingClient, masterAddr: string): Promise<boolean> {
    if (this.service.isShouldRunningDequeue) return false;
    const body = await this.fetch(client, masterAddr, RequestCode.GET_TIMER_CHECK_POINT);
    if (body.length < 32) throw new Error(`timer checkpoint of ${body.length} bytes (at least 32 expected)`);
    const cp = decodeTimerCheckpoint(body);
    const applied = this.service.applyMasterCheckpoint({
      lastReadTimeMs: cp.lastReadTimeMs,
      masterTimerQueueOffset: cp.masterTimerQueueOffset,
      stateVersion: cp.stateVersion,
      dataVersionTimestampMs: cp.dataVersionTimestampMs,
      dataVersionCounter: cp.dataVersionCounter,
    });
    if (applied) {
      this.report.checkpointsApplied++;
      this.report.lastMasterReadTimeMs = cp.lastReadTimeMs;
      this.report.lastMasterTimerQueueOffset = cp.masterTimerQueueOffset;
    }
    return applied;
  }

  /** GET_TIMER_METRICS from `masterAddr`; replaces the local table when the data version differs. */
  async syncMetrics(client: RemotingClient, masterAddr: string): Promise<boolean> {
    const body = await this.fetch(client, masterAddr, RequestCode.GET_TIMER_METRICS);
    const doc = asObject(parseLenientJson(body.toString('utf8')), 'timer metrics');
    if (!this.metrics.replaceFromMaster(doc)) return false;
    this.report.metricsReplaced++;
    await this.metrics.persist();
    return true;
  }

  stats(): TimerSyncReport {
    return { ...this.report };
  }

  private async fetch(client: RemotingClient, addr: string, code: number): Promise<Buffer> {
    const r = await client.invokeSync(addr, createRequestCommand(code), this.timeoutMs);
    if (r.code !== ResponseCode.SUCCESS) throw new Error(`code ${r.code} ${r.remark ?? ''}`);
    return r.body ?? Buffer.alloc(0);
  }
}
