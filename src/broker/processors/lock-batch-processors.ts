/**
 * LOCK_BATCH_MQ (41) and UNLOCK_BATCH_MQ (42), used by orderly push consumers at every
 * rebalance and every 20 s (mirror 4.9 `AdminBrokerProcessor.lockBatchMQ/unlockBatchMQ` over
 * a `RebalanceLockManager`; see rebalance-lock-manager.ts for the lock rules).
 *
 *   41: no header; body `LockBatchRequestBody` JSON
 *         {"clientId":"…","consumerGroup":"…","mqSet":[{"brokerName":"…","queueId":0,"topic":"…"},…]}
 *       (5.x clients add "onlyThisBroker", ignored: tsmq has no replicas to forward to)
 *       → SUCCESS, body `LockBatchResponseBody` {"lockOKMQSet":[MessageQueue…]}: the queues of
 *       the request now held by clientId (possibly none).
 *   42: no header; body `UnlockBatchRequestBody` (same fields) → SUCCESS, no body. The client
 *       sends it oneway on shutdown (no reply then) and sync on rebalance.
 * Queues of topics or queue ids unknown here are locked all the same (Apache validates nothing);
 * expired locks are swept (rebalance-lock-manager.ts), so this cannot grow the broker without bound.
 * A missing or malformed body answers SYSTEM_ERROR (1) with a remark naming the problem.
 */
import type { RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import type { BrokerContext } from '../broker-context.js';
import { RebalanceLockManager } from '../client/rebalance-lock-manager.js';
import { parseLenientJson } from '../config-file/lenient-json.js';
import { BodyError, messageQueueJson, parseMessageQueue, type MessageQueueRef } from './message-queue-json.js';

/** Decoded LockBatchRequestBody / UnlockBatchRequestBody. */
export interface LockBatchBody {
  consumerGroup: string;
  clientId: string;
  mqSet: MessageQueueRef[];
}

/** Parses a (Un)LockBatchRequestBody. @throws BodyError naming what is wrong. */
export function parseLockBatchBody(body: Buffer | null, what: string): LockBatchBody {
  if (!body || body.length === 0) throw new BodyError(`${what}: request body is empty`);
  let doc: unknown;
  try {
    doc = parseLenientJson(body.toString('utf8'));
  } catch (e) {
    throw new BodyError(`${what}: body is not JSON: ${(e as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new BodyError(`${what}: body is not a JSON object`);
  const o = doc as Record<string, unknown>;
  if (typeof o.consumerGroup !== 'string' || o.consumerGroup === '') throw new BodyError(`${what}: consumerGroup is missing`);
  if (typeof o.clientId !== 'string' || o.clientId === '') throw new BodyError(`${what}: clientId is missing`);
  const raw = o.mqSet ?? [];
  if (!Array.isArray(raw)) throw new BodyError(`${what}: mqSet is not an array`);
  const mqSet = raw.map((mq, i) => parseMessageQueue(mq, `${what}: mqSet[${i}]`));
  return { consumerGroup: o.consumerGroup, clientId: o.clientId, mqSet };
}

export class LockBatchProcessors {
  readonly lockManager: RebalanceLockManager;

  constructor(
    private readonly ctx: BrokerContext,
    lockManager?: RebalanceLockManager,
  ) {
    this.lockManager = lockManager ?? new RebalanceLockManager(ctx.clock, undefined, ctx.logger);
  }

  readonly lockBatchMQ: RequestHandler = (rc) => this.processLock(rc);
  readonly unlockBatchMQ: RequestHandler = (rc) => this.processUnlock(rc);

  processLock({ request }: RequestContext): RemotingCommand {
    let body: LockBatchBody;
    try {
      body = parseLockBatchBody(request.body, 'LOCK_BATCH_MQ');
    } catch (e) {
      return this.bad(request, e);
    }
    const locked = this.lockManager.tryLockBatch(body.consumerGroup, body.mqSet, body.clientId);
    const json = `{"lockOKMQSet":[${locked.map(messageQueueJson).join(',')}]}`;
    return createResponseCommand(request, ResponseCode.SUCCESS, null, null, Buffer.from(json, 'utf8'));
  }

  processUnlock({ request }: RequestContext): RemotingCommand {
    let body: LockBatchBody;
    try {
      body = parseLockBatchBody(request.body, 'UNLOCK_BATCH_MQ');
    } catch (e) {
      return this.bad(request, e);
    }
    this.lockManager.unlockBatch(body.consumerGroup, body.mqSet, body.clientId);
    return createResponseCommand(request, ResponseCode.SUCCESS, null);
  }

  private bad(request: RemotingCommand, e: unknown): RemotingCommand {
    if (!(e instanceof BodyError)) throw e;
    this.ctx.logger.warn(e.message);
    return createResponseCommand(request, ResponseCode.SYSTEM_ERROR, e.message);
  }
}
