/**
 * Keeps this broker registered with its nameservers: once at start, every
 * registerNameServerPeriod (30 s), and soon after any topic change (changes arriving while a
 * registration runs are folded into one follow-up registration). Unregisters at shutdown.
 */
import type { Logger } from '../../common/logging/logger.js';
import { silentLogger } from '../../common/logging/logger.js';
import type { BrokerIdentity, BrokerOuterApi, RegisterOutcome } from './broker-outer-api.js';

export interface NamesrvRegistrarOptions {
  api: BrokerOuterApi;
  identity: () => BrokerIdentity;
  /** Current TopicConfigSerializeWrapper (perm already adjusted for the broker's permission). */
  topics: () => object;
  periodMs: number;
  logger?: Logger;
  /** Sees every registration's outcomes (a slave learns its master's addresses from them). */
  onRegistered?: (outcomes: RegisterOutcome[]) => void;
}

export class NamesrvRegistrar {
  private readonly logger: Logger;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<RegisterOutcome[]> | null = null;
  private again = false;
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

  /** Registers now, or right after the registration in progress. */
  registerNow(): Promise<RegisterOutcome[]> {
    if (this.stopped) return Promise.resolve([]);
    if (this.inFlight) {
      this.again = true;
      return this.inFlight;
    }
    const run = this.opts.api
      .registerBrokerAll(this.opts.identity(), this.opts.topics())
      .then((outcomes) => {
        const failed = outcomes.filter((o) => !o.ok);
        if (failed.length > 0) this.logger.warn(`registered with ${outcomes.length - failed.length}/${outcomes.length} nameservers`);
        try {
          this.opts.onRegistered?.(outcomes);
        } catch (e) {
          this.logger.error(`registration listener failed: ${(e as Error).message}`);
        }
        return outcomes;
      })
      .finally(() => {
        this.inFlight = null;
        if (this.again && !this.stopped) {
          this.again = false;
          void this.registerNow();
        }
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
