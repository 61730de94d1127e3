/**
 * A slave's copy of the master's metadata (mirrors 4.9 `SlaveSynchronize.syncAll`): topic
 * configs (21), consumer offsets (43), delay offsets (45) and subscription groups (201) are
 * fetched from the master's remoting address and applied locally, first 3 s after start, then
 * every `intervalMs` (Apache: 10 s), and right after the master address becomes known; the
 * topic configs also on demand (`syncTopicConfig`, a replica meeting an unknown topic).
 * Each part is independent: a failure is logged and the others still run.
 *
 * Apply rules:
 *   - topics: master configs that differ are written locally, local topics the master does not
 *     have are removed (Apache replaces the table).
 *   - consumer offsets: every master offset is stored (per topic@group and queue; Apache putAll),
 *     then persisted. Offsets committed to the slave while the master was away are overwritten
 *     once the master is back (consumers re-commit theirs to the master).
 *   - delay offsets: the master's table replaces the local one (persisted).
 *   - subscription groups: master configs that differ are written locally.
 *   - pop state (`popState` given): the master's whole pop table (GET_ALL_POP_STATE, tsmq-only,
 *     src/broker/pop/pop-state-sync.ts) every min(1 s, intervalMs) on its own timer.
 *   - timers (timerWheelEnable, `timer` given): the master's TimerMetrics (61) with every round,
 *     and its timer checkpoint (60) every min(3 s, intervalMs) on its own timer (Apache syncs it
 *     every 3 s: "latency-sensitive"), see src/broker/timer/timer-sync.ts.
 */
import type { Logger } from '../../common/logging/logger.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import { createRequestCommand } from '../../remoting/protocol/commands.js';
import type { RemotingClient } from '../../remoting/transport/remoting-client.js';
import type { BrokerContext } from '../broker-context.js';
import { asNumber, asObject } from '../config-file/config-manager.js';
import { parseLenientJson } from '../config-file/lenient-json.js';
import { groupOfKey, topicOfKey } from '../offset/consumer-offset-manager.js';
import type { ScheduleMessageService } from '../schedule/schedule-message-service.js';
import type { SubscriptionGroupConfig } from '../subscription/subscription-group-manager.js';
import { decodeTopicConfig } from '../topic/topic-config.js';
import { TIMER_CHECKPOINT_SYNC_INTERVAL_MS, type TimerSlaveSync } from '../timer/timer-sync.js';
import { POP_STATE_SYNC_INTERVAL_MS, type PopSlaveSync } from '../pop/pop-state-sync.js';
import { SingleFlight } from '../../common/async/single-flight.js';

export const SLAVE_SYNC_FIRST_DELAY_MS = 3000;

export interface SlaveSyncReport {
  masterAddr: string | null;
  topicsChanged: number;
  offsetsApplied: number;
  delayLevels: number;
  groupsChanged: number;
  /** Whether the master's timer metrics replaced the local ones this round. */
  timerMetricsReplaced: boolean;
  errors: string[];
}

export interface SlaveSynchronizeOptions {
  client: RemotingClient;
  ctx: BrokerContext;
  schedule: ScheduleMessageService;
  intervalMs: number;
  timeoutMs?: number;
  logger: Logger;
  /** Timer checkpoint and metrics sync (absent: timerWheelEnable=false). */
  timer?: TimerSlaveSync | null;
  /** Pop state sync (absent: pop state is not replicated). */
  popState?: PopSlaveSync | null;
}

export class SlaveSynchronize {
  private masterAddr: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<SlaveSyncReport> | null = null;
  private stopped = false;
  private lastReport: SlaveSyncReport | null = null;
  private timerCheckpointTimer: NodeJS.Timeout | null = null;
  private readonly timerCheckpointRun = new SingleFlight<void>();
  private readonly topicRun = new SingleFlight<boolean>();
  private popStateTimer: NodeJS.Timeout | null = null;
  private readonly popStateRun = new SingleFlight<void>();

  constructor(private readonly opts: SlaveSynchronizeOptions) {}

  start(): void {
    const first = setTimeout(() => {
      if (this.stopped) return;
      void this.syncAll();
      this.timer = setInterval(() => void this.syncAll(), this.opts.intervalMs);
      this.timer.unref();
    }, Math.min(SLAVE_SYNC_FIRST_DELAY_MS, this.opts.intervalMs));
    first.unref();
    this.timer = first;
    if (this.opts.popState) {
      this.popStateTimer = setInterval(() => void this.syncPopState(), Math.min(POP_STATE_SYNC_INTERVAL_MS, this.opts.intervalMs));
      this.popStateTimer.unref();
    }
    if (this.opts.timer) {
      this.timerCheckpointTimer = setInterval(() => void this.syncTimerCheckPoint(), Math.min(TIMER_CHECKPOINT_SYNC_INTERVAL_MS, this.opts.intervalMs));
      this.timerCheckpointTimer.unref();
    }
  }

  /** One GET_TIMER_CHECK_POINT round (joins one in progress); failures are logged. */
  syncTimerCheckPoint(): Promise<void> {
    const addr = this.masterAddr;
    const timer = this.opts.timer;
    if (!timer || addr === null || this.stopped) return Promise.resolve();
    return this.timerCheckpointRun.run(() =>
      timer.syncCheckPoint(this.opts.client, addr).then(
        () => undefined,
        (e: Error) => this.opts.logger.warn(`slave synchronize from ${addr}: timer checkpoint: ${e.message}`),
      ),
    );
  }

  /** One GET_ALL_POP_STATE round (joins one in progress); failures are logged. */
  syncPopState(): Promise<void> {
    const addr = this.masterAddr;
    const pop = this.opts.popState;
    if (!pop || addr === null || this.stopped) return Promise.resolve();
    return this.popStateRun.run(() =>
      pop.sync(this.opts.client, addr).then(
        () => undefined,
        (e: Error) => this.opts.logger.warn(`slave synchronize from ${addr}: pop state: ${e.message}`),
      ),
    );
  }

  getMasterAddr(): string | null {
    return this.masterAddr;
  }

  /** Sets the master's remoting address (null: unknown, sync pauses); a new address syncs at once. */
  setMasterAddr(addr: string | null): void {
    if (addr === this.masterAddr) return;
    this.opts.logger.info(`slave synchronize: master address ${this.masterAddr ?? '(none)'} -> ${addr ?? '(none)'}`);
    this.masterAddr = addr;
    if (addr !== null && !this.stopped) {
      void this.syncAll();
      void this.syncTimerCheckPoint();
      void this.syncPopState();
    }
  }

  getLastReport(): SlaveSyncReport | null {
    return this.lastReport;
  }

  /** One round of all four syncs (joins a round in progress). */
  syncAll(): Promise<SlaveSyncReport> {
    this.running ??= this.doSyncAll().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /**
   * One GET_ALL_TOPIC_CONFIG round on demand (joins one in progress), applied like the periodic
   * round: used when this replica meets a topic it has messages of but no config for
   * (replica-topic-learner.ts). Resolves true when the master answered and its table was applied,
   * false when the master is unknown, unreachable or answered an error (logged).
   */
  syncTopicConfig(): Promise<boolean> {
    return this.topicRun.run(() => this.doSyncTopicConfig());
  }

  private async doSyncTopicConfig(): Promise<boolean> {
    const addr = this.masterAddr;
    if (addr === null || this.stopped) return false;
    try {
      const changed = this.applyTopics(await this.fetch(addr, RequestCode.GET_ALL_TOPIC_CONFIG));
      if (changed > 0) this.opts.logger.info(`slave synchronize from ${addr}: ${changed} topic config(s) changed (on demand)`);
      return true;
    } catch (e) {
      this.opts.logger.warn(`slave synchronize from ${addr}: topic config on demand: ${(e as Error).message}`);
      return false;
    }
  }

  private async doSyncAll(): Promise<SlaveSyncReport> {
    const addr = this.masterAddr;
    const report: SlaveSyncReport = { masterAddr: addr, topicsChanged: 0, offsetsApplied: 0, delayLevels: 0, groupsChanged: 0, timerMetricsReplaced: false, errors: [] };
    if (addr === null || this.stopped) return report;
    const step = async (what: string, code: number, apply: (doc: Record<string, unknown>) => Promise<void> | void): Promise<void> => {
      try {
        await apply(await this.fetch(addr, code));
      } catch (e) {
        report.errors.push(`${what}: ${(e as Error).message}`);
      }
    };
    await step('topic config', RequestCode.GET_ALL_TOPIC_CONFIG, (d) => void (report.topicsChanged = this.applyTopics(d)));
    await step('consumer offsets', RequestCode.GET_ALL_CONSUMER_OFFSET, async (d) => {
      report.offsetsApplied = this.applyOffsets(d);
      await this.opts.ctx.consumerOffsetManager.persist();
    });
    await step('delay offsets', RequestCode.GET_ALL_DELAY_OFFSET, (d) => void (report.delayLevels = this.applyDelayOffsets(d)));
    await step('subscription groups', RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, (d) => void (report.groupsChanged = this.applyGroups(d)));
    const timer = this.opts.timer;
    if (timer) {
      try {
        report.timerMetricsReplaced = await timer.syncMetrics(this.opts.client, addr);
      } catch (e) {
        report.errors.push(`timer metrics: ${(e as Error).message}`);
      }
    }
    if (report.errors.length > 0) this.opts.logger.warn(`slave synchronize from ${addr}: ${report.errors.join('; ')}`);
    this.lastReport = report;
    return report;
  }

  private async fetch(addr: string, code: number): Promise<Record<string, unknown>> {
    const response = await this.opts.client.invokeSync(addr, createRequestCommand(code), this.opts.timeoutMs ?? 3000);
    if (response.code !== ResponseCode.SUCCESS) throw new Error(`code ${response.code} ${response.remark ?? ''}`);
    const doc = parseLenientJson((response.body ?? Buffer.alloc(0)).toString('utf8'));
    return asObject(doc, 'reply body');
  }

  private applyTopics(doc: Record<string, unknown>): number {
    const tcm = this.opts.ctx.topicConfigManager;
    const table = asObject(doc.topicConfigTable ?? {}, 'topicConfigTable');
    const incoming = Object.entries(table).map(([name, v]) => decodeTopicConfig(name, v));
    let changed = 0;
    for (const tc of incoming) {
      const local = tcm.selectTopicConfig(tc.topicName);
      if (!local || JSON.stringify(local) !== JSON.stringify(tc)) {
        tcm.updateTopicConfig(tc);
        changed++;
      }
    }
    const names = new Set(incoming.map((t) => t.topicName));
    for (const local of tcm.allTopicConfigs()) {
      if (!names.has(local.topicName) && tcm.deleteTopicConfig(local.topicName)) changed++;
    }
    return changed;
  }

  private applyOffsets(doc: Record<string, unknown>): number {
    const com = this.opts.ctx.consumerOffsetManager;
    let n = 0;
    for (const [key, queues] of Object.entries(asObject(doc.offsetTable ?? {}, 'offsetTable'))) {
      if (!key.includes('@')) continue;
      for (const [qid, off] of Object.entries(asObject(queues, `offsetTable[${key}]`))) {
        if (com.commitOffset('master-sync', groupOfKey(key), topicOfKey(key), asNumber(qid, 'queue id'), asNumber(off, 'offset'))) n++;
      }
    }
    return n;
  }

  private applyDelayOffsets(doc: Record<string, unknown>): number {
    const table = new Map<number, number>();
    for (const [level, off] of Object.entries(asObject(doc.offsetTable ?? {}, 'offsetTable'))) table.set(asNumber(level, 'delay level'), asNumber(off, 'delay offset'));
    const current = (this.opts.schedule.encode() as { offsetTable?: Record<string, number> }).offsetTable ?? {};
    const same = Object.keys(current).length === table.size && [...table].every(([level, off]) => current[String(level)] === off);
    if (!same) this.opts.schedule.replaceOffsetTable(table);
    return table.size;
  }

  private applyGroups(doc: Record<string, unknown>): number {
    const sgm = this.opts.ctx.subscriptionGroupManager;
    let changed = 0;
    for (const [name, v] of Object.entries(asObject(doc.subscriptionGroupTable ?? {}, 'subscriptionGroupTable'))) {
      const incoming = mergeGroup(sgm.defaults(name), asObject(v, `group ${name}`));
      const local = sgm.get(incoming.groupName);
      if (!local || JSON.stringify(local) !== JSON.stringify(incoming)) {
        sgm.updateSubscriptionGroupConfig(incoming);
        changed++;
      }
    }
    return changed;
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) {
      clearTimeout(this.timer);
      clearInterval(this.timer);
    }
    this.timer = null;
    if (this.timerCheckpointTimer) clearInterval(this.timerCheckpointTimer);
    this.timerCheckpointTimer = null;
    if (this.popStateTimer) clearInterval(this.popStateTimer);
    this.popStateTimer = null;
    await this.popStateRun.whenIdle();
    if (this.running) await this.running.catch(() => undefined);
    await this.timerCheckpointRun.whenIdle();
    await this.topicRun.whenIdle();
  }
}

/** The master's group config over the local defaults, keeping the field types of `SubscriptionGroupConfig`. */
function mergeGroup(defaults: SubscriptionGroupConfig, o: Record<string, unknown>): SubscriptionGroupConfig {
  const out: SubscriptionGroupConfig = { ...defaults, attributes: { ...defaults.attributes } };
  const fields = out as unknown as Record<string, unknown>;
  for (const [k, def] of Object.entries(defaults)) {
    const v = o[k];
    if (v === undefined || v === null || k === 'attributes') continue;
    if (typeof def === 'boolean') fields[k] = v === true || v === 'true';
    else if (typeof def === 'number') fields[k] = asNumber(v, k);
    else if (typeof def === 'string') fields[k] = String(v);
  }
  if (o.attributes && typeof o.attributes === 'object') out.attributes = Object.fromEntries(Object.entries(o.attributes).map(([k, v]) => [k, String(v)]));
  return out;
}
