/**
 * Static-topic request rewriting (Apache 5 RIP-21, the processors' `rewriteRequestForStaticTopic`
 * / `rewriteResponseForStaticTopic`), as decorators around the broker's own handlers: a request
 * naming a static topic's logic queue is rewritten to the physical queue of the item that serves
 * it here, passed to the ordinary handler, and its answer rewritten back to logic terms. Requests
 * for other topics go straight through (one Map lookup; none while no static topic is hosted).
 *
 *   10/310/320 SEND_MESSAGE(_V2)/SEND_BATCH_MESSAGE: queueId → leader's physical queue (a
 *     negative id takes the first hosted logic queue); reply queueId = logic id, queueOffset =
 *     logic offset. Not leader here → 501 NOT_LEADER_FOR_QUEUE.
 *   11 PULL_MESSAGE: queueOffset (logic) → the item covering it; reply offsets in logic terms
 *     plus `offsetDelta` (the client adds it to each message's queue offset); crossing from an
 *     older item to the next one answers PULL_RETRY_IMMEDIATELY at the next item's start.
 *     A commit offset riding on the pull is converted to the physical offset of its item (Apache
 *     stores the logic value under the physical queue, which is wrong once a queue was remapped).
 *   14 QUERY_CONSUMER_OFFSET / 15 UPDATE_CONSUMER_OFFSET: offsets in logic terms, stored per
 *     physical queue; a query reads the newest item that has an offset.
 *   29 SEARCH_OFFSET_BY_TIMESTAMP, 30 GET_MAX_OFFSET, 31 GET_MIN_OFFSET, 32 GET_EARLIEST_MSG_STORETIME.
 *   215 DELETE_TOPIC_IN_BROKER: also drops the topic's mapping.
 *
 * An item that lives on another broker is read through `forward` (Apache forwards with its
 * broker-to-broker RPC client, `lo=false`); without one, or when that broker cannot be reached,
 * the answer is 1 SYSTEM_ERROR naming the broker, as Apache answers when its forward fails.
 */
import type { RemotingChannel, RequestContext, RequestHandler } from '../../remoting/processor/request-processor.js';
import type { ExtFieldValue, RemotingCommand } from '../../remoting/protocol/remoting-command.js';
import { createResponseCommand } from '../../remoting/protocol/commands.js';
import { RequestCode } from '../../remoting/codes/request-code.js';
import { ResponseCode } from '../../remoting/codes/response-code.js';
import {
  endOffsetDecided, findItemForLogicOffset, findNextItem, maxLogicOffset, offsetDelta, toLogicOffsetLoosely, toLogicOffsetStrictly, toPhysicalOffset,
  type LogicQueueMappingItem,
} from './logic-queue-mapping-item.js';
import { notLeaderRemark, resolveStaticQueue, type StaticQueueContext } from './static-topic-context.js';
import type { TopicQueueMappingManager } from './topic-queue-mapping-manager.js';

/**
 * Sends a rewritten request (`lo=false`, physical queue and offsets) to the master of broker
 * `bname` and returns its answer. @throws Error when that broker cannot be reached.
 */
export type StaticTopicForwarder = (bname: string, request: RemotingCommand) => Promise<RemotingCommand>;

export interface StaticTopicHandlerDeps {
  mappings: TopicQueueMappingManager;
  forward?: StaticTopicForwarder;
}

const SEND_CODES = [RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE];
/** PullSysFlag.FLAG_COMMIT_OFFSET / FLAG_SUSPEND. */
const FLAG_COMMIT_OFFSET = 0x1;
const FLAG_SUSPEND = 0x2;

type Ext = Record<string, ExtFieldValue>;

function n(v: ExtFieldValue | undefined, dflt = 0): number {
  if (v === undefined || v === '') return dflt;
  const x = Number(v);
  return Number.isFinite(x) ? x : dflt;
}

/** Replaces the handlers of the codes above in `handlers` with static-topic-aware ones. */
export function wrapStaticTopicHandlers(handlers: Map<number, RequestHandler>, deps: StaticTopicHandlerDeps): void {
  const w = new StaticTopicRewriter(deps);
  const wrap = (code: number, make: (inner: RequestHandler) => RequestHandler): void => {
    const inner = handlers.get(code);
    if (inner) handlers.set(code, make(inner));
  };
  for (const code of SEND_CODES) wrap(code, (inner) => (rc) => w.send(inner, rc, code !== RequestCode.SEND_MESSAGE));
  wrap(RequestCode.PULL_MESSAGE, (inner) => (rc) => w.pull(inner, rc));
  wrap(RequestCode.QUERY_CONSUMER_OFFSET, (inner) => (rc) => w.queryConsumerOffset(inner, rc));
  wrap(RequestCode.UPDATE_CONSUMER_OFFSET, (inner) => (rc) => w.updateConsumerOffset(inner, rc));
  wrap(RequestCode.GET_MAX_OFFSET, (inner) => (rc) => w.maxOffset(inner, rc));
  wrap(RequestCode.GET_MIN_OFFSET, (inner) => (rc) => w.earliestItemQuery(inner, rc, 'min'));
  wrap(RequestCode.GET_EARLIEST_MSG_STORETIME, (inner) => (rc) => w.earliestItemQuery(inner, rc, 'storeTime'));
  wrap(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, (inner) => (rc) => w.searchOffset(inner, rc));
  wrap(RequestCode.DELETE_TOPIC_IN_BROKER, (inner) => async (rc) => {
    const res = await inner(rc);
    const topic = rc.request.extFields?.topic;
    if (res && res.code === ResponseCode.SUCCESS && typeof topic === 'string') deps.mappings.delete(topic);
    return res;
  });
}

class StaticTopicRewriter {
  constructor(private readonly deps: StaticTopicHandlerDeps) {}

  private ctxOf(rc: RequestContext, topicKey = 'topic', queueKey = 'queueId', selectOneWhenMiss = false): StaticQueueContext | null {
    const ext = rc.request.extFields;
    if (!ext) return null;
    const topic = ext[topicKey];
    if (typeof topic !== 'string') return null;
    return resolveStaticQueue(this.deps.mappings, topic, n(ext[queueKey], -1), ext.lo, selectOneWhenMiss);
  }

  /** Runs `inner` on a copy of the request with `ext` as its header fields. */
  private call(inner: RequestHandler, rc: RequestContext, ext: Ext, channel: RemotingChannel = rc.channel): Promise<RemotingCommand | null> {
    return Promise.resolve(inner({ channel, request: { ...rc.request, extFields: ext } }));
  }

  /** The answer for an item on broker `bname`: forwarded with lo=false, else SYSTEM_ERROR. */
  private async remote(rc: RequestContext, bname: string, ext: Ext): Promise<RemotingCommand> {
    const request = { ...rc.request, extFields: { ...ext, lo: 'false', bname } };
    if (!this.deps.forward) return createResponseCommand(rc.request, ResponseCode.SYSTEM_ERROR, `the logic queue item is on broker ${bname}: forwarding to another broker is not supported by tsmq`);
    try {
      const res = await this.deps.forward(bname, request);
      return { ...res, opaque: rc.request.opaque, serializeTypeCurrentRPC: rc.request.serializeTypeCurrentRPC };
    } catch (e) {
      return createResponseCommand(rc.request, ResponseCode.SYSTEM_ERROR, `forwarding to broker ${bname} failed: ${(e as Error).message}`);
    }
  }

  private notLeader(rc: RequestContext, c: StaticQueueContext): RemotingCommand {
    return createResponseCommand(rc.request, ResponseCode.NOT_LEADER_FOR_QUEUE, notLeaderRemark(c));
  }

  /**
   * A send: the inner handler's own result (no extra promise or microtask) when the topic is not
   * static here, the usual case; else rewritten by `staticSend`.
   */
  send(inner: RequestHandler, rc: RequestContext, v2: boolean): ReturnType<RequestHandler> {
    if (this.deps.mappings.isEmpty) return inner(rc);
    const queueKey = v2 ? 'e' : 'queueId';
    const c = this.ctxOf(rc, v2 ? 'b' : 'topic', queueKey, true);
    return c ? this.staticSend(inner, rc, c, queueKey) : inner(rc);
  }

  private async staticSend(inner: RequestHandler, rc: RequestContext, c: StaticQueueContext, queueKey: string): Promise<RemotingCommand | null> {
    const leader = c.leader;
    if (!leader) return this.notLeader(rc, c);
    const res = await this.call(inner, rc, { ...rc.request.extFields, [queueKey]: leader.queueId });
    if (!res || !res.extFields || res.extFields.queueOffset === undefined) return res;
    return { ...res, extFields: { ...res.extFields, queueId: c.globalId, queueOffset: toLogicOffsetLoosely(leader, n(res.extFields.queueOffset)) } };
  }

  /**
   * A pull of a static topic's logic queue goes through staticPull; any other pull is the inner
   * handler's call itself (no async frame of its own: one promise and closure per pull less, the
   * common case of a broker hosting no static topic).
   */
  pull(inner: RequestHandler, rc: RequestContext): ReturnType<RequestHandler> {
    if (this.deps.mappings.isEmpty) return inner(rc);
    const c = this.ctxOf(rc);
    return c ? this.staticPull(inner, rc, c) : inner(rc);
  }

  private async staticPull(inner: RequestHandler, rc: RequestContext, c: StaticQueueContext): Promise<RemotingCommand | null> {
    if (!c.leader) return createResponseCommand(rc.request, ResponseCode.NOT_LEADER_FOR_QUEUE, `${c.topic}-${c.globalId} cannot find mapping item in request process of current broker ${c.detail.bname}`);
    const ext = rc.request.extFields!;
    const logicOffset = n(ext.queueOffset);
    const item = findItemForLogicOffset(c.items, logicOffset)!;
    const out: Ext = { ...ext, queueId: item.queueId, queueOffset: toPhysicalOffset(item, logicOffset) };
    if (endOffsetDecided(item) && ext.maxMsgNums !== undefined) out.maxMsgNums = Math.min(item.endOffset - item.startOffset, n(ext.maxMsgNums));
    let sysFlag = n(ext.sysFlag);
    if (sysFlag & FLAG_COMMIT_OFFSET) {
      const commitItem = findItemForLogicOffset(c.items, n(ext.commitOffset));
      if (commitItem && commitItem.bname === c.detail.bname) {
        out.queueId = item.queueId;
        out.commitOffset = toPhysicalOffset(commitItem, n(ext.commitOffset));
        // the pull processor commits under the pulled physical queue: only when it is the same one
        if (commitItem.queueId !== item.queueId) sysFlag &= ~FLAG_COMMIT_OFFSET;
      } else {
        sysFlag &= ~FLAG_COMMIT_OFFSET;
      }
    }
    out.sysFlag = sysFlag;
    const rewrite = (res: RemotingCommand): RemotingCommand => this.pullAnswer(res, c, item, logicOffset);
    if (item.bname !== c.detail.bname) {
      out.sysFlag = sysFlag & ~FLAG_SUSPEND & ~FLAG_COMMIT_OFFSET;
      const res = await this.remote(rc, item.bname, out);
      return res.code === ResponseCode.SYSTEM_ERROR ? res : rewrite(res);
    }
    // a suspended pull answers later through the channel: rewrite that answer too
    const channel = rewritingChannel(rc.channel, (cmd) => (cmd.opaque === rc.request.opaque ? rewrite(cmd) : cmd));
    const res = await this.call(inner, rc, out, channel);
    return res ? rewrite(res) : res;
  }

  /** Apache PullMessageProcessor.rewriteResponseForStaticTopic, in logic terms. */
  private pullAnswer(res: RemotingCommand, c: StaticQueueContext, current0: LogicQueueMappingItem, logicRequest: number): RemotingCommand {
    const ext = res.extFields;
    if (!ext || ext.nextBeginOffset === undefined) return res;
    let current = current0;
    const leader = c.items[c.items.length - 1]!;
    const earliest = findItemForLogicOffset(c.items, 0)!;
    const requestOffset = toPhysicalOffset(current, logicRequest);
    let next = n(ext.nextBeginOffset);
    let min = n(ext.minOffset);
    let max = n(ext.maxOffset);
    let code = res.code;
    if (res.code !== ResponseCode.SUCCESS) {
      let revised = false;
      if (leader.gen === current.gen) {
        if (requestOffset > max) {
          if (res.code === ResponseCode.PULL_OFFSET_MOVED) next = max;
        } else if (requestOffset < min) {
          next = min;
          code = ResponseCode.PULL_RETRY_IMMEDIATELY;
        }
      }
      if (earliest.gen === current.gen) {
        if (requestOffset < min) {
          code = ResponseCode.PULL_OFFSET_MOVED;
          next = min;
        } else if (requestOffset >= max) {
          const nextItem = findNextItem(c.items, current);
          if (nextItem) {
            revised = true;
            current = nextItem;
            next = min = max = current.startOffset;
            code = ResponseCode.PULL_RETRY_IMMEDIATELY;
          } else {
            code = ResponseCode.PULL_NOT_FOUND;
          }
        }
      }
      if (!revised && leader.gen !== current.gen && earliest.gen !== current.gen) {
        if (requestOffset < min) {
          next = min;
          code = ResponseCode.PULL_RETRY_IMMEDIATELY;
        } else if (requestOffset >= max) {
          const nextItem = findNextItem(c.items, current);
          if (nextItem) {
            current = nextItem;
            next = min = max = current.startOffset;
            code = ResponseCode.PULL_RETRY_IMMEDIATELY;
          } else {
            code = ResponseCode.PULL_NOT_FOUND;
          }
        }
      }
    }
    if (endOffsetDecided(current) && next >= current.endOffset) next = current.endOffset;
    const maxFromMapping = maxLogicOffset(leader);
    const rewritten: Ext = {
      ...ext,
      nextBeginOffset: toLogicOffsetStrictly(current, next),
      minOffset: toLogicOffsetStrictly(current, Math.max(current.startOffset, min)),
      maxOffset: Math.max(toLogicOffsetStrictly(current, max), maxFromMapping),
      offsetDelta: offsetDelta(current),
    };
    return { ...res, code, extFields: rewritten, ...(code !== res.code ? { body: null, remark: null } : {}) };
  }

  async updateConsumerOffset(inner: RequestHandler, rc: RequestContext): Promise<RemotingCommand | null> {
    const c = this.ctxOf(rc);
    if (!c) return inner(rc);
    if (!c.leader) return this.notLeader(rc, c);
    const ext = rc.request.extFields!;
    const logic = n(ext.commitOffset);
    const item = findItemForLogicOffset(c.items, logic)!;
    const out: Ext = { ...ext, queueId: item.queueId, commitOffset: toPhysicalOffset(item, logic) };
    if (item.bname !== c.detail.bname) return this.remote(rc, item.bname, out);
    return this.call(inner, rc, out);
  }

  async queryConsumerOffset(inner: RequestHandler, rc: RequestContext): Promise<RemotingCommand | null> {
    const c = this.ctxOf(rc);
    if (!c) return inner(rc);
    if (!c.leader) return this.notLeader(rc, c);
    const ext = rc.request.extFields!;
    if (c.items.length === 1 && c.items[0]!.logicOffset === 0) {
      const res = await this.call(inner, rc, { ...ext, queueId: c.leader.queueId });
      return res && res.code === ResponseCode.SUCCESS && res.extFields?.offset !== undefined
        ? { ...res, extFields: { ...res.extFields, offset: toLogicOffsetStrictly(c.items[0]!, n(res.extFields.offset)) } }
        : res;
    }
    // newest item first: the first one holding an offset answers
    for (let k = c.items.length - 1; k >= 0; k--) {
      const item = c.items[k]!;
      const out: Ext = { ...ext, queueId: item.queueId, setZeroIfNotFound: 'false' };
      const res = item.bname === c.detail.bname ? await this.call(inner, rc, out) : await this.remote(rc, item.bname, out);
      if (!res) continue;
      if (res.code === ResponseCode.SUCCESS) {
        return createResponseCommand(rc.request, ResponseCode.SUCCESS, null, { offset: toLogicOffsetStrictly(item, n(res.extFields?.offset)) });
      }
      if (res.code !== ResponseCode.QUERY_NOT_FOUND) return res.code === ResponseCode.SYSTEM_ERROR ? res : createResponseCommand(rc.request, ResponseCode.SYSTEM_ERROR, `Unknown response code ${res.code}`);
    }
    return createResponseCommand(rc.request, ResponseCode.QUERY_NOT_FOUND, 'Not found, maybe this group consumer boot first');
  }

  async maxOffset(inner: RequestHandler, rc: RequestContext): Promise<RemotingCommand | null> {
    const c = this.ctxOf(rc);
    if (!c) return inner(rc);
    if (!c.leader) return this.notLeader(rc, c);
    const maxItem = findItemForLogicOffset(c.items, Number.MAX_SAFE_INTEGER)!;
    const out: Ext = { ...rc.request.extFields, queueId: c.leader.queueId };
    const res = maxItem.bname === c.detail.bname ? await this.call(inner, rc, out) : await this.remote(rc, maxItem.bname, out);
    if (!res || res.code !== ResponseCode.SUCCESS) return res;
    return createResponseCommand(rc.request, ResponseCode.SUCCESS, null, { offset: toLogicOffsetStrictly(maxItem, n(res.extFields?.offset)) });
  }

  /** GET_MIN_OFFSET (offset, logic) and GET_EARLIEST_MSG_STORETIME (timestamp) read the earliest item. */
  async earliestItemQuery(inner: RequestHandler, rc: RequestContext, what: 'min' | 'storeTime'): Promise<RemotingCommand | null> {
    const c = this.ctxOf(rc);
    if (!c) return inner(rc);
    if (!c.leader) return this.notLeader(rc, c);
    const item = findItemForLogicOffset(c.items, 0)!;
    const out: Ext = { ...rc.request.extFields, queueId: item.queueId };
    const res = item.bname === c.detail.bname ? await this.call(inner, rc, out) : await this.remote(rc, item.bname, out);
    if (!res || res.code !== ResponseCode.SUCCESS || what === 'storeTime') return res;
    return createResponseCommand(rc.request, ResponseCode.SUCCESS, null, { offset: toLogicOffsetLoosely(item, n(res.extFields?.offset)) });
  }

  /** SEARCH_OFFSET_BY_TIMESTAMP: the first decided item (oldest first) with an offset > 0 for the time answers. */
  async searchOffset(inner: RequestHandler, rc: RequestContext): Promise<RemotingCommand | null> {
    const c = this.ctxOf(rc);
    if (!c) return inner(rc);
    if (!c.leader) return this.notLeader(rc, c);
    let offset = -1;
    for (const item of c.items) {
      if (item.logicOffset < 0) continue;
      const out: Ext = { ...rc.request.extFields, queueId: item.queueId };
      if (item.bname === c.detail.bname) {
        const res = await this.call(inner, rc, out);
        if (!res || res.code !== ResponseCode.SUCCESS) return res;
        const phy = n(res.extFields?.offset, -1);
        if (phy > 0) {
          offset = toLogicOffsetStrictly(item, phy);
          break;
        }
      } else {
        const res = await this.remote(rc, item.bname, out);
        if (res.code !== ResponseCode.SUCCESS) return res;
        const phy = n(res.extFields?.offset, -1);
        if (phy < 0 || (endOffsetDecided(item) && phy >= item.endOffset)) continue;
        offset = toLogicOffsetStrictly(item, phy);
      }
    }
    return createResponseCommand(rc.request, ResponseCode.SUCCESS, null, { offset });
  }
}

/** `ch`, with every command it sends passed through `rewrite` first. */
function rewritingChannel(ch: RemotingChannel, rewrite: (cmd: RemotingCommand) => RemotingCommand): RemotingChannel {
  const wrapped: RemotingChannel = {
    get remoteAddress() {
      return ch.remoteAddress;
    },
    get id() {
      return ch.id;
    },
    get closed() {
      return ch.closed;
    },
    send: (cmd) => ch.send(rewrite(cmd)),
    close: () => ch.close(),
    onClose: (l) => ch.onClose(l),
  };
  if (ch.invoke) wrapped.invoke = ch.invoke.bind(ch);
  return wrapped;
}
