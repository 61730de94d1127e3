/**
 * Held (long-polling) pull requests (mirrors RocketMQ `PullRequestHoldService` and
 * `NotifyMessageArrivingListener`).
 *
 * A pull that found nothing and may suspend is parked here under `topic@queueId` until:
 *   - a message arrives for that queue beyond the requested offset and passes the request's
 *     filter (tags: hash, then exact TAGS when the properties are known; SQL92: the selector on
 *     the properties when known) → woken;
 *   - its own timer fires at suspendTimestamp + timeoutMillis → woken (the re-run pull then
 *     answers PULL_NOT_FOUND, or FOUND if something matching arrived meanwhile);
 *   - the periodic check (every 5 s with long polling, shortPollingTimeMills without, like
 *     Apache) finds the queue max beyond the offset, or the deadline passed → woken;
 *   - its connection closes → dropped silently.
 * Waking means removing the request and handing it to `wakeup`, which re-runs the pull without
 * suspension and writes the reply on the request's channel. A request is woken at most once.
 */
import type { RemotingChannel } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import { MessageConst } from '../../common/message/message-const.js';
import { matchesTags, matchesTagsCode, type SubscriptionData } from '../filter/subscription-data.js';
import { matchesArrivingMessage } from '../filter/expression-filter.js';

export interface PullRequest {
  channel: RemotingChannel;
  request: RemotingCommand;
  topic: string;
  queueId: number;
  pullFromThisOffset: number;
  suspendTimestamp: number;
  timeoutMillis: number;
  subscription: SubscriptionData | null;
}

interface Held extends PullRequest {
  timer: NodeJS.Timeout | null;
  done: boolean;
}

export interface PullRequestHoldServiceOptions {
  clock: Clock;
  /** Current max offset of a queue (the store's getMaxOffsetInQueue). */
  maxOffsetOf: (topic: string, queueId: number) => number;
  /** Re-runs the pull without suspension and replies. Errors are logged. */
  wakeup: (req: PullRequest) => Promise<void>;
  /** Period of the full re-check (Apache: 5000 ms with long polling). */
  checkIntervalMs: number;
  logger?: Logger;
}

export class PullRequestHoldService {
  private readonly table = new Map<string, Held[]>();
  private readonly watched = new WeakSet<RemotingChannel>();
  private readonly logger: Logger;
  private checkTimer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly opts: PullRequestHoldServiceOptions) {
    this.logger = opts.logger ?? silentLogger;
  }

  static key(topic: string, queueId: number): string {
    return `${topic}@${queueId}`;
  }

  /** Number of requests currently held. */
  get size(): number {
    let n = 0;
    for (const list of this.table.values()) n += list.length;
    return n;
  }

  start(): void {
    if (this.checkTimer || this.stopped) return;
    this.checkTimer = setInterval(() => this.checkHoldRequest(), this.opts.checkIntervalMs);
    this.checkTimer.unref();
  }

  /** Parks a request (see the class comment). A closed channel's request is dropped at once. */
  suspendPullRequest(req: PullRequest): void {
    if (this.stopped || req.channel.closed) return;
    const held: Held = { ...req, timer: null, done: false };
    const key = PullRequestHoldService.key(req.topic, req.queueId);
    let list = this.table.get(key);
    if (!list) {
      list = [];
      this.table.set(key, list);
    }
    list.push(held);
    // Not unref'd: a held request is pending work (bounded by its timeout, cleared at shutdown).
    held.timer = setTimeout(() => this.wake(held, 'timeout'), Math.max(0, req.timeoutMillis));
    if (!this.watched.has(req.channel)) {
      this.watched.add(req.channel);
      req.channel.onClose(() => this.dropChannel(req.channel));
    }
  }

  /**
   * A message was dispatched to topic/queueId; `maxOffset` is its queue offset + 1. Wakes the
   * requests waiting below it whose filter accepts the message, and any that timed out.
   */
  notifyMessageArriving(topic: string, queueId: number, maxOffset: number, tagsCode?: number | null, properties?: Map<string, string> | null): void {
    if (this.table.size === 0) return;
    const key = PullRequestHoldService.key(topic, queueId);
    const list = this.table.get(key);
    if (!list || list.length === 0) return;
    const now = this.opts.clock.nowMs();
    for (const req of [...list]) {
      let newest = maxOffset;
      if (newest <= req.pullFromThisOffset) newest = this.opts.maxOffsetOf(topic, queueId);
      if (newest > req.pullFromThisOffset) {
        let match = tagsCode === undefined || tagsCode === null || matchesTagsCode(req.subscription, tagsCode);
        if (match && properties) match = matchesTags(req.subscription, properties.get(MessageConst.TAGS)) && matchesArrivingMessage(req.subscription, properties);
        if (match) {
          this.wake(req, 'arrival');
          continue;
        }
      }
      if (now >= req.suspendTimestamp + req.timeoutMillis) this.wake(req, 'timeout');
    }
  }

  /** Periodic re-check of every queue with held requests against the store's max offset. */
  checkHoldRequest(): void {
    for (const key of [...this.table.keys()]) {
      const list = this.table.get(key);
      if (!list || list.length === 0) continue;
      const { topic, queueId } = list[0]!;
      try {
        this.notifyMessageArriving(topic, queueId, this.opts.maxOffsetOf(topic, queueId));
      } catch (e) {
        this.logger.error(`long-polling check of ${key} failed: ${(e as Error).message}`);
      }
    }
  }

  /** Stops timers; wakes every held request once more (each gets its final answer) and waits for those replies. */
  async shutdown(): Promise<void> {
    this.stopped = true;
    if (this.checkTimer) clearInterval(this.checkTimer);
    this.checkTimer = null;
    const all = [...this.table.values()].flat();
    await Promise.all(all.map((req) => this.wake(req, 'shutdown')));
  }

  private dropChannel(channel: RemotingChannel): void {
    for (const [key, list] of [...this.table]) {
      // a copy: remove() splices `list`, which would skip the entry after each removed one
      for (const req of [...list]) {
        if (req.channel === channel) this.remove(req);
      }
      if ((this.table.get(key)?.length ?? 0) === 0) this.table.delete(key);
    }
  }

  private remove(req: Held): boolean {
    if (req.done) return false;
    req.done = true;
    if (req.timer) clearTimeout(req.timer);
    req.timer = null;
    const key = PullRequestHoldService.key(req.topic, req.queueId);
    const list = this.table.get(key);
    if (list) {
      const i = list.indexOf(req);
      if (i >= 0) list.splice(i, 1);
      if (list.length === 0) this.table.delete(key);
    }
    return true;
  }

  private async wake(req: Held, why: string): Promise<void> {
    if (!this.remove(req)) return;
    if (req.channel.closed) return;
    try {
      await this.opts.wakeup(req);
    } catch (e) {
      this.logger.error(`answering held pull ${req.topic}/${req.queueId}@${req.pullFromThisOffset} (${why}) failed: ${(e as Error).message}`);
    }
  }
}
