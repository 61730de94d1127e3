/**
 * The remoting pop-consumption handlers (RocketMQ 5.x): POP_MESSAGE 200050, ACK_MESSAGE 200051,
 * BATCH_ACK_MESSAGE 200151, PEEK_MESSAGE 200052, CHANGE_MESSAGE_INVISIBLETIME 200053,
 * NOTIFICATION 200054, QUERY_ASSIGNMENT 400, SET_MESSAGE_REQUEST_MODE 401,
 * GET_ALL_MESSAGE_REQUEST_MODE 402. All share the broker's one PopService (docs/internals/pop.md).
 * Loads `<storePathRootDir>/config/messageRequestMode.json`.
 * @throws ConfigError for a bad pop key, ConfigFileCorruptError for an unreadable mode file.
 */
import * as path from 'node:path';
import type { FileSystem } from '../../common/fs/file-system.js';
import type { RequestHandler } from '../../remoting/processor/request-processor.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import type { BrokerContext } from '../broker-context.js';
import { MessageRequestModeManager } from '../loadbalance/message-request-mode-manager.js';
import { resolvePopConfig } from '../pop/pop-config.js';
import type { PopService } from '../pop/pop-service.js';
import { AckMessageProcessor } from './ack-message-processor.js';
import { NotificationProcessor } from './notification-processor.js';
import { PeekMessageProcessor } from './peek-message-processor.js';
import { PopMessageProcessor } from './pop-message-processor.js';
import { QueryAssignmentProcessor } from './query-assignment-processor.js';

export interface PopProcessorOptions {
  /** Raw broker.conf keys (pop keys are read from it). */
  rawConfig: Record<string, string>;
  /** True once the broker is shutting down: parked pops answer at once. */
  stopping: () => boolean;
  fs?: FileSystem;
}

export function buildPopProcessorTable(ctx: BrokerContext, pop: PopService, opts: PopProcessorOptions): Map<number, RequestHandler> {
  const cfg = resolvePopConfig(opts.rawConfig);
  const modes = new MessageRequestModeManager(path.join(ctx.config.storePathRootDir, 'config', 'messageRequestMode.json'), {
    logger: ctx.logger,
    ...(opts.fs ? { fs: opts.fs } : {}),
  });
  modes.load();
  const popMessage = new PopMessageProcessor(ctx, pop, cfg.maxPopPollingSize, opts.stopping);
  const acks = new AckMessageProcessor(ctx, pop);
  const peek = new PeekMessageProcessor(ctx, pop);
  const notification = new NotificationProcessor(ctx, pop, cfg.maxPopPollingSize, opts.stopping);
  const assignment = new QueryAssignmentProcessor(ctx, modes, cfg);
  return new Map<number, RequestHandler>([
    [RequestCode.POP_MESSAGE, popMessage.handler],
    [RequestCode.ACK_MESSAGE, acks.ackHandler],
    [RequestCode.BATCH_ACK_MESSAGE, acks.batchAckHandler],
    [RequestCode.CHANGE_MESSAGE_INVISIBLETIME, acks.changeInvisibleTimeHandler],
    [RequestCode.PEEK_MESSAGE, peek.handler],
    [RequestCode.NOTIFICATION, notification.handler],
    [RequestCode.QUERY_ASSIGNMENT, assignment.queryAssignmentHandler],
    [RequestCode.SET_MESSAGE_REQUEST_MODE, assignment.setMessageRequestModeHandler],
    [RequestCode.GET_ALL_MESSAGE_REQUEST_MODE, assignment.getAllMessageRequestModeHandler],
  ]);
}
