/**
 * Assembles PULL_MESSAGE serving (RocketMQ `PullMessageProcessor` + `PullRequestHoldService`) for
 * BrokerController: the pull processor and the long-polling service that holds pulls finding no
 * message, wired both ways (the processor suspends into the service; the service re-runs a held
 * pull without suspension when a message arrives or at its re-check).
 *
 * The re-check period is `pullHoldCheckIntervalMs` when given (tests), else 5000 ms with
 * longPollingEnable=true (Apache) or shortPollingTimeMills without it.
 * Start/stop (owned by BrokerController): the service starts after the replication role, and
 * answers every held pull first thing in shutdown after leaving the nameservers and the
 * replication group.
 */
import type { BrokerContext } from '../broker-context.js';
import { PullRequestHoldService } from '../longpolling/pull-request-hold-service.js';
import { PullMessageProcessor } from './pull-message-processor.js';

export interface PullServing {
  pull: PullMessageProcessor;
  holdService: PullRequestHoldService;
}

/** The pull processor and its long-polling service (not started). */
export function createPullServing(ctx: BrokerContext, pullHoldCheckIntervalMs?: number): PullServing {
  const config = ctx.config;
  const pull = new PullMessageProcessor(ctx);
  const holdService = new PullRequestHoldService({
    clock: ctx.clock,
    maxOffsetOf: (t, q) => ctx.store.getMaxOffsetInQueue(t, q),
    wakeup: (req) => pull.executeRequestWhenWakeup(req),
    checkIntervalMs: pullHoldCheckIntervalMs ?? (config.longPollingEnable ? 5000 : config.shortPollingTimeMills),
    logger: ctx.logger,
  });
  pull.setHoldService(holdService);
  return { pull, holdService };
}
