/**
 * Keeps this broker registered with its nameservers (Apache BrokerController's registration):
 *
 * - full registration (Apache `registerBrokerAll`): once at start, every registerNameServerPeriod
 *   (30 s), and on `registerNow()` (role change, brokerPermission change);
 * - incremental registration (Apache `registerIncrementBrokerData`): after a topic is created or
 *   updated, a REGISTER_BROKER whose topicConfigTable holds only the changed topics, with the
 *   broker's current dataVersion. The nameserver merges it per topic and keeps the others.
 *
 * One registration runs at a time. Requests arriving meanwhile are folded: the changed topics
 * collect into one follow-up increment, and a pending full registration absorbs them. When an
 * increment fails at any nameserver (e.g. a restarted nameserver refuses a one-topic
 * registration from a broker it does not know, as Apache's does), a full registration follows
 * (tsmq; Apache waits for the next period). Unregisters at shutdown.
 */
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import type { BrokerIdentity, BrokerOuterApi, RegisterOutcome } from './broker-outer-api.js';

export interface NamesrvRegistrarOptions {
  api: BrokerOuterApi;
  identity: () => BrokerIdentity;
  /** Current TopicConfigSerializeWrapper of every topic (perm already adjusted for the broker's permission). */
  topics: () => object;
  /**
   * The wrapper of only the named topics (same form, current dataVersion); null when none of
   * them exists any more (nothing to send).
   */
  topicsIncrement: (topicNames: string[]) => object | null;
  periodMs: number;
  logger?: Logger;
  /** Sees every registration's outcomes (a slave learns its master's addresses from them). */
  onRegistered?: (outcomes: RegisterOutcome[]) => void;
}

export class NamesrvRegistrar {
  private readonly logger: Logger;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<RegisterOutcome[]> | null = null;
  private pendingFull = false;
  private readonly pendingTopics = new Set<string>();
  private stopped = false;

  constructor(private readonly opts: NamesrvRegistrarOptions) {
    this.logger = opts.logger ?? silentLogger;
  }

  /** First registration (awaited) and the periodic timer. */
  async start(): Promise<RegisterOutcome[]> {
    const first = await this.registerNow();
    if (!this.stopped) {
      this.timer = setInterval(() => void this.registerNow(), this.opts.periodMs);
      this.timer.unref();
    }
    return first;
  }

  /** Full registration now, or right after the registration in progress. */
  registerNow(): Promise<RegisterOutcome[]> {
    if (this.stopped) return Promise.resolve([]);
    this.pendingFull = true;
    return this.kick();
  }

  /** Registers the changed topics now, or (folded with other changes) right after the registration in progress. */
  registerTopics(topicNames: Iterable<string>): Promise<RegisterOutcome[]> {
    if (this.stopped) return Promise.resolve([]);
    for (const t of topicNames) this.pendingTopics.add(t);
    return this.kick();
  }

  private kick(): Promise<RegisterOutcome[]> {
    if (this.inFlight) return this.inFlight;
    const full = this.pendingFull;
    const names = [...this.pendingTopics];
    this.pendingFull = false;
    this.pendingTopics.clear();
    const wrapper = full ? this.opts.topics() : this.opts.topicsIncrement(names);
    if (wrapper === null) return Promise.resolve([]);
    const run = this.opts.api
      .registerBrokerAll(this.opts.identity(), wrapper)
      .then((outcomes) => {
        const failed = outcomes.filter((o) => !o.ok);
        if (failed.length > 0) {
          this.logger.warn(`${full ? 'registered' : `registered ${names.length} changed topic(s)`} with ${outcomes.length - failed.length}/${outcomes.length} nameservers`);
          if (!full) this.pendingFull = true;
        }
        try {
          this.opts.onRegistered?.(outcomes);
        } catch (e) {
          this.logger.error(`registration listener failed: ${(e as Error).message}`);
        }
        return outcomes;
      })
      .finally(() => {
        this.inFlight = null;
        if (!this.stopped && (this.pendingFull || this.pendingTopics.size > 0)) void this.kick();
      });
    this.inFlight = run;
    return run;
  }

  /** Stops the timer, waits for a registration in progress, then unregisters. */
  async shutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.inFlight) await this.inFlight.catch(() => undefined);
    await this.opts.api.unregisterBrokerAll(this.opts.identity());
  }
}
