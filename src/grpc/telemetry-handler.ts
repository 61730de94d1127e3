/**
 * The Telemetry bidi stream (spec B2) and server-to-client commands.
 *
 * Client → server: `settings` (answered at once with the full settings reply, see
 * settings-reply.ts; the session records client type, group, language, topics). Settings naming
 * an illegal or system publishing topic, or an illegal/system subscription group
 * (resource-validator.ts), are not recorded and get a command holding only that status
 * (ILLEGAL_TOPIC / ILLEGAL_CONSUMER_GROUP), and so are SQL subscriptions that do not compile when
 * enablePropertyFilter is on (ILLEGAL_FILTER_EXPRESSION). Apache's proxy fails the stream with INVALID_ARGUMENT
 * instead; rocketmq-client-nodejs 1.0.8 answers a failed stream by reopening it and resending the
 * same settings every second, while a status-only command fails its startup with that status.
 * `thread_stack_trace` / `verify_message_result` (logged). Anything else is ignored.
 * Server → client: the settings reply, and RecoverOrphanedTransactionCommand for transaction
 * check-backs (grpcTransactionChecker). The stream stays open until the client ends it; the
 * server then ends its side.
 * Back-pressure: a client that stops reading its stream (while still sending settings, or while
 * check-backs are due) would make grpc-js buffer every command for it without bound. With
 * TELEMETRY_MAX_PENDING_COMMANDS commands not yet taken by the client, further commands are
 * dropped (rate-limited warning): a settings reply is not sent (a client that reads again gets the
 * replies to the settings it sends then), a check-back goes to another producer of the topic or
 * waits for the next check round (the half message is checked again after
 * transactionCheckInterval). Apache's proxy writes without such a check.
 */
import type * as grpc from '@grpc/grpc-js';
import type { CheckRequest, TransactionChecker } from '../broker/transaction/transactional-message-service.js';
import type { ClientSessions, TelemetryWriter } from './client-sessions.js';
import { clientIdOf, type GrpcServices } from './grpc-services.js';
import { toProtoMessage } from './message-converter.js';
import { settingsReply, type GroupPolicy } from './settings-reply.js';
import { checkGroupName, checkTopicName } from './resource-validator.js';
import { checkSqlExpression } from './filter-expression.js';
import { Code, status, type Settings, type Status, type TelemetryCommand } from './proto/v2-types.js';
import { RateLimitedLog } from '../common/logging/rate-limited-log.js';

type TelemetryCall = grpc.ServerDuplexStream<TelemetryCommand, TelemetryCommand>;

/** Commands queued on one Telemetry stream and not yet taken by its client before more are dropped. */
export const TELEMETRY_MAX_PENDING_COMMANDS = 64;

function groupPolicy(s: GrpcServices): (group: string) => GroupPolicy {
  return (group) => {
    const sgc = group ? s.ctx.subscriptionGroupManager.findSubscriptionGroupConfig(group) : undefined;
    return {
      fifo: sgc?.consumeMessageOrderly ?? false,
      maxDeliveryAttempts: (sgc?.retryMaxTimes ?? s.ctx.config.retryMaxTimes) + 1,
    };
  };
}

/**
 * The first refused publishing topic, subscription group or (with enablePropertyFilter) SQL
 * subscription expression of client settings, else null. SQL expressions are compiled here so a
 * consumer with a broken selector fails its startup instead of every receive; without
 * enablePropertyFilter they are left to ReceiveMessage, which refuses them.
 */
export function checkSettings(settings: Settings, enablePropertyFilter = false): Status | null {
  for (const t of settings.publishing?.topics ?? []) {
    const refused = checkTopicName(t?.name);
    if (refused) return refused;
  }
  if (settings.subscription) {
    const refused = checkGroupName(settings.subscription.group?.name);
    if (refused) return refused;
    if (enablePropertyFilter) {
      for (const entry of settings.subscription.subscriptions ?? []) {
        if (entry?.expression?.type !== 'SQL') continue;
        const bad = checkSqlExpression(true, entry.expression.expression);
        if (bad) return { code: bad.code, message: `topic ${entry.topic?.name ?? ''}: ${bad.message}` };
      }
    }
  }
  return null;
}

export function telemetryHandler(s: GrpcServices): grpc.handleBidiStreamingCall<TelemetryCommand, TelemetryCommand> {
  const values = {
    maxBodySizeBytes: Math.min(s.config.grpcMaxBodySizeBytes, s.ctx.config.maxMessageSize),
    producerMaxAttempts: s.config.grpcProducerMaxAttempts,
    backoffInitialMs: s.config.grpcBackoffInitialMs,
    backoffMaxMs: s.config.grpcBackoffMaxMs,
    backoffMultiplier: s.config.grpcBackoffMultiplier,
    receiveBatchSize: s.config.grpcReceiveBatchSize,
    pushLongPollingTimeoutMs: s.config.grpcPushLongPollingTimeoutMs,
  };
  const backedUp = new RateLimitedLog(s.logger);
  return (call: TelemetryCall) => {
    const clientId = clientIdOf(call);
    let closed = false;
    const writer: TelemetryWriter = {
      write: (cmd) => {
        if (closed || call.cancelled) return false;
        if (call.writableLength >= TELEMETRY_MAX_PENDING_COMMANDS) {
          // one fixed key: RateLimitedLog keeps one entry per key, and the client id is the peer's choice
          backedUp.warn('telemetry-backed-up', `telemetry stream of ${clientId}: ${call.writableLength} commands not read by the client; command dropped`);
          return false;
        }
        call.write(cmd);
        return true;
      },
      get closed() {
        return closed || call.cancelled;
      },
      end: () => {
        if (closed) return;
        closed = true;
        if (!call.cancelled) call.end();
      },
    };
    s.sessions.addStream(clientId, writer);
    const close = (): void => {
      if (closed) return;
      closed = true;
      const session = s.sessions.get(clientId);
      if (session) s.sessions.streamClosed(session, writer);
    };
    call.on('data', (cmd: TelemetryCommand) => {
      try {
        if (closed) return;
        // the client's session now, not the one of when the stream opened: NotifyClientTermination
        // or expiry may have ended that one, and a command on this stream starts a new one with it
        const session = s.sessions.addStream(clientId, writer);
        if (cmd.settings) {
          const settings = cmd.settings;
          const refused = checkSettings(settings, s.ctx.config.enablePropertyFilter);
          if (refused) {
            writer.write({ status: refused });
            return;
          }
          session.settings = settings;
          if (settings.client_type) session.clientType = settings.client_type;
          if (settings.subscription?.group?.name) session.group = settings.subscription.group.name;
          if (settings.user_agent?.language) session.language = settings.user_agent.language;
          s.registration.register(session, call.getPeer());
          writer.write({ status: status(Code.OK, 'OK'), settings: settingsReply(settings, values, groupPolicy(s)) });
        } else if (cmd.thread_stack_trace) {
          s.logger.info(`client ${clientId} thread stack trace (nonce ${cmd.thread_stack_trace.nonce})`);
        } else if (cmd.verify_message_result) {
          s.logger.info(`client ${clientId} verified message (nonce ${cmd.verify_message_result.nonce})`);
        }
      } catch (e) {
        s.logger.error(`telemetry from ${clientId}: ${(e as Error).message}`);
      }
    });
    call.on('end', () => {
      const wasOpen = !closed;
      close();
      if (wasOpen) call.end();
    });
    call.on('error', () => close());
    call.on('cancelled', () => close());
  };
}

/**
 * Check-backs to gRPC producers: RecoverOrphanedTransactionCommand on a producer's Telemetry
 * stream, producers publishing the topic first, round robin; false when no producer took it.
 */
export function grpcTransactionChecker(sessions: ClientSessions): TransactionChecker {
  let rr = 0;
  return (req: CheckRequest) => {
    const targets = sessions.producersFor(req.message.topic);
    if (targets.length === 0) return false;
    const preferred = targets.filter((t) => t.session.settings?.publishing?.topics?.some((x) => x.name === req.message.topic));
    const pool = preferred.length > 0 ? preferred : targets;
    const first = rr++;
    const cmd = { recover_orphaned_transaction_command: { message: toProtoMessage(req.message), transaction_id: req.transactionId } };
    // round robin; a producer not reading its stream is skipped (its write drops the command)
    for (let i = 0; i < pool.length; i++) if (pool[(first + i) % pool.length]!.stream.write(cmd)) return true;
    return false;
  };
}
