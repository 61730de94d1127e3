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
 * registration from a broker it does not know: Apache 5.3.3 answers SYSTEM_ERROR "register
 * broker failed"), a full registration follows at once (tsmq; Apache waits for the next period).
 * An increment under another identity (broker id or address) than the last full registration
 * that a nameserver accepted is sent as a full registration instead: the nameservers do not know
 * the new id yet and would refuse it (a controller-mode replica that became master: it
 * registered as brokerId N and creates RMQ_SYS_TRANS_HALF_TOPIC as brokerId 0). Unregisters at
 * shutdown.
 *
 * The promise of `registerNow()` / `registerTopics()` settles with the outcomes of the first
 * registration that carried the request (for an increment that failed somewhere: of the full
 * registration that followed it), never earlier; it never rejects (a request still waiting at
 * shutdown gets []). UPDATE_AND_CREATE_TOPIC answers after it (bounded), as Apache's
 * registerIncrementBrokerData is synchronous.
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
  private inFlight: Promise<void> | null = null;
  private pendingFull = false;
  private readonly pendingTopics = new Set<string>();
  /** Callers waiting for the next registration to start (it carries their request). */
  private waiters: Array<(outcomes: RegisterOutcome[]) => void> = [];
  private stopped = false;
  /** identityKey of the last full registration at least one nameserver accepted; null before. */
  private registeredAs: string | null = null;

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

  /** Full registration now, or right after the registration in progress; settles when it is done. */
  registerNow(): Promise<RegisterOutcome[]> {
    if (this.stopped) return Promise.resolve([]);
    this.pendingFull = true;
    return this.request();
  }

  /**
   * Registers the changed topics now, or (folded with other changes) right after the
   * registration in progress; settles when a registration carrying them is done.
   */
  registerTopics(topicNames: Iterable<string>): Promise<RegisterOutcome[]> {
    if (this.stopped) return Promise.resolve([]);
    for (const t of topicNames) this.pendingTopics.add(t);
    return this.request();
  }

  private request(): Promise<RegisterOutcome[]> {
    const settled = new Promise<RegisterOutcome[]>((resolve) => this.waiters.push(resolve));
    this.kick();
    return settled;
  }

  private kick(): void {
    if (this.inFlight) return;
    const waiters = this.waiters.splice(0);
    if (this.stopped) {
      for (const w of waiters) w([]);
      return;
    }
    const identity = identityKey(this.opts.identity());
    const names = [...this.pendingTopics];
    const full = this.pendingFull || (names.length > 0 && this.registeredAs !== null && this.registeredAs !== identity);
    this.pendingFull = false;
    this.pendingTopics.clear();
    const wrapper = full ? this.opts.topics() : names.length > 0 ? this.opts.topicsIncrement(names) : null;
    if (wrapper === null) {
      for (const w of waiters) w([]);
      return;
    }
    const run = this.opts.api
      .registerBrokerAll(this.opts.identity(), wrapper)
      .catch((e: Error): RegisterOutcome[] => {
        this.logger.error(`registration failed: ${e.message}`);
        return [];
      })
      .then((outcomes) => {
        const failed = outcomes.filter((o) => !o.ok);
        if (full && failed.length < outcomes.length) this.registeredAs = identity;
        if (failed.length > 0) {
          this.logger.warn(`${full ? 'registered' : `registered ${names.length} changed topic(s)`} with ${outcomes.length - failed.length}/${outcomes.length} nameservers`);
        }
        if (failed.length > 0 && !full) {
          // the full registration that follows carries these topics: their callers wait for it
          this.pendingFull = true;
          this.waiters.unshift(...waiters);
        } else {
          for (const w of waiters) w(outcomes);
        }
        try {
          this.opts.onRegistered?.(outcomes);
        } catch (e) {
          this.logger.error(`registration listener failed: ${(e as Error).message}`);
        }
      })
      .finally(() => {
        this.inFlight = null;
        if (this.stopped || this.pendingFull || this.pendingTopics.size > 0 || this.waiters.length > 0) this.kick();
      });
    this.inFlight = run;
  }

  /** Stops the timer, waits for a registration in progress, then unregisters. */
  async shutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.inFlight) await this.inFlight.catch(() => undefined);
    for (const w of this.waiters.splice(0)) w([]);
    await this.opts.api.unregisterBrokerAll(this.opts.identity());
  }
}

/** What a nameserver keys a broker by (cluster, name, id, address): a change makes increments full. */
function identityKey(id: BrokerIdentity): string {
  return `${id.clusterName}/${id.brokerName}/${id.brokerId}/${id.brokerAddr}`;
}
