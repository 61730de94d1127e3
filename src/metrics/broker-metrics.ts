/**
 * The broker's Prometheus metrics (prom-client registry), named and labelled like Apache
 * RocketMQ 5.3.3's BrokerMetricsManager as its PROM exporter prints them (OpenTelemetry 1.29:
 * a metric with a unit gets it appended to its sample names, e.g. rocketmq_rpc_latency_milliseconds).
 * Every series carries Apache's common labels cluster, node_type ("broker") and node_id (brokerName).
 *
 * Hot-path events arrive through BrokerStatsListener (message type, size, rpc latency) and the
 * CommitLog flush observer; a put costs two Map lookups and a few additions (BucketHistogram and
 * plain counters turned into Prometheus series at scrape time). Everything
 * else is read from the broker's own services when Prometheus scrapes (gauges with `collect`):
 * BrokerStatsManager counters (messages/bytes out, DLQ, commit/rollback), offsets, clients, store.
 *
 *   rocketmq_messages_in_total{topic,message_type,is_system}    counter  messages stored by sends
 *   rocketmq_throughput_in_total{topic,message_type,is_system}  counter  bytes stored by sends
 *   rocketmq_message_size{topic,message_type,is_system}   histogram bytes per stored message
 *                                                          (buckets 1 KiB, 4 KiB, 512 KiB, 1, 2, 4 MiB)
 *   rocketmq_messages_out_total{topic,consumer_group,is_system}    counter  messages handed to pulls
 *   rocketmq_throughput_out_total{topic,consumer_group,is_system}  counter  bytes handed to pulls
 *   rocketmq_send_to_dlq_messages_total{topic,consumer_group,is_system}  counter
 *   (message_type and is_system as Apache 5.3.3 computes them: broker/stats/metrics-labels.ts;
 *   %RETRY% / %DLQ% topics are not counted in messages/throughput in and out)
 *   rocketmq_commit_messages_total{topic} / rocketmq_rollback_messages_total{topic}  counter
 *   rocketmq_half_messages{topic}               gauge  half messages not yet committed, rolled back or discarded
 *   rocketmq_finish_message_latency_milliseconds{topic}  histogram ms from a transactional message's
 *                                                birth to its commit (buckets 5 s … 24 h)
 *   rocketmq_rpc_latency_milliseconds{protocol_type,request_code,response_code,is_long_polling,result}
 *                                                histogram ms; codes by their lower-case RocketMQ names;
 *                                                held pulls timed from suspension to answer (is_long_polling true)
 *                                                (buckets 1, 3, 5, 7, 10, 100, 1000, 2000, 3000 ms)
 *   rocketmq_producer_connections{language,version,protocol_type}       gauge (language "java", version "v5_3_3")
 *   rocketmq_consumer_connections{consumer_group,language,version,consume_mode,protocol_type,is_system}  gauge
 *   (lag figures: consumer-lag.ts, Apache's ConsumerLagCalculator with estimateAccumulation)
 *   rocketmq_consumer_lag_messages{topic,consumer_group,is_retry,is_system}       gauge max offset - committed
 *   rocketmq_consumer_lag_latency_milliseconds{...same}    gauge ms since the oldest uncommitted message was stored
 *   rocketmq_consumer_inflight_messages{...same}           gauge pulled, not committed
 *   rocketmq_consumer_queueing_latency_milliseconds{...same}  gauge ms since the oldest unpulled message was stored
 *   rocketmq_consumer_ready_messages{...same}              gauge stored, not yet pulled
 *   rocketmq_topic_number / rocketmq_consumer_group_number / rocketmq_broker_permission  gauge
 *   rocketmq_topic_create_execution_time_milliseconds{invocation_status,is_system}  histogram ms of
 *   UPDATE_AND_CREATE_TOPIC[_LIST]; rocketmq_consumer_group_create_execution_time_milliseconds{invocation_status}
 *   histogram ms of UPDATE_AND_CREATE_SUBSCRIPTIONGROUP[_LIST] (buckets 10, 100, 1000, 3000, 5000 ms;
 *   processors/create-execution-timing.ts)
 *   rocketmq_storage_size_bytes{storage_type,storage_medium}  gauge used bytes of the partition holding storePathRootDir
 *   rocketmq_storage_flush_behind_bytes / rocketmq_storage_dispatch_behind_bytes{storage_type,storage_medium}  gauge
 *   rocketmq_storage_message_reserve_time_milliseconds{storage_type,storage_medium}  gauge ms since the oldest stored message
 * tsmq's own:
 *   tsmq_commitlog_flush_batch_bytes                       histogram bytes made durable per flush
 *                                                          (the group-commit batch under SYNC_FLUSH)
 *   tsmq_commitlog_flush_latency_seconds                   histogram duration of a flush (fdatasync)
 *   tsmq_store_recovery_duration_seconds                   gauge  start-up recovery of this process
 *   tsmq_ha_lag_bytes{slave}                               gauge  master max offset - slave ack
 *   nodejs_eventloop_lag_* (seconds, p50/p90/p99...)        prom-client default metrics: event-loop delay
 * Timer metrics (rocketmq_timer_*, rocketmq_timing_messages, rocketmq_delay_message_latency_seconds): timer-prometheus.ts.
 */
import { statfsSync } from 'node:fs';
import { readdir, lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { BrokerController } from '../broker/broker-controller.js';
import type { BrokerStatsListener, MetricsMessageType } from '../broker/stats/broker-stats-listener.js';
import { Stats } from '../broker/stats/broker-stats-manager.js';
import { isMetricsSystemTopic, isRetryOrDlqTopic, isSysConsumerGroup, isSystemGroup } from '../broker/stats/metrics-labels.js';
import { isSystemTopic } from '../common/message/topic-validator.js';
import { DefaultMessageStore } from '../store/default-message-store.js';
import { BucketHistogram, HistogramSeries } from './bucket-histogram.js';
import { RequestCode } from '../remoting/codes/request-code.js';
import { ResponseCode } from '../remoting/codes/response-code.js';
import { versionDesc } from '../remoting/protocol/mq-version.js';
import { defineTimerMetrics } from './timer-prometheus.js';
import { consumerLags, type GroupTopicLag } from './consumer-lag.js';

/** Apache's message size buckets (bytes). */
export const MESSAGE_SIZE_BUCKETS_BYTES = [1024, 4 * 1024, 512 * 1024, 1024 * 1024, 2 * 1024 * 1024, 4 * 1024 * 1024];
/** Apache's rpc latency buckets (ms, RemotingMetricsManager.getMetricsView). */
export const RPC_LATENCY_BUCKETS_MS = [1, 3, 5, 7, 10, 100, 1000, 2000, 3000];
/** Apache DefaultStoreMetricsManager's labels of every store metric. */
export const STORE_METRIC_LABELS = { storage_type: 'local', storage_medium: 'disk' } as const;
/** Apache ConsumeType.getTypeCN, lower case: the consume_mode label. */
const CONSUME_MODES: Readonly<Record<string, string>> = { CONSUME_ACTIVELY: 'pull', CONSUME_PASSIVELY: 'push', CONSUME_POP: 'pop' };
const RETRY_PREFIX = '%RETRY%';
const REQUEST_CODE_LABELS = new Map<number, string>(Object.entries(RequestCode).map(([name, code]) => [code, name.toLowerCase()]));
const RESPONSE_CODE_LABELS = new Map<number, string>(Object.entries(ResponseCode).map(([name, code]) => [code, name.toLowerCase()]));
/**
 * Buckets (ms) of rocketmq_finish_message_latency_milliseconds: Apache's 5 s, 1 min, 10 min, 1 h,
 * 12 h, 24 h (Apache records whole seconds against these bounds under the unit "ms"; tsmq records ms).
 */
export const FINISH_LATENCY_BUCKETS_MS = [5, 60, 600, 3600, 43_200, 86_400].map((s) => s * 1000);
/** Apache's buckets of the topic / group create execution time (ms). */
export const CREATE_TIME_BUCKETS_MS = [10, 100, 1000, 3000, 5000];
const FLUSH_BATCH_BUCKETS_BYTES = [4096, 16384, 65536, 262144, 1048576, 4194304, 16777216];
const FLUSH_LATENCY_BUCKETS_S = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1];

interface PutSeries {
  messages: number;
  bytes: number;
  size: HistogramSeries;
}

/**
 * Labels of a lag series (Apache ConsumerLagCalculator): a `%RETRY%<group>` topic is left out (Apache
 * skips subscribed retry topics); a pop retry topic of the group (`%RETRY%<group>+<topic>`, or the
 * V1 `%RETRY%<group>_<topic>`) is reported under its real topic with is_retry true; any other topic
 * as itself with is_retry false. Null = no series.
 */
export function lagLabels(topic: string, group: string): { topic: string; isRetry: boolean } | null {
  if (!topic.startsWith(RETRY_PREFIX)) return { topic, isRetry: false };
  const rest = topic.slice(RETRY_PREFIX.length);
  if (rest.length > group.length + 1 && rest.startsWith(group) && (rest[group.length] === '+' || rest[group.length] === '_')) {
    return { topic: rest.slice(group.length + 1), isRetry: true };
  }
  return null;
}

/** Apache RemotingHelper.getRequestCodeDesc: the lower-case RequestCode name, or the number. */
export function requestCodeLabel(code: number): string {
  return REQUEST_CODE_LABELS.get(code) ?? String(code);
}

/** Apache RemotingHelper.getResponseCodeDesc: the lower-case ResponseCode name, or the number. */
export function responseCodeLabel(code: number): string {
  return RESPONSE_CODE_LABELS.get(code) ?? String(code);
}

/** Used bytes of the partition holding `dir` (Apache: File.getTotalSpace() - getFreeSpace()); null when unknown. */
export function usedPartitionBytes(dir: string): number | null {
  try {
    const s = statfsSync(dir);
    return s.blocks > 0 ? (s.blocks - s.bfree) * s.bsize : null;
  } catch {
    return null;
  }
}

/** Bytes allocated on disk under `dir` (st_blocks, so sparse preallocated segments count what they use). */
export async function diskUsageBytes(dir: string): Promise<number> {
  let total = 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += await diskUsageBytes(p);
    else {
      try {
        const st = await lstat(p);
        total += st.blocks * 512;
      } catch {
        // removed meanwhile (retention)
      }
    }
  }
  return total;
}

export class BrokerMetrics implements BrokerStatsListener {
  readonly registry = new Registry();
  private broker: BrokerController | null = null;
  private readonly messageSize: BucketHistogram;
  private readonly rpcLatency: BucketHistogram;
  private readonly flushBatch: Histogram;
  private readonly topicCreateTime: Histogram;
  private readonly finishLatency: Histogram;
  /** Topics that had half messages in this process: their rocketmq_half_messages stays, at 0, once all are resolved (as Apache's TransactionMetrics keeps them). */
  private readonly halfTopics = new Set<string>();
  private readonly groupCreateTime: Histogram;
  private readonly flushLatency: Histogram;
  /** topic → message type → counters and size series (no string is built per put). */
  private readonly putSeries = new Map<string, Map<MetricsMessageType, PutSeries>>();
  private readonly rpcSeries = new Map<number, HistogramSeries>();

  constructor() {
    const r = [this.registry];
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
    const self = this;
    const putCounter = (name: string, help: string, pick: (p: PutSeries) => number): void => {
      new Counter({
        name,
        help,
        labelNames: ['topic', 'message_type', 'is_system'],
        registers: r,
        collect() {
          this.reset();
          for (const [topic, types] of self.putSeries) {
            const isSystem = self.systemTopicLabel(topic);
            for (const [type, p] of types) this.inc({ topic, message_type: type, is_system: isSystem }, pick(p));
          }
        },
      });
    };
    putCounter('rocketmq_messages_in_total', 'Messages stored by sends', (p) => p.messages);
    putCounter('rocketmq_throughput_in_total', 'Bytes stored by sends', (p) => p.bytes);
    this.messageSize = new BucketHistogram('rocketmq_message_size', 'Size of stored messages in bytes', ['topic', 'message_type', 'is_system'], MESSAGE_SIZE_BUCKETS_BYTES, this.registry);
    this.rpcLatency = new BucketHistogram('rocketmq_rpc_latency_milliseconds', 'Rpc latency', ['protocol_type', 'request_code', 'response_code', 'is_long_polling', 'result'], RPC_LATENCY_BUCKETS_MS, this.registry);
    this.topicCreateTime = new Histogram({ name: 'rocketmq_topic_create_execution_time_milliseconds', help: 'The distribution of create topic time', labelNames: ['invocation_status', 'is_system'], buckets: CREATE_TIME_BUCKETS_MS, registers: r });
    this.groupCreateTime = new Histogram({ name: 'rocketmq_consumer_group_create_execution_time_milliseconds', help: 'The distribution of create subscription time', labelNames: ['invocation_status'], buckets: CREATE_TIME_BUCKETS_MS, registers: r });
    this.finishLatency = new Histogram({ name: 'rocketmq_finish_message_latency_milliseconds', help: 'Transaction finish latency', labelNames: ['topic'], buckets: FINISH_LATENCY_BUCKETS_MS, registers: r });
    this.flushBatch = new Histogram({ name: 'tsmq_commitlog_flush_batch_bytes', help: 'Bytes made durable by one CommitLog flush (group-commit batch under SYNC_FLUSH)', buckets: FLUSH_BATCH_BUCKETS_BYTES, registers: r });
    this.flushLatency = new Histogram({ name: 'tsmq_commitlog_flush_latency_seconds', help: 'Duration of one CommitLog flush (fdatasync)', buckets: FLUSH_LATENCY_BUCKETS_S, registers: r });
    this.defineScrapedMetrics();
    defineTimerMetrics(this.registry, () => this.broker);
  }

  /**
   * Starts hearing `broker`'s events (call before broker.start(): rpc latency is wired at start)
   * and reading its state on scrape. Sets the common labels from its config.
   */
  attach(broker: BrokerController): void {
    this.broker = broker;
    this.registry.setDefaultLabels({ cluster: broker.config.brokerClusterName, node_type: 'broker', node_id: broker.config.brokerName });
    broker.ctx.brokerStats.setListener(this);
    if (broker.ctx.store instanceof DefaultMessageStore) {
      broker.ctx.store.setFlushObserver((bytes, latencyMs) => {
        this.flushBatch.observe(bytes);
        this.flushLatency.observe(latencyMs / 1000);
      });
    }
  }

  /** Stops the listeners (the broker keeps running). */
  detach(): void {
    const b = this.broker;
    if (!b) return;
    b.ctx.brokerStats.setListener(null);
    if (b.ctx.store instanceof DefaultMessageStore) b.ctx.store.setFlushObserver(null);
    this.broker = null;
  }

  onPut(topic: string, messageType: MetricsMessageType, msgNum: number, sizeBytes: number): void {
    let types = this.putSeries.get(topic);
    if (!types) {
      types = new Map();
      this.putSeries.set(topic, types);
    }
    let p = types.get(messageType);
    if (!p) {
      p = { messages: 0, bytes: 0, size: this.messageSize.series({ topic, message_type: messageType, is_system: this.systemTopicLabel(topic) }) };
      types.set(messageType, p);
    }
    p.messages += msgNum;
    p.bytes += sizeBytes;
    p.size.observe(msgNum === 1 ? sizeBytes : sizeBytes / msgNum, msgNum);
  }

  onRpc(requestCode: number, responseCode: number, latencyMs: number, oneway: boolean, longPolling: boolean): void {
    // request codes reach 200151 (BATCH_ACK_MESSAGE): a number key stays exact well past that
    const key = (requestCode * 1_000_000 + responseCode) * 4 + (oneway ? 1 : 0) + (longPolling ? 2 : 0);
    let h = this.rpcSeries.get(key);
    if (!h) {
      h = this.rpcLatency.series({
        protocol_type: 'remoting',
        request_code: requestCodeLabel(requestCode),
        response_code: responseCodeLabel(responseCode),
        is_long_polling: String(longPolling),
        result: oneway ? 'oneway' : 'success',
      });
      this.rpcSeries.set(key, h);
    }
    h.observe(latencyMs);
  }

  onCreateExecuted(kind: 'topic' | 'consumerGroup', success: boolean, latencyMs: number, isSystemTopic: boolean): void {
    const invocation_status = success ? 'success' : 'failure';
    if (kind === 'topic') this.topicCreateTime.observe({ invocation_status, is_system: String(isSystemTopic) }, latencyMs);
    else this.groupCreateTime.observe({ invocation_status }, latencyMs);
  }

  onTransactionCommitted(topic: string, sinceBornMs: number): void {
    this.finishLatency.observe({ topic }, sinceBornMs);
  }

  /**
   * Forgets the series of a deleted topic: messages/throughput in and message size (every
   * message type), half messages and transaction finish latency. The series read from
   * BrokerStatsManager (messages/throughput out, DLQ, commit/rollback) go with its counters, the
   * lag series with the topic's offsets. Apache keeps such series until restart (OpenTelemetry
   * keeps every attribute set it saw, up to its cardinality limit), so a broker that churns
   * topics exports more series every day; tsmq drops them. A topic created again starts from 0
   * (a counter reset, which Prometheus' rate() handles).
   */
  onTopicDeleted(topic: string): void {
    this.putSeries.delete(topic);
    this.messageSize.remove((labels) => labels.topic === topic);
    this.halfTopics.delete(topic);
    this.finishLatency.remove({ topic });
  }

  /** The Prometheus text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  private defineScrapedMetrics(): void {
    const r = [this.registry];
    const self = this;
    /** `is_system` of a (topic, group) counter; null = not exported (Apache skips the series). */
    type GroupSystemRule = (topic: string, group: string) => boolean | null;
    // messages/throughput out: retry and DLQ topics skipped; system topic or MixAll.isSysConsumerGroup
    const outRule: GroupSystemRule = (topic, group) => (isRetryOrDlqTopic(topic) ? null : self.isSystemTopic(topic) || isSysConsumerGroup(group));
    // DLQ: BrokerMetricsManager.isSystem (system topic or isSystemGroup)
    const dlqRule: GroupSystemRule = (topic, group) => self.isSystemTopic(topic) || isSystemGroup(group);
    const fromStats = (name: string, help: string, statsName: string, rule: GroupSystemRule | 'topic'): void => {
      new Counter({
        name,
        help,
        labelNames: rule === 'topic' ? ['topic'] : ['topic', 'consumer_group', 'is_system'],
        registers: r,
        collect() {
          this.reset();
          const b = self.broker;
          if (!b) return;
          for (const item of b.ctx.brokerStats.itemsOf(statsName)) {
            if (rule === 'topic') this.inc({ topic: item.statsKey }, item.value);
            else {
              const at = item.statsKey.lastIndexOf('@');
              const topic = item.statsKey.slice(0, at);
              const group = item.statsKey.slice(at + 1);
              const isSystem = rule(topic, group);
              if (isSystem !== null) this.inc({ topic, consumer_group: group, is_system: String(isSystem) }, item.value);
            }
          }
        },
      });
    };
    fromStats('rocketmq_messages_out_total', 'Messages handed to consumers by pulls', Stats.GROUP_GET_NUMS, outRule);
    fromStats('rocketmq_throughput_out_total', 'Bytes handed to consumers by pulls', Stats.GROUP_GET_SIZE, outRule);
    fromStats('rocketmq_send_to_dlq_messages_total', 'Messages moved to a DLQ by consumer send-back', Stats.DLQ_PUT_NUMS, dlqRule);
    fromStats('rocketmq_commit_messages_total', 'Transactional messages committed', Stats.TX_COMMIT_NUMS, 'topic');
    fromStats('rocketmq_rollback_messages_total', 'Transactional messages rolled back', Stats.TX_ROLLBACK_NUMS, 'topic');
    new Gauge({
      name: 'rocketmq_half_messages',
      help: 'Half messages of all topics',
      labelNames: ['topic'],
      registers: r,
      collect() {
        this.reset();
        const b = self.broker;
        if (!b) return;
        const pending = b.transactionService.pendingByTopic();
        for (const topic of pending.keys()) self.halfTopics.add(topic);
        for (const topic of self.halfTopics) this.set({ topic }, pending.get(topic) ?? 0);
      },
    });

    // Apache: language lower case, version MQVersion.getVersionDesc lower case, protocol_type
    // "remoting" (its broker sees every client over remoting; so are tsmq's gRPC clients labelled)
    new Gauge({
      name: 'rocketmq_producer_connections',
      help: 'Producer connections',
      labelNames: ['language', 'version', 'protocol_type'],
      registers: r,
      collect() {
        this.reset();
        const b = self.broker;
        if (!b) return;
        const pm = b.ctx.producerManager;
        for (const g of pm.groupNames()) for (const e of pm.entriesOf(g)) this.inc({ language: e.language.toLowerCase(), version: versionDesc(e.version).toLowerCase(), protocol_type: 'remoting' });
      },
    });
    new Gauge({
      name: 'rocketmq_consumer_connections',
      help: 'Consumer connections',
      labelNames: ['consumer_group', 'language', 'version', 'consume_mode', 'protocol_type', 'is_system'],
      registers: r,
      collect() {
        this.reset();
        const b = self.broker;
        if (!b) return;
        const cm = b.ctx.consumerManager;
        for (const g of cm.groupNames()) {
          const info = cm.getConsumerGroupInfo(g);
          if (!info) continue;
          const isSystem = String(isSystemGroup(g));
          const consumeMode = CONSUME_MODES[info.consumeType] ?? info.consumeType.toLowerCase();
          for (const e of info.channels.values()) {
            this.inc({ consumer_group: g, language: e.language.toLowerCase(), version: versionDesc(e.version).toLowerCase(), consume_mode: consumeMode, protocol_type: 'remoting', is_system: isSystem });
          }
        }
      },
    });

    // The four lag gauges share one computation per scrape.
    let lagScrape: Promise<GroupTopicLag[]> | null = null;
    const lags = (): Promise<GroupTopicLag[]> => {
      const b = self.broker;
      if (!b) return Promise.resolve([]);
      lagScrape ??= consumerLags(b, b.ctx.clock.nowMs()).finally(() => setImmediate(() => (lagScrape = null)));
      return lagScrape;
    };
    const lagGauge = (name: string, help: string, pick: (l: GroupTopicLag) => number): void => {
      new Gauge({
        name,
        help,
        labelNames: ['topic', 'consumer_group', 'is_retry', 'is_system'],
        registers: r,
        async collect() {
          this.reset();
          for (const l of await lags()) {
            const labels = lagLabels(l.topic, l.group);
            if (!labels) continue;
            // buildLagAttributes: BrokerMetricsManager.isSystem(topic, group) of the real topic
            this.set({ topic: labels.topic, consumer_group: l.group, is_retry: String(labels.isRetry), is_system: String(self.isSystemTopic(labels.topic) || isSystemGroup(l.group)) }, pick(l));
          }
        },
      });
    };
    lagGauge('rocketmq_consumer_lag_messages', 'Consumer lag messages', (l) => l.lagMessages);
    lagGauge('rocketmq_consumer_lag_latency_milliseconds', 'Consumer lag time', (l) => l.lagLatencyMs);
    lagGauge('rocketmq_consumer_inflight_messages', 'Consumer inflight messages', (l) => l.inflightMessages);
    lagGauge('rocketmq_consumer_queueing_latency_milliseconds', 'Consumer queueing time', (l) => l.queueingLatencyMs);
    lagGauge('rocketmq_consumer_ready_messages', 'Consumer ready messages', (l) => l.readyMessages);

    const simple = (name: string, help: string, read: (b: BrokerController) => number | Promise<number>): void => {
      new Gauge({
        name,
        help,
        registers: r,
        async collect() {
          const b = self.broker;
          this.set(b ? await read(b) : 0);
        },
      });
    };
    simple('rocketmq_topic_number', 'Active topic number', (b) => b.ctx.topicConfigManager.allTopicConfigs().length);
    simple('rocketmq_consumer_group_number', 'Active subscription group number', (b) => b.ctx.subscriptionGroupManager.allGroups().length);
    simple('rocketmq_broker_permission', 'Broker permission', (b) => b.config.brokerPermission);
    /** A store gauge (Apache DefaultStoreMetricsManager labels); `read` null = no series, as Apache records none. */
    const storeGauge = (name: string, help: string, read: (b: BrokerController) => number | null | Promise<number | null>): void => {
      new Gauge({
        name,
        help,
        labelNames: ['storage_type', 'storage_medium'],
        registers: r,
        async collect() {
          this.reset();
          const b = self.broker;
          const v = b ? await read(b) : null;
          if (v !== null) this.set(STORE_METRIC_LABELS, v);
        },
      });
    };
    storeGauge('rocketmq_storage_size_bytes', 'Broker storage size', (b) => usedPartitionBytes(b.config.storePathRootDir));
    storeGauge('rocketmq_storage_flush_behind_bytes', 'Broker flush behind bytes', (b) => {
      const max = b.ctx.store.getMaxPhyOffset();
      return Math.max(0, max - (b.ctx.store.getFlushedPhyOffset?.() ?? max));
    });
    storeGauge('rocketmq_storage_dispatch_behind_bytes', 'Broker dispatch behind bytes', (b) => b.ctx.store.dispatchBehindBytes?.() ?? 0);
    storeGauge('rocketmq_storage_message_reserve_time_milliseconds', 'Broker message reserve time', async (b) => {
      const earliest = (await b.ctx.store.getEarliestMessageTimeOfStore?.()) ?? -1;
      return earliest > 0 ? Math.max(0, b.ctx.clock.nowMs() - earliest) : null;
    });
    simple('tsmq_store_recovery_duration_seconds', 'Start-up recovery of the store in this process', (b) =>
      b.ctx.store instanceof DefaultMessageStore ? b.ctx.store.recoveryReport.durationMs / 1000 : 0,
    );
    new Gauge({
      name: 'tsmq_ha_lag_bytes',
      help: 'CommitLog bytes a slave has not acknowledged (master side)',
      labelNames: ['slave'],
      registers: r,
      collect() {
        this.reset();
        const b = self.broker;
        const repl = b?.replication?.stats().replication;
        if (!b || !repl || repl.role !== 'master') return;
        const max = b.ctx.store.getMaxPhyOffset();
        for (const c of repl.master.connections) this.set({ slave: c.remoteAddress }, c.ackOffset >= 0 ? Math.max(0, max - c.ackOffset) : max);
      },
    });
  }

  /** `is_system` of a topic on the attached broker (metrics-labels.ts; false before attach). */
  private isSystemTopic(topic: string): boolean {
    const b = this.broker;
    return b ? isMetricsSystemTopic(topic, b.config) : isSystemTopic(topic);
  }

  private systemTopicLabel(topic: string): string {
    return String(this.isSystemTopic(topic));
  }
}

