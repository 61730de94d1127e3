/**
 * Broker statistics (mirrors Apache `BrokerStatsManager`, `StoreStatsService` and `BrokerStats`):
 *
 * - Named counter sets keyed like Apache's, read by VIEW_BROKER_STATS_DATA (315):
 *     TOPIC_PUT_NUMS / TOPIC_PUT_SIZE   key `<topic>`          messages / bytes stored by sends (under the topic
 *                                       stored, after the put hooks), and by the timer's and the delay-level
 *                                       service's re-puts that answered PUT_OK (delivery under the real topic,
 *                                       timer roll under rmq_sys_wheel_timer; Apache TimerMessageStore.doPut,
 *                                       ScheduleMessageService.PutResultProcess.onSuccess)
 *     GROUP_GET_NUMS / GROUP_GET_SIZE   key `<topic>@<group>`  messages / bytes handed to pulls; the delay-level
 *                                       service's deliveries as SCHEDULE_TOPIC_XXXX@SCHEDULE_CONSUMER
 *     SNDBCK_PUT_NUMS                   key `<topic>@<group>`  messages sent back by consumers
 *     QUEUE_PUT_NUMS / QUEUE_PUT_SIZE   key `<topic>@<queueId>` per-queue puts, only with `enableQueueStat`
 *                                       (broker key enableDetailStat, default true as Apache 5.3.3) and, as
 *                                       Apache 5.3.3 counts them, only for SCHEDULE_TOPIC_XXXX: a producer's
 *                                       delay-level send (msgNum, one call) and a consumer's send-back that
 *                                       went through it (1, one call); queueId = delay level - 1
 *     QUEUE_GET_NUMS / QUEUE_GET_SIZE   key `<topic>@<queueId>@<group>` per-queue gets, same switch; Apache
 *                                       5.3.3 counts only the delay-level service's deliveries, as
 *                                       SCHEDULE_TOPIC_XXXX@<delay level - 1>@SCHEDULE_CONSUMER (pulls are not
 *                                       counted per queue)
 *     BROKER_PUT_NUMS / BROKER_GET_NUMS key `<clusterName>`    broker totals, value only: `times` stays 0
 *                                       (Apache incBrokerPutNums / incBrokerGetNums add to the item's value
 *                                       and never to its times, so 315 shows times 0 and avgpt 0)
 *     BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC / BROKER_GET_NUMS_WITHOUT_SYSTEM_TOPIC  key `<clusterName>`
 *                                       the same, skipping system topics (TopicValidator.isSystemTopic);
 *                                       what GET_BROKER_RUNTIME_INFO's msgPutTotal* / msgGetTotal* show
 *   each a StatsItem with minute/hour/day windows (stats-item.ts).
 * - Store-wide totals for GET_BROKER_RUNTIME_INFO (28): messages/bytes put, pulls that found or
 *   missed messages, messages transferred; sampled every second (the last 601 samples) so
 *   `putTps` / `getFoundTps` / `getMissTps` / `getTotalTps` / `getTransferredTps` are the rates
 *   over the last 10, 60 and 600 s (or since start when younger), as "r10 r60 r600".
 * - `msgPutTotalTodayMorning` etc.: BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC / BROKER_GET_NUMS_WITHOUT_SYSTEM_TOPIC
 *   now and at the last two local midnights (0 before the first midnight, as Apache's `BrokerStats` starts).
 *
 * `start()` runs the samplers (1 s timer, unref'd); `shutdown()` stops them.
 */
import type { Clock } from '../../common/time/clock.js';
import { StatsItem, type StatsSnapshot, type StatsWindow } from './stats-item.js';
import type { BrokerStatsListener } from './broker-stats-listener.js';
import { TopicValidator, isSystemTopic } from '../../common/message/topic-validator.js';

/** Apache MixAll.SCHEDULE_CONSUMER_GROUP: the group the delay-level service's deliveries are counted under. */
export const SCHEDULE_CONSUMER_GROUP = 'SCHEDULE_CONSUMER';

export const Stats = {
  TOPIC_PUT_NUMS: 'TOPIC_PUT_NUMS',
  TOPIC_PUT_SIZE: 'TOPIC_PUT_SIZE',
  GROUP_GET_NUMS: 'GROUP_GET_NUMS',
  GROUP_GET_SIZE: 'GROUP_GET_SIZE',
  SNDBCK_PUT_NUMS: 'SNDBCK_PUT_NUMS',
  QUEUE_PUT_NUMS: 'QUEUE_PUT_NUMS',
  QUEUE_PUT_SIZE: 'QUEUE_PUT_SIZE',
  QUEUE_GET_NUMS: 'QUEUE_GET_NUMS',
  QUEUE_GET_SIZE: 'QUEUE_GET_SIZE',
  BROKER_PUT_NUMS: 'BROKER_PUT_NUMS',
  BROKER_GET_NUMS: 'BROKER_GET_NUMS',
  BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC: 'BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC',
  BROKER_GET_NUMS_WITHOUT_SYSTEM_TOPIC: 'BROKER_GET_NUMS_WITHOUT_SYSTEM_TOPIC',
  /** Messages a consumer group's send-back moved to its DLQ, key `<topic>@<group>` (Apache DLQ_PUT_NUMS). */
  DLQ_PUT_NUMS: 'DLQ_PUT_NUMS',
  /** Transactional messages committed / rolled back, key `<topic>` (the half message's real topic). */
  TX_COMMIT_NUMS: 'TX_COMMIT_NUMS',
  TX_ROLLBACK_NUMS: 'TX_ROLLBACK_NUMS',
} as const;

/** Store-wide cumulative counters (Apache StoreStatsService). */
export interface StoreTotals {
  putMessageTimesTotal: number;
  putMessageSizeTotal: number;
  putMessageFailedTimes: number;
  getFoundTimes: number;
  getMissTimes: number;
  getTransferredMsgCount: number;
}

interface TotalsSample extends StoreTotals {
  timestampMs: number;
}

const RUNTIME_SAMPLES = 601;
const SAMPLE_PERIOD_MS = 1000;

export class BrokerStatsManager {
  private readonly sets = new Map<string, Map<string, StatsItem>>();
  readonly totals: StoreTotals = {
    putMessageTimesTotal: 0,
    putMessageSizeTotal: 0,
    putMessageFailedTimes: 0,
    getFoundTimes: 0,
    getMissTimes: 0,
    getTransferredMsgCount: 0,
  };
  private readonly runtimeSamples: TotalsSample[] = [];
  private timer: NodeJS.Timeout | null = null;
  private lastItemSampleMs = 0;
  /** Put/get totals at the last two local midnights (Apache BrokerStats). */
  private morning = { putYesterday: 0, putToday: 0, getYesterday: 0, getToday: 0 };
  private morningDay: string;
  readonly bootTimestampMs: number;
  /** Per-event hooks of an exporter (src/metrics); null = none (the hot paths skip them). */
  listener: BrokerStatsListener | null = null;

  /**
   * `enableQueueStat`: keep the QUEUE_* sets (Apache's BrokerStatsManager field, fed by the broker
   * key enableDetailStat); false = never created, so VIEW_BROKER_STATS_DATA answers "not exist" for them.
   */
  constructor(
    private readonly clock: Clock,
    private readonly clusterName: string,
    readonly enableQueueStat = true,
  ) {
    this.bootTimestampMs = clock.nowMs();
    this.runtimeSamples.push({ timestampMs: this.bootTimestampMs, ...this.totals });
    this.morningDay = dayOf(this.bootTimestampMs);
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.sample(), SAMPLE_PERIOD_MS);
    this.timer.unref();
  }

  shutdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One sampling pass (the timer's job; tests call it with a manual clock). */
  sample(): void {
    const now = this.clock.nowMs();
    this.runtimeSamples.push({ timestampMs: now, ...this.totals });
    if (this.runtimeSamples.length > RUNTIME_SAMPLES) this.runtimeSamples.shift();
    if (now - this.lastItemSampleMs >= 10_000) {
      this.lastItemSampleMs = now;
      for (const set of this.sets.values()) for (const item of set.values()) item.sample(now);
    }
    const day = dayOf(now);
    if (day !== this.morningDay) {
      this.morningDay = day;
      this.morning = {
        putYesterday: this.morning.putToday,
        putToday: this.valueOf(Stats.BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC),
        getYesterday: this.morning.getToday,
        getToday: this.valueOf(Stats.BROKER_GET_NUMS_WITHOUT_SYSTEM_TOPIC),
      };
    }
  }

  /**
   * A send (or a timer / delay-level re-put) stored `msgNum` messages of `sizeBytes` in total (one
   * call); also the store-wide put totals. `times` > 1 sums that many such calls at once (the
   * timer's prepared blocks: one call per message in Apache's doPut, counted per block here).
   */
  recordPut(topic: string, msgNum: number, sizeBytes: number, times = 1): void {
    this.item(Stats.TOPIC_PUT_NUMS, topic).add(msgNum, times);
    this.item(Stats.TOPIC_PUT_SIZE, topic).add(sizeBytes, times);
    this.addBrokerValue(Stats.BROKER_PUT_NUMS, Stats.BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC, topic, msgNum);
    this.recordStorePut(msgNum, sizeBytes);
  }

  /**
   * A consumer's send-back (CONSUMER_SEND_MSG_BACK) stored its copy under `storedTopic` (the topic
   * after the put hooks) with `sizeBytes` written. Counted as Apache 5.3.3's
   * AbstractSendMessageProcessor counts it: TOPIC_PUT_NUMS/SIZE (one call) only when the copy went
   * through SCHEDULE_TOPIC_XXXX (a retry with a delay level), nothing for a `%DLQ%` copy or any
   * other topic, and never BROKER_PUT_NUMS (so not msgPutTotalTodayNow). The store totals (putTps)
   * count it, as Apache's CommitLog counts every put.
   */
  recordSendBackPut(storedTopic: string, sizeBytes: number): void {
    if (storedTopic === TopicValidator.RMQ_SYS_SCHEDULE_TOPIC) {
      this.item(Stats.TOPIC_PUT_NUMS, storedTopic).add(1, 1);
      this.item(Stats.TOPIC_PUT_SIZE, storedTopic).add(sizeBytes, 1);
    }
    this.recordStorePut(1, sizeBytes);
  }

  /**
   * QUEUE_PUT_NUMS (`msgNum`, one call) and QUEUE_PUT_SIZE (`sizeBytes`) of `<topic>@<queueId>`
   * when `enableQueueStat`. Callers follow Apache 5.3.3, which calls it only for a send or a
   * send-back stored under SCHEDULE_TOPIC_XXXX (SendMessageProcessor, AbstractSendMessageProcessor).
   */
  recordQueuePut(topic: string, queueId: number, msgNum: number, sizeBytes: number): void {
    if (!this.enableQueueStat) return;
    const key = `${topic}@${queueId}`;
    this.item(Stats.QUEUE_PUT_NUMS, key).add(msgNum, 1);
    this.item(Stats.QUEUE_PUT_SIZE, key).add(sizeBytes, 1);
  }

  /** Store-wide put totals (Apache StoreStatsService: every CommitLog put). */
  private recordStorePut(msgNum: number, sizeBytes: number): void {
    this.totals.putMessageTimesTotal += msgNum;
    this.totals.putMessageSizeTotal += sizeBytes;
  }

  /** Adds `inc` to the value (not the times) of a broker-wide item and, unless `topic` is a system topic, of its "without system topic" twin. */
  private addBrokerValue(name: string, withoutSystemName: string, topic: string, inc: number): void {
    this.item(name, this.clusterName).add(inc, 0);
    if (!isSystemTopic(topic)) this.item(withoutSystemName, this.clusterName).add(inc, 0);
  }

  /** Value of a broker-wide item (0 when never recorded). */
  private valueOf(name: string): number {
    return this.getStatsItem(name, this.clusterName)?.value ?? 0;
  }

  /**
   * The delay-level service re-put a due message of `sizeBytes` to `topic` and the store answered
   * PUT_OK. Counted as Apache's ScheduleMessageService.PutResultProcess.onSuccess (with its default
   * enableScheduleMessageStats=true) counts it: GROUP_GET_NUMS/SIZE of
   * `SCHEDULE_TOPIC_XXXX@SCHEDULE_CONSUMER` (hence the messages/throughput out metrics), a put of
   * `topic` (TOPIC_PUT_NUMS/SIZE, BROKER_PUT_NUMS and the store totals, as its CommitLog counts
   * every put) and the metrics' messages/throughput in and message size under `topic` with
   * message_type "delay" — also for a `%RETRY%` topic (Apache does not filter here). No
   * BROKER_GET_NUMS and no store get totals (nothing was pulled). With `enableQueueStat` also
   * QUEUE_GET_NUMS/SIZE of `SCHEDULE_TOPIC_XXXX@<delayLevel - 1>@SCHEDULE_CONSUMER` (`delayLevel` 1-based).
   */
  recordScheduleDelivery(topic: string, sizeBytes: number, delayLevel: number): void {
    const key = `${TopicValidator.RMQ_SYS_SCHEDULE_TOPIC}@${SCHEDULE_CONSUMER_GROUP}`;
    this.item(Stats.GROUP_GET_NUMS, key).add(1, 1);
    this.item(Stats.GROUP_GET_SIZE, key).add(sizeBytes, 1);
    if (this.enableQueueStat) {
      const queueKey = `${TopicValidator.RMQ_SYS_SCHEDULE_TOPIC}@${delayLevel - 1}@${SCHEDULE_CONSUMER_GROUP}`;
      this.item(Stats.QUEUE_GET_NUMS, queueKey).add(1, 1);
      this.item(Stats.QUEUE_GET_SIZE, queueKey).add(sizeBytes, 1);
    }
    this.recordPut(topic, 1, sizeBytes);
    this.listener?.onPut(topic, 'delay', 1, sizeBytes);
  }

  /** A put the store refused. */
  recordPutFailed(): void {
    this.totals.putMessageFailedTimes++;
  }

  /** A pull of `group` on `topic` returned `msgNum` messages of `sizeBytes` (msgNum 0 = nothing found). */
  recordGet(group: string, topic: string, msgNum: number, sizeBytes: number): void {
    if (msgNum <= 0) {
      this.totals.getMissTimes++;
      return;
    }
    const key = `${topic}@${group}`;
    this.item(Stats.GROUP_GET_NUMS, key).add(msgNum, 1);
    this.item(Stats.GROUP_GET_SIZE, key).add(sizeBytes, 1);
    this.addBrokerValue(Stats.BROKER_GET_NUMS, Stats.BROKER_GET_NUMS_WITHOUT_SYSTEM_TOPIC, topic, msgNum);
    this.totals.getFoundTimes++;
    this.totals.getTransferredMsgCount += msgNum;
  }

  /** A consumer of `group` sent a message of `topic` back for retry. */
  recordSendBack(group: string, topic: string): void {
    this.item(Stats.SNDBCK_PUT_NUMS, `${topic}@${group}`).add(1, 1);
  }

  /** A consumer of `group` sent a message of `topic` back and it went to the group's DLQ (max reconsume times reached). */
  recordDlq(group: string, topic: string): void {
    this.item(Stats.DLQ_PUT_NUMS, `${topic}@${group}`).add(1, 1);
  }

  /**
   * A transactional message of `topic` was committed or rolled back (a producer's end or a check),
   * `sinceBornMs` after its producer created it; a commit also reaches the listener's
   * onTransactionCommitted (Apache's rocketmq_finish_message_latency).
   */
  recordTransactionEnd(topic: string, resolution: 'COMMIT' | 'ROLLBACK', sinceBornMs = 0): void {
    this.item(resolution === 'COMMIT' ? Stats.TX_COMMIT_NUMS : Stats.TX_ROLLBACK_NUMS, topic).add(1, 1);
    if (resolution === 'COMMIT') this.listener?.onTransactionCommitted?.(topic, Math.max(0, sinceBornMs));
  }

  /** Sets (or clears) the exporter's per-event hooks. */
  setListener(listener: BrokerStatsListener | null): void {
    this.listener = listener;
  }

  /** Every counter of one set (e.g. Stats.TOPIC_PUT_NUMS), for exporters; empty when none was recorded. */
  itemsOf(statsName: string): Iterable<StatsItem> {
    return this.sets.get(statsName)?.values() ?? [];
  }

  /** The counter, or undefined when nothing was ever recorded under that name and key (Apache: the 315 error). */
  getStatsItem(statsName: string, statsKey: string): StatsItem | undefined {
    return this.sets.get(statsName)?.get(statsKey);
  }

  /** Figures of a counter's window; zeros when it does not exist. */
  stats(statsName: string, statsKey: string, window: StatsWindow): StatsSnapshot {
    return this.getStatsItem(statsName, statsKey)?.stats(window, this.clock.nowMs()) ?? { sum: 0, tps: 0, avgpt: 0, times: 0 };
  }

  /** Messages per second stored to `topic` over the last minute (Apache tpsTopicPutNums). */
  tpsTopicPutNums(topic: string): number {
    return this.stats(Stats.TOPIC_PUT_NUMS, topic, 'minute').tps;
  }

  /** Messages per second `group` pulled from `topic` over the last minute (Apache tpsGroupGetNums). */
  tpsGroupGetNums(group: string, topic: string): number {
    return this.stats(Stats.GROUP_GET_NUMS, `${topic}@${group}`, 'minute').tps;
  }

  /** Forgets a deleted topic's counters (Apache onTopicDeleted), then tells the listener (its series go too). */
  onTopicDeleted(topic: string): void {
    for (const [name, set] of this.sets) {
      for (const key of [...set.keys()]) {
        if (key === topic || (name !== Stats.TOPIC_PUT_NUMS && name !== Stats.TOPIC_PUT_SIZE && key.startsWith(`${topic}@`))) set.delete(key);
      }
    }
    this.listener?.onTopicDeleted?.(topic);
  }

  /** Forgets a deleted group's counters (Apache onGroupDeleted). */
  onGroupDeleted(group: string): void {
    for (const set of this.sets.values()) for (const key of [...set.keys()]) if (key.endsWith(`@${group}`)) set.delete(key);
  }

  /**
   * Rates over the last 10, 60 and 600 s of a store total, "r10 r60 r600" (per second, Java
   * Double text), from the 1 s samples; a window longer than the history uses the oldest sample.
   */
  tpsText(total: keyof StoreTotals | ((t: StoreTotals) => number)): string {
    const read = typeof total === 'function' ? total : (t: StoreTotals) => t[total];
    const now = this.clock.nowMs();
    const live = read(this.totals);
    return [10, 60, 600]
      .map((seconds) => {
        const idx = Math.max(0, this.runtimeSamples.length - 1 - seconds);
        const then = this.runtimeSamples[idx]!;
        const elapsedMs = now - then.timestampMs;
        return javaDoubleText(elapsedMs > 0 ? ((live - read(then)) * 1000) / elapsedMs : 0);
      })
      .join(' ');
  }

  /** Put/get totals at the last two local midnights and now (runtime info keys). */
  dayTotals(): Record<string, number> {
    return {
      msgPutTotalYesterdayMorning: this.morning.putYesterday,
      msgPutTotalTodayMorning: this.morning.putToday,
      msgPutTotalTodayNow: this.valueOf(Stats.BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC),
      msgGetTotalYesterdayMorning: this.morning.getYesterday,
      msgGetTotalTodayMorning: this.morning.getToday,
      msgGetTotalTodayNow: this.valueOf(Stats.BROKER_GET_NUMS_WITHOUT_SYSTEM_TOPIC),
    };
  }

  private item(name: string, key: string): StatsItem {
    let set = this.sets.get(name);
    if (!set) {
      set = new Map();
      this.sets.set(name, set);
    }
    let item = set.get(key);
    if (!item) {
      item = new StatsItem(name, key, this.clock.nowMs());
      set.set(key, item);
    }
    return item;
  }
}

function dayOf(ms: number): string {
  return new Date(ms).toDateString();
}

/** Java `Double.toString` for the values we print (integral values keep ".0"). */
export function javaDoubleText(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  return Number.isInteger(n) ? `${n}.0` : String(n);
}
