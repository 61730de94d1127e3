/**
 * Assembles the broker's transactional messages (RocketMQ `TransactionalMessageService` and its
 * check-back) for BrokerController: half messages and END_TRANSACTION (37) over the broker
 * context, with the remoting check-back (CHECK_TRANSACTION_STATE 39) to the producer group's
 * channels; the gRPC front adds its own checker.
 *
 * Start/stop: started on a master by the replication role (controller/replication-role.ts);
 * BrokerController stops it after the timer store closes and before the pop state closes.
 * @throws ConfigError for a bad transaction key (transaction-config.ts).
 */
import type { BrokerContext } from '../broker-context.js';
import { remotingTransactionChecker } from './remoting-transaction-checker.js';
import { transactionBrokerOf } from './transaction-broker.js';
import { resolveTransactionConfig } from './transaction-config.js';
import { TransactionalMessageService } from './transactional-message-service.js';

/** The broker's transaction service with the remoting checker (not started). */
export function createTransactionService(ctx: BrokerContext, rawConfig: Record<string, string>): TransactionalMessageService {
  const service = new TransactionalMessageService({ broker: transactionBrokerOf(ctx), config: resolveTransactionConfig(rawConfig), clock: ctx.clock, logger: ctx.logger });
  service.addChecker(remotingTransactionChecker((g) => ctx.producerManager.channelsOf(g)));
  return service;
}
