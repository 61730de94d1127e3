/**
 * Broker log lines about consumer filter expressions the broker cannot use (the client only sees
 * Apache's short remark, so the reason has to be in the broker log):
 *
 * - an SQL92 (or other non-TAG) expression that does not compile: one warning per
 *   group + topic + expression every `intervalMs` (default one minute), naming the group, the
 *   topic, the expression and the parser's message; ali-ons retries such a pull for ever, so
 *   every pull would otherwise log.
 * - a group asking for SQL92 while enablePropertyFilter=false: one warning per consumer group for
 *   the broker's lifetime, saying that `enablePropertyFilter=true` turns filtering on (the
 *   remark itself stays Apache's "The broker does not support consumer to filter message by
 *   SQL92").
 */
import type { Clock } from '../../common/time/clock.js';
import type { Logger } from '../../common/logging/logger.js';
import { LogRateLimiter } from '../../common/logging/log-rate-limiter.js';

/** Default minimum time between two "does not compile" lines of one group + topic + expression. */
export const FILTER_WARNING_INTERVAL_MS = 60_000;
/** Groups remembered by the "enablePropertyFilter is off" warning (past this, it stays silent). */
const MAX_DISABLED_GROUPS = 10_000;

export class FilterWarnings {
  private readonly limiter: LogRateLimiter;
  private readonly disabledWarned = new Set<string>();

  constructor(
    clock: Clock,
    private readonly logger: Logger,
    intervalMs = FILTER_WARNING_INTERVAL_MS,
  ) {
    this.limiter = new LogRateLimiter(clock, intervalMs);
  }

  /**
   * The expression of `group` on `topic` does not compile (`reason`: the compiler's message);
   * `where` says what the client gets (e.g. "pull answered SUBSCRIPTION_PARSE_FAILED (23)").
   * Returns true when a line was logged.
   */
  compileFailed(group: string, topic: string, type: string, expression: string, reason: string, where: string): boolean {
    const suppressed = this.limiter.take(`${group}\u0000${topic}\u0000${type}\u0000${expression}`);
    if (suppressed === null) return false;
    const more = suppressed > 0 ? ` (${suppressed} more like this suppressed)` : '';
    this.logger.warn(
      `consumer group ${group} topic ${topic}: ${type} expression "${expression}" does not compile: ${reason}; ${where}${more}`,
    );
    return true;
  }

  /** `group` asked for a `type` filter while enablePropertyFilter=false (logged once per group). */
  filterDisabled(group: string, topic: string, type: string): boolean {
    if (this.disabledWarned.has(group) || this.disabledWarned.size >= MAX_DISABLED_GROUPS) return false;
    this.disabledWarned.add(group);
    this.logger.warn(
      `consumer group ${group} subscribes to topic ${topic} with a ${type} filter, but property filtering is off on this broker; its requests are refused ("The broker does not support consumer to filter message by ${type}"). Set enablePropertyFilter=true in the broker config to turn ${type} filtering on (logged once per group)`,
    );
    return true;
  }
}
